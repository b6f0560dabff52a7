#include "topologies/fabric.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "sim/core/error.hpp"
#include "sim/core/kernel.hpp"

namespace fabsim::topo {

namespace {
std::string module_name(std::string_view text) {
  std::string out;
  for (char c : text) out += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  return out;
}

/// One NCCL connection (source, destination, channel) is one stream on every
/// link it crosses: its steps queue behind each other (models::Segment::stream).
/// GPU indexes stay below 2^24, channels below 2^16.
std::uint64_t connection_stream(int source, int destination, std::uint32_t channel) {
  return (static_cast<std::uint64_t>(source) << 40) | (static_cast<std::uint64_t>(destination) << 16) | (channel & 0xffffu);
}
/// An in-switch operation is a stream of its own (the top bit keeps it apart
/// from every connection).
std::uint64_t in_switch_stream(std::uint64_t transfer_id) { return (std::uint64_t{1} << 63) | transfer_id; }
}  // namespace

Fabric::Fabric(const TopologySpec& spec, FabricOptions options) : spec_(spec), options_(options), graph_(spec) {
  if (options_.segment_size == 0) throw core::ConfigError("<options>", "/segment_size", "expected a segment size > 0");
  std::vector<sc_core::sc_vector<sc_core::sc_port<models::LinkTransmitter>>*> out_ports(spec.devices.size(), nullptr);
  std::vector<sc_core::sc_export<models::SegmentSink>*> in_exports(spec.devices.size(), nullptr);
  segment_limit_.assign(spec.devices.size(), options_.segment_size);
  for (std::size_t d = 0; d < spec.devices.size(); ++d) {
    const auto& dev = spec.devices[d];
    const std::size_t ports = graph_.ports(static_cast<int>(d)).size();
    if (dev.kind == DeviceKind::kGpu) {
      gpus_.push_back(std::make_unique<models::GpuEndpoint>(module_name(dev.name).c_str(), ports, *this));
      out_ports[d] = &gpus_.back()->out;
      in_exports[d] = &gpus_.back()->in;
    } else {
      models::SwitchParams params;
      if (dev.kind == DeviceKind::kSwitch) {
        const auto& model = spec.catalogue.switches.at(dev.model);
        params = {model.ports, model.traversal_latency, model.input_buffer, model.in_network_reduction};
      } else {
        // A NIC forwards RDMA traffic between its PCIe and network ports; its
        // message latency is paid like a traversal (pipelined segments pay it once).
        const auto& model = spec.catalogue.nics.at(dev.model);
        params = {model.pcie_ports + model.network_ports, model.message_latency, model.input_buffer, false};
      }
      if (dev.kind == DeviceKind::kSwitch && is_network(spec.catalogue.switches.at(dev.model).link_kind))
        segment_limit_[d] = network_segment_limit(params.input_buffer, options_.segment_size);
      switches_.push_back(std::make_unique<models::CrossbarSwitch>(module_name(dev.name).c_str(), params, ports));
      out_ports[d] = &switches_.back()->out;
      in_exports[d] = &switches_.back()->in;
    }
  }
  links_.resize(spec.links.size() * 2);
  for (std::size_t l = 0; l < spec.links.size(); ++l) {
    const auto& link = spec.links[l];
    const models::LinkParams params{link.raw_bandwidth(), link.efficiency, link.latency};
    for (bool reverse : {false, true}) {
      const int from = reverse ? link.b : link.a;
      const int to = reverse ? link.a : link.b;
      const LinkDirectionRef ref{static_cast<int>(l), reverse};
      auto name = module_name(fmt::format("link{}_{}_to_{}", l, spec.devices[from].name, spec.devices[to].name));
      auto dir = std::make_unique<models::LinkDirection>(name.c_str(), params);
      const auto& from_ports = graph_.ports(from);
      const auto port = std::find_if(from_ports.begin(), from_ports.end(),
                                     [&](const LinkDirectionRef& p) { return p.id() == ref.id(); }) - from_ports.begin();
      (*out_ports[from])[port].bind(dir->tx);
      dir->out.bind(*in_exports[to]);
      links_[ref.id()] = std::move(dir);
    }
  }
}

Fabric::~Fabric() = default;

void Fabric::send(const models::TransferRequest& request) {
  if (request.kind == models::TransferKind::kPointToPoint) {
    send_point_to_point(request);
  } else {
    send_in_switch(request);
  }
}

const std::vector<Fabric::SwitchPlane>& Fabric::planes_for(const std::vector<int>& group) {
  auto [it, inserted] = planes_.try_emplace(group);
  if (!inserted) return it->second;
  auto& planes = it->second;
  const auto& found = switch_planes(group);
  for (const auto& links : found) {
    SwitchPlane plane;
    plane.weight = links.weight;
    plane.up = links.up_route;
    plane.down = links.down_route;
    plane.single_switch = links.tree.size() == 1;
    plane.attach = links.attach;
    const std::size_t switches = links.tree.size();
    plane.tree_routes.resize(switches);
    plane.tree_next.resize(switches);
    for (const auto& node : links.tree) plane.tree_up.push_back(node.up_route);
    planes.push_back(std::move(plane));
  }
  // Ops point into the planes' own vectors: fill them once the vectors stop moving.
  for (std::size_t p = 0; p < planes.size(); ++p) {
    auto& plane = planes[p];
    const auto& tree = found[p].tree;
    for (const auto& route : plane.down)
      plane.reduce_to.push_back({static_cast<std::uint16_t>(group.size()), &route, nullptr});
    plane.multicast = {0, nullptr, &plane.down};
    plane.all_reduce.resize(tree.size());
    plane.tree_multicast.resize(tree.size());
    // Each switch's multicast reaches its own members and its child switches,
    // which multicast on; its reduce takes as many inputs.
    for (std::size_t m = 0; m < group.size(); ++m) {
      const auto at = static_cast<std::size_t>(plane.attach[m]);
      plane.tree_routes[at].push_back(plane.down[m]);
      plane.tree_next[at].push_back(nullptr);
    }
    for (std::size_t s = 1; s < tree.size(); ++s) {
      const auto parent = static_cast<std::size_t>(tree[s].parent);
      plane.tree_routes[parent].push_back(tree[s].down_route);
      plane.tree_next[parent].push_back(&plane.tree_multicast[s]);
    }
    for (std::size_t s = 0; s < tree.size(); ++s) {
      plane.tree_multicast[s] = {0, nullptr, &plane.tree_routes[s], nullptr, &plane.tree_next[s]};
      const auto fan_in = static_cast<std::uint16_t>(plane.tree_routes[s].size());
      if (tree[s].parent < 0) {
        plane.all_reduce[s] = {fan_in, nullptr, &plane.tree_routes[s], nullptr, &plane.tree_next[s]};
      } else {
        plane.all_reduce[s] = {fan_in, &plane.tree_up[s], nullptr, &plane.all_reduce[static_cast<std::size_t>(tree[s].parent)], nullptr};
      }
    }
  }
  return planes;
}

std::uint64_t Fabric::backend_events() const {
  std::uint64_t events = 0;
  for (const auto& l : links_) events += l->stats().segments;
  return events;
}

void Fabric::send_in_switch(const models::TransferRequest& request) {
  const TimePs now = core::now_ps();
  const auto& group = *request.group;
  const auto& planes = planes_for(group);
  if (planes.empty())
    throw core::SimulationError("in-switch reduction needs a switch with it on every GPU's route (NVLink SHARP, or SHARP in one network switch)");
  const bool all_reduce = request.kind == models::TransferKind::kAllReduceInSwitch;
  const bool reduce = all_reduce || request.kind == models::TransferKind::kReduceInSwitch;
  const int endpoint = reduce ? request.destination : request.source;
  const auto member = static_cast<std::size_t>(std::find(group.begin(), group.end(), endpoint) - group.begin());
  double total_weight = 0;
  for (const auto& p : planes) {
    total_weight += p.weight.bytes_per_second;
    if (!all_reduce && !p.single_switch)
      throw core::SimulationError("a reduce to one GPU or a multicast over a multi-switch aggregation tree is not modelled");
  }

  // Stripe over the planes by bandwidth, as for point-to-point traffic; each
  // plane's share is cut into pieces of at most the segment size.
  std::vector<std::pair<Bytes, std::uint32_t>> shares;  // bytes, pieces
  Bytes assigned = 0;
  std::uint32_t pieces_total = 0;
  for (std::size_t i = 0; i < planes.size(); ++i) {
    const Bytes bytes = i + 1 == planes.size() ? request.wire_bytes - assigned
                                               : static_cast<Bytes>(std::floor(static_cast<double>(request.wire_bytes) *
                                                                               planes[i].weight.bytes_per_second / total_weight));
    assigned += bytes;
    const auto pieces = static_cast<std::uint32_t>(std::max<Bytes>(1, (bytes + options_.segment_size - 1) / options_.segment_size));
    shares.emplace_back(bytes, pieces);
    pieces_total += pieces;
  }
  if (!reduce || all_reduce) multicast_pending_[request.id] = static_cast<int>(group.size());

  std::uint32_t piece_id = 0;
  for (std::size_t i = 0; i < planes.size(); ++i) {
    const auto& plane = planes[i];
    Bytes left = shares[i].first;
    for (std::uint32_t k = 0; k < shares[i].second; ++k, ++piece_id) {
      const Bytes piece = left / (shares[i].second - k);
      left -= piece;
      models::Segment segment;
      segment.transfer_id = request.id;
      segment.stream = in_switch_stream(request.id);
      segment.segments_in_transfer = pieces_total;
      segment.wire_bytes = piece;
      segment.piece = piece_id;
      if (reduce) {
        // Every member sends its copy of the piece up; the switch sends the sum down.
        segment.kind = models::SegmentKind::kReduce;
        segment.op = &plane.reduce_to[member];
        for (std::size_t m = 0; m < group.size(); ++m) {
          models::Segment up = segment;
          up.route = &plane.up[m];
          if (all_reduce) up.op = &plane.all_reduce[static_cast<std::size_t>(plane.attach[m])];  // reduced first at its own switch
          gpus_[group[m]]->inject(std::move(up), now);
          ++segments_injected_;
        }
      } else {
        segment.kind = models::SegmentKind::kMulticast;
        segment.op = &plane.multicast;
        segment.route = &plane.up[member];
        gpus_[endpoint]->inject(std::move(segment), now);
        ++segments_injected_;
      }
    }
  }
}

Bytes Fabric::segment_size_on(const FabricPath& path) const {
  Bytes limit = options_.segment_size;
  for (const auto& hop : path.hops) {
    const auto& link = spec_.links[static_cast<std::size_t>(hop.link)];
    limit = std::min(limit, segment_limit_[static_cast<std::size_t>(hop.reverse ? link.a : link.b)]);
  }
  return limit;
}

void Fabric::send_point_to_point(const models::TransferRequest& request) {
  const TimePs now = core::now_ps();
  const auto& paths = graph_.paths(request.source, request.destination, request.flow);
  double total_weight = 0;
  for (const auto& p : paths) total_weight += p.bottleneck.bytes_per_second;

  // Stripe over the equal-cost paths in proportion to their bandwidth, as the
  // hardware spreads packets over every NVLink and switch plane.
  struct Share {
    const FabricPath* path;
    Bytes bytes;
    std::uint32_t segments;
  };
  std::vector<Share> shares;
  shares.reserve(paths.size());
  Bytes assigned = 0;
  std::uint32_t segment_count = 0;
  for (std::size_t i = 0; i < paths.size(); ++i) {
    Bytes bytes = i + 1 == paths.size()
                      ? request.wire_bytes - assigned
                      : static_cast<Bytes>(std::floor(static_cast<double>(request.wire_bytes) *
                                                      paths[i].bottleneck.bytes_per_second / total_weight));
    assigned += bytes;
    if (bytes == 0) continue;
    const Bytes segment_size = segment_size_on(paths[i]);
    const auto segments = static_cast<std::uint32_t>((bytes + segment_size - 1) / segment_size);
    shares.push_back({&paths[i], bytes, segments});
    segment_count += segments;
  }
  if (shares.empty()) {  // a zero-byte transfer still synchronises sender and receiver
    shares.push_back({&paths.front(), 0, 1});
    segment_count = 1;
  }
  const std::uint64_t connection = connection_stream(request.source, request.destination, request.flow);
  for (const auto& share : shares) {
    Bytes left = share.bytes;
    for (std::uint32_t s = 0; s < share.segments; ++s) {
      const Bytes piece = left / (share.segments - s);
      left -= piece;
      models::Segment segment;
      segment.transfer_id = request.id;
      segment.stream = connection;
      segment.segments_in_transfer = segment_count;
      segment.wire_bytes = piece;
      segment.route = &share.path->route;
      gpus_[request.source]->inject(std::move(segment), now);
      ++segments_injected_;
    }
  }
}

void Fabric::on_transfer_delivered(std::uint64_t transfer_id, TimePs at) {
  if (completion_ == nullptr) throw core::SimulationError("a transfer completed with no executor listening");
  // A multicast completes when its last destination has all of it.
  if (auto it = multicast_pending_.find(transfer_id); it != multicast_pending_.end()) {
    if (--it->second > 0) return;
    multicast_pending_.erase(it);
  }
  completion_->on_transfer_complete(transfer_id, at);
}

std::vector<double> Fabric::link_bytes() const {
  std::vector<double> out(links_.size(), 0.0);
  for (std::size_t id = 0; id < links_.size(); ++id) out[id] = static_cast<double>(links_[id]->stats().bytes);
  return out;
}

std::vector<LinkUsage> Fabric::link_usage(TimePs elapsed) const {
  std::vector<LinkUsage> out;
  for (std::size_t l = 0; l < spec_.links.size(); ++l) {
    for (bool reverse : {false, true}) {
      const auto& link = spec_.links[l];
      const auto& dir = *links_[LinkDirectionRef{static_cast<int>(l), reverse}.id()];
      LinkUsage u;
      u.name = fmt::format("{}->{}", spec_.devices[reverse ? link.b : link.a].name, spec_.devices[reverse ? link.a : link.b].name);
      u.bytes = dir.stats().bytes;
      u.busy = dir.stats().busy;
      u.utilisation = elapsed > 0 ? static_cast<double>(u.busy) / static_cast<double>(elapsed) : 0.0;
      u.effective_bandwidth = dir.effective_bandwidth();
      u.peak_buffer = dir.peak_buffer_use();
      u.segments = dir.stats().segments;
      u.fault = link.fault;
      out.push_back(std::move(u));
    }
  }
  return out;
}

}  // namespace fabsim::topo
