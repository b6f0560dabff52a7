#include "topologies/fabric_graph.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <deque>
#include <functional>
#include <limits>
#include <map>

#include "sim/core/error.hpp"

namespace fabsim::topo {

FabricGraph::FabricGraph(const TopologySpec& spec, int max_paths)
    : graph_(spec.devices.size()), gpu_count_(static_cast<int>(spec.gpus.size())) {
  for (std::size_t d = 0; d < spec.devices.size(); ++d) graph_[d].device = static_cast<int>(d);
  ports_.resize(spec.devices.size());
  for (std::size_t l = 0; l < spec.links.size(); ++l) {
    const auto& link = spec.links[l];
    boost::add_edge(link.a, link.b, EdgeProps{static_cast<int>(l)}, graph_);
    ports_[link.a].push_back({static_cast<int>(l), false});
    ports_[link.b].push_back({static_cast<int>(l), true});
  }
  compute_paths(spec, max_paths);
}

void FabricGraph::compute_paths(const TopologySpec& spec, int max_paths) {
  const int devices = static_cast<int>(spec.devices.size());
  // port index of each (device, link) pair, for turning paths into routes
  std::vector<std::map<int, int>> port_index(devices);
  for (int d = 0; d < devices; ++d)
    for (std::size_t p = 0; p < ports_[d].size(); ++p) port_index[d][ports_[d][p].link] = static_cast<int>(p);

  const auto is_gpu = [&](int d) { return spec.devices[d].kind == DeviceKind::kGpu; };
  constexpr int kUnreached = std::numeric_limits<int>::max();
  paths_.assign(static_cast<std::size_t>(gpu_count_) * gpu_count_, {});
  core::Diagnostics diag(spec.file);

  for (int dst = 0; dst < gpu_count_; ++dst) {
    // Breadth-first search backwards from the destination, through switches only.
    const int dst_dev = spec.gpus[dst];
    std::vector<int> dist(devices, kUnreached);
    dist[dst_dev] = 0;
    std::deque<int> frontier{dst_dev};
    while (!frontier.empty()) {
      const int v = frontier.front();
      frontier.pop_front();
      if (v != dst_dev && is_gpu(v)) continue;  // GPUs terminate paths; they do not forward
      for (auto [e, end] = boost::out_edges(v, graph_); e != end; ++e) {
        const int w = static_cast<int>(boost::target(*e, graph_));
        if (dist[w] == kUnreached) {
          dist[w] = dist[v] + 1;
          frontier.push_back(w);
        }
      }
    }
    for (int src = 0; src < gpu_count_; ++src) {
      if (src == dst) continue;
      const int src_dev = spec.gpus[src];
      if (dist[src_dev] == kUnreached) {
        diag.error(spec.devices[src_dev].json_path,
                   fmt::format("gpu '{}' cannot reach gpu '{}' (no path through switches connects them)",
                               spec.devices[src_dev].name, spec.devices[dst_dev].name));
        continue;
      }
      diameter_ = std::max(diameter_, dist[src_dev]);
      auto& out = paths_[src * gpu_count_ + dst];
      std::vector<LinkDirectionRef> hops;
      std::vector<int> devices_on_path{src_dev};
      // Depth-first walk down the distance field enumerates every shortest path.
      std::function<void(int)> walk = [&](int v) {
        if (static_cast<int>(out.size()) >= max_paths) return;
        if (v == dst_dev) {
          FabricPath path;
          path.hops = hops;
          double bottleneck = std::numeric_limits<double>::infinity();
          for (std::size_t h = 0; h < hops.size(); ++h) {
            const int from = devices_on_path[h];
            path.route.out_ports.push_back(static_cast<std::uint16_t>(port_index[from].at(hops[h].link)));
            bottleneck = std::min(bottleneck, spec.links[hops[h].link].effective_bandwidth().bytes_per_second);
          }
          path.bottleneck = {bottleneck};
          out.push_back(std::move(path));
          return;
        }
        // Ports in order keep the enumeration deterministic.
        for (const auto& port : ports_[v]) {
          const auto& link = spec.links[port.link];
          const int w = port.reverse ? link.a : link.b;
          if (dist[w] != dist[v] - 1) continue;
          if (w != dst_dev && is_gpu(w)) continue;
          hops.push_back(port);
          devices_on_path.push_back(w);
          walk(w);
          hops.pop_back();
          devices_on_path.pop_back();
        }
      };
      walk(src_dev);
    }
  }
  diag.throw_if_any();
}

}  // namespace fabsim::topo
