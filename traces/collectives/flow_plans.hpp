#pragma once
/// Collectives for the flow-level fabric: instead of one transfer per slice
/// and step, each channel's ring hop (or NVLS head) is one long flow carrying
/// everything that hop moves, with the step count it stands for, so the
/// executor charges the per-step latencies and the fabric the per-step path
/// latency. The segment planners stay the reference; tests hold the two
/// within 5% on the stock scenarios.

#include "traces/collectives/nvls_planner.hpp"
#include "traces/collectives/ring_planner.hpp"

namespace fabsim::traces {

/// With `merge_channels` (every channel runs the same ring, as inside one
/// NVLink domain) each ring hop is one transfer standing for all channels
/// (PlannedTransfer::lanes), which the fabric weighs as that many flows.
CollectivePlan plan_ring_flow(const RingRequest& request, const topo::ProtocolParams& protocol, bool merge_channels = false);
CollectivePlan plan_nvls_flow(const NvlsRequest& request, const topo::NvlsParams& nvls);

/// Any segment-level plan made flow-level: the transfers one rank sends
/// another on one channel become one flow standing for that many steps. With
/// `pipeline` (a chain: broadcast, reduce, tree), a hop's steps also count
/// its depth in the chain; without, pairs stay independent (point-to-point).
CollectivePlan coalesce_for_flow(const CollectivePlan& plan, bool pipeline);

}  // namespace fabsim::traces
