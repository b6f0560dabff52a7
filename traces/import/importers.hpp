#pragma once
/// Importers from the trace formats users have to fabsim's native format
/// (the README describes each format). Each reads one
/// file per rank (or a merged NCCL log), keeps what it cannot map as counted
/// warnings, and throws core::ConfigError for a file it cannot read at all
/// (naming the file and the line or JSON path).

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "traces/import/trace_builder.hpp"

namespace fabsim::traces {

/// What the user decides about an import (`fabsim trace import` flags).
struct ImportOptions {
  /// Files covering fewer ranks than the communicators name are an error,
  /// unless symmetric: then each missing rank runs the program of
  /// `symmetric_template` (default: the lowest rank covered), translated to
  /// its own position in each communicator (SPMD).
  bool symmetric = false;
  int symmetric_template = -1;
  /// Kineto: only the GPU work of these ProfilerStep#N steps (inclusive).
  std::optional<std::pair<std::int64_t, std::int64_t>> steps;
};

/// NCCL_DEBUG=INFO logs with the INIT and COLL subsystems (TUNING lines are
/// kept as measured algorithm/protocol). No compute: the trace is the
/// sequence of NCCL calls per rank.
TraceBuilder import_nccl_log(const std::vector<std::string>& files, const ImportOptions& options = {});

/// PyTorch profiler (Kineto) Chrome traces, one per rank: NCCL kernels with
/// their communication arguments, compute kernels merged per stream between
/// them, cross-stream waits from cudaStreamWaitEvent.
TraceBuilder import_kineto(const std::vector<std::string>& files, const ImportOptions& options = {});

/// Chakra execution traces as chakra_jsonizer prints them (concatenated
/// protobuf JSON objects), one per rank, given in rank order.
TraceBuilder import_chakra(const std::vector<std::string>& files);

/// The importer for `format` ("nccl-log", "kineto" or "chakra"), then the
/// partial-job rule (complete_partial_job); a field of an unexpected JSON
/// type anywhere in the files becomes a core::ConfigError naming them, like
/// every other input problem.
TraceBuilder import_trace(const std::string& format, const std::vector<std::string>& files, const ImportOptions& options = {});

/// Ranks of the world that no input covers: a core::ConfigError naming them
/// (origin: the first file), or, with options.symmetric, the template rank's
/// program on each, with a warning that says so.
void complete_partial_job(TraceBuilder& b, const ImportOptions& options, const std::string& origin);

}  // namespace fabsim::traces
