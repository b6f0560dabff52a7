/// The checks that need every rank at once: a rank on a communicator it is
/// not in, roots and peers out of range, collective sequences that disagree
/// within a group, sends without their receives.

#include <fmt/format.h>

#include <map>
#include <set>
#include <tuple>

#include "sim/core/error.hpp"
#include "traces/replay/trace_loader.hpp"

namespace fabsim::traces {

namespace {

constexpr std::size_t kMaxReported = 20;

std::string describe(const TraceOp& op) {
  return fmt::format("op '{}' ({} of {} B)", op.id, trace_op_name(op.type), op.bytes);
}

bool divisible_type(TraceOpType t) {
  return t == TraceOpType::kReduceScatter || t == TraceOpType::kAllToAll || t == TraceOpType::kScatter;
}

/// Per-rank checks of one op: membership, ranges, divisibility.
void check_op_for_rank(const Trace& trace, const TraceOp& op, int rank, core::Diagnostics& diag) {
  if (op.comm < 0) return;
  const auto& comm = trace.communicators[static_cast<std::size_t>(op.comm)];
  if (comm.group_of_rank[static_cast<std::size_t>(rank)] < 0) {
    diag.error(op.json_path, fmt::format("rank {} runs {} on communicator '{}' but is in none of its groups", rank, describe(op), comm.id));
    return;
  }
  const int size = trace.group_size(op.comm, rank);
  const int self = comm.local_rank[static_cast<std::size_t>(rank)];
  if ((op.type == TraceOpType::kBroadcast || op.type == TraceOpType::kReduce || op.type == TraceOpType::kGather ||
       op.type == TraceOpType::kScatter) && (op.root < 0 || op.root >= size))
    diag.error(op.json_path + "/root", fmt::format("root {} is outside rank {}'s group of '{}' (size {})", op.root, rank, comm.id, size));
  for (const auto* parts : {&op.sends, &op.recvs})
    for (const auto& p : *parts) {
      if (p.peer < 0 || p.peer >= size)
        diag.error(op.json_path, fmt::format("peer {} is outside rank {}'s group of '{}' (size {}; peers are group-local ranks)",
                                             p.peer, rank, comm.id, size));
      else if (p.peer == self)
        diag.error(op.json_path, fmt::format("rank {} names itself (group-local {}) as its peer", rank, self));
    }
  if (divisible_type(op.type) && op.bytes % static_cast<core::Bytes>(size) != 0)
    diag.error(op.json_path + "/bytes", fmt::format("{} bytes of a {} must divide by the group size {} of '{}'", op.bytes,
                                                    trace_op_name(op.type), size, comm.id));
  if (op.type == TraceOpType::kAllToAllv) {
    const std::size_t expected = op.matrix_row ? static_cast<std::size_t>(size) : static_cast<std::size_t>(size) * static_cast<std::size_t>(size);
    if (op.matrix.size() != expected)
      diag.error(op.json_path, fmt::format("the alltoallv {} has {} entries; the group of '{}' holding rank {} needs {}",
                                           op.matrix_row ? "send_bytes row" : "matrix_bytes", op.matrix.size(), comm.id, rank, expected));
  }
}

bool same_collective(const TraceOp& a, const TraceOp& b) {
  if (a.type != b.type || a.bytes != b.bytes) return false;
  if (a.root != b.root) return false;
  if (a.type == TraceOpType::kAllToAllv && !a.matrix_row && !b.matrix_row && a.matrix != b.matrix) return false;
  return true;
}

/// The collectives a program issues on `comm`, in list order, repeats written out.
std::vector<int> collective_sequence(const Program& p, int comm) {
  std::vector<int> seq;
  for (std::size_t i = 0; i < p.ops.size(); ++i)
    if (p.ops[i].comm == comm && is_collective(p.ops[i].type))
      for (int k = 0; k < p.ops[i].repeat; ++k) seq.push_back(static_cast<int>(i));
  return seq;
}

void check_collective_sequences(const Trace& trace, core::Diagnostics& diag) {
  std::set<std::tuple<int, int, int>> compared;  // (comm, program a, program b)
  for (std::size_t c = 0; c < trace.communicators.size(); ++c) {
    const auto& comm = trace.communicators[c];
    std::map<int, std::vector<int>> seq_of_program;
    auto seq = [&](int program) -> const std::vector<int>& {
      auto it = seq_of_program.find(program);
      if (it == seq_of_program.end()) it = seq_of_program.emplace(program, collective_sequence(trace.programs[static_cast<std::size_t>(program)], static_cast<int>(c))).first;
      return it->second;
    };
    for (std::size_t g = 0; g < comm.groups.size(); ++g) {
      const auto& group = comm.groups[g];
      const int first_rank = group.front();
      const int pa = trace.program_of_rank[static_cast<std::size_t>(first_rank)];
      for (int rank : group) {
        const int pb = trace.program_of_rank[static_cast<std::size_t>(rank)];
        if (pb == pa || !compared.emplace(static_cast<int>(c), pa, pb).second) continue;
        const auto& a = seq(pa);
        const auto& b = seq(pb);
        const auto& ops_a = trace.programs[static_cast<std::size_t>(pa)].ops;
        const auto& ops_b = trace.programs[static_cast<std::size_t>(pb)].ops;
        for (std::size_t k = 0; k < std::min(a.size(), b.size()); ++k) {
          const auto& x = ops_a[static_cast<std::size_t>(a[k])];
          const auto& y = ops_b[static_cast<std::size_t>(b[k])];
          if (same_collective(x, y)) continue;
          diag.error(y.json_path, fmt::format("collective #{} on communicator '{}' (group {}): rank {} runs {}{} but rank {} runs {}{}; "
                                              "every member must issue the same collectives in the same order",
                                              k + 1, comm.id, g, first_rank, describe(x), x.root ? fmt::format(" root {}", x.root) : "",
                                              rank, describe(y), y.root ? fmt::format(" root {}", y.root) : ""));
          break;
        }
        if (a.size() != b.size()) {
          const bool a_longer = a.size() > b.size();
          const auto& extra = a_longer ? ops_a[static_cast<std::size_t>(a[b.size()])] : ops_b[static_cast<std::size_t>(b[a.size()])];
          diag.error(extra.json_path, fmt::format("communicator '{}' (group {}): rank {} issues {} collectives on it but rank {} issues {}; "
                                                  "{} has no partner and would wait forever",
                                                  comm.id, g, first_rank, a.size(), rank, b.size(), describe(extra)));
        }
        if (diag.items().size() >= kMaxReported) return;
      }
    }
  }
}

struct PartRef {
  const TraceOp* op;
  core::Bytes bytes;
};

void check_point_to_point(const Trace& trace, core::Diagnostics& diag) {
  // (comm, source, destination) -> the sends and the receives, in order.
  std::map<std::tuple<int, int, int>, std::pair<std::vector<PartRef>, std::vector<PartRef>>> pairs;
  for (int rank = 0; rank < trace.world_size; ++rank) {
    const auto& program = trace.programs[static_cast<std::size_t>(trace.program_of_rank[static_cast<std::size_t>(rank)])];
    for (const auto& op : program.ops) {
      if (!is_point_to_point(op.type) || op.comm < 0) continue;
      const auto& comm = trace.communicators[static_cast<std::size_t>(op.comm)];
      if (comm.group_of_rank[static_cast<std::size_t>(rank)] < 0) continue;
      const int size = trace.group_size(op.comm, rank);
      for (int k = 0; k < op.repeat; ++k) {
        for (const auto& s : op.sends)
          if (s.peer >= 0 && s.peer < size) pairs[{op.comm, rank, trace.global_rank(op.comm, rank, s.peer)}].first.push_back({&op, s.bytes});
        for (const auto& r : op.recvs)
          if (r.peer >= 0 && r.peer < size) pairs[{op.comm, trace.global_rank(op.comm, rank, r.peer), rank}].second.push_back({&op, r.bytes});
      }
    }
  }
  for (const auto& [key, lists] : pairs) {
    const auto& [comm, source, destination] = key;
    const auto& [sends, recvs] = lists;
    const auto& comm_id = trace.communicators[static_cast<std::size_t>(comm)].id;
    for (std::size_t k = 0; k < std::min(sends.size(), recvs.size()); ++k) {
      if (sends[k].bytes == recvs[k].bytes) continue;
      diag.error(recvs[k].op->json_path, fmt::format("send #{} from rank {} to rank {} on '{}' ({}) carries {} B but the matching receive ({}) "
                                                     "expects {} B", k + 1, source, destination, comm_id, sends[k].op->id, sends[k].bytes,
                                                     recvs[k].op->id, recvs[k].bytes));
      break;
    }
    if (sends.size() > recvs.size())
      diag.error(sends[recvs.size()].op->json_path, fmt::format("unmatched send: rank {} sends {} messages to rank {} on '{}' but rank {} receives "
                                                                "{}; op '{}' has no matching recv", source, sends.size(), destination,
                                                                comm_id, destination, recvs.size(), sends[recvs.size()].op->id));
    else if (recvs.size() > sends.size())
      diag.error(recvs[sends.size()].op->json_path, fmt::format("unmatched recv: rank {} expects {} messages from rank {} on '{}' but rank {} sends "
                                                                "{}; op '{}' has no matching send", destination, recvs.size(), source,
                                                                comm_id, source, sends.size(), recvs[sends.size()].op->id));
    if (diag.items().size() >= kMaxReported) return;
  }
}

}  // namespace

void check_trace_matching(const Trace& trace) {
  core::Diagnostics diag(trace.file);
  for (const auto& program : trace.programs)
    for (const auto& op : program.ops)
      for (int rank : program.ranks) {
        check_op_for_rank(trace, op, rank, diag);
        if (diag.items().size() >= kMaxReported) diag.throw_if_any();
      }
  diag.throw_if_any();  // the sequences below assume every member is in its group
  check_collective_sequences(trace, diag);
  check_point_to_point(trace, diag);
  diag.throw_if_any();
}

}  // namespace fabsim::traces
