/// Real jobs are mostly profiled on one rank or one node. A trace whose
/// communicators name more ranks than its files cover cannot replay as it
/// is; rather than shrink the job (a 16-rank all-reduce over two nodes
/// simulated as 8 ranks on one), fabsim refuses it, or, when the user says
/// the job is SPMD (--symmetric), runs a covered rank's program on each
/// missing rank, translated to that rank's place in every communicator.

#include <fmt/format.h>

#include <algorithm>

#include "sim/core/error.hpp"
#include "traces/import/importers.hpp"

namespace fabsim::traces {

namespace {

/// "0-3, 6, 9-15"
std::string rank_ranges(const std::vector<int>& ranks) {
  std::string out;
  for (std::size_t i = 0; i < ranks.size();) {
    std::size_t j = i;
    while (j + 1 < ranks.size() && ranks[j + 1] == ranks[j] + 1) ++j;
    if (!out.empty()) out += ", ";
    out += j == i ? std::to_string(ranks[i]) : fmt::format("{}-{}", ranks[i], ranks[j]);
    i = j + 1;
  }
  return out;
}

struct Place {
  const std::vector<int>* group = nullptr;
  int index = -1;
};

Place place_of(const ImportedComm& comm, int rank) {
  for (const auto& g : comm.groups)
    if (const auto it = std::find(g.begin(), g.end(), rank); it != g.end()) return {&g, static_cast<int>(it - g.begin())};
  return {};
}

/// The template's op as `rank` runs it; false when the rank has no place in
/// the op's communicator matching the template's.
bool translate(ImportedOp& op, const TraceBuilder& b, int from, int rank) {
  op.measured = nullptr;
  if (op.type == "compute") return true;
  const ImportedComm& comm = b.comms[static_cast<std::size_t>(op.comm)];
  const Place src = place_of(comm, from), dst = place_of(comm, rank);
  if (src.group == nullptr || dst.group == nullptr || src.group->size() != dst.group->size()) return false;
  const int n = static_cast<int>(dst.group->size());
  auto moved = [&](int global) -> int {  // the same offset from the rank, in its own group
    const auto it = std::find(src.group->begin(), src.group->end(), global);
    if (it == src.group->end()) return -1;
    const int offset = static_cast<int>(it - src.group->begin()) - src.index;
    return (*dst.group)[static_cast<std::size_t>(((dst.index + offset) % n + n) % n)];
  };
  for (auto* parts : {&op.sends, &op.recvs})
    for (auto& p : *parts)
      if ((p.peer = moved(p.peer)) < 0) return false;
  if (op.root >= 0) {  // every rank names the same root: its place in the group, not an offset
    const auto it = std::find(src.group->begin(), src.group->end(), op.root);
    if (it == src.group->end()) return false;
    op.root = (*dst.group)[static_cast<std::size_t>(it - src.group->begin())];
  }
  return true;
}

}  // namespace

void complete_partial_job(TraceBuilder& b, const ImportOptions& options, const std::string& origin) {
  std::set<int> covered = b.covered_ranks;
  if (covered.empty())
    for (const auto& [rank, ops] : b.ops_of_rank) covered.insert(rank);
  std::vector<int> missing;
  for (int r = 0; r < b.world_size; ++r)
    if (!covered.contains(r)) missing.push_back(r);
  if (missing.empty() || covered.empty()) return;
  if (!options.symmetric)
    throw core::ConfigError(origin, "",
                            fmt::format("the input covers {} of the {} ranks its communicators name (missing: {}); import every "
                                        "rank's file, or give --symmetric to run a covered rank's program on each missing rank (SPMD)",
                                        covered.size(), b.world_size, rank_ranges(missing)));
  const int from = options.symmetric_template >= 0 ? options.symmetric_template : *covered.begin();
  if (!covered.contains(from))
    throw core::ConfigError("command line", "--symmetric",
                            fmt::format("rank {} is not covered by the input (covered: {})", from,
                                        rank_ranges(std::vector<int>(covered.begin(), covered.end()))));
  const std::vector<ImportedOp> program = b.ops_of_rank[from];
  for (int rank : missing) {
    auto& list = b.ops_of_rank[rank];
    for (ImportedOp op : program) {
      if (translate(op, b, from, rank)) list.push_back(std::move(op));
      else b.warnings.add(fmt::format("--symmetric: ops of rank {} with no counterpart for a missing rank (not in a like group): dropped", from));
    }
  }
  b.warnings.add(fmt::format("ranks without input run rank {}'s program (--symmetric: the job assumed SPMD)", from), missing.size());
}

}  // namespace fabsim::traces
