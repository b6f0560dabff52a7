#pragma once
/// How many NVLS channels NCCL runs and how large its NVLS and NVLSTree
/// chunks may grow, per NCCL release (src/transport/nvls.cc ncclNvlsInit and,
/// from 2.30.3, ncclNvlsTuning; src/enqueue.cc calcCollChunking). Hopper
/// keeps the catalogue's values everywhere (NVLS_NCHANNELS_SM90, 16);
/// Blackwell's depend on the release and, across nodes, on the NICs.

#include "topologies/hardware_catalogue.hpp"
#include "traces/collectives/nccl_tuner_tables.hpp"

namespace fabsim::traces {

/// What nvls.cc reads of the communicator: nNodes (NVLink domains),
/// minLocalRanks, minNetBw (GB/s per NIC as the plugin reports it: a
/// 400 Gb/s port is 50) and whether the NVLS graph's GPU-to-NIC path stays
/// under PCIe switches (typeInter <= PATH_PXB).
struct NvlsCommunicator {
  int nodes = 1;
  int ranks_per_node = 1;
  double nic_gbps = 0;
  bool nic_under_gpu_pcie_switch = true;
};

struct NvlsSetup {
  int channels = 1;                ///< comm->nvlsChannels
  core::Bytes chunk = 0;           ///< comm->nvlsChunkSize
  core::Bytes tree_max_chunk = 0;  ///< the largest NVLSTree chunk (NCCL_NVLSTREE_MAX_CHUNKSIZE's default)
};

/// NCCL_NVLSTREE_MAX_CHUNKSIZE's default (enqueue.cc up to 2.29; nvls.cc's
/// fallback from 2.30.3): 64 KiB from four nodes, else the NVLS chunk.
core::Bytes default_nvls_tree_max_chunk(core::Bytes nvls_chunk, int nodes);

/// The NVLS setup of `architecture` ("blackwell" differs by release) with
/// the catalogue's `nvls` (its channels: one NVLink domain, NCCL 2.27 on;
/// its chunk_bytes: NCCL_NVLS_CHUNKSIZE) under `release`.
NvlsSetup nccl_nvls_setup(const topo::NvlsParams& nvls, const std::string& architecture, const NcclTunerRelease& release,
                          const NvlsCommunicator& comm);

}  // namespace fabsim::traces
