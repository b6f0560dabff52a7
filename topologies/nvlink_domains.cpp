#include "topologies/nvlink_domains.hpp"

#include <numeric>
#include <unordered_map>

namespace fabsim::topo {

NvlinkDomains nvlink_domains(const TopologySpec& spec) {
  std::vector<int> parent(spec.devices.size());
  std::iota(parent.begin(), parent.end(), 0);
  auto find = [&](int x) {
    while (parent[x] != x) x = parent[x] = parent[parent[x]];
    return x;
  };
  for (const auto& l : spec.links)
    if (l.kind == LinkKind::kNvlink) parent[find(l.a)] = find(l.b);
  NvlinkDomains out;
  std::unordered_map<int, int> number;  // component root -> domain
  for (int gpu : spec.gpus) {
    const auto [it, inserted] = number.try_emplace(find(gpu), out.count);
    if (inserted) {
      ++out.count;
      out.size.push_back(0);
    }
    out.domain_of_gpu.push_back(it->second);
    out.local_index.push_back(out.size[it->second]++);
  }
  return out;
}

}  // namespace fabsim::topo
