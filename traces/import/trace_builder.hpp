#pragma once
/// What every importer produces before it becomes a native trace: per-rank
/// op lists with global ranks, communicators as groups of global ranks, and
/// the warnings counted along the way. TraceBuilder converts global roots and
/// peers to communicator-local ranks, merges identical per-rank programs
/// (SPMD) and writes the fabsim-trace JSON.

#include <cstdint>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "sim/core/units.hpp"

namespace fabsim::traces {

/// Things an importer met and could not map, with how often: never silent.
class ImportWarnings {
 public:
  void add(const std::string& what, std::uint64_t count = 1) { counts_[what] += count; }
  const std::map<std::string, std::uint64_t>& counts() const { return counts_; }
  std::uint64_t total() const;

 private:
  std::map<std::string, std::uint64_t> counts_;
};

struct ImportedComm {
  std::string id;
  std::string desc;
  std::vector<std::vector<int>> groups;  ///< global ranks; position = communicator-local rank
  std::string source_id;                 ///< the source's name (PG name, NCCL commId)
};

struct ImportedPeer {
  int peer = 0;  ///< global rank
  core::Bytes bytes = 0;
};

struct ImportedOp {
  std::string id;
  std::string type;  ///< native type name ("allreduce", "compute", ...)
  std::string name;
  int comm = -1;     ///< index into the builder's communicators
  core::Bytes bytes = 0;
  int root = -1;     ///< global rank (rooted ops)
  std::vector<ImportedPeer> sends, recvs;  ///< send, recv, p2p_batch (global peers)
  std::vector<core::Bytes> send_bytes;     ///< alltoallv: bytes to each group rank
  std::string dtype;
  std::string stream;                      ///< empty: the native default
  std::vector<std::string> deps;
  std::uint64_t duration_ns = 0;           ///< compute
  std::uint64_t delay_ns = 0;
  nlohmann::json measured;                 ///< null or an object
  nlohmann::json source;                   ///< null or an object
  /// The source's per-communicator call number (NCCL's opCount), to align
  /// partial logs; kNoSequence when the source has none.
  std::uint64_t sequence = kNoSequence;
  static constexpr std::uint64_t kNoSequence = std::numeric_limits<std::uint64_t>::max();
};

class TraceBuilder {
 public:
  TraceBuilder(std::string name, std::string kind, std::vector<std::string> files);

  int world_size = 0;
  std::vector<ImportedComm> comms;
  std::map<int, std::vector<ImportedOp>> ops_of_rank;  ///< ranks with a source file
  /// The global ranks the input covers (a file, or log lines, of their own),
  /// with or without ops; empty: those of ops_of_rank.
  std::set<int> covered_ranks;
  ImportWarnings warnings;

  /// The native trace. Ops whose root or peer is outside their group are
  /// dropped with a warning; ranks without ops get an empty program.
  nlohmann::ordered_json build();

 private:
  std::string name_, kind_;
  std::vector<std::string> files_;
};

/// Element size of an NCCL ncclDataType_t value; 0 when unknown. Sets `name` to the native dtype.
core::Bytes nccl_datatype_bytes(int datatype, std::string& name);

}  // namespace fabsim::traces
