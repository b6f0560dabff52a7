#include "traces/nccl_test_runner.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numeric>

#include "sim/core/error.hpp"
#include "sim/core/limits.hpp"
#include "sim/core/kernel.hpp"
#include "sim/core/progress.hpp"
#include "traces/collectives/collective_planner.hpp"
#include "traces/collectives/nccl_tuner_tables.hpp"
#include "traces/executor/plan_executor.hpp"

namespace fabsim::traces {

namespace {

/// nccl-tests' loop, for (size = min; size <= max; size = size * factor),
/// stepping at least one byte so that a 0-byte start moves on. Stops after
/// `limit` sizes.
std::vector<core::Bytes> step_sizes(const NcclTestConfig& config, std::size_t limit) {
  std::vector<core::Bytes> sizes;
  for (double size = static_cast<double>(config.min_bytes); size <= static_cast<double>(config.max_bytes) && sizes.size() < limit;
       size = std::max(size * config.factor, size + 1)) {
    sizes.push_back(static_cast<core::Bytes>(size));
    if (config.factor <= 1.0) break;
  }
  return sizes;
}

}  // namespace

std::vector<core::Bytes> nccl_test_sizes(const NcclTestConfig& config) {
  return step_sizes(config, static_cast<std::size_t>(core::kMaxSweepRows));
}

void validate_nccl_test(const NcclTestConfig& config, const topo::TopologySpec& spec, const std::string& origin) {
  core::Diagnostics diag(origin);
  // Name each setting where the user wrote it: a flag, or the scenario's key.
  const bool flags = origin == "command line";
  auto at = [flags](const char* key, const char* flag) { return flags ? std::string(flag) : std::string("/workload/") + key; };
  const int available = static_cast<int>(spec.gpus.size());
  if (config.gpus < 0 || config.gpus > available)
    diag.error(at("gpus", "-g"), fmt::format("asked for {} GPUs but {} has {}", config.gpus, spec.file, available));
  const int ranks = config.gpus == 0 ? available : config.gpus;
  if (config.gpus_per_process && (*config.gpus_per_process < 1 || *config.gpus_per_process > ranks))
    diag.error(at("gpus_per_process", "--gpus-per-process"),
               fmt::format("expected 1 to the run's {} GPUs per process, found {}", ranks, *config.gpus_per_process));
  if (config.min_bytes > config.max_bytes)
    diag.error(at("min_bytes", "-b"), fmt::format("minimum size {} is larger than the maximum {}", config.min_bytes, config.max_bytes));
  if (!(config.factor > 1.0) && config.min_bytes != config.max_bytes)
    diag.error(at("factor", "-f"), fmt::format("expected a step factor > 1, found {}", config.factor));
  if (config.nccl_version)
    if (const auto problem = nccl_version_problem(nccl_version_name(*config.nccl_version)))
      diag.error(at("nccl_version", "--nccl-version"), *problem);
  // NCCL runs these point to point: no algorithm to choose, and the protocol
  // follows the size (LL up to NCCL_P2P_LL_THRESHOLD per channel), not NCCL_PROTO.
  if (runs_point_to_point(config.op) && config.algorithm != "auto")
    diag.error(at("algo", "--algo"), fmt::format("{} runs point to point (NCCL's P2P schedule), not with a collective algorithm: "
                                                 "leave the algorithm to auto", collective_name(config.op)));
  else if (config.algorithm != "auto" && !parse_algorithm(config.algorithm))
    diag.error(at("algo", "--algo"), fmt::format("algorithm '{}' is not modelled (available: ring, tree, nvls, nvlstree, pat, collnet, auto)", config.algorithm));
  if (parse_algorithm(config.algorithm) == Algorithm::kTree && config.op != CollectiveOp::kAllReduce)
    diag.error(at("algo", "--algo"), fmt::format("Tree is an all_reduce algorithm, not one for {}", collective_name(config.op)));
  if (parse_algorithm(config.algorithm) == Algorithm::kNvls && config.op != CollectiveOp::kAllReduce &&
      config.op != CollectiveOp::kAllGather && config.op != CollectiveOp::kReduceScatter)
    diag.error(at("algo", "--algo"), fmt::format("NVLS runs all_reduce, all_gather and reduce_scatter, not {}", collective_name(config.op)));
  if (parse_algorithm(config.algorithm) == Algorithm::kCollNetDirect && config.op != CollectiveOp::kAllReduce)
    diag.error(at("algo", "--algo"), fmt::format("CollNet is modelled for all_reduce only, not {}", collective_name(config.op)));
  if (parse_algorithm(config.algorithm) == Algorithm::kNvlsTree && config.op != CollectiveOp::kAllReduce)
    diag.error(at("algo", "--algo"), fmt::format("NVLSTree is an all_reduce algorithm, not one for {}", collective_name(config.op)));
  if (parse_algorithm(config.algorithm) == Algorithm::kPat && config.op != CollectiveOp::kAllGather && config.op != CollectiveOp::kReduceScatter)
    diag.error(at("algo", "--algo"), fmt::format("PAT runs all_gather and reduce_scatter, not {}", collective_name(config.op)));
  if (runs_point_to_point(config.op) && config.protocol)
    diag.error(at("proto", "--proto"), fmt::format("{} takes its protocol from the size as NCCL's P2P does (LL up to 16 KiB per "
                                                   "channel, else Simple), not from NCCL_PROTO: leave the protocol to auto",
                                                   collective_name(config.op)));
  if (const auto algo = parse_algorithm(config.algorithm);
      algo && config.protocol && *config.protocol != topo::Protocol::kSimple && runs_simple_only(*algo))
    diag.error(at("proto", "--proto"), fmt::format("{} runs the Simple protocol only, not {} (force Simple, or another algorithm)",
                                     config.algorithm, topo::protocol_name(*config.protocol)));
  if (config.min_bytes % config.element_size != 0 || config.max_bytes % config.element_size != 0)
    diag.error(at("min_bytes", "-b"), fmt::format("sizes {} and {} must be multiples of the element size ({} B, float)", config.min_bytes,
                                         config.max_bytes, config.element_size));
  if (!std::isfinite(config.factor))
    diag.error(at("factor", "-f"), fmt::format("expected a finite step factor > 1, found {}", config.factor));
  else if (step_sizes(config, static_cast<std::size_t>(core::kMaxSweepRows) + 1).size() > static_cast<std::size_t>(core::kMaxSweepRows))
    diag.error(at("factor", "-f"), fmt::format("{} to {} bytes by a factor of {} is more than {} rows (use a larger factor)",
                                               config.min_bytes, config.max_bytes, config.factor, core::kMaxSweepRows));
  const int used = config.gpus == 0 ? available : config.gpus;
  if (config.root < 0 || (config.root >= used && used > 0))
    diag.error(at("root", "--root"), fmt::format("root rank {} is outside the {} ranks", config.root, used));
  if (config.channels && (*config.channels < 1 || *config.channels > 64))
    diag.error(at("channels", "--channels"), fmt::format("expected 1..64 channels (NCCL's MAXCHANNELS), found {}", *config.channels));
  if (!spec.gpus.empty()) {
    const auto& model = spec.gpu_model(0);
    if ((parse_algorithm(config.algorithm) == Algorithm::kNvls || parse_algorithm(config.algorithm) == Algorithm::kNvlsTree) && !model.nvls)
      diag.error(at("algo", "--algo"), fmt::format("gpu model '{}' has no NVLS parameters (NVLS needs Hopper or later)", model.name));
    if (config.protocol && !model.protocols.contains(*config.protocol))
      diag.error(at("proto", "--proto"), fmt::format("gpu model '{}' has no parameters for protocol {}", model.name,
                                       topo::protocol_name(*config.protocol)));
    const int ranks = config.gpus == 0 ? available : config.gpus;
    for (int r = 1; r < ranks && r < available; ++r)
      if (spec.devices[spec.gpus[r]].model != model.name) {
        diag.error(at("gpus", "-g"), fmt::format("{} mixes GPU models in the {} ranks ('{}' and '{}' at {}): one communicator of "
                                                 "mixed models is not supported", spec.file, ranks, model.name,
                                                 spec.devices[spec.gpus[r]].model, spec.devices[spec.gpus[r]].json_path));
        break;
      }
  }
  diag.throw_if_any();
}

namespace {

/// Drives the sweep from completion callbacks: each size starts when the
/// previous one has finished, like nccl-tests' loop over sizes. Rows above
/// NcclTestConfig::extrapolate_above are not run: probes at that size, its
/// half and its quarter, with each such row's algorithm, protocol and
/// channels, run after the simulated rows (a probe set whose line is not yet
/// straight goes on doubling: probe_further), and the rows follow their line.
class SweepDriver {
 public:
  SweepDriver(topo::FabricBackend& fabric, const NcclTestConfig& config, core::ProgressLine* progress)
      : fabric_(fabric), config_(config), progress_(progress), timers_("executor_timers"), executor_(fabric, timers_), planner_(fabric) {
    planner_.set_one_gpu_per_process(config_.gpus_per_process == 1);
    ranks_ = config.gpus == 0 ? fabric.gpu_count() : config.gpus;
    gpu_of_rank_.resize(static_cast<std::size_t>(ranks_));
    std::iota(gpu_of_rank_.begin(), gpu_of_rank_.end(), 0);
    sizes_ = nccl_test_sizes(config);
    for (const auto size : sizes_) {
      if (config.extrapolate_above == 0 || size <= config.extrapolate_above) {
        jobs_.push_back({size, std::nullopt, true, kNoProbe, 0});
      } else {
        extrapolated_.push_back({size, probe_set_for(size)});
      }
    }
  }

