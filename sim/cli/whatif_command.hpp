#pragma once
/// `fabsim whatif`: a workload run healthy, then with each single failure of
/// the fabric in turn (one per symmetry class, topo::single_fault_classes),
/// ranked by slowdown. Each run is a child process (one elaborated fabric per
/// process); `replay --whatif` uses the same study on a trace.

#include <iosfwd>
#include <string>
#include <vector>

#include "sim/cli/commands.hpp"
#include "topologies/fault_classes.hpp"

namespace fabsim::cli {

/// One study: the child command that runs the workload (`fabsim ARGS
/// --format json`), to which each failure adds `--fault F`.
struct WhatifStudy {
  std::string self;                 ///< the fabsim executable
  std::vector<std::string> args;    ///< the child's arguments, without --fault
  std::string workload;             ///< how the report names the workload
  std::string topology_name;
  bool replay = false;              ///< children are replays: time is the makespan, no busbw
  std::vector<topo::FaultClass> classes;
  std::string scope;                ///< links, devices or all
  std::string format = "table";     ///< table, json or csv
  int jobs = 1;                     ///< children at once
  std::string command_line;
};

/// Runs the study and writes the ranking; returns the exit code.
int run_whatif(const WhatifStudy& study, std::ostream& out, std::ostream& err);

/// Parses --scope; throws core::ConfigError naming `flag`.
topo::FaultScope parse_fault_scope(const std::string& scope, const std::string& flag);

void register_whatif(CLI::App& app, CommandSet& commands);

}  // namespace fabsim::cli
