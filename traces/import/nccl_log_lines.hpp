#pragma once
/// The lines of an NCCL or RCCL debug log (NCCL_DEBUG=INFO), read without
/// regular expressions (a log of millions of lines must import in seconds).
/// Each reader returns nothing for a line of another kind; numbers are kept
/// as text here and checked where they are used.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>

namespace fabsim::traces::nccl_log {

/// `<host>:<pid>:<tid> [<dev>] NCCL <LEVEL> <message>`, found anywhere in the
/// line: whatever precedes the host token is a launcher's or logger's prefix
/// (a timestamp, Ray's "(RayTrainWorker pid=…, ip=…)", pdsh's "host: ").
struct DebugLine {
  std::string host, pid, device;  ///< the bracketed device is the CUDA device
  std::string_view message;       ///< a view into the line given
  std::string process() const { return host + ":" + pid; }
};
std::optional<DebugLine> read_debug_line(std::string_view line);

/// `[<entry point>] comm 0x… rank R nranks N cudaDev D … - Init COMPLETE` (or
/// `- Init START`, which NCCL 2.18+ prints with the same fields).
/// Entry points seen across versions: ncclCommInitRank, ncclCommInitRankConfig,
/// ncclCommInitAll, ncclCommInitRankScalable, ncclCommSplit, ncclCommShrink,
/// RCCL's `…_impl` forms of each, and none at all (NCCL 2.7–2.17).
struct InitLine {
  std::string entry_point;                   ///< "" for the prefix-less form; "_impl" removed
  std::map<std::string, std::string> fields; ///< comm, rank, nranks, cudaDev, commId, parent, color, …
  bool is_split() const { return entry_point.find("Split") != std::string::npos || entry_point.find("Shrink") != std::string::npos; }
  std::string field(const std::string& key) const {
    const auto it = fields.find(key);
    return it == fields.end() ? std::string() : it->second;
  }
};
std::optional<InitLine> read_init_line(std::string_view message);

/// `<Op>: opCount <hex> sendbuff … [acc …] count C datatype D op O root R comm
/// 0x… [nranks=N] stream S [task T globalrank G]` (RCCL adds acc, task and
/// globalrank). `complete` is false when a field every layout has is missing
/// (a torn line).
struct CollLine {
  std::string op;
  std::map<std::string, std::string> fields;  ///< opCount, count, datatype, root, comm, nranks, stream, globalrank, …
  bool complete = false;
  std::string field(const std::string& key) const {
    const auto it = fields.find(key);
    return it == fields.end() ? std::string() : it->second;
  }
};
std::optional<CollLine> read_coll_line(std::string_view message);

/// `[<Op>: ]<bytes> Bytes -> Algo <a> proto <p> …` (TUNING): algorithm and
/// protocol as names (NCCL 2.21 prints their enum numbers).
struct TuningLine {
  std::string algo, proto;
};
std::optional<TuningLine> read_tuning_line(std::string_view message);

/// Hexadecimal opCount text as a number; nothing when it is not one.
std::optional<std::uint64_t> parse_op_count(const std::string& text);

}  // namespace fabsim::traces::nccl_log
