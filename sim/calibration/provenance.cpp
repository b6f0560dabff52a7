#include "sim/calibration/provenance.hpp"

#include <algorithm>

namespace fabsim::calibration {

using nlohmann::json;

namespace {

void collect(const json& node, const std::string& path, std::vector<FittedParameter>& out) {
  if (!node.is_object()) return;
  if (const auto it = node.find("fitted_on"); it != node.end() && it->is_array() && node.contains("value")) {
    FittedParameter p{path, {}};
    for (const auto& id : *it)
      if (id.is_string()) p.datasets.push_back(id.get<std::string>());
    out.push_back(std::move(p));
    return;
  }
  for (const auto& [key, child] : node.items()) collect(child, path.empty() ? key : path + "/" + key, out);
}

}  // namespace

std::vector<FittedParameter> fitted_parameters(const json& catalogue) {
  std::vector<FittedParameter> out;
  collect(catalogue, "", out);
  return out;
}

SampleBook::SampleBook(const json& measurements, std::vector<FittedParameter> fitted) : fitted_(std::move(fitted)) {
  for (const char* section : {"collective_datasets", "point_to_point_datasets"}) {
    const auto it = measurements.find(section);
    if (it == measurements.end() || !it->is_array()) continue;
    for (const auto& ds : *it) {
      if (!ds.is_object() || !ds.contains("id") || !ds["id"].is_string()) continue;
      const std::string id = ds["id"];
      std::string run = id;
      if (const auto p = ds.find("provenance"); p != ds.end() && p->is_object() && p->contains("run") && (*p)["run"].is_string())
        run = (*p)["run"].get<std::string>();
      run_[id] = run;
      order_.push_back(id);
    }
  }
}

const std::string& SampleBook::run_of(const std::string& id) const {
  const auto it = run_.find(id);
  return it == run_.end() ? id : it->second;
}

std::vector<std::string> SampleBook::run_members(const std::string& run) const {
  std::vector<std::string> ids;
  for (const auto& [id, r] : run_)
    if (r == run) ids.push_back(id);
  return ids;
}

std::vector<std::string> SampleBook::fitted_on(const std::string& id) const {
  const std::string& run = run_of(id);
  std::vector<std::string> paths;
  for (const auto& p : fitted_)
    if (std::any_of(p.datasets.begin(), p.datasets.end(), [&](const std::string& d) { return run_of(d) == run; }))
      paths.push_back(p.path);
  return paths;
}

std::vector<std::pair<std::string, std::vector<std::string>>> SampleBook::marks() const {
  std::vector<std::pair<std::string, std::vector<std::string>>> out;
  for (const auto& id : order_) out.emplace_back(id, fitted_on(id));
  return out;
}

std::vector<std::string> SampleBook::unknown_ids() const {
  std::set<std::string> unknown;
  for (const auto& p : fitted_)
    for (const auto& d : p.datasets)
      if (!run_.count(d)) unknown.insert(d);
  return {unknown.begin(), unknown.end()};
}

}  // namespace fabsim::calibration
