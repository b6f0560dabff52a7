#pragma once
/// A workload trace in fabsim's native format (`"format": "fabsim-trace"`,
/// version 1; README "Trace format"): communicators as partitions of global
/// ranks, SPMD programs of operations with dependencies and streams. Sizes
/// are bytes of this rank's input buffer; times are picoseconds once loaded.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sim/core/units.hpp"

namespace fabsim::traces {

enum class TraceOpType {
  kCompute,
  kAllReduce,
  kAllGather,
  kReduceScatter,
  kAllToAll,
  kAllToAllv,
  kBroadcast,
  kReduce,
  kGather,
  kScatter,
  kBarrier,
  kSend,
  kRecv,
  kP2PBatch,
};

/// The native format's spelling ("allreduce", "p2p_batch").
std::string trace_op_name(TraceOpType type);
std::optional<TraceOpType> parse_trace_op(std::string_view name);
/// The spellings parse_trace_op accepts, comma separated.
std::string trace_op_names();
/// Bytes of one element of a native dtype ("bf16" -> 2); nullopt for a name
/// the format does not define (i8 u8 i32 u32 i64 u64 f16 bf16 f32 f64 f8e4m3 f8e5m2).
std::optional<core::Bytes> dtype_size(std::string_view dtype);
/// Collectives: every member of the group takes part (not compute, send, recv or p2p_batch).
bool is_collective(TraceOpType type);
bool is_point_to_point(TraceOpType type);

/// One peer of a send, recv or p2p_batch part (communicator-local rank).
struct PeerTransfer {
  int peer = 0;
  core::Bytes bytes = 0;
};

struct TraceOp {
  std::string id;
  TraceOpType type = TraceOpType::kCompute;
  std::string name;                ///< free-form label; empty when none
  std::vector<int> deps;           ///< indexes of earlier ops of the same program
  int stream = 0;                  ///< index into Program::streams
  core::TimePs delay = 0;          ///< wait between ready and issue
  int repeat = 1;                  ///< back-to-back instances
  core::TimePs duration = 0;       ///< compute only
  int comm = -1;                   ///< index into Trace::communicators; -1 for compute
  core::Bytes bytes = 0;           ///< this rank's input buffer (send, recv: the message)
  int root = 0;                    ///< rooted collectives: communicator-local root
  std::string dtype;               ///< informational
  /// alltoallv: row i = bytes group rank i sends to each group rank (G x G,
  /// row-major); or, when `matrix_row` is set, only this rank's row.
  std::vector<core::Bytes> matrix;
  bool matrix_row = false;
  std::vector<PeerTransfer> sends, recvs;  ///< send, recv (one part) and p2p_batch
  std::string json_path;                   ///< where it was written, for messages
};

/// Ops that every rank of `ranks` runs (SPMD).
struct Program {
  std::vector<int> ranks;
  std::string name;
  std::vector<TraceOp> ops;
  std::vector<std::string> streams;  ///< stream names; ops refer to them by index
  std::string json_path;
};

struct Communicator {
  std::string id;
  std::string desc;
  std::vector<std::vector<int>> groups;  ///< disjoint lists of global ranks; position = local rank
  std::vector<int> group_of_rank;        ///< by global rank; -1 when not a member
  std::vector<int> local_rank;           ///< by global rank; -1 when not a member
};

struct Trace {
  std::string file;  ///< as the user named it, for messages
  std::string name;
  int world_size = 0;
  int iterations = 1;
  std::vector<Communicator> communicators;
  std::vector<Program> programs;
  std::vector<int> program_of_rank;  ///< by global rank

  /// The global rank of `local` in the group of `comm` that holds `rank`.
  int global_rank(int comm, int rank, int local) const {
    const auto& c = communicators[static_cast<std::size_t>(comm)];
    return c.groups[static_cast<std::size_t>(c.group_of_rank[static_cast<std::size_t>(rank)])][static_cast<std::size_t>(local)];
  }
  int group_size(int comm, int rank) const {
    const auto& c = communicators[static_cast<std::size_t>(comm)];
    return static_cast<int>(c.groups[static_cast<std::size_t>(c.group_of_rank[static_cast<std::size_t>(rank)])].size());
  }
};

}  // namespace fabsim::traces