  NcclTestResult run() {
    start_job(0);
    double total_bytes = 0;
    for (const auto& job : jobs_) total_bytes += static_cast<double>(job.size);
    core::run_with_progress(progress_, [this, total_bytes](core::ProgressLine& line) {
      double done_bytes = 0;
      for (std::size_t i = 0; i < jobs_done_; ++i) done_bytes += static_cast<double>(jobs_[i].size);  // jobs run in order
      line.update(jobs_done_, jobs_.size(), total_bytes > 0 ? done_bytes / total_bytes : 0.0);
    });
    fabric_.rethrow_failure();
    timers_.rethrow_failure();
    if (jobs_done_ != jobs_.size())
      throw core::SimulationError(fmt::format(
          "the simulation stopped after {} of {} collectives (sizes, and probes to extrapolate from): the {}-byte collective "
          "deadlocked with {} transfers outstanding:{}",
          jobs_done_, jobs_.size(), jobs_[jobs_done_].size, executor_.outstanding(), executor_.describe_stuck()));
    result_.simulated = core::now_ps();
    result_.segments = fabric_.units_injected();
    result_.timer_events = timers_.fired();
    extrapolate();
    return result_;
  }

 private:
  static constexpr std::size_t kNoProbe = static_cast<std::size_t>(-1);

