#include "sim/report/nccl_report.hpp"

#include <fmt/format.h>
#include <fmt/ostream.h>

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
  fmt::print(out, "#\n");
  fmt::print(out, "# {:>10}  {:>12}  {:>6}  {:>6}  {:>6}  {:>10}  {:>8}  {:>8}  {:>9}  {:>8}  {:>8}\n", "size", "count",
             "type", "redop", "root", "time", "algbw", "busbw", "algorithm", "protocol", "channels");
  fmt::print(out, "# {:>10}  {:>12}  {:>6}  {:>6}  {:>6}  {:>10}  {:>8}  {:>8}  {:>9}  {:>8}  {:>8}\n", "(B)",
             "(elements)", "", "", "", "(us)", "(GB/s)", "(GB/s)", "", "", "");
  double bus_sum = 0;
  for (const auto& r : result.rows) {
    fmt::print(out, "  {:>10}  {:>12}  {:>6}  {:>6}  {:>6}  {:>10.2f}  {:>8.2f}  {:>8.2f}  {:>9}  {:>8}  {:>8}\n", r.bytes,
               r.count, "float", redop, run.root, r.time_us, r.algbw_gbps, r.busbw_gbps, r.algorithm, r.protocol, r.channels);
    bus_sum += r.busbw_gbps;
  }
  fmt::print(out, "# Avg bus bandwidth    : {:.3f}\n", result.rows.empty() ? 0.0 : bus_sum / result.rows.size());
  fmt::print(out, "# Simulated time       : {}\n", core::format_time(result.simulated));
  if (links != nullptr) {
    fmt::print(out, "#\n# Links (whole run): {:<34} {:>16} {:>12} {:>10}\n", "direction", "bytes", "busy (us)", "util");
    for (const auto& l : *links) {
      if (l.bytes == 0) continue;
      fmt::print(out, "#                    {:<34} {:>16} {:>12.2f} {:>9.1f}%\n", l.name, l.bytes, core::to_us(l.busy),
                 100.0 * l.utilisation);
    }
  }
}

void write_csv(std::ostream& out, const RunDescription& run, const traces::NcclTestResult& result) {
  write_csv_provenance(out, run.provenance);
  fmt::print(out, "bytes,count,time_us,algbw_GBps,busbw_GBps,algorithm,protocol,channels\n");
  for (const auto& r : result.rows)
    fmt::print(out, "{},{},{:.3f},{:.3f},{:.3f},{},{},{}\n", r.bytes, r.count, r.time_us, r.algbw_gbps, r.busbw_gbps,
               r.algorithm, r.protocol, r.channels);
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
  }
  nlohmann::json doc{{"rows", rows},
                     {"meta",
                      {{"topology", run.topology_file},
                       {"topology_name", run.topology_name},
                       {"op", run.op},
                       {"gpus", run.gpus},
                       {"segment_size_bytes", run.segment_size},
                       {"model", run.model},
                       {"simulated_us", round_to(core::to_us(result.simulated), 3)},
                       {"segments", result.segments},
                       {"kernel_events", run.kernel_events},
                       {"provenance", provenance_json(run.provenance)}}}};
  if (links != nullptr) {
    nlohmann::json list = nlohmann::json::array();
    for (const auto& l : *links)
      list.push_back({{"link", l.name},
                      {"bytes", l.bytes},
                      {"busy_us", round_to(core::to_us(l.busy), 3)},
                      {"utilisation", round_to(l.utilisation, 4)},
                      {"effective_GBps", round_to(l.effective_bandwidth.gbytes_per_second(), 3)},
                      {"peak_buffer_bytes", l.peak_buffer}});
    doc["links"] = list;
  }
  return doc;
}

}  // namespace fabsim::report
