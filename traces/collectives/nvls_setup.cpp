#include "traces/collectives/nvls_setup.hpp"

#include <algorithm>

namespace fabsim::traces {

namespace {

constexpr core::Bytes kKiB = 1024;
constexpr int kSm100Channels = 32;  // NVLS_NCHANNELS_SM100

/// ncclNvlsTreeSm100Tuning (nvls.cc, 2.30.3 to 2.30.7): Blackwell across
/// nodes, by node count, ranks per node, NIC speed and the GPU-to-NIC path.
NvlsSetup sm100_across_nodes(const NvlsCommunicator& comm) {
  NvlsSetup s{kSm100Channels, 128 * kKiB, 0};
  const int ppn = comm.ranks_per_node;
  if (comm.nodes == 2 && comm.nic_gbps >= 48.0) {
    s.channels = 32;
    s.tree_max_chunk = 128 * kKiB;
    if (ppn <= 4) {
      s.chunk = s.tree_max_chunk = 256 * kKiB;
    } else if (ppn >= 16 || (ppn <= 8 && comm.nic_under_gpu_pcie_switch && comm.nic_gbps < 96.0)) {
      s.tree_max_chunk = 64 * kKiB;
    }
  } else if (comm.nic_gbps >= 96.0) {
    if (ppn <= 8) {
      s.channels = 24;
      s.chunk = s.tree_max_chunk = 256 * kKiB;
    } else {
      s.channels = 32;
      s.tree_max_chunk = ppn < 32 ? 128 * kKiB : 64 * kKiB;
    }
  } else if (comm.nic_gbps >= 48.0) {
    s.channels = 24;
    s.tree_max_chunk = comm.nic_under_gpu_pcie_switch ? 64 * kKiB : 128 * kKiB;
  }
  // Slower NICs: the tuning leaves treeMaxChunkSize unset, and nvls.cc's fallback applies.
  if (s.tree_max_chunk == 0) s.tree_max_chunk = default_nvls_tree_max_chunk(s.chunk, comm.nodes);
  return s;
}

}  // namespace

core::Bytes default_nvls_tree_max_chunk(core::Bytes nvls_chunk, int nodes) {
  return nodes >= 4 ? std::min<core::Bytes>(nvls_chunk, 64 * kKiB) : nvls_chunk;
}

NvlsSetup nccl_nvls_setup(const topo::NvlsParams& nvls, const std::string& architecture, const NcclTunerRelease& release,
                          const NvlsCommunicator& comm) {
  const bool across_nodes = comm.nodes > 1;
  NvlsSetup s{nvls.channels, nvls.chunk_bytes, default_nvls_tree_max_chunk(nvls.chunk_bytes, comm.nodes)};
  if (architecture != "blackwell") return s;
  switch (release.blackwell_nvls) {
    case NcclBlackwellNvls::kAlways32: s.channels = kSm100Channels; break;
    case NcclBlackwellNvls::kFewerInOneDomain:
      if (across_nodes) s.channels = kSm100Channels;
      break;
    case NcclBlackwellNvls::kTunedAcrossNodes:
      if (across_nodes) s = sm100_across_nodes(comm);
      break;
  }
  return s;
}

}  // namespace fabsim::traces