  struct Job {
    core::Bytes size = 0;
    std::optional<TunerChoice> forced;  // a probe's choice, where the tuner would choose otherwise
    bool row = true;                    // a row of the sweep (which may serve as a probe too)
    std::size_t probe_set = kNoProbe;
    std::size_t probe = 0;              // index in its set's sizes
  };
  /// The probes of one choice: sizes doubling from a quarter of
  /// extrapolate_above, with their collective sizes and times once run.
  struct ProbeSet {
    TunerChoice choice;
    std::vector<core::Bytes> sizes;  // the size column
    std::vector<core::Bytes> bytes;
    std::vector<double> time_us;
    core::Bytes largest_row = 0;  // the largest row it extrapolates to
  };
  struct Extrapolated {
    core::Bytes size = 0;
    std::size_t probe_set = 0;
  };

  CollectiveCall call_for(core::Bytes bytes, const std::optional<TunerChoice>& forced) const {
    CollectiveCall call{config_.op, bytes, config_.root, gpu_of_rank_, parse_algorithm(config_.algorithm), config_.protocol,
                        config_.channels, config_.element_size, std::nullopt, nccl_tuner_release(config_.nccl_version)};
    if (forced) {
      call.algorithm = forced->algorithm;
      call.protocol = forced->protocol;
      call.channels = forced->channels;
    }
    return call;
  }

  core::Bytes collective_bytes(core::Bytes size, std::uint64_t& count) const {
    return nccl_tests_bytes(config_.op, size, ranks_, config_.element_size, count);
  }

  static bool same_choice(const std::optional<TunerChoice>& a, const TunerChoice& b) {
    return a && a->algorithm == b.algorithm && a->protocol == b.protocol && a->channels == b.channels;
  }

