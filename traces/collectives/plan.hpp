#pragma once
/// A collective as data: the point-to-point transfers every rank performs on
/// every channel, with the dependencies NCCL's device code imposes. Planners
/// produce it without a network, so tests can check it directly.

#include <cstdint>
#include <string>
#include <vector>

#include "models/transport.hpp"
#include "sim/core/units.hpp"

namespace fabsim::traces {

inline constexpr std::int32_t kNoTransfer = -1;

/// One slice moved on one channel: from one rank to its peer, or (NVLS)
/// reduced from every rank into one inside the switch, or multicast from one
/// rank to every rank by the switch.
struct PlannedTransfer {
  models::TransferKind kind = models::TransferKind::kPointToPoint;
  std::int32_t channel = 0;
  std::int32_t source = 0;       ///< rank (index into the communicator); the issuer of a multicast
  std::int32_t destination = 0;  ///< rank; the issuer of an in-switch reduction

  /// The rank whose SM runs this transfer's primitive.
  std::int32_t issuer() const { return kind == models::TransferKind::kReduceInSwitch ? destination : source; }
  core::Bytes payload = 0;
  /// The transfer whose data this one forwards: it must have been received
  /// (and its step synchronised) at `source` first.
  std::int32_t after_received = kNoTransfer;
  /// Further transfers that must have been received at `source` first (a
  /// tree node reduces what every child sent before it sends to its parent).
  std::vector<std::int32_t> also_after_received;
  /// The transfer whose FIFO slot this one reuses at `destination`: that slot
  /// must have been released first (NCCL_STEPS flow control).
  std::int32_t after_released = kNoTransfer;
  /// The previous transfer the same rank sends on the same channel: one SM
  /// runs a channel's primitives in order, each one's stores landing before
  /// the next starts.
  std::int32_t after_sent = kNoTransfer;
  /// The previous piece on the same connection (LL and LL128 at the segment
  /// level, ChainRequest::forward_grain): the SM writes lines one after
  /// another without a fence waiting for them to land, so this piece follows
  /// that one's issue, not its completion.
  std::int32_t after_issued = kNoTransfer;
  /// The transfer whose completion frees this one's slot at `destination`
  /// (the forwarding send); kNoTransfer when receipt itself frees it.
  std::int32_t released_by = kNoTransfer;
  /// The receiver reduces this data with its own before using it.
  bool reduced_on_receipt = false;
  /// A later piece of a step (after_issued is the piece before it): it goes
  /// as soon as that one has, where a step's first piece also waits for the
  /// channel cap's spacing of the steps before it.
  bool continues_step = false;
  /// Flow-level plans: the pipelined steps this one transfer stands for
  /// (each pays the step and path latency).
  /// 0 steps: it continues its predecessor's step and adds no latency of its own.
  std::uint32_t steps = 1;
  std::uint32_t fill_steps = 0;  ///< steps it waits for a pipeline to fill (its depth in a chain), moving no data
  /// Flow-level plans: transfers of one lockstep group (a ring channel) are
  /// received together, when the slowest is, as a ring's data dependencies
  /// pace every hop to the slowest. -1: none.
  std::int32_t lockstep = -1;
  /// Flow-level plans: the channels this transfer stands for (merged when
  /// they all take the same path); its SM rate cap and its link share scale with it.
  std::uint32_t lanes = 1;
  /// In-switch transfers: the index of the CollectivePlan::switch_groups
  /// entry whose ranks take part (NVLSTree reduces inside each node); -1:
  /// every rank of the communicator.
  std::int32_t switch_group = -1;
};

/// The whole schedule of one collective call.
struct CollectivePlan {
  std::string algorithm;  ///< "Ring"
  std::string protocol;   ///< "LL", "LL128", "Simple"
  int ranks = 0;
  int channels = 0;  ///< channel ids the transfers use (the executor's engines per rank)
  /// The CTAs NCCL launches where fewer than `channels` (point to point: each
  /// pair has its own connections, but the pairs share p2pnChannels CTAs); 0: `channels`.
  int ctas = 0;
  double payload_efficiency = 1.0;  ///< wire bytes = payload / efficiency
  /// In-switch transfers' efficiency where it differs from the point-to-point
  /// ones' (NVLSTree: NVLS inside the node, Simple across); 0: the same.
  double in_switch_efficiency = 0;
  /// A flow-level plan: long aggregated transfers for a flow fabric, whose
  /// channel cap limits their rate rather than spacing their issue.
  bool aggregated = false;
  std::vector<int> lockstep_sizes;  ///< members of each lockstep group
  std::vector<PlannedTransfer> transfers;
  /// Rank sets that in-switch transfers name by index (PlannedTransfer::switch_group).
  std::vector<std::vector<int>> switch_groups;
  /// Flattened pipelines (flow level), one entry per transfer: the transfers
  /// whose first chunk its first chunk waited for before flattening. Those
  /// dependencies are no longer enforced, but the network steps on that path
  /// still delay its first chunk (the executor sums them along the path).
  /// Kept beside the transfers, not in them: segment-level plans hold
  /// millions of transfers and never use it.
  std::vector<std::vector<std::int32_t>> fill_after;

  double efficiency_of(const PlannedTransfer& t) const {
    return t.kind != models::TransferKind::kPointToPoint && in_switch_efficiency > 0 ? in_switch_efficiency : payload_efficiency;
  }

  /// The channel count reports show: the CTAs NCCL launches.
  int reported_channels() const { return ctas > 0 ? ctas : channels; }

  /// Sum of payload bytes each rank sends, by rank.
  std::vector<core::Bytes> bytes_sent_by_rank() const;

  /// A plan with no transfers yet; throws std::invalid_argument unless ranks and channels are >= 1.
  static CollectivePlan empty(std::string algorithm, std::string protocol, int ranks, int channels, double payload_efficiency);
};

}  // namespace fabsim::traces
