#include "traces/collectives/nccl_tuner_tables.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>

#include <fmt/format.h>

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

// llMaxBws beyond one node are indexed by CPU vendor in NCCL; these are the Intel figures.
constexpr NcclBandwidthCaps kVolta{{39.0, 39.0, 20.4}, {20, 20, 20}, {20, 20, 20}, {26.5, 18.5, 10.0}, {0, 0, 0}};
constexpr NcclBandwidthCaps kAmpere{{87.7, 39.0, 20.4}, {20, 20, 20}, {20, 20, 20}, {24.0, 23.6, 17.8}, {0, 0, 0}};

constexpr NcclBandwidthCaps kHopperUpTo2_20{{87.7, 39.0, 20.4}, {36.7, 36.7, 36.7}, {36.7, 36.7, 29.0}, {38.7, 41.4, 36.0}, {0, 0, 0}};
constexpr NcclBandwidthCaps kHopperUpTo2_27{{141.0, 39.0, 20.4}, {36.7, 36.7, 36.7}, {36.7, 36.7, 29.0}, {38.7, 41.4, 36.0}, {0, 0, 0}};
constexpr NcclBandwidthCaps kHopper{{141.0, 39.0, 20.4}, {36.7, 36.7, 36.7}, {36.7, 36.7, 29.0}, {38.7, 41.4, 36.0}, {0, 57.7, 45.5}};

/// Blackwell's rows as 2.25.1 introduced them (2 x Hopper's, Tree 2 x {38.7, 41.4, 36.0}).
constexpr NcclBandwidthCaps kBlackwellUpTo2_27{{282.0, 39.0, 20.4}, {73.4, 73.4, 73.4}, {73.4, 73.4, 58.0}, {77.4, 82.8, 72.0}, {0, 0, 0}};
constexpr NcclBandwidthCaps blackwell_from_2_28(double ring_ll128_n1, double ring_ll128_n2, double ring_ll128_n4, double nvls_tree_n4) {
  return {{282.0, 39.0, 20.4}, {ring_ll128_n1, ring_ll128_n2, ring_ll128_n4}, {55.6, 31.67, 20.0}, {70.0, 42.8, 24.0}, {0, 96.0, nvls_tree_n4}};
}

using P = NcclNvlsPricing;
using B = NcclBlackwellNvls;
using S = NcclP2pSplit;
// first, last, NVLS NVLink, NVLSTree NET, Tree Simple base / NVLink / NET, pricing, Hopper, Blackwell, PAT, Blackwell's NVLS
// channels, the p2p split (2.19 and 2.20 share tuner constants; their p2p schedules differ).
const std::array kReleases{
    NcclTunerRelease{{2, 19, 1}, {2, 19, 4}, 23, 14, 0, 28, 28, P::kGraphSpeed, kHopperUpTo2_20, kBlackwellUpTo2_27, false, B::kAlways32, S::kQuarterLoad},
    NcclTunerRelease{{2, 20, 3}, {2, 20, 5}, 23, 14, 0, 28, 28, P::kGraphSpeed, kHopperUpTo2_20, kBlackwellUpTo2_27, false, B::kAlways32},
    NcclTunerRelease{{2, 21, 5}, {2, 22, 3}, 25, 14, 0, 28, 28, P::kGraphSpeed, kHopperUpTo2_27, kBlackwellUpTo2_27, false, B::kAlways32},
    NcclTunerRelease{{2, 23, 4}, {2, 26, 6}, 25, 14, 8.4, 4.0, 14, P::kGraphSpeed, kHopperUpTo2_27, kBlackwellUpTo2_27, true, B::kAlways32},
    NcclTunerRelease{{2, 27, 3}, {2, 27, 7}, 25, 14, 8.4, 4.0, 14, P::kGraphSpeed, kHopperUpTo2_27, kBlackwellUpTo2_27, true, B::kFewerInOneDomain},
    NcclTunerRelease{{2, 28, 3}, {2, 28, 3}, 25, 14, 8.4, 4.0, 14, P::kPerHead, kHopper, blackwell_from_2_28(73.4, 73.4, 73.4, 43.1), true, B::kFewerInOneDomain},
    NcclTunerRelease{{2, 28, 7}, {2, 28, 7}, 25, 14, 8.4, 4.0, 14, P::kPerHead, kHopper, blackwell_from_2_28(73.4, 34.6, 73.4, 43.1), true, B::kFewerInOneDomain},
    NcclTunerRelease{{2, 28, 9}, {2, 28, 9}, 25, 20.9, 8.4, 4.0, 14, P::kPerHead, kHopper, blackwell_from_2_28(73.4, 34.6, 73.4, 43.8), true, B::kFewerInOneDomain},
    NcclTunerRelease{{2, 29, 2}, {2, 29, 3}, 25, 20.9, 8.4, 4.0, 14, P::kPerHead, kHopper, blackwell_from_2_28(34.5, 34.6, 34.5, 43.8), true, B::kFewerInOneDomain},
    NcclTunerRelease{{2, 29, 7}, {2, 29, 7}, 25, 20.9, 8.4, 4.0, 14, P::kPerHead, kHopper, blackwell_from_2_28(40.0, 40.0, 40.0, 43.8), true, B::kFewerInOneDomain},
    NcclTunerRelease{{2, 30, 3}, {2, 30, 7}, 25, 20.9, 8.4, 4.0, 14, P::kPerHead, kHopper, blackwell_from_2_28(40.0, 40.0, 40.0, 80.0), true, B::kTunedAcrossNodes},
};
}  // namespace

