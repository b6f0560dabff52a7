#include "traces/collectives/nccl_net_channels.hpp"

#include <algorithm>
#include <cmath>
#include <span>

namespace fabsim::traces {

namespace {

constexpr int kMaxGraphChannels = 32;    // MAXCHANNELS / 2: a ring graph's maxChannels
constexpr int kMaxRuntimeChannels = 64;  // MAXCHANNELS (src/include/device.h)

bool hopper_or_later(const std::string& architecture) { return architecture == "hopper" || architecture == "blackwell"; }

/// search.cc's inter-node speed lists (speedArrayInter, sm90SpeedArrayInter, sm100SpeedArrayInter), GB/s.
std::span<const double> inter_node_speeds(const std::string& architecture) {
  static constexpr double kDefault[] = {48.0, 30.0, 28.0, 24.0, 20.0, 18.0, 15.0, 12.0, 10.0, 9.0,
                                        7.0,  6.0,  5.0,  4.0,  3.0,  2.4,  1.2,  0.24, 0.12};
  static constexpr double kSm90[] = {48.0, 45.0, 42.0, 40.0, 30.0, 24.0, 22.0, 20.0, 17.5, 15.0, 12.0, 6.0, 3.0, 2.4, 1.2, 0.24, 0.12};
  static constexpr double kSm100[] = {96.0, 86.0, 80.0, 48.0, 45.1, 42.0, 40.0, 30.0, 24.0, 22.0,
                                      20.0, 17.5, 15.0, 12.0, 6.0,  3.0,  2.4,  1.2,  0.24, 0.12};
  if (architecture == "blackwell") return kSm100;
  if (architecture == "hopper") return kSm90;
  return kDefault;
}

}  // namespace

double nccl_nvlink_link_gbps(const std::string& architecture) {
  if (architecture == "blackwell") return 40.1;
  if (architecture == "hopper") return 20.6;
  if (architecture == "ampere" || architecture == "volta") return 20.0;
  return 0;
}

NcclNetRingGraph nccl_net_ring_graph(const std::string& architecture, int nics_per_node, double nic_gbps, double nvlink_gbps) {
  NcclNetRingGraph best;
  const auto speeds = inter_node_speeds(architecture);
  // Small tolerance: 370.8 / 45 must count 8 channels, not 7.99...
  const auto fits = [](double capacity, double speed) { return static_cast<int>(std::floor(capacity / speed + 1e-9)); };
  for (std::size_t i = 0; i < speeds.size(); ++i) {
    const double speed = speeds[i];
    if (speed > nic_gbps) continue;  // above maxBw: the search starts below it
    int channels = std::min(nics_per_node * fits(nic_gbps, speed), kMaxGraphChannels);
    if (nvlink_gbps > 0) channels = std::min(channels, fits(nvlink_gbps, speed));
    if (channels > 0 && channels * speed > best.graph_channels * best.speed_gbps) {
      best.graph_channels = channels;
      best.speed_gbps = speed;
    }
    // The search lowers its speed only while the next is over 0.49 of the best found.
    if (best.graph_channels > 0 && (i + 1 == speeds.size() || speeds[i + 1] / best.speed_gbps <= 0.49)) break;
  }
  if (best.graph_channels == 0) {  // nothing fits even the slowest speed: one channel at it
    best.graph_channels = 1;
    best.speed_gbps = speeds.back();
  }
  // ncclTopoDupChannels.
  const bool keep = best.speed_gbps < 25.0 || (hopper_or_later(architecture) && best.speed_gbps < 50.0 && best.graph_channels > 4);
  if (!keep) {
    const int doubled = std::min(2 * best.graph_channels, kMaxGraphChannels);
    best.speed_gbps /= (doubled + best.graph_channels - 1) / best.graph_channels;
    best.graph_channels = doubled;
  }
  // ncclTopoPostset.
  best.runtime_channels = std::min(2 * best.graph_channels, kMaxRuntimeChannels);
  if (hopper_or_later(architecture) && best.speed_gbps > 45.0 && best.runtime_channels < 16)
    best.runtime_channels = std::min(2 * best.runtime_channels, kMaxRuntimeChannels);
  return best;
}

}  // namespace fabsim::traces
