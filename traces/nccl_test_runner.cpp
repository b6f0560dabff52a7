#include "traces/nccl_test_runner.hpp"

#include <fmt/format.h>

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
  if (config.min_bytes > config.max_bytes)
    diag.error(at("min_bytes", "-b"), fmt::format("minimum size {} is larger than the maximum {}", config.min_bytes, config.max_bytes));
  if (!(config.factor > 1.0) && config.min_bytes != config.max_bytes)
    diag.error(at("factor", "-f"), fmt::format("expected a step factor > 1, found {}", config.factor));
  if (config.nccl_version)
    if (const auto problem = nccl_version_problem(nccl_version_name(*config.nccl_version)))
      diag.error(at("nccl_version", "--nccl-version"), *problem);
  if (config.algorithm != "auto" && !parse_algorithm(config.algorithm))
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
/// previous one has finished, like nccl-tests' loop over sizes.
class SweepDriver {
 public:
  SweepDriver(topo::FabricBackend& fabric, const NcclTestConfig& config, core::ProgressLine* progress)
      : fabric_(fabric), config_(config), progress_(progress), timers_("executor_timers"), executor_(fabric, timers_), planner_(fabric) {
    ranks_ = config.gpus == 0 ? fabric.gpu_count() : config.gpus;
    gpu_of_rank_.resize(static_cast<std::size_t>(ranks_));
    std::iota(gpu_of_rank_.begin(), gpu_of_rank_.end(), 0);
    sizes_ = nccl_test_sizes(config);
  }

  NcclTestResult run() {
    start_next(0);
    double total_bytes = 0;
    for (const auto bytes : sizes_) total_bytes += static_cast<double>(bytes);
    core::run_with_progress(progress_, [this, total_bytes](core::ProgressLine& line) {
      double done_bytes = 0;
      for (std::size_t i = 0; i < result_.rows.size(); ++i) done_bytes += static_cast<double>(sizes_[i]);  // rows come in size order
      line.update(result_.rows.size(), sizes_.size(), total_bytes > 0 ? done_bytes / total_bytes : 0.0);
    });
    fabric_.rethrow_failure();
    timers_.rethrow_failure();
    if (result_.rows.size() != sizes_.size())
      throw core::SimulationError(fmt::format(
          "the simulation stopped after {} of {} sizes: the {}-byte collective deadlocked with {} transfers outstanding:{}",
          result_.rows.size(), sizes_.size(), sizes_[result_.rows.size()], executor_.outstanding(), executor_.describe_stuck()));
    result_.simulated = core::now_ps();
    result_.segments = fabric_.units_injected();
    result_.timer_events = timers_.fired();
    return result_;
  }

 private:
  void start_next(std::size_t index) {
    if (index >= sizes_.size()) return;
    NcclTestRow row;
    row.bytes = nccl_tests_bytes(config_.op, sizes_[index], ranks_, config_.element_size, row.count);
    PlannedCall call = planner_.plan({config_.op, row.bytes, config_.root, gpu_of_rank_, parse_algorithm(config_.algorithm),
                                      config_.protocol, config_.channels, config_.element_size, std::nullopt,
                                      nccl_tuner_release(config_.nccl_version)});
    auto& plan = call.plan;
    auto& params = call.params;
    row.channels = plan.channels;
    row.algorithm = plan.algorithm;
    row.protocol = plan.protocol;
    row.transfers = plan.transfers.size();
    // The kernel starts after the host enqueue and launch; nccl-tests times
    // back-to-back launches, so this overhead is part of every iteration.
    const core::TimePs begin = core::now_ps() + (row.bytes > 0 ? call.launch_overhead : 0);
    executor_.start(std::move(plan), std::move(params), begin, [this, index, row, gpu_launch = call.launch_overhead](const ExecutionResult& r) mutable {
      // nccl-tests averages the per-rank times (-a 1).
      // NCCL returns at once for zero bytes: nothing is launched.
      double sum = 0;
      for (auto t : r.rank_finish) sum += static_cast<double>(t + (row.bytes > 0 ? gpu_launch : 0));
      row.time_us = sum / static_cast<double>(r.rank_finish.size()) / 1e6;
      row.algbw_gbps = row.time_us > 0 ? static_cast<double>(row.bytes) / (row.time_us * 1e3) : 0.0;
      row.busbw_gbps = row.algbw_gbps * bus_bandwidth_factor(config_.op, ranks_);
      result_.rows.push_back(row);
      start_next(index + 1);
    });
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
  NcclTestResult result_;
};

}  // namespace

NcclTestResult run_nccl_test(topo::FabricBackend& fabric, const NcclTestConfig& config, core::ProgressLine* progress) {
  SweepDriver driver(fabric, config, progress);
  return driver.run();
}

}  // namespace fabsim::traces