const NcclTunerRelease* nccl_tuner_release(std::optional<NcclVersion> version) {
  if (!version) return &newest_nccl_tuner_release();
  const NcclTunerRelease* found = nullptr;
  for (const auto& release : kReleases)
    if (release.first <= *version) found = &release;
  return found;
}

const NcclTunerRelease& newest_nccl_tuner_release() { return kReleases.back(); }

std::optional<NcclVersion> nccl_version_with_tuner(std::string_view written) {
  const auto version = parse_nccl_version(written);
  if (version && nccl_tuner_release(version) != nullptr) return version;
  return std::nullopt;
}

std::optional<std::string> nccl_version_problem(std::string_view written) {
  const auto version = parse_nccl_version(written);
  if (!version) return fmt::format("'{}' is not an NCCL release (expected MAJOR.MINOR[.PATCH], e.g. 2.26.2)", written);
  if (nccl_tuner_release(version) == nullptr)
    return fmt::format("NCCL {} predates 2.19.1, the oldest release whose tuner fabsim follows", nccl_version_name(*version));
  return std::nullopt;
}

std::string nccl_tuner_description(std::optional<NcclVersion> asked) {
  const NcclTunerRelease* found = nccl_tuner_release(asked);
  if (found == nullptr) return fmt::format("{} (no tuner table: older than 2.19.1)", nccl_version_name(*asked));
  const NcclTunerRelease& release = *found;
  const std::string span = release.first == release.last
                               ? nccl_version_name(release.first)
                               : fmt::format("{}-{}", nccl_version_name(release.first), nccl_version_name(release.last));
  if (!asked) return fmt::format("{}, the newest read (NCCL {} tuner constants)", nccl_version_name(release.last), span);
  return fmt::format("{} (NCCL {} tuner constants)", nccl_version_name(*asked), span);
}

std::optional<std::string> nccl_version_warning(std::optional<NcclVersion> asked) {
  const NcclTunerRelease& newest = newest_nccl_tuner_release();
  if (!asked || !(newest.last < *asked)) return std::nullopt;
  return fmt::format("NCCL {} is newer than the newest release whose tuner fabsim has read ({}): algorithms, protocols and "
                     "channels are chosen with that release's constants, which {} may have changed",
                     nccl_version_name(*asked), nccl_version_name(newest.last), nccl_version_name(*asked));
}