  /// The probe set of the choice a row of `size` runs with, made (with its first three probes) on first use.
  std::size_t probe_set_for(core::Bytes size) {
    std::uint64_t count = 0;
    const auto choice = planner_.tuner_choice(call_for(collective_bytes(size, count), std::nullopt));
    if (!choice) throw core::SimulationError(fmt::format("{} runs point to point: its rows cannot be extrapolated", collective_name(config_.op)));
    for (std::size_t i = 0; i < probe_sets_.size(); ++i)
      if (same_choice(probe_sets_[i].choice, *choice)) {
        probe_sets_[i].largest_row = std::max(probe_sets_[i].largest_row, size);
        return i;
      }
    const std::size_t set = probe_sets_.size();
    probe_sets_.push_back({*choice, {}, {}, {}, size});
    const core::Bytes top = config_.extrapolate_above;
    for (const core::Bytes probe : {top / 4, top / 2, top}) add_probe(set, probe);
    return set;
  }

  /// A probe of `set` at `size`: a row of the sweep where one runs it with the
  /// same choice, else a collective of its own (forced only where the tuner
  /// would choose otherwise at that size).
  void add_probe(std::size_t set, core::Bytes size) {
    auto& probes = probe_sets_[set];
    const std::size_t index = probes.sizes.size();
    probes.sizes.push_back(size);
    probes.bytes.push_back(0);
    probes.time_us.push_back(0);
    std::uint64_t count = 0;
    const bool own = same_choice(planner_.tuner_choice(call_for(collective_bytes(size, count), std::nullopt)), probes.choice);
    const auto row = std::find_if(jobs_.begin(), jobs_.end(), [&](const Job& j) { return j.row && j.size == size; });
    if (own && row != jobs_.end() && row->probe_set == kNoProbe) {
      row->probe_set = set;
      row->probe = index;
      return;
    }
    jobs_.push_back({size, own ? std::nullopt : std::optional<TunerChoice>(probes.choice), false, set, index});
  }

  /// Time per byte between probes i - 1 and i of a set.
  static double per_byte(const ProbeSet& set, std::size_t i) {
    return (set.time_us[i] - set.time_us[i - 1]) / static_cast<double>(set.bytes[i] - set.bytes[i - 1]);
  }

  /// Whether the last three probes of a set lie on one line (within kExtrapolationTolerance).
  static bool straight(const ProbeSet& set) {
    const std::size_t last = set.sizes.size() - 1;
    const double hi = per_byte(set, last), lo = per_byte(set, last - 1);
    return hi > 0 && std::abs(lo / hi - 1) <= kExtrapolationTolerance;
  }

  /// Once every job has run: a set whose line is not yet straight probes at
  /// double its largest size, as long as that is below the rows it serves.
  void probe_further() {
    for (std::size_t s = 0; s < probe_sets_.size(); ++s) {
      const auto& set = probe_sets_[s];
      if (!straight(set) && set.sizes.back() * 2 <= set.largest_row) add_probe(s, set.sizes.back() * 2);
    }
  }

  void start_job(std::size_t index) {
    if (index >= jobs_.size()) return;
    const Job job = jobs_[index];
    NcclTestRow row;
    row.bytes = collective_bytes(job.size, row.count);
    PlannedCall call = planner_.plan(call_for(row.bytes, job.forced));
    auto& plan = call.plan;
    auto& params = call.params;
    row.channels = plan.reported_channels();
    row.algorithm = plan.algorithm;
    row.protocol = plan.protocol;
    row.transfers = plan.transfers.size();
    // The kernel starts after the host enqueue and launch; nccl-tests times
    // back-to-back launches, so this overhead is part of every iteration.
    const core::TimePs begin = core::now_ps() + (row.bytes > 0 ? call.launch_overhead : 0);
    executor_.start(std::move(plan), std::move(params), begin, [this, index, job, row, gpu_launch = call.launch_overhead](const ExecutionResult& r) mutable {
      // nccl-tests averages the per-rank times (-a 1).
      // NCCL returns at once for zero bytes: nothing is launched.
      double sum = 0;
      for (auto t : r.rank_finish) sum += static_cast<double>(t + (row.bytes > 0 ? gpu_launch : 0));
      row.time_us = sum / static_cast<double>(r.rank_finish.size()) / 1e6;
      if (job.row) result_.rows.push_back(with_bandwidths(row));
      if (job.probe_set != kNoProbe) {
        auto& set = probe_sets_[job.probe_set];
        set.bytes[job.probe] = row.bytes;
        set.time_us[job.probe] = row.time_us;
        if (!job.row) ++result_.probes;
      }
      jobs_done_ = index + 1;
      if (jobs_done_ == jobs_.size()) probe_further();
      start_job(index + 1);
    });
  }

