#pragma once
/// Importers from the trace formats users have to fabsim's native format
/// (the README describes each format). Each reads one
/// file per rank (or a merged NCCL log), keeps what it cannot map as counted
/// warnings, and throws core::ConfigError for a file it cannot read at all
/// (naming the file and the line or JSON path).

#include <string>
#include <vector>

#include "traces/import/trace_builder.hpp"

namespace fabsim::traces {

/// NCCL_DEBUG=INFO logs with the INIT and COLL subsystems (TUNING lines are
/// kept as measured algorithm/protocol). No compute: the trace is the
/// sequence of NCCL calls per rank.
TraceBuilder import_nccl_log(const std::vector<std::string>& files);

/// PyTorch profiler (Kineto) Chrome traces, one per rank: NCCL kernels with
/// their communication arguments, compute kernels merged per stream between
/// them, cross-stream waits from cudaStreamWaitEvent.
TraceBuilder import_kineto(const std::vector<std::string>& files);

/// Chakra execution traces as chakra_jsonizer prints them (concatenated
/// protobuf JSON objects), one per rank, given in rank order.
TraceBuilder import_chakra(const std::vector<std::string>& files);

/// The importer for `format` ("nccl-log", "kineto" or "chakra"); a field of
/// an unexpected JSON type anywhere in the files becomes a core::ConfigError
/// naming them, like every other input problem.
TraceBuilder import_trace(const std::string& format, const std::vector<std::string>& files);

}  // namespace fabsim::traces
