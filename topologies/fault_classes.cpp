#include "topologies/fault_classes.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <unordered_set>
#include <utility>

#include "sim/core/hash.hpp"

namespace fabsim::topo {

namespace {

using core::hash_text;
using core::mix64;

/// What a bundle's links are: their model and count, as one hash.
std::uint64_t link_signature(const LinkSpec& link) {
  return mix64(hash_text(link.model) ^ mix64(static_cast<std::uint64_t>(link.count)) ^ (link.down ? 0x5A5Aull : 0));
}

/// Stable colours of every device (colour refinement).
std::vector<std::uint64_t> refine_colours(const TopologySpec& spec, const std::vector<int>& used_gpus) {
  const std::size_t n = spec.devices.size();
  std::vector<char> used(n, 0);
  for (int g : used_gpus) used[static_cast<std::size_t>(spec.gpus[static_cast<std::size_t>(g)])] = 1;
  std::vector<std::vector<std::pair<int, std::uint64_t>>> adjacent(n);  // neighbour, link signature
  for (const auto& link : spec.links) {
    adjacent[static_cast<std::size_t>(link.a)].emplace_back(link.b, link_signature(link));
    adjacent[static_cast<std::size_t>(link.b)].emplace_back(link.a, link_signature(link));
  }
  std::vector<std::uint64_t> colour(n);
  for (std::size_t d = 0; d < n; ++d)
    colour[d] = mix64(hash_text(spec.devices[d].model) ^ mix64(static_cast<std::uint64_t>(spec.devices[d].kind) * 7 + used[d]));
  auto distinct = [](std::vector<std::uint64_t> c) {
    std::sort(c.begin(), c.end());
    return static_cast<std::size_t>(std::unique(c.begin(), c.end()) - c.begin());
  };
  std::size_t classes = distinct(colour);
  std::vector<std::uint64_t> around;
  for (std::size_t round = 0; round < n; ++round) {
    std::vector<std::uint64_t> next(n);
    for (std::size_t d = 0; d < n; ++d) {
      around.clear();
      for (const auto& [w, signature] : adjacent[d]) around.push_back(mix64(colour[static_cast<std::size_t>(w)] ^ signature));
      std::sort(around.begin(), around.end());
      std::uint64_t h = colour[d];
      for (auto a : around) h = mix64(h ^ a);
      next[d] = h;
    }
    const std::size_t refined = distinct(next);
    colour = std::move(next);
    if (refined == classes) break;  // stable: no class split
    classes = refined;
  }
  return colour;
}

}  // namespace

std::vector<FaultClass> single_fault_classes(const TopologySpec& spec, const std::vector<int>& used_gpus, FaultScope scope, bool merge) {
  const auto colour = refine_colours(spec, used_gpus);
  std::vector<FaultClass> classes;
  std::map<std::vector<std::uint64_t>, std::size_t> by_key;
  auto add = [&](std::vector<std::uint64_t> key, std::string fault) {
    if (!merge) key = {static_cast<std::uint64_t>(classes.size())};
    const auto [it, inserted] = by_key.try_emplace(std::move(key), classes.size());
    if (inserted) classes.push_back({fault, {}});
    classes[it->second].members.push_back(std::move(fault));
  };
  if (scope.links) {
    // A bundle is every link between two devices: its key is the two end
    // colours (unordered) and the signatures of its links.
    std::map<std::pair<int, int>, std::vector<std::uint64_t>> bundles;
    std::vector<std::pair<int, int>> order;
    for (const auto& link : spec.links) {
      if (link.down) continue;  // failed from the start already
      const auto ends = std::minmax(link.a, link.b);
      auto [it, inserted] = bundles.try_emplace(ends);
      if (inserted) order.push_back(ends);
      it->second.push_back(link_signature(link));
    }
    for (const auto& ends : order) {
      auto key = bundles.at(ends);
      std::sort(key.begin(), key.end());
      const auto [lo, hi] = std::minmax(colour[static_cast<std::size_t>(ends.first)], colour[static_cast<std::size_t>(ends.second)]);
      key.insert(key.begin(), {1, lo, hi});
      // Name it from the side that reads naturally: the GPU or lower tier first, as declared.
      add(std::move(key), fmt::format("{}~{}=down", spec.devices[static_cast<std::size_t>(ends.first)].name,
                                      spec.devices[static_cast<std::size_t>(ends.second)].name));
    }
  }
  if (scope.devices)
    for (std::size_t d = 0; d < spec.devices.size(); ++d) {
      if (spec.devices[d].kind == DeviceKind::kGpu) continue;
      add({2, colour[d]}, fmt::format("{}=down", spec.devices[d].name));
    }
  return classes;
}

}  // namespace fabsim::topo
