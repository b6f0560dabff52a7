#pragma once
/// Faults: failed and degraded link bundles and failed devices, in force
/// from the start of a run or striking at a simulated time.
///
///   A~B=down     every link of the bundle(s) between devices A and B fails
///   A~B=F        the bundle keeps the fraction F (0 < F < 1) of its bandwidth
///   A=down       device A (a NIC or a switch; not a GPU) fails: all its links
///   ...@T        the fault strikes at simulated time T (e.g. "@20ms")
///
/// A fault from the start is applied to the topology itself (routes are
/// computed around it; NCCL plans around it, as it would at init). A timed
/// fault is handed to the flow-level fabric, which changes the links at T and
/// re-sends the traffic that was on a failed path (FlowFabric::schedule_faults).

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "topologies/topology_spec.hpp"

namespace fabsim::topo {

enum class FaultKind { kLinkDown, kLinkDegraded, kDeviceDown };

struct FaultSpec {
  std::string text;   ///< as written, e.g. "gpu0~nvswitch0=down@20ms"
  std::string where;  ///< where it was written, for errors: "--fault" or "/faults/2"
  FaultKind kind = FaultKind::kLinkDown;
  std::string a, b;       ///< device names; b is empty for a device fault
  double fraction = 0.0;  ///< bandwidth kept (degraded); 0 when down
  std::optional<core::TimePs> at;  ///< strikes at this simulated time; none: from the start
};

/// Parses one fault; throws core::ConfigError(origin, where, ...) on bad syntax.
FaultSpec parse_fault(std::string_view text, const std::string& origin, const std::string& where);

/// A fault with its names resolved against a topology.
struct ResolvedFault {
  FaultSpec spec;
  std::vector<int> links;  ///< the link bundles it strikes (indexes into TopologySpec::links)
  int device = -1;         ///< the failed device, for kDeviceDown
  bool down() const { return spec.kind != FaultKind::kLinkDegraded; }
};

/// Resolves every fault (all problems reported at once, exit 2): unknown
/// device names, A and B with no link between them, a failed GPU.
std::vector<ResolvedFault> resolve_faults(const TopologySpec& spec, const std::vector<FaultSpec>& faults, const std::string& origin);

/// Applies the faults that have no time to the spec (down: the bundle is
/// marked failed; degraded: its lane bandwidth is scaled) and returns the
/// timed ones, in strike order.
std::vector<ResolvedFault> apply_faults_from_start(TopologySpec& spec, const std::vector<ResolvedFault>& faults);

/// With every fault in force, each GPU of `gpus` (ranks) must still reach
/// every other: throws core::ConfigError naming the faults and the first
/// GPUs cut off otherwise.
void check_reachable_under_faults(const TopologySpec& spec, const std::vector<ResolvedFault>& faults, const std::vector<int>& gpus,
                                  const std::string& origin);

/// What one timed fault did when it struck, for the reports.
struct FaultEvent {
  std::string fault;  ///< as written
  core::TimePs at = 0;
  std::uint64_t flows_resent = 0;      ///< flows on a failed path, re-sent over the new route
  std::uint64_t transfers_hit = 0;     ///< transfers those flows belonged to
  std::uint64_t transfers_restriped = 0;  ///< degraded: point-to-point transfers striped again by the new bandwidth
  double bytes_resent = 0;             ///< bytes they still had to move
  core::TimePs resent_at = 0;          ///< when the re-sent flows started (strike + detection delay)
};

/// The default delay between a link failing under traffic and that traffic
/// moving on a new route: one InfiniBand local ACK timeout, 4.096 us x
/// 2^NCCL_IB_TIMEOUT with NCCL's default NCCL_IB_TIMEOUT=20 (src/transport/net_ib.cc,
/// NCCL_PARAM(IbTimeout, "IB_TIMEOUT", 20)): the sender retransmits the lost
/// packets only then, and the subnet manager has routed around the link by then.
inline constexpr core::TimePs kIbRetransmitTimeoutPs = 4'096'000ull << 20;  // 4.295 s

/// How long traffic cut off by a failure waits before it is re-sent.
struct FaultTiming {
  core::TimePs network = kIbRetransmitTimeoutPs;  ///< a failed network link or switch
  /// A failed NVLink or PCIe bundle, or NVSwitch: none by default, because on
  /// real hardware an NVLink failure under traffic is an uncorrectable error
  /// (Xid 74) that stops the GPU's work and NCCL with it; set, it is the
  /// what-if of that traffic moving to the remaining links after this delay.
  std::optional<core::TimePs> local;
};

}  // namespace fabsim::topo
