#pragma once
/// NCCL's NVLS all-reduce (device/all_reduce.h, runNvls) as a CollectivePlan:
/// the buffer is split into one slice per head (every rank, up to NCCL's 32:
/// nvls_heads); each head pulls its slice from every rank through the switch,
/// which reduces it (multimem.ld_reduce), then stores the result to every rank
/// through the switch's multicast (multimem.st). Per head port and direction
/// that moves S (h+1)/h instead of a ring's 2 S (n-1)/n; other ranks move S.

#include "topologies/hardware_catalogue.hpp"
#include "traces/collectives/collective.hpp"
#include "traces/collectives/plan.hpp"

namespace fabsim::traces {

struct NvlsRequest {
  int ranks = 2;
  core::Bytes bytes = 0;  ///< per-rank buffer (all-reduce)
  int channels = 1;
  core::Bytes element_size = 4;
};

/// NVLS heads of a communicator of `ranks` in one NVLink domain: every rank, at
/// most NCCL_MAX_NVLS_ARITY (32, src/include/device.h; connect.cc gives each
/// NVLS channel that many heads), so 32 of an NVL72 rack's 72 GPUs.
int nvls_heads(int ranks);

/// The all-reduce request as NVLS splits it: its ranks are the heads
/// (nvls_heads of the request's ranks), each with one share of the buffer.
NvlsRequest nvls_head_split(const NvlsRequest& request);

/// Bytes of the buffer rank `head` is the head of: an even split of the buffer
/// over request.ranks heads, in whole elements.
core::Bytes nvls_head_share(const NvlsRequest& request, int head);

CollectivePlan plan_nvls_all_reduce(const NvlsRequest& request, const topo::NvlsParams& nvls);

/// NCCL's NVLS all-gather and reduce-scatter (one multimem store, or one
/// multimem load-reduce, per chunk): each rank stores its own block to every
/// rank through the switch's multicast (all-gather), or pulls its block of
/// everyone's buffer reduced by the switch (reduce-scatter). `bytes` is the
/// total (nccl-tests' size). Per port that moves S/n one way and S the other.
/// Throws std::invalid_argument for any other operation.
CollectivePlan plan_nvls_gather_scatter(CollectiveOp op, const NvlsRequest& request, const topo::NvlsParams& nvls);

/// NCCL's NVLS chunk for a call: 128 KiB, halved (down to 16 KiB) for small
/// buffers (enqueue.cc: below 64/8/2 x nChannels x nHeads x chunk).
core::Bytes nvls_chunk_bytes(core::Bytes bytes, int channels, int heads, core::Bytes chunk);

}  // namespace fabsim::traces