  NcclTestRow with_bandwidths(NcclTestRow row) const {
    row.algbw_gbps = row.time_us > 0 ? static_cast<double>(row.bytes) / (row.time_us * 1e3) : 0.0;
    row.busbw_gbps = row.algbw_gbps * bus_bandwidth_factor(config_.op, ranks_);
    return row;
  }

  /// The rows above extrapolate_above: a probe's own time where one ran at
  /// the row's size, else along the line through its set's two largest probes.
  void extrapolate() {
    std::vector<bool> doubted(probe_sets_.size(), false);
    for (const auto& e : extrapolated_) {
      const auto& set = probe_sets_[e.probe_set];
      const std::size_t last = set.sizes.size() - 1;
      NcclTestRow row;
      row.bytes = collective_bytes(e.size, row.count);
      row.algorithm = algorithm_name(set.choice.algorithm);
      row.protocol = topo::protocol_name(set.choice.protocol);
      row.channels = set.choice.channels;
      const auto ran = std::find(set.sizes.begin(), set.sizes.end(), e.size);
      if (ran != set.sizes.end()) {
        row.time_us = set.time_us[static_cast<std::size_t>(ran - set.sizes.begin())];
        result_.rows.push_back(with_bandwidths(row));
        continue;
      }
      row.time_us = set.time_us[last] + per_byte(set, last) * static_cast<double>(row.bytes - set.bytes[last]);
      row.extrapolated = true;
      result_.rows.push_back(with_bandwidths(row));
      if (doubted[e.probe_set] || straight(set)) continue;
      doubted[e.probe_set] = true;
      constexpr double kMiB = 1024.0 * 1024.0;
      const double lo = per_byte(set, last - 1), hi = per_byte(set, last);
      result_.warnings.push_back(fmt::format(
          "rows above {} B ({}/{}, {} channels) are extrapolated, but the time per MiB is {:.3f} us from {} to {} B and {:.3f} us from {} "
          "to {} B ({:+.1f}%): the line is not yet straight there; simulate every row",
          set.sizes[last], row.algorithm, row.protocol, row.channels, lo * kMiB, set.bytes[last - 2], set.bytes[last - 1], hi * kMiB,
          set.bytes[last - 1], set.bytes[last], 100 * (lo / hi - 1)));
    }
  }

  topo::FabricBackend& fabric_;
  NcclTestConfig config_;
  core::ProgressLine* progress_;
  core::TimerQueue timers_;
  PlanExecutor executor_;
  CollectivePlanner planner_;
  int ranks_ = 0;
  std::vector<int> gpu_of_rank_;
  std::vector<core::Bytes> sizes_;
  std::vector<Job> jobs_;
  std::size_t jobs_done_ = 0;
  std::vector<ProbeSet> probe_sets_;
  std::vector<Extrapolated> extrapolated_;
  NcclTestResult result_;
};

}  // namespace

NcclTestResult run_nccl_test(topo::FabricBackend& fabric, const NcclTestConfig& config, core::ProgressLine* progress) {
  SweepDriver driver(fabric, config, progress);
  return driver.run();
}

std::string launch_description(const NcclTestConfig& config, const topo::GpuModel& gpu, const std::string& setting) {
  const std::string fitted = fmt::format("gpus/{}/launch_overhead, fitted on one thread driving 4 GPUs", gpu.name);
  if (!config.gpus_per_process) return fmt::format("not given ({}): {}", setting, fitted);
  // A flag reads "--gpus-per-process 4", a JSON path "/workload/gpus_per_process: 4".
  const std::string given = fmt::format("{}{} {}", setting, setting.rfind("--", 0) == 0 ? "" : ":", *config.gpus_per_process);
  if (*config.gpus_per_process > 1) return fmt::format("one process drives {} GPUs ({}): {}", *config.gpus_per_process, given, fitted);
  if (!gpu.launch_overhead_one_gpu_per_process)
    return fmt::format("one process per GPU ({}): {} (the catalogue has no launch_overhead_one_gpu_per_process)", given, fitted);
  return fmt::format("one process per GPU ({}): gpus/{}/launch_overhead_one_gpu_per_process", given, gpu.name);
}

}  // namespace fabsim::traces
