#include "sim/calibration/known_gaps.hpp"

#include <algorithm>
#include <map>
#include <numeric>
#include <set>
#include <tuple>

namespace fabsim::calibration {

namespace {

/// The NIC model of GCP's GPUDirect-TCPXO in the stock catalogue.
constexpr const char* kTcpxoNic = "gpudirect-tcpxo";

const char* const kRacksWarning =
    "not validated beyond two NVL72 racks: the one measurement there (CoreWeave, 20 racks, NCCL 2.26.2) reaches a quarter "
    "to a half of the all-reduce busbw fabsim gives from 512 MiB to 16 GiB, and no model change here has explained it (README, Known gaps)";

const char* const kTcpxoWarning =
    "over GPUDirect-TCPXO the one measured all-reduce sweep (2 A3 Mega VMs) is 1.3-3.2 times slower than fabsim from 1 MiB "
    "to 256 MiB: GCP's tuner plugin chooses NCCL's algorithms there and its configuration is not public (README, Known gaps)";

const char* const kPcieHostWarning =
    "GPUs of one host without NVLink between them: fabsim takes each NVLink domain for an NCCL node, where NCCL counts one "
    "node per host, so this call's algorithm choice, latencies and point-to-point rules follow NCCL's multi-node ones; "
    "no measurement checks it (README, Known gaps)";

const char* const kOneRankWarning =
    "one rank: NCCL copies the buffer on the GPU (ncclLaunchOneRank: a device-to-device cudaMemcpyAsync out of place), "
    "which fabsim does not time, so the figure is the per-call cost alone; the H200 harness's one-GPU sweeps (NCCL 2.28.3) "
    "take 19 us at 32 MiB and 504 us at 1 GiB (README, Known gaps)";

/// From this size the harness's one-GPU rows leave the per-call floor (5-8 us up to 16 MiB, 19 us at 32 MiB).
constexpr core::Bytes kOneRankCopyVisible = 32ull << 20;

/// By GPU, the PCIe tree it hangs from (GPUs joined by PCIe links, through switches and root complexes: one host).
std::vector<int> pcie_tree_of_gpu(const topo::TopologySpec& spec) {
  std::vector<int> parent(spec.devices.size());
  std::iota(parent.begin(), parent.end(), 0);
  auto find = [&](int x) {
    while (parent[static_cast<std::size_t>(x)] != x) x = parent[static_cast<std::size_t>(x)] = parent[static_cast<std::size_t>(parent[static_cast<std::size_t>(x)])];
    return x;
  };
  for (const auto& l : spec.links)
    if (l.kind == topo::LinkKind::kPcie) parent[static_cast<std::size_t>(find(l.a))] = find(l.b);
  std::vector<int> out;
  for (int gpu : spec.gpus) out.push_back(find(gpu));
  return out;
}

}  // namespace

KnownGaps::KnownGaps(const topo::TopologySpec& spec) : domains_(topo::nvlink_domains(spec)), pcie_tree_of_gpu_(pcie_tree_of_gpu(spec)) {
  tcpxo_ = std::any_of(spec.devices.begin(), spec.devices.end(),
                       [](const topo::DeviceSpec& d) { return d.kind == topo::DeviceKind::kNic && d.model == kTcpxoNic; });
}

std::vector<std::string> KnownGaps::warnings(traces::CollectiveOp op, core::Bytes min_bytes, core::Bytes max_bytes,
                                             const std::vector<int>& gpus) const {
  std::vector<std::string> out;
  if (gpus.size() == 1 && max_bytes >= kOneRankCopyVisible) out.emplace_back(kOneRankWarning);
  std::vector<int> used;
  std::map<int, int> domain_in_tree;  // PCIe tree -> an NVLink domain of a GPU in it
  bool split_host = false;
  for (int g : gpus) {
    const int domain = domains_.domain_of_gpu.at(static_cast<std::size_t>(g));
    used.push_back(domain);
    const auto [it, inserted] = domain_in_tree.try_emplace(pcie_tree_of_gpu_.at(static_cast<std::size_t>(g)), domain);
    split_host = split_host || (!inserted && it->second != domain);
  }
  // pcie-8gpu, or NVLink-bridged pairs in one host: NCCL's nNodes is 1 (one host hash), fabsim's the domains.
  if (split_host) out.emplace_back(kPcieHostWarning);
  if (op != traces::CollectiveOp::kAllReduce) return out;
  std::sort(used.begin(), used.end());
  used.erase(std::unique(used.begin(), used.end()), used.end());
  const auto racks = std::count_if(used.begin(), used.end(), [&](int d) {
    return static_cast<std::size_t>(domains_.size[static_cast<std::size_t>(d)]) > topo::kLargestBoardGpus;
  });
  // CoreWeave's 20-rack sweep (gb200_1440gpu_20rack_all_reduce_coreweave_readme, held out): 406 GB/s busbw at
  // 16 GiB and 151 at 512 MiB, where fabsim gives 856 and 661; forcing Ring or Tree does not close it. 2 racks are
  // within 5-27%.
  if (racks > 2) out.emplace_back(kRacksWarning);
  // The A3 Mega all-reduce sweep (h100_16gpu_2node_all_reduce_gcp_a3mega) is 1.3-3.2x slower than fabsim from
  // 1 MiB to 256 MiB, though TCPXO's rate and per-call cost were fitted on it; GCP's tuner plugin chooses there.
  if (used.size() > 1 && tcpxo_ && min_bytes <= (256ull << 20) && max_bytes >= (1ull << 20)) out.emplace_back(kTcpxoWarning);
  return out;
}

std::vector<std::string> known_gap_warnings(const topo::TopologySpec& spec, const std::vector<int>& ranks,
                                            const traces::NcclTestConfig& test) {
  return KnownGaps(spec).warnings(test.op, test.min_bytes, test.max_bytes, ranks);
}

std::vector<std::string> known_gap_warnings(const topo::TopologySpec& spec, const std::vector<traces::ReplayJob>& jobs) {
  const KnownGaps gaps(spec);
  std::set<std::string> found;
  for (const auto& job : jobs) {
    std::set<std::tuple<int, bool, core::Bytes>> seen;  // (communicator, all-reduce or not, bytes): each checked once
    const auto gpu_of = [&](int rank) { return job.gpu_of_rank.at(static_cast<std::size_t>(rank)); };
    for (const auto& program : job.trace->programs)
      for (const auto& op : program.ops) {
        if (op.comm < 0) continue;
        const bool all_reduce = op.type == traces::TraceOpType::kAllReduce;
        if (!seen.emplace(op.comm, all_reduce, op.bytes).second) continue;
        // Any op but an all-reduce stands for the rest (warnings() tells only all-reduces apart).
        const auto as = all_reduce ? traces::CollectiveOp::kAllReduce : traces::CollectiveOp::kAllGather;
        for (const auto& group : job.trace->communicators[static_cast<std::size_t>(op.comm)].groups) {
          std::vector<int> gpus;
          for (int r : group) gpus.push_back(gpu_of(r));
          for (auto& w : gaps.warnings(as, op.bytes, op.bytes, gpus)) found.insert(std::move(w));
        }
      }
  }
  return {found.begin(), found.end()};
}

}  // namespace fabsim::calibration
