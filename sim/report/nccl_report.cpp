#include "sim/report/nccl_report.hpp"

#include <fmt/format.h>
#include <fmt/ostream.h>

#include <algorithm>
#include <cmath>

namespace fabsim::report {

std::optional<OutputFormat> parse_output_format(std::string_view name) {
  if (name == "table") return OutputFormat::kTable;
  if (name == "json") return OutputFormat::kJson;
  if (name == "csv") return OutputFormat::kCsv;
  return std::nullopt;
}

namespace {
double round_to(double v, int digits) {
  const double scale = std::pow(10.0, digits);
  return std::round(v * scale) / scale;
}
}  // namespace

void write_table(std::ostream& out, const RunDescription& run, const traces::NcclTestResult& result,
                 const std::vector<topo::LinkUsage>* links) {
  const char* redop = run.reduces ? "sum" : "none";
  fmt::print(out, "# fabsim nccl-test: {} on {} ({} GPUs), float, {}\n", run.op, run.topology_name, run.gpus, redop);
  fmt::print(out, "# NCCL tuner: {}\n", run.nccl_tuner);
  if (!run.launch.empty()) fmt::print(out, "# launch: {}\n", run.launch);
  fmt::print(out, "#\n");
  fmt::print(out, "# {:>10}  {:>12}  {:>6}  {:>6}  {:>6}  {:>10}  {:>8}  {:>8}  {:>9}  {:>8}  {:>8}\n", "size", "count",
             "type", "redop", "root", "time", "algbw", "busbw", "algorithm", "protocol", "channels");
  fmt::print(out, "# {:>10}  {:>12}  {:>6}  {:>6}  {:>6}  {:>10}  {:>8}  {:>8}  {:>9}  {:>8}  {:>8}\n", "(B)",
             "(elements)", "", "", "", "(us)", "(GB/s)", "(GB/s)", "", "", "");
  double bus_sum = 0;
  for (const auto& r : result.rows) {
    fmt::print(out, "  {:>10}  {:>12}  {:>6}  {:>6}  {:>6}  {:>10.2f}  {:>8.2f}  {:>8.2f}  {:>9}  {:>8}  {:>8}{}\n", r.bytes,
               r.count, "float", redop, run.root, r.time_us, r.algbw_gbps, r.busbw_gbps, r.algorithm, r.protocol, r.channels,
               r.extrapolated ? "  (extrapolated)" : "");
    bus_sum += r.busbw_gbps;
  }
  fmt::print(out, "# Avg bus bandwidth    : {:.3f}\n", result.rows.empty() ? 0.0 : bus_sum / result.rows.size());
  fmt::print(out, "# Simulated time       : {}\n", core::format_time(result.simulated));
  if (run.extrapolate_above > 0)
    fmt::print(out, "# Extrapolated         : rows above {} B marked (extrapolated): each on the line through the two largest runs of its "
                    "algorithm, protocol and channels, doubled from there until three lay on one line ({} run for the line alone)\n",
               run.extrapolate_above, result.probes);
  for (const auto& w : result.warnings) fmt::print(out, "# Warning              : {}\n", w);
  write_fault_lines(out, run.faults, run.fault_events);
  if (links != nullptr) write_link_table(out, *links);
}

void write_link_table(std::ostream& out, const std::vector<topo::LinkUsage>& links) {
  fmt::print(out, "#\n# Links (whole run): {:<34} {:>16} {:>12} {:>10}  {}\n", "direction", "bytes", "busy (us)", "util", "fault");
  for (const auto& l : links) {
    if (l.bytes == 0 && l.fault.empty()) continue;
    fmt::print(out, "#                    {:<34} {:>16} {:>12.2f} {:>9.1f}%  {}\n", l.name, l.bytes, core::to_us(l.busy),
               100.0 * l.utilisation, l.fault);
  }
}

nlohmann::json links_json(const std::vector<topo::LinkUsage>& links) {
  nlohmann::json list = nlohmann::json::array();
  for (const auto& l : links) {
    list.push_back({{"link", l.name},
                    {"bytes", l.bytes},
                    {"busy_us", round_to(core::to_us(l.busy), 3)},
                    {"utilisation", round_to(l.utilisation, 4)},
                    {"effective_GBps", round_to(l.effective_bandwidth.gbytes_per_second(), 3)},
                    {"peak_buffer_bytes", l.peak_buffer}});
    if (!l.fault.empty()) list.back()["fault"] = l.fault;
  }
  return list;
}

nlohmann::json faults_json(const std::vector<topo::FaultSpec>& faults, const std::vector<topo::FaultEvent>& events) {
  nlohmann::json list = nlohmann::json::array();
  std::size_t next_event = 0;  // events come in strike order, as the timed faults were sorted
  for (const auto& f : faults) {
    nlohmann::json item{{"fault", f.text}, {"at_us", nullptr}};
    if (f.at) {
      item["at_us"] = round_to(core::to_us(*f.at), 3);
      for (std::size_t e = next_event; e < events.size(); ++e)
        if (events[e].fault == f.text && events[e].at == *f.at) {
          item["flows_resent"] = events[e].flows_resent;
          item["transfers_hit"] = events[e].transfers_hit;
          if (f.kind == topo::FaultKind::kLinkDegraded) item["transfers_restriped"] = events[e].transfers_restriped;
          item["bytes_resent"] = std::llround(events[e].bytes_resent);
          item["resent_at_us"] = events[e].flows_resent > 0 ? nlohmann::json(round_to(core::to_us(events[e].resent_at), 3)) : nlohmann::json(nullptr);
          break;
        }
      if (!item.contains("flows_resent")) item["struck"] = false;  // the run ended before its time
    }
    list.push_back(std::move(item));
  }
  return list;
}

void write_fault_lines(std::ostream& out, const std::vector<topo::FaultSpec>& faults, const std::vector<topo::FaultEvent>& events) {
  for (const auto& f : faults) {
    if (!f.at) {
      fmt::print(out, "# Fault                : {} (from the start)\n", f.text);
      continue;
    }
    const auto e = std::find_if(events.begin(), events.end(), [&](const topo::FaultEvent& ev) { return ev.fault == f.text && ev.at == *f.at; });
    if (e == events.end()) {
      fmt::print(out, "# Fault                : {} (the run ended before it struck)\n", f.text);
    } else if (f.kind == topo::FaultKind::kLinkDegraded) {
      fmt::print(out, "# Fault                : {} struck at {}: {} transfers striped again by the new bandwidth\n", f.text,
                 core::format_time(e->at), e->transfers_restriped);
    } else if (e->flows_resent == 0) {
      fmt::print(out, "# Fault                : {} struck at {}, no traffic on it\n", f.text, core::format_time(e->at));
    } else {
      fmt::print(out, "# Fault                : {} struck at {}: {} flows of {} transfers ({}) re-sent at {}\n", f.text,
                 core::format_time(e->at), e->flows_resent, e->transfers_hit,
                 core::format_bytes(static_cast<core::Bytes>(std::llround(e->bytes_resent))), core::format_time(e->resent_at));
    }
  }
}

void write_csv(std::ostream& out, const RunDescription& run, const traces::NcclTestResult& result) {
  write_csv_provenance(out, run.provenance);
  // A run that extrapolates says which rows, in a column of its own.
  const bool marked = run.extrapolate_above > 0;
  for (const auto& w : result.warnings) fmt::print(out, "# warning: {}\n", w);
  fmt::print(out, "bytes,count,time_us,algbw_GBps,busbw_GBps,algorithm,protocol,channels{}\n", marked ? ",extrapolated" : "");
  for (const auto& r : result.rows)
    fmt::print(out, "{},{},{:.3f},{:.3f},{:.3f},{},{},{}{}\n", r.bytes, r.count, r.time_us, r.algbw_gbps, r.busbw_gbps,
               r.algorithm, r.protocol, r.channels, marked ? (r.extrapolated ? ",1" : ",0") : "");
}

nlohmann::json to_json(const RunDescription& run, const traces::NcclTestResult& result,
                       const std::vector<topo::LinkUsage>* links) {
  nlohmann::json rows = nlohmann::json::array();
  for (const auto& r : result.rows) {
    rows.push_back({{"bytes", r.bytes},
                    {"count", r.count},
                    {"time_us", round_to(r.time_us, 3)},
                    {"algbw_GBps", round_to(r.algbw_gbps, 3)},
                    {"busbw_GBps", round_to(r.busbw_gbps, 3)},
                    {"algorithm", r.algorithm},
                    {"protocol", r.protocol},
                    {"channels", r.channels}});
    if (r.extrapolated) rows.back()["extrapolated"] = true;
  }
  nlohmann::json doc{{"rows", rows},
                     {"meta",
                      {{"topology", run.topology_file},
                       {"topology_name", run.topology_name},
                       {"op", run.op},
                       {"gpus", run.gpus},
                       {"segment_size_bytes", run.segment_size},
                       {"model", run.model},
                       {"nccl_tuner", run.nccl_tuner},
                       {"launch", run.launch},
                       {"simulated_us", round_to(core::to_us(result.simulated), 3)},
                       {"segments", result.segments},
                       {"kernel_events", run.kernel_events},
                       {"provenance", provenance_json(run.provenance)}}}};
  if (run.extrapolate_above > 0) {
    doc["meta"]["extrapolated_above_bytes"] = run.extrapolate_above;
    doc["meta"]["probes"] = result.probes;
  }
  if (run.extrapolate_above > 0 || !result.warnings.empty()) doc["meta"]["warnings"] = result.warnings;
  if (!run.faults.empty()) doc["meta"]["faults"] = faults_json(run.faults, run.fault_events);
  if (links != nullptr) doc["links"] = links_json(*links);
  return doc;
}

}  // namespace fabsim::report
