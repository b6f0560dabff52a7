#pragma once
/// Measurements fabsim calibrates and validates against, read from the three
/// forms users have: the plain text nccl-tests prints (all_reduce_perf and
/// friends), the measurements JSON of configs/measurements/published-measurements.json,
/// and the JSON the CUDA harness (calibration/, fabsim-measurements/1) writes.

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "traces/collectives/collective.hpp"

namespace fabsim::calibration {

struct MeasuredRow {
  std::uint64_t bytes = 0;  ///< the nccl-tests size column
  double time_us = 0;
  double busbw_gbps = 0;
  /// The row's nccl_choice ("Tree/LL128"), where the data set records what NCCL ran at this size
  /// (logged, or a tuner plugin's table); empty: the data set's algorithm, else NCCL's choice.
  std::string choice;
};

/// A row's nccl_choice as fabsim's --algo and --proto spell it.
struct RecordedChoice {
  std::string algorithm;  ///< "tree", "nvlstree", ...
  std::string protocol;   ///< "LL", "LL128" or "Simple"
};
/// Parses "Algorithm/Protocol" as NCCL's logs name them ("Tree/LL128", "NVLSTree/Simple"): an
/// algorithm NCCL has for `op` and a protocol it runs (Simple only for NVLS, NVLSTree, PAT and
/// CollNet); nullopt otherwise.
std::optional<RecordedChoice> parse_recorded_choice(const std::string& text, traces::CollectiveOp op);
/// What a malformed nccl_choice should have been, for the error message.
inline constexpr const char* kRecordedChoiceExpected =
    "expected Algorithm/Protocol as NCCL logs them (e.g. Tree/LL128, Ring/Simple, NVLSTree/Simple): an algorithm NCCL has for "
    "this collective and a protocol it runs";

/// nccl-tests times every size twice, out of place and in place: one operation, one algorithm.
/// In the published measurements the two agree within 12.4% on 230 of the 244 rows that have
/// both; the other 14 are 19.5% to 296% apart (a warm-up or a stall in one of the two). Past
/// this share a row cannot tell a good prediction from a bad one: calibrate does not fit on it,
/// and validate lists it without counting it.
inline constexpr double kTimingDisagreementLimit = 0.15;

/// Why a row's two timings cannot both be the operation's time ("out of place 68.52 us, in place
/// 24.70 us: 177% apart"); empty when they agree within kTimingDisagreementLimit, or when there is
/// no in-place time (or either is not a positive time).
std::string disagreeing_timings(double out_of_place_us, std::optional<double> in_place_us);
/// The same for a measurements-JSON row: time_us against inplace_time_us, where it has one.
std::string disagreeing_timings(const nlohmann::json& row);

/// One child simulation of a data set: the sizes lo..hi that share a recorded choice ("" for
/// rows without one, which run the data set's algorithm).
struct ChoiceRun {
  std::string choice;
  std::uint64_t lo = 0, hi = 0;
};
/// The runs covering `rows` (bytes, choice): one per distinct choice, in order of first appearance.
std::vector<ChoiceRun> choice_runs(const std::vector<std::pair<std::uint64_t, std::string>>& rows);
/// nccl-test's arguments for a run: --algo (and --proto) of its choice, else --algo `fallback`.
std::vector<std::string> choice_arguments(const ChoiceRun& run, const std::string& fallback);
/// Whether `rows` (bytes, choice) has a row of `bytes` simulated by `run`.
bool run_covers(const ChoiceRun& run, const std::vector<std::pair<std::uint64_t, std::string>>& rows, std::uint64_t bytes);

/// One collective swept over sizes on one system.
struct MeasuredSweep {
  std::string id;          ///< data set id, or FILE:op for text output
  std::string system;      ///< free text (GPU model, machine)
  std::string gpu;         ///< GPU model as written ("NVIDIA H100 80GB HBM3")
  int gpus = 0;
  int nodes = 1;
  traces::CollectiveOp op = traces::CollectiveOp::kAllReduce;
  std::string algorithm;   ///< "ring", "nvls", "tree" when forced or logged; empty: NCCL's choice
  /// The NCCL release the data set names, when fabsim has its tuner ("2.26.2"); empty: the newest's.
  std::string nccl_version;
  bool cuda_graph = false; ///< timed with CUDA graphs (no launch gaps)
  /// nccl-tests' -g: the GPUs one process drove (a data set's gpus_per_process,
  /// the text output's nGpus); none: not recorded.
  std::optional<int> gpus_per_process;
  std::vector<MeasuredRow> rows;
};

/// A data set's `gpus_per_process` (nccl-tests -g): none when absent or null.
/// Anything but an integer from 1 to `gpus` sets `why` (and returns none).
std::optional<int> read_gpus_per_process(const nlohmann::json& dataset, std::int64_t gpus, std::string& why);

/// Peer-to-peer copy bandwidth between two GPUs (harness, p2pBandwidthLatencyTest).
struct MeasuredPeer {
  int source = 0, destination = 0;
  double unidirectional_gbps = 0;
  std::optional<double> bidirectional_gbps;
  std::optional<double> latency_us;
  std::string engine;  ///< "copy-engine" or "sm"
};

struct Measurements {
  std::string file;
  std::string gpu;  ///< the harness's machine/gpus/0/name ("NVIDIA H200"); empty for other sources
  std::vector<MeasuredSweep> sweeps;
  std::vector<MeasuredPeer> peers;
  std::optional<double> launch_latency_us;   ///< empty-kernel launch, back to back (harness)
  std::optional<double> launch_round_trip_us;     ///< one empty kernel launched and waited for (harness)
  std::optional<double> host_read_round_trip_us;  ///< a GPU thread's dependent read of pinned host memory (harness)
  std::optional<double> host_to_device_gbps;
  std::optional<double> device_to_host_gbps;
  std::optional<double> device_copy_gbps;
  std::vector<std::string> skipped;          ///< what the source could not measure or fabsim cannot use, and why
};

/// Reads any of the three forms, told apart by content; throws
/// core::ConfigError naming the file, line or JSON path on malformed input.
Measurements load_measurements(const std::string& path);

/// The parsers behind load_measurements, exposed for tests.
Measurements parse_nccl_tests_text(const std::string& text, const std::string& file);
Measurements parse_measurements_json(const nlohmann::json& doc, const std::string& file);

}  // namespace fabsim::calibration
