#include "sim/calibration/target_checks.hpp"

#include <cmath>
#include <limits>
#include <map>

namespace fabsim::calibration {

namespace {

constexpr std::uint64_t kKiB = 1024, kMiB = kKiB * kKiB;

enum class Scope { kMultiNode, kSingleNode, kEither };

/// A range of sizes a target covers, where, and its bound.
struct TargetRange {
  const char* name;
  std::uint64_t from, below;  ///< bytes: from <= size < below
  Scope scope;
  double target;
};

constexpr std::uint64_t kNoLimit = std::numeric_limits<std::uint64_t>::max();
constexpr TargetRange kRanges[] = {
    {"from 1 KiB", kKiB, kNoLimit, Scope::kMultiNode, kTargetError},
    {"below 1 MiB", 0, kMiB, Scope::kSingleNode, kTargetError},
    {"from 64 MiB", kBandwidthBoundFrom, kNoLimit, Scope::kEither, kBandwidthTargetError},
};

bool applies(Scope scope, bool multi_node) { return scope == Scope::kEither || (scope == Scope::kMultiNode) == multi_node; }

}  // namespace

std::vector<TargetCheck> target_checks(const std::vector<ErrorRow>& rows) {
  std::vector<std::string> order;
  std::map<std::string, std::vector<const ErrorRow*>> by_dataset;
  for (const auto& r : rows) {
    auto& list = by_dataset[r.dataset];
    if (list.empty()) order.push_back(r.dataset);
    list.push_back(&r);
  }
  std::vector<TargetCheck> checks;
  for (const auto& id : order) {
    const auto& list = by_dataset.at(id);
    const bool multi_node = list.front()->multi_node;
    for (const auto& range : kRanges) {
      if (!applies(range.scope, multi_node)) continue;
      std::vector<double> errors;
      for (const auto* r : list)
        if (r->bytes >= range.from && r->bytes < range.below) errors.push_back(std::abs(r->error));
      if (errors.empty()) continue;
      checks.push_back({id, list.front()->in_sample, multi_node, range.name, errors.size(), median(errors), range.target});
    }
  }
  return checks;
}

}  // namespace fabsim::calibration
