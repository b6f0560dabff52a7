#pragma once
/// The channel-drift term of a collective (topo::ChannelDrift): how much later
/// than its modelled transfers a pipelined Simple-protocol collective ends,
/// because it waits for the slowest of its channels.

#include "topologies/hardware_catalogue.hpp"
#include "traces/collectives/plan.hpp"

namespace fabsim::traces {

/// The inverse of the standard normal distribution function (Acklam's
/// rational approximation, relative error below 1.2e-9) for p in (0, 1).
double normal_quantile(double p);

/// The expected largest of n standard normal draws, by Blom's formula: the
/// (n - 3/8)/(n + 1/4) quantile (within 2% of the exact order statistic
/// for n from 4 to 64, 4.5% at n = 2); 0 for n = 1.
double expected_normal_maximum(int n);

/// The drift `plan` adds: the bytes the busiest rank moves, spread over the
/// plan's channels, in drift units K per channel: K x mean + sqrt(K) x sd x
/// expected_normal_maximum(channels). 0 for protocols other than Simple,
/// for point-to-point plans and when `drift` is inactive.
core::TimePs channel_drift(const CollectivePlan& plan, const topo::ChannelDrift& drift);

}  // namespace fabsim::traces