const NcclBandwidthCaps& nccl_bandwidth_caps(const std::string& architecture, const NcclTunerRelease& release) {
  if (architecture == "volta") return kVolta;
  if (architecture == "ampere") return kAmpere;
  if (architecture == "blackwell") return release.blackwell;
  return release.hopper;
}

int nccl_node_index(int nodes) { return nodes <= 1 ? 0 : nodes == 2 ? 1 : 2; }

int nccl_log2i(std::uint64_t n) { return static_cast<int>(std::bit_width(n)) - 1; }

double nccl_search_speed_gbps(double path_gbps) {
  static constexpr double kSpeeds[] = {48.0, 45.0, 42.0, 40.0, 30.0, 24.0, 22.0, 20.0, 17.5, 15.0, 12.0, 6.0, 3.0, 2.4, 1.2, 0.24, 0.12};
  for (double s : kSpeeds)
    if (s <= path_gbps) return s;
  return kSpeeds[std::size(kSpeeds) - 1];
}

double nccl_base_latency_us(bool tree, topo::Protocol protocol, const NcclTunerRelease& release) {
  static constexpr double kRing[] = {6.6, 14.0, 8.4};
  static constexpr double kTree[] = {6.8, 14.0, 8.4};
  if (tree && protocol == topo::Protocol::kSimple) return release.tree_simple_base_latency_us;
  return (tree ? kTree : kRing)[protocol_index(protocol)];
}

double nccl_hop_latency_us(bool tree, NcclLinkClass link, topo::Protocol protocol, const NcclTunerRelease& release) {
  static constexpr double kRingNvlink[] = {0.6, 1.9, 3.4}, kRingNet[] = {2.7, 4.0, 14.0};
  static constexpr double kTreeNvlink[] = {0.6, 1.25, 4.0}, kTreeNet[] = {5.0, 8.5, 14.0};
  const int p = protocol_index(protocol);
  if (tree && protocol == topo::Protocol::kSimple)
    return link == NcclLinkClass::kNvlink ? release.tree_simple_nvlink_latency_us : release.tree_simple_net_latency_us;
  if (tree) return link == NcclLinkClass::kNvlink ? kTreeNvlink[p] : kTreeNet[p];
  return link == NcclLinkClass::kNvlink ? kRingNvlink[p] : kRingNet[p];
}

double nccl_nvls_tree_hop_latency_us(NcclLinkClass link, const NcclTunerRelease& release) {
  return link == NcclLinkClass::kNvlink ? release.nvls_nvlink_latency_us : release.nvls_tree_net_latency_us;
}

double nccl_pat_base_latency_us() { return 8.0; }
double nccl_pat_hop_latency_us(NcclLinkClass link) { return link == NcclLinkClass::kNvlink ? 4.0 : 14.0; }

double nccl_tree_correction(topo::Protocol protocol, core::Bytes bytes) {
  // treeCorrectionFactor, powers of two from 64 B to 256 MiB. NCCL multiplies
  // a tree all-reduce's bandwidth by it only where log2(bytes / 64) is in
  // [0, 23) (ncclTopoGetAlgoTime, 2.23 to 2.30; 2.29's 24th column is for
  // NVLS_TREE): below 64 B and from 512 MiB the model's bandwidth stands.
  static constexpr double kFactors[3][23] = {
      {1, 1, 1, 1, .9, .8, .7, .7, .7, .7, .6, .5, .4, .4, .5, .6, .7, .8, .9, 1, 1, 1, 1},
      {1, 1, 1, 1, 1, .9, .8, .8, .8, .7, .6, .6, .6, .6, .6, .6, .8, .9, .9, .9, .9, 1, 1},
      {.9, .9, .9, .9, .9, .9, .9, .8, .7, .6, .6, .5, .5, .5, .5, .6, .7, .8, .7, .7, .8, .9, .9}};
  const int index = nccl_log2i(bytes >> 6);
  if (index < 0 || index >= 23) return 1.0;
  return kFactors[protocol_index(protocol)][index];
}

}  // namespace fabsim::traces
