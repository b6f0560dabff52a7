#include "traces/nccl_test_runner.hpp"

#include <fmt/format.h>

#include <cmath>
#include <numeric>

#include "sim/core/error.hpp"
#include "sim/core/kernel.hpp"
#include "traces/collectives/chain_planner.hpp"
#include "traces/collectives/flow_plans.hpp"
#include "traces/collectives/nvls_planner.hpp"
#include "traces/collectives/p2p_planner.hpp"
#include "topologies/nvlink_domains.hpp"
#include "traces/collectives/ring_layout.hpp"
#include "traces/collectives/ring_planner.hpp"
#include "traces/collectives/tuner.hpp"
#include "traces/executor/plan_executor.hpp"

namespace fabsim::traces {

std::vector<core::Bytes> nccl_test_sizes(const NcclTestConfig& config) {
  std::vector<core::Bytes> sizes;
  // nccl-tests: for (size = min; size <= max; size = size * factor)
  for (double size = static_cast<double>(config.min_bytes); size <= static_cast<double>(config.max_bytes);
       size = std::max(size * config.factor, size + 1)) {
    sizes.push_back(static_cast<core::Bytes>(size));
    if (config.factor <= 1.0) break;
  }
  return sizes;
}

void validate_nccl_test(const NcclTestConfig& config, const topo::TopologySpec& spec, const std::string& origin) {
  core::Diagnostics diag(origin);
  const int available = static_cast<int>(spec.gpus.size());
  if (config.gpus < 0 || config.gpus > available)
    diag.error("/gpus", fmt::format("asked for {} GPUs but {} has {}", config.gpus, spec.file, available));
  if (config.min_bytes > config.max_bytes)
    diag.error("/min_bytes", fmt::format("minimum size {} is larger than the maximum {}", config.min_bytes, config.max_bytes));
  if (!(config.factor > 1.0) && config.min_bytes != config.max_bytes)
    diag.error("/factor", fmt::format("expected a step factor > 1, found {}", config.factor));
  if (config.algorithm != "auto" && !parse_algorithm(config.algorithm))
    diag.error("/algo", fmt::format("algorithm '{}' is not modelled (available: ring, tree, nvls, auto)", config.algorithm));
  if (parse_algorithm(config.algorithm) == Algorithm::kTree && config.op != CollectiveOp::kAllReduce)
    diag.error("/algo", fmt::format("Tree is an all_reduce algorithm, not one for {}", collective_name(config.op)));
  if (parse_algorithm(config.algorithm) == Algorithm::kNvls && config.op != CollectiveOp::kAllReduce)
    diag.error("/algo", fmt::format("NVLS is modelled for all_reduce only, not {}", collective_name(config.op)));
  const int used = config.gpus == 0 ? available : config.gpus;
  if (config.root < 0 || (config.root >= used && used > 0))
    diag.error("/root", fmt::format("root rank {} is outside the {} ranks", config.root, used));
  if (config.channels && (*config.channels < 1 || *config.channels > 64))
    diag.error("/channels", fmt::format("expected 1..64 channels (NCCL's MAXCHANNELS), found {}", *config.channels));
  if (!spec.gpus.empty()) {
    const auto& model = spec.gpu_model(0);
    if (parse_algorithm(config.algorithm) == Algorithm::kNvls && !model.nvls)
      diag.error("/algo", fmt::format("gpu model '{}' has no NVLS parameters (NVLS needs Hopper or later)", model.name));
    if (config.protocol && !model.protocols.contains(*config.protocol))
      diag.error("/proto", fmt::format("gpu model '{}' has no parameters for protocol {}", model.name,
                                       topo::protocol_name(*config.protocol)));
    const int ranks = config.gpus == 0 ? available : config.gpus;
    for (int r = 1; r < ranks && r < available; ++r)
      if (spec.devices[spec.gpus[r]].model != model.name)
        diag.error(spec.devices[spec.gpus[r]].json_path, "mixed GPU models in one communicator are not supported");
  }
  diag.throw_if_any();
}

namespace {

/// Drives the sweep from completion callbacks: each size starts when the
/// previous one has finished, like nccl-tests' loop over sizes.
class SweepDriver {
 public:
  SweepDriver(topo::FabricBackend& fabric, const NcclTestConfig& config)
      : fabric_(fabric), config_(config), timers_("executor_timers"), executor_(fabric, timers_) {
    ranks_ = config.gpus == 0 ? fabric.gpu_count() : config.gpus;
    gpu_of_rank_.resize(static_cast<std::size_t>(ranks_));
    std::iota(gpu_of_rank_.begin(), gpu_of_rank_.end(), 0);
    sizes_ = nccl_test_sizes(config);
    nvls_available_ = fabric.supports_in_switch_collectives(gpu_of_rank_);
    const auto domains = topo::nvlink_domains(fabric.spec());
    for (int gpu : gpu_of_rank_) {
      domain_of_rank_.push_back(domains.domain_of_gpu[gpu]);
      rail_of_rank_.push_back(domains.local_index[gpu]);
    }
  }

