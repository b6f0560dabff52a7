#include "traces/collectives/collective.hpp"

#include <array>
#include <utility>

namespace fabsim::traces {

namespace {
constexpr std::array<std::pair<CollectiveOp, const char*>, 9> kNames{{
    {CollectiveOp::kAllReduce, "all_reduce"},
    {CollectiveOp::kAllGather, "all_gather"},
    {CollectiveOp::kReduceScatter, "reduce_scatter"},
    {CollectiveOp::kBroadcast, "broadcast"},
    {CollectiveOp::kReduce, "reduce"},
    {CollectiveOp::kAllToAll, "alltoall"},
    {CollectiveOp::kSendRecv, "sendrecv"},
    {CollectiveOp::kGather, "gather"},
    {CollectiveOp::kScatter, "scatter"},
}};
}  // namespace

std::optional<CollectiveOp> parse_collective(std::string_view name) {
  for (const auto& [op, text] : kNames)
    if (name == text) return op;
  return std::nullopt;
}

std::string collective_name(CollectiveOp op) {
  for (const auto& [o, text] : kNames)
    if (o == op) return text;
  return "?";
}

std::string collective_names() {
  std::string out;
  for (const auto& [op, text] : kNames) out += std::string(out.empty() ? "" : ", ") + text;
  return out;
}

bool is_rooted(CollectiveOp op) {
  return op == CollectiveOp::kBroadcast || op == CollectiveOp::kReduce || op == CollectiveOp::kGather ||
         op == CollectiveOp::kScatter;
}

bool runs_point_to_point(CollectiveOp op) {
  return op == CollectiveOp::kSendRecv || op == CollectiveOp::kAllToAll || op == CollectiveOp::kGather || op == CollectiveOp::kScatter;
}

double bus_bandwidth_factor(CollectiveOp op, int ranks) {
  const double n = ranks;
  switch (op) {
    case CollectiveOp::kAllReduce: return 2.0 * (n - 1) / n;
    case CollectiveOp::kAllGather:
    case CollectiveOp::kReduceScatter:
    case CollectiveOp::kAllToAll:
    case CollectiveOp::kGather:
    case CollectiveOp::kScatter: return (n - 1) / n;
    case CollectiveOp::kBroadcast:
    case CollectiveOp::kReduce:
    case CollectiveOp::kSendRecv: return 1.0;
  }
  return 1.0;
}

int ring_steps(CollectiveOp op, int ranks) {
  switch (op) {
    case CollectiveOp::kAllReduce: return 2 * (ranks - 1);
    case CollectiveOp::kAllGather:
    case CollectiveOp::kReduceScatter: return ranks - 1;
    default: return ranks;  // tuning.cc: nsteps = n for the others
  }
}

core::Bytes nccl_tests_bytes(CollectiveOp op, core::Bytes requested, int ranks, core::Bytes element_size,
                             std::uint64_t& count) {
  switch (op) {
    case CollectiveOp::kAllReduce:
    case CollectiveOp::kBroadcast:
    case CollectiveOp::kReduce:
    case CollectiveOp::kSendRecv:
      // The size is one rank's buffer.
      count = requested / element_size;
      return count * element_size;
    default:
      // The size is the total of n per-rank (or per-peer) parts; nccl-tests
      // prints the count of one part.
      count = requested / element_size / static_cast<core::Bytes>(ranks);
      return count * element_size * static_cast<core::Bytes>(ranks);
  }
}

}  // namespace fabsim::traces
