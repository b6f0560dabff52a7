#pragma once
/// Collective operations and the byte conventions of nccl-tests.

#include <optional>
#include <string>
#include <string_view>

#include "sim/core/units.hpp"

namespace fabsim::traces {

enum class CollectiveOp { kAllReduce, kAllGather, kReduceScatter };

/// "all_reduce" style names, as nccl-tests' binaries and fabsim's CLI spell them.
std::optional<CollectiveOp> parse_collective(std::string_view name);
std::string collective_name(CollectiveOp op);
/// The names accepted by parse_collective, comma separated.
std::string collective_names();

/// nccl-tests' busbw factor: algbw x factor = busbw (src/*.cu of nccl-tests).
double bus_bandwidth_factor(CollectiveOp op, int ranks);

/// Ring steps in which each rank sends: 2(n-1) for all-reduce, n-1 otherwise.
int ring_steps(CollectiveOp op, int ranks);

/// nccl-tests' element count for a size column value (float elements: count
/// per rank for all-reduce, per-rank share of the total for all-gather and
/// reduce-scatter). nccl-tests rounds the size down to whole elements per rank.
core::Bytes nccl_tests_bytes(CollectiveOp op, core::Bytes requested, int ranks, core::Bytes element_size, std::uint64_t& count);

}  // namespace fabsim::traces
