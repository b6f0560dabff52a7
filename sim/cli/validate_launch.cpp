#include "sim/cli/validate_launch.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <utility>

#include "sim/calibration/measurements.hpp"
#include "sim/core/error.hpp"
#include "sim/core/limits.hpp"
#include "sim/core/json_reader.hpp"

namespace fabsim::cli {

std::optional<int> gpus_per_process(const nlohmann::json& dataset, const std::string& file, const std::string& at) {
  const std::int64_t gpus = dataset.contains("gpus") && dataset["gpus"].is_number_integer() ? dataset["gpus"].get<std::int64_t>() : core::kMaxGpus;
  std::string why;
  const auto n = calibration::read_gpus_per_process(dataset, gpus, why);
  if (!why.empty()) throw core::ConfigError(file, at + "/gpus_per_process", why);
  return n;
}

std::string launch_description(std::optional<int> gpus_per_process) {
  if (!gpus_per_process) return "not recorded";
  if (*gpus_per_process == 1) return "one process per GPU (nccl-tests -g 1)";
  return fmt::format("one process drives {} GPUs (nccl-tests -g {})", *gpus_per_process, *gpus_per_process);
}

std::vector<LaunchGroup> latency_by_launch(const std::vector<calibration::ErrorRow>& rows) {
  // Key: in-sample first (false sorts after true when negated), then the launch, unrecorded last.
  std::map<std::pair<bool, int>, std::vector<double>> errors;
  for (const auto& r : rows)
    if (calibration::regime_of(r.bytes) == calibration::Regime::kLatency)
      errors[{!r.in_sample, r.gpus_per_process > 0 ? r.gpus_per_process : 1 << 30}].push_back(std::abs(r.error));
  std::vector<LaunchGroup> out;
  for (auto& [key, values] : errors) {
    LaunchGroup g;
    g.in_sample = !key.first;
    if (key.second != 1 << 30) g.gpus_per_process = key.second;
    g.sizes = values.size();
    g.median_error = calibration::median(std::move(values));
    out.push_back(g);
  }
  return out;
}

}  // namespace fabsim::cli
