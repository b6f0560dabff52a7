#pragma once
/// Reports of a trace replay: a table for people, JSON for scripts (format
/// fabsim-replay/1: makespan, jobs with step times, critical path and
/// per-rank overlap, and one entry per operation instance and rank), and a
/// Chrome/Perfetto timeline.

#include <iosfwd>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "sim/report/run_provenance.hpp"
#include "traces/replay/replay_engine.hpp"

namespace fabsim::report {

struct ReplayDescription {
  std::string topology_file;
  std::string topology_name;
  std::string model;  ///< "segment" or "flow"
  std::uint64_t kernel_events = 0;
  RunProvenance provenance;  ///< the JSON's "meta"
  std::vector<topo::FaultSpec> faults;         ///< as asked
  std::vector<topo::FaultEvent> fault_events;  ///< what the timed ones did
  std::string nccl_tuner;  ///< whose tuner constants chose (traces::nccl_tuner_description)
  std::vector<std::string> warnings;  ///< figures to doubt (calibration::known_gap_warnings)
};

void write_replay_table(std::ostream& out, const ReplayDescription& run, const std::vector<traces::ReplayJob>& jobs,
                        const traces::ReplayResult& result);

nlohmann::json replay_to_json(const ReplayDescription& run, const std::vector<traces::ReplayJob>& jobs,
                              const traces::ReplayResult& result);

/// The Chrome trace-event JSON: a process per job rank with a thread per
/// stream, and a "links" process with a counter per busy link direction
/// (the `max_links` busiest, in GB/s).
/// Faults that struck during the run appear as global instant events.
nlohmann::json replay_timeline(const topo::TopologySpec& spec, const std::vector<traces::ReplayJob>& jobs,
                               const traces::ReplayResult& result, const std::vector<topo::FaultEvent>& faults = {},
                               std::size_t max_links = 64);

}  // namespace fabsim::report
