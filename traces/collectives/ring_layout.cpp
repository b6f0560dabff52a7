#include "traces/collectives/ring_layout.hpp"

#include <algorithm>
#include <map>

namespace fabsim::traces {

std::vector<std::vector<int>> rail_aligned_rings(const std::vector<int>& domain_of_rank, const std::vector<int>& rail_of_rank,
                                                 int channels) {
  // The communicator's ranks by domain, in order of first appearance, each
  // domain's ranks in rail order.
  std::vector<int> domain_order;
  std::map<int, std::vector<int>> members;
  for (std::size_t r = 0; r < domain_of_rank.size(); ++r) {
    auto& m = members[domain_of_rank[r]];
    if (m.empty()) domain_order.push_back(domain_of_rank[r]);
    m.push_back(static_cast<int>(r));
  }
  if (domain_order.size() <= 1) return {};
  for (auto& [d, m] : members)
    std::sort(m.begin(), m.end(), [&](int x, int y) { return rail_of_rank[x] < rail_of_rank[y]; });
  const auto width = members.at(domain_order[0]).size();
  const bool uniform = std::all_of(members.begin(), members.end(), [&](const auto& e) { return e.second.size() == width; });
  const int domains = static_cast<int>(domain_order.size());
  const int g = static_cast<int>(width);

  std::vector<std::vector<int>> rings;
  for (int c = 0; c < channels; ++c) {
    std::vector<int> ring;
    if (!uniform || g == 1) {
      for (int d : domain_order) ring.insert(ring.end(), members.at(d).begin(), members.at(d).end());
      rings.push_back(std::move(ring));
      continue;
    }
    // Domain k is entered on rail exit[k-1] and left on rail exit[k]; the
    // last domain leaves on the rail the first one is entered on.
    const int x = c % g;
    std::vector<int> exit(static_cast<std::size_t>(domains));
    for (int k = 0; k < domains; ++k) exit[k] = k == domains - 1 ? x : (x + 1 + (k % 2)) % g;
    int entry = x;
    for (int k = 0; k < domains; ++k) {
      const auto& m = members.at(domain_order[k]);
      int leave = exit[k];
      if (leave == entry) leave = (entry + 1) % g;  // two-GPU domains in an odd count: one hop crosses rails
      ring.push_back(m[entry]);
      for (int i = 0; i < g; ++i)
        if (i != entry && i != leave) ring.push_back(m[i]);
      ring.push_back(m[leave]);
      entry = leave;
    }
    rings.push_back(std::move(ring));
  }
  return rings;
}

void place_on_rings(CollectivePlan& plan, const std::vector<std::vector<int>>& rings) {
  if (rings.empty()) return;
  for (auto& t : plan.transfers) {
    const auto& ring = rings[static_cast<std::size_t>(t.channel) % rings.size()];
    t.source = ring[t.source];
    t.destination = ring[t.destination];
  }
}

}  // namespace fabsim::traces
