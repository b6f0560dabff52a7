#include "topologies/max_min_filling.hpp"

#include <algorithm>
#include <queue>
#include <utility>

namespace fabsim::topo {

MaxMinFilling::MaxMinFilling(std::size_t link_directions)
    : load_(link_directions, 0.0),
      left_(link_directions, 0.0),
      count_(link_directions, 0),
      weight_(link_directions, 0.0),
      members_begin_(link_directions, 0),
      members_end_(link_directions, 0) {}

void MaxMinFilling::flow_left(const FilledFlow& flow) {
  if (whole_) return;
  lowest_left_ = std::min(lowest_left_, flow.level);
  for (int l : flow.links) load_[static_cast<std::size_t>(l)] -= flow.rate;
}

std::size_t MaxMinFilling::solve(const FlowTable& flows, const std::vector<double>& capacity) {
  // Below the lowest leaving level by a relative 1e-9: flows fixed at that
  // level up to rounding are filled again too (filling more is always exact).
  const double floor = lowest_left_ * (1 - 1e-9);
  const bool whole = whole_ || !(floor > 0);
  if (!whole && lowest_left_ == std::numeric_limits<double>::infinity()) return 0;  // nothing left, nothing joined
  const std::size_t filled = fill(flows, capacity, whole ? -std::numeric_limits<double>::infinity() : floor);
  whole_ = false;
  lowest_left_ = std::numeric_limits<double>::infinity();
  return filled;
}

std::size_t MaxMinFilling::fill(const FlowTable& flows, const std::vector<double>& capacity, double floor) {
  const bool whole = floor == -std::numeric_limits<double>::infinity();
  refill_.clear();
  for (std::size_t i = 0; i < flows.size; ++i)
    if (whole || flows[i].level >= floor) refill_.push_back(i);
  // The refilled flows' links and weights are first copied into flat arrays,
  // and each link's flows listed by counting (flows in start order): an
  // all-to-all's filling then walks contiguous memory, not a record and a
  // vector per flow. A link starts with what the kept flows leave of it.
  const std::size_t n = refill_.size();
  touched_.clear();
  flow_begin_.resize(n + 1);
  flow_links_.clear();
  for (std::size_t j = 0; j < n; ++j) {
    const auto& f = flows[refill_[j]];
    flow_begin_[j] = flow_links_.size();
    for (int l : f.links) {
      if (count_[l] == 0) {
        touched_.push_back(l);
        left_[l] = whole ? capacity[l] : capacity[l] - load_[l];
        weight_[l] = 0;
      }
      if (!whole) left_[l] += f.rate;
      ++count_[l];
      weight_[l] += f.weight;
      flow_links_.push_back(l);
    }
  }
  flow_begin_[n] = flow_links_.size();
  std::size_t offset = 0;
  for (int l : touched_) {
    left_[l] = std::max(0.0, left_[l]);
    members_begin_[l] = offset;
    members_end_[l] = offset;
    offset += static_cast<std::size_t>(count_[l]);
  }
  link_members_.resize(offset);
  for (std::size_t j = 0; j < n; ++j)
    for (std::size_t k = flow_begin_[j]; k < flow_begin_[j + 1]; ++k) link_members_[members_end_[flow_links_[k]]++] = static_cast<int>(j);
  using Entry = std::pair<double, long>;  // level, link id (>= 0) or -1 - refilled flow position
  std::priority_queue<Entry, std::vector<Entry>, std::greater<>> heap;
  for (int l : touched_) heap.push({left_[l] / weight_[l], l});
  for (std::size_t j = 0; j < n; ++j) {
    const auto& f = flows[refill_[j]];
    if (f.cap > 0) heap.push({f.cap / f.weight, -1 - static_cast<long>(j)});
  }
  std::vector<char> fixed(n, 0);
  std::vector<double> level(n, 0.0);
  auto fix = [&](std::size_t j, double at) {
    fixed[j] = 1;
    level[j] = at;
    const double w = flows[refill_[j]].weight;
    const double r = at * w;
    for (std::size_t k = flow_begin_[j]; k < flow_begin_[j + 1]; ++k) {
      const int l = flow_links_[k];
      left_[l] = std::max(0.0, left_[l] - r);
      weight_[l] -= w;
      --count_[l];
    }
  };
  // Fixing flows at a level no higher than a link's share never lowers that
  // share: a link's entry is at most its share, so a popped entry below its
  // link's share is pushed again at the share, and one that equals it is the
  // smallest share there is. No entry for every link a round of fixing
  // touches (an all-to-all's round touches thousands).
  while (!heap.empty()) {
    const auto [at, id] = heap.top();
    heap.pop();
    if (id < 0) {
      const auto j = static_cast<std::size_t>(-1 - id);
      if (!fixed[j]) fix(j, at);
      continue;
    }
    if (count_[id] == 0) continue;
    const double current = left_[id] / std::max(weight_[id], 1e-9);
    if (current > at * (1 + 1e-12) + 1e-9) {
      heap.push({current, id});
      continue;
    }
    for (std::size_t k = members_begin_[id]; k < members_end_[id]; ++k) {
      const auto j = static_cast<std::size_t>(link_members_[k]);
      if (!fixed[j]) fix(j, current);
    }
  }
  for (int l : touched_) count_[l] = 0;
  if (whole) std::fill(load_.begin(), load_.end(), 0.0);
  for (std::size_t j = 0; j < n; ++j) {
    auto& f = flows[refill_[j]];
    const double rate = level[j] * f.weight;
    const double change = whole ? rate : rate - f.rate;
    for (int l : f.links) load_[static_cast<std::size_t>(l)] += change;
    f.rate = rate;
    f.level = level[j];
  }
  return n;
}

}  // namespace fabsim::topo
