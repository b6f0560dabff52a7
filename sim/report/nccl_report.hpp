#pragma once
/// Writers for nccl-test results: the nccl-tests table, JSON and CSV. All
/// three carry the same figures; none carries wall-clock time, so the same
/// inputs give byte-identical output.

#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <vector>

#include "sim/report/run_provenance.hpp"
#include "topologies/fabric.hpp"
#include "traces/nccl_test_runner.hpp"

namespace fabsim::report {

enum class OutputFormat { kTable, kJson, kCsv };
std::optional<OutputFormat> parse_output_format(std::string_view name);

/// What the report describes, for headers and the JSON meta block.
struct RunDescription {
  std::string topology_file;
  std::string topology_name;
  std::string op;
  int gpus = 0;
  int root = -1;           ///< -1 for operations without a root
  bool reduces = true;     ///< redop column: "sum" or "none"
  core::Bytes segment_size = 0;  ///< 0 in flow mode
  std::string model = "segment";  ///< "segment" or "flow"
  core::Bytes extrapolate_above = 0;  ///< rows above it extrapolated (traces::NcclTestConfig); 0: none
  std::string nccl_tuner;         ///< whose tuner constants chose (traces::nccl_tuner_description)
  std::string launch;             ///< how the calls are launched, and which per-call base that takes
  std::uint64_t kernel_events = 0;  ///< link deliveries + executor wake-ups
  RunProvenance provenance;         ///< JSON meta.provenance, CSV comment lines
  std::vector<topo::FaultSpec> faults;          ///< as asked (--fault, a scenario's "faults")
  std::vector<topo::FaultEvent> fault_events;   ///< what the timed ones did when they struck
};

/// meta.faults: each fault as written, when it struck (null: from the start)
/// and, for a timed one, the traffic it cut off and when that was re-sent.
nlohmann::json faults_json(const std::vector<topo::FaultSpec>& faults, const std::vector<topo::FaultEvent>& events);
/// "# Faults" lines of the text reports.
void write_fault_lines(std::ostream& out, const std::vector<topo::FaultSpec>& faults, const std::vector<topo::FaultEvent>& events);
/// The link table of the text reports: links that moved bytes or carry a fault.
void write_link_table(std::ostream& out, const std::vector<topo::LinkUsage>& links);
/// The "links" list of the JSON reports.
nlohmann::json links_json(const std::vector<topo::LinkUsage>& links);

void write_table(std::ostream& out, const RunDescription& run, const traces::NcclTestResult& result,
                 const std::vector<topo::LinkUsage>* links);
/// CSV with the provenance as "# " comment lines first (pandas: read_csv(f, comment="#")).
void write_csv(std::ostream& out, const RunDescription& run, const traces::NcclTestResult& result);
nlohmann::json to_json(const RunDescription& run, const traces::NcclTestResult& result,
                       const std::vector<topo::LinkUsage>* links);

}  // namespace fabsim::report
