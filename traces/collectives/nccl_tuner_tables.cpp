#include "traces/collectives/nccl_tuner_tables.hpp"

#include <algorithm>
#include <cmath>

namespace fabsim::traces {

namespace {
int protocol_index(topo::Protocol p) {
  switch (p) {
    case topo::Protocol::kLL: return 0;
    case topo::Protocol::kLL128: return 1;
    case topo::Protocol::kSimple: return 2;
  }
  return 2;
}
}  // namespace

const NcclBandwidthCaps& nccl_bandwidth_caps(const std::string& architecture) {
  // llMaxBws beyond one node are indexed by CPU vendor in NCCL; these are the Intel figures.
  static const NcclBandwidthCaps kVolta{{39.0, 39.0, 20.4}, {20, 20, 20}, {20, 20, 20}, {26.5, 18.5, 10.0}, {0, 0, 0}};
  static const NcclBandwidthCaps kAmpere{{87.7, 39.0, 20.4}, {20, 20, 20}, {20, 20, 20}, {24.0, 23.6, 17.8}, {0, 0, 0}};
  static const NcclBandwidthCaps kHopper{{141.0, 39.0, 20.4}, {36.7, 36.7, 36.7}, {36.7, 36.7, 29.0}, {38.7, 41.4, 36.0},
                                         {0, 57.7, 45.5}};
  static const NcclBandwidthCaps kBlackwell{{282.0, 39.0, 20.4}, {40, 40, 40}, {55.6, 31.67, 20.0}, {70.0, 42.8, 24.0},
                                            {0, 96.0, 80.0}};
  if (architecture == "volta") return kVolta;
  if (architecture == "ampere") return kAmpere;
  if (architecture == "blackwell") return kBlackwell;
  return kHopper;
}

int nccl_node_index(int nodes) { return nodes <= 1 ? 0 : nodes == 2 ? 1 : 2; }

double nccl_base_latency_us(bool tree, topo::Protocol protocol) {
  static constexpr double kRing[] = {6.6, 14.0, 8.4};
  static constexpr double kTree[] = {6.8, 14.0, 8.4};
  return (tree ? kTree : kRing)[protocol_index(protocol)];
}

double nccl_hop_latency_us(bool tree, NcclLinkClass link, topo::Protocol protocol) {
  static constexpr double kRingNvlink[] = {0.6, 1.9, 3.4}, kRingNet[] = {2.7, 4.0, 14.0};
  static constexpr double kTreeNvlink[] = {0.6, 1.25, 4.0}, kTreeNet[] = {5.0, 8.5, 14.0};
  const int p = protocol_index(protocol);
  if (tree) return link == NcclLinkClass::kNvlink ? kTreeNvlink[p] : kTreeNet[p];
  return link == NcclLinkClass::kNvlink ? kRingNvlink[p] : kRingNet[p];
}

double nccl_nvls_tree_hop_latency_us(NcclLinkClass link) { return link == NcclLinkClass::kNvlink ? 25.0 : 20.9; }

double nccl_pat_base_latency_us() { return 8.0; }
double nccl_pat_hop_latency_us(NcclLinkClass link) { return link == NcclLinkClass::kNvlink ? 4.0 : 14.0; }

double nccl_tree_correction(topo::Protocol protocol, core::Bytes bytes) {
  static constexpr double kFactors[3][24] = {
      {1, 1, 1, 1, .9, .8, .7, .7, .7, .7, .6, .5, .4, .4, .5, .6, .7, .8, .9, 1, 1, 1, 1, 1},
      {1, 1, 1, 1, 1, .9, .8, .8, .8, .7, .6, .6, .6, .6, .6, .6, .8, .9, .9, .9, .9, 1, 1, 1},
      {.9, .9, .9, .9, .9, .9, .9, .8, .7, .6, .6, .5, .5, .5, .5, .6, .7, .8, .7, .7, .8, .9, .9, .9}};
  const double ratio = std::max(1.0, static_cast<double>(bytes) / 64.0);
  const int index = std::clamp(static_cast<int>(std::log2(ratio)), 0, 23);
  return kFactors[protocol_index(protocol)][index];
}

}  // namespace fabsim::traces
