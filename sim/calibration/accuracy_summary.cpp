#include "sim/calibration/accuracy_summary.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <tuple>

namespace fabsim::calibration {

Regime regime_of(std::uint64_t bytes) {
  if (bytes < kMidFrom) return Regime::kLatency;
  if (bytes < kBandwidthBoundFrom) return Regime::kMid;
  return Regime::kBandwidth;
}

std::string regime_name(Regime r) {
  switch (r) {
    case Regime::kLatency: return "latency-bound";
    case Regime::kMid: return "mid";
    case Regime::kBandwidth: return "bandwidth-bound";
  }
  return "?";
}

std::string gpu_family(const std::string& gpu) {
  for (const char* family : {"GB300", "GB200", "B300", "B200", "H200", "H100", "A100", "MI300X"})
    if (gpu.find(family) != std::string::npos) return family;
  return "other";
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const std::size_t m = v.size() / 2;
  return v.size() % 2 ? v[m] : 0.5 * (v[m - 1] + v[m]);
}

std::vector<ErrorGroup> summarize(const std::vector<ErrorRow>& rows) {
  // Out-of-sample first: it is the figure that may be called accuracy.
  using Key = std::tuple<bool, bool, std::string, Regime>;
  std::map<Key, std::vector<const ErrorRow*>> groups;
  for (const auto& r : rows) groups[{r.in_sample, r.multi_node, r.family, regime_of(r.bytes)}].push_back(&r);
  std::vector<ErrorGroup> out;
  for (const auto& [key, members] : groups) {
    ErrorGroup g{std::get<0>(key), std::get<1>(key), std::get<2>(key), std::get<3>(key), members.size(), 0, 0, "", 0};
    std::vector<double> errors;
    for (const auto* r : members) {
      errors.push_back(std::abs(r->error));
      if (std::abs(r->error) <= kTargetError) ++g.within_target;
      if (std::abs(r->error) >= g.worst_error) {
        g.worst_error = std::abs(r->error);
        g.worst_at = fmt::format("{} at {} B", r->dataset, r->bytes);
      }
    }
    g.median_error = median(errors);
    out.push_back(std::move(g));
  }
  return out;
}

}  // namespace fabsim::calibration