  NcclTestResult run() {
    start_next(0);
    core::run_to_completion();
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
    const auto& gpu = fabric_.spec().gpu_model(0);
    NcclTestRow row;
    row.bytes = nccl_tests_bytes(config_.op, sizes_[index], ranks_, config_.element_size, row.count);
    const TunerChoice choice = choose(gpu, {config_.op, ranks_, row.bytes, config_.protocol, config_.channels,
                                            parse_algorithm(config_.algorithm), nvls_available_});
    CollectivePlan plan;
    ExecutionParams params;
    params.gpu_of_rank = gpu_of_rank_;
    const bool flow_level = fabric_.flow_level();
    const bool point_to_point = config_.op == CollectiveOp::kSendRecv || config_.op == CollectiveOp::kAllToAll ||
                                config_.op == CollectiveOp::kGather || config_.op == CollectiveOp::kScatter;
    if (point_to_point) {
      plan = plan_p2p({config_.op, ranks_, config_.root, row.bytes}, gpu);
      const auto& protocol = gpu.protocols.at(*parse_protocol(plan.protocol));
      params.step_latency = protocol.step_latency;
    } else if (choice.algorithm == Algorithm::kNvls) {
      if (!nvls_available_)
        throw core::ConfigError(fabric_.spec().file, "/devices",
                                "NVLS needs a switch with in-network reduction attached to every GPU used");
      const NvlsRequest nvls{ranks_, row.bytes, choice.channels, config_.element_size};
      plan = flow_level ? plan_nvls_flow(nvls, *gpu.nvls) : plan_nvls_all_reduce(nvls, *gpu.nvls);
      params.step_latency = gpu.nvls->step_latency;  // the switch reduces: no reduce latency on the GPU
    } else {
      const auto& protocol = gpu.protocols.at(choice.protocol);
      if (choice.algorithm == Algorithm::kTree) {
        plan = plan_tree_all_reduce({config_.op, ranks_, 0, row.bytes, choice.channels, choice.protocol, config_.element_size}, protocol);
      } else if (config_.op == CollectiveOp::kBroadcast || config_.op == CollectiveOp::kReduce) {
        plan = plan_chain({config_.op, ranks_, config_.root, row.bytes, choice.channels, choice.protocol, config_.element_size}, protocol);
      } else {
        const RingRequest ring{config_.op, ranks_, row.bytes, choice.channels, choice.protocol, config_.element_size};
        plan = flow_level ? plan_ring_flow(ring, protocol) : plan_ring(ring, protocol);
        place_on_rings(plan, rail_aligned_rings(domain_of_rank_, rail_of_rank_, plan.channels));
      }
      params.step_latency = protocol.step_latency;
      params.reduce_latency = gpu.reduce_latency;
      params.channel_cap = protocol.channel_cap;
    }
    if (flow_level && !plan.aggregated) plan = coalesce_for_flow(plan, !point_to_point);
    params.flow_level = plan.aggregated;
    row.channels = plan.channels;
    row.algorithm = plan.algorithm;
    row.protocol = plan.protocol;
    row.transfers = plan.transfers.size();
    // The kernel starts after the host enqueue and launch; nccl-tests times
    // back-to-back launches, so this overhead is part of every iteration.
    const core::TimePs begin = core::now_ps() + (row.bytes > 0 ? gpu.launch_overhead : 0);
    executor_.start(std::move(plan), std::move(params), begin, [this, index, row, gpu_launch = gpu.launch_overhead](const ExecutionResult& r) mutable {
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
  core::TimerQueue timers_;
  PlanExecutor executor_;
  int ranks_ = 0;
  std::vector<int> gpu_of_rank_;
  std::vector<int> domain_of_rank_, rail_of_rank_;  // NVLink domain and rail of each rank, for multi-node rings
  std::vector<core::Bytes> sizes_;
  bool nvls_available_ = false;
  NcclTestResult result_;
};

}  // namespace

NcclTestResult run_nccl_test(topo::FabricBackend& fabric, const NcclTestConfig& config) {
  SweepDriver driver(fabric, config);
  return driver.run();
}

}  // namespace fabsim::traces
