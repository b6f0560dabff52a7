#include "traces/collectives/collective.hpp"

namespace fabsim::traces {

std::optional<CollectiveOp> parse_collective(std::string_view name) {
  if (name == "all_reduce") return CollectiveOp::kAllReduce;
  if (name == "all_gather") return CollectiveOp::kAllGather;
  if (name == "reduce_scatter") return CollectiveOp::kReduceScatter;
  return std::nullopt;
}

std::string collective_name(CollectiveOp op) {
  switch (op) {
    case CollectiveOp::kAllReduce: return "all_reduce";
    case CollectiveOp::kAllGather: return "all_gather";
    case CollectiveOp::kReduceScatter: return "reduce_scatter";
  }
  return "?";
}

std::string collective_names() { return "all_reduce, all_gather, reduce_scatter"; }

double bus_bandwidth_factor(CollectiveOp op, int ranks) {
  const double n = ranks;
  switch (op) {
    case CollectiveOp::kAllReduce: return 2.0 * (n - 1) / n;
    case CollectiveOp::kAllGather:
    case CollectiveOp::kReduceScatter: return (n - 1) / n;
  }
  return 1.0;
}

int ring_steps(CollectiveOp op, int ranks) {
  return op == CollectiveOp::kAllReduce ? 2 * (ranks - 1) : ranks - 1;
}

core::Bytes nccl_tests_bytes(CollectiveOp op, core::Bytes requested, int ranks, core::Bytes element_size,
                             std::uint64_t& count) {
  // nccl-tests: AllReduce count = size / eltSize; AllGather/ReduceScatter
  // count = (size / eltSize) / nranks per rank, size column = count * nranks * eltSize.
  if (op == CollectiveOp::kAllReduce) {
    count = requested / element_size;
    return count * element_size;
  }
  count = requested / element_size / static_cast<core::Bytes>(ranks);
  return count * element_size * static_cast<core::Bytes>(ranks);
}

}  // namespace fabsim::traces
