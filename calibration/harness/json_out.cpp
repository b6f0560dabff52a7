#include "json_out.hpp"

namespace harness {

nlohmann::json measurements_json(const nlohmann::json& machine, const std::vector<PeerResult>& peers, const HostResult& host,
                                 const std::vector<NcclSweep>& nccl, const std::vector<std::string>& skipped) {
  using nlohmann::json;
  json doc = {{"format", "fabsim-measurements/1"}, {"machine", machine}, {"peers", json::array()}, {"nccl", json::array()}};
  for (const auto& p : peers) {
    json entry = {{"source", p.source}, {"destination", p.destination}, {"engine", p.engine}, {"unidirectional_GBps", p.unidirectional_gbps}};
    if (p.bidirectional_gbps > 0) entry["bidirectional_GBps"] = p.bidirectional_gbps;
    if (p.latency_us > 0) entry["latency_us"] = p.latency_us;
    doc["peers"].push_back(entry);
  }
  doc["host"] = {{"host_to_device_GBps", host.host_to_device_gbps}, {"device_to_host_GBps", host.device_to_host_gbps},
                 {"device_copy_GBps", host.device_copy_gbps}, {"kernel_launch_us", host.kernel_launch_us},
                 {"launch_round_trip_us", host.launch_round_trip_us}, {"host_read_round_trip_us", host.host_read_round_trip_us}};
  const std::string gpu = machine["gpus"].empty() ? "" : machine["gpus"][0]["name"].get<std::string>();
  for (const auto& s : nccl) {
    json rows = json::array();
    for (const auto& r : s.rows)
      rows.push_back({{"bytes", r.bytes}, {"count", r.count}, {"time_us", r.time_us}, {"algbw_GBps", r.algbw_gbps}, {"busbw_GBps", r.busbw_gbps}});
    doc["nccl"].push_back({{"id", "harness:" + s.op + ":" + s.algorithm + ":" + std::to_string(s.ranks) + "gpu"},
                           {"gpu", gpu}, {"system", gpu}, {"gpus", s.ranks}, {"nodes", 1}, {"collective", s.op},
                           {"algorithm", s.algorithm == "auto" ? "auto" : s.algorithm + " (NCCL_ALGO=" + s.algorithm + ")"},
                           {"rows", rows}});
  }
  doc["skipped"] = skipped;
  return doc;
}

}  // namespace harness
