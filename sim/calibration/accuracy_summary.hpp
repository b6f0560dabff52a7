#pragma once
/// Prediction errors grouped the way an accuracy claim must be made: fitted
/// (in-sample) apart from held-out (out-of-sample) data, by size regime, by
/// single node or several, and by GPU family. Repeats of one measurement count
/// once.

#include <cstdint>
#include <string>
#include <vector>

namespace fabsim::calibration {

/// Size regimes (nccl-tests size column): latency-bound below 256 KiB,
/// mid from 256 KiB to below 64 MiB, bandwidth-bound from 64 MiB.
enum class Regime { kLatency, kMid, kBandwidth };
inline constexpr std::uint64_t kMidFrom = 256u << 10;         ///< the smallest mid size
inline constexpr std::uint64_t kBandwidthBoundFrom = 64u << 20;  ///< the smallest bandwidth-bound size
Regime regime_of(std::uint64_t bytes);
std::string regime_name(Regime r);
/// "H100", "H200", "A100", "B200", ... as named in a data set's GPU field; "other" if none.
std::string gpu_family(const std::string& gpu);

double median(std::vector<double> values);

struct ErrorRow {
  std::string dataset;
  std::uint64_t bytes = 0;
  double error = 0;  ///< (predicted - measured) / measured time
  bool in_sample = false;
  bool multi_node = false;
  std::string family;
  int gpus_per_process = 0;  ///< nccl-tests -g of the run; 0 = not recorded
};

struct ErrorGroup {
  bool in_sample = false;
  bool multi_node = false;
  std::string family;
  Regime regime = Regime::kLatency;
  std::size_t sizes = 0;
  double median_error = 0;  ///< of |error|
  double worst_error = 0;   ///< largest |error|
  std::string worst_at;     ///< "data set at N B"
  /// Sizes predicted within kTargetError: a median can sit on a cliff (half the rows at 5%, the
  /// other half at 30%), and this says how many rows the median speaks for.
  std::size_t within_target = 0;
};

/// issue 15's accuracy target, a 10% time error, against which validate counts each group's rows.
inline constexpr double kTargetError = 0.10;
/// issue 15's tighter target for bandwidth-bound sizes, everywhere.
inline constexpr double kBandwidthTargetError = 0.05;

/// One group per (sample, scope, family, regime) that has rows, in that order.
std::vector<ErrorGroup> summarize(const std::vector<ErrorRow>& rows);

}  // namespace fabsim::calibration
