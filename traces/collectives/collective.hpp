#pragma once
/// Collective operations and the byte conventions of nccl-tests.

#include <optional>
#include <string>
#include <string_view>

#include "sim/core/units.hpp"

namespace fabsim::traces {

enum class CollectiveOp { kAllReduce, kAllGather, kReduceScatter, kBroadcast, kReduce, kAllToAll, kSendRecv, kGather, kScatter };

/// "all_reduce" style names, as nccl-tests' binaries and fabsim's CLI spell them.
std::optional<CollectiveOp> parse_collective(std::string_view name);
std::string collective_name(CollectiveOp op);
/// The names accepted by parse_collective, comma separated.
std::string collective_names();

/// Broadcast, reduce, gather and scatter have a root rank.
bool is_rooted(CollectiveOp op);

/// NCCL runs send/recv, all-to-all, gather and scatter as point-to-point
/// operations, without its tuner's algorithms and protocols.
bool runs_point_to_point(CollectiveOp op);

/// nccl-tests' busbw factor: algbw x factor = busbw (src/*.cu of nccl-tests).
double bus_bandwidth_factor(CollectiveOp op, int ranks);

/// NCCL's nsteps: 2(n-1) for all-reduce, n-1 for all-gather and reduce-scatter, n otherwise.
int ring_steps(CollectiveOp op, int ranks);

/// nccl-tests' element count for a size column value: the buffer's elements
/// for all-reduce, broadcast, reduce and sendrecv; one rank's (or peer's) part
/// of the total for the others. Sizes are rounded down to whole elements per part.
core::Bytes nccl_tests_bytes(CollectiveOp op, core::Bytes requested, int ranks, core::Bytes element_size, std::uint64_t& count);

}  // namespace fabsim::traces
