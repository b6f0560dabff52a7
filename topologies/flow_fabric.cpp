#include "topologies/flow_fabric.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <optional>
#include <unordered_map>

#include "sim/core/error.hpp"
#include "sim/core/kernel.hpp"

namespace fabsim::topo {

FlowFabric::FlowFabric(const TopologySpec& spec, double completion_window, const char* timer_name)
    : spec_(spec),
      graph_(spec),
      timers_(timer_name),
      completion_window_(completion_window),
      filling_(spec.links.size() * 2) {
  capacity_.resize(spec.links.size() * 2);
  for (std::size_t l = 0; l < spec.links.size(); ++l)
    capacity_[2 * l] = capacity_[2 * l + 1] = spec.links[l].effective_bandwidth().bytes_per_second;
  bytes_.assign(capacity_.size(), 0.0);
  forwarding_.reserve(spec.devices.size());
  for (std::size_t d = 0; d < spec.devices.size(); ++d) forwarding_.push_back(forwarding_latency(spec, static_cast<int>(d)));
  timed_fault_.resize(spec.links.size());
}

TimePs FlowFabric::path_latency(const std::vector<LinkDirectionRef>& hops, int first_device) const {
  TimePs latency = 0;
  int at = first_device;
  for (std::size_t h = 0; h < hops.size(); ++h) {
    if (h > 0) latency += forwarding_[static_cast<std::size_t>(at)];
    latency += spec_.links[hops[h].link].latency;
    at = graph_.neighbour(at, hops[h]);
  }
  return latency;
}

void FlowFabric::add_flow(std::uint64_t transfer, const std::vector<LinkDirectionRef>& hops, int first_device, double bytes,
                          double cap, TimePs extra_latency, double weight) {
  Flow f;
  f.transfer = transfer;
  f.total = bytes;
  f.remaining = bytes;
  f.cap = cap;
  f.weight = weight;
  f.latency = extra_latency;
  f.start = core::now_ps();
  int at = first_device;
  f.links.reserve(hops.size());
  for (std::size_t h = 0; h < hops.size(); ++h) {
    if (h > 0) f.latency += forwarding_[static_cast<std::size_t>(at)];
    f.latency += spec_.links[hops[h].link].latency;
    f.links.push_back(hops[h].id());
    at = graph_.neighbour(at, hops[h]);
  }
  flows_.push_back(std::move(f));
  ++pending_[transfer].flows;
  ++flows_started_;
  filling_.invalidate();
}

void FlowFabric::send(const models::TransferRequest& request) {
  const auto wire = static_cast<double>(request.wire_bytes);
  // A per-flow payload rate limit applies to the wire bytes in proportion.
  const double cap = request.rate_cap > 0 && request.payload_bytes > 0
                         ? request.rate_cap * wire / static_cast<double>(request.payload_bytes)
                         : 0.0;
  auto& pending = pending_[request.id];  // a transfer with no flow still completes
  pending.lockstep_group = request.lockstep_group;
  pending.lockstep_size = request.lockstep_size;
  pending.start = core::now_ps();
  pending.steps = request.pipeline_steps;
  pending.fill_steps = request.fill_steps;
  pending.chunk_fill_steps = std::min(request.chunk_fill_steps, request.fill_steps);
  pending.step_sync = request.step_sync;
  pending.exposed = request.exposed_latency;
  pending.fill_latency = request.fill_latency;
  const std::size_t first_flow = flows_.size();
  if (request.kind == models::TransferKind::kPointToPoint) {
    const auto& paths = graph_.paths_once(request.source, request.destination, request.flow);
    double total = 0;
    for (const auto& p : paths) total += p.bottleneck.bytes_per_second;
    for (const auto& p : paths) {
      const double share = wire * p.bottleneck.bytes_per_second / total;
      add_flow(request.id, p.hops, spec_.gpus[request.source], share, cap * p.bottleneck.bytes_per_second / total, 0,
               std::max(1.0, request.weight));
      flows_.back().source = request.source;
      flows_.back().destination = request.destination;
      flows_.back().channel = request.flow;
    }
  } else {
    const auto& group = *request.group;
    const auto& planes = switch_planes(group);
    if (planes.empty())
      throw core::SimulationError("in-switch reduction needs a switch with it on every GPU's route (NVLink SHARP, or SHARP in one network switch)");
    double total = 0;
    for (const auto& p : planes) total += p.weight.bytes_per_second;
    const bool all_reduce = request.kind == models::TransferKind::kAllReduceInSwitch;
    const bool reduce = all_reduce || request.kind == models::TransferKind::kReduceInSwitch;
    const int endpoint = reduce ? request.destination : request.source;
    const auto member = static_cast<std::size_t>(std::find(group.begin(), group.end(), endpoint) - group.begin());
    for (const auto& plane : planes) {
      const double share = wire * plane.weight.bytes_per_second / total;
      const TimePs traversal = forwarding_[static_cast<std::size_t>(plane.switch_device)];
      // Reduce: every member sends its copy up, the switch sends the sum down
      // to the endpoint (all-reduce: to every member). Multicast: the endpoint
      // sends up, the switch copies down. Down flows carry the up path's
      // latency, so the transfer's path latency is the whole way.
      if (all_reduce) {
        // Over the aggregation tree: members to their switch, each child
        // switch's partial sum to the root and the total back, then down to
        // the members. Every down flow carries the deepest way up.
        const auto& tree = plane.tree;
        auto edge_latency = [&](std::size_t s) {
          return s == 0 ? TimePs{0} : forwarding_[static_cast<std::size_t>(tree[s].device)] + spec_.links[tree[s].up.front().link].latency;
        };
        TimePs deepest = 0;
        for (std::size_t m = 0; m < group.size(); ++m) {
          const auto at = static_cast<std::size_t>(plane.attach[m]);
          add_flow(request.id, plane.up[m], spec_.gpus[group[m]], share, 0, forwarding_[static_cast<std::size_t>(tree[at].device)]);
          deepest = std::max(deepest, path_latency(plane.up[m], spec_.gpus[group[m]]) + edge_latency(at));
        }
        for (std::size_t s = 1; s < tree.size(); ++s) {
          add_flow(request.id, tree[s].up, tree[s].device, share, 0, traversal);
          add_flow(request.id, tree[s].down, plane.switch_device, share, 0, deepest);
        }
        for (std::size_t m = 0; m < group.size(); ++m) {
          const auto at = static_cast<std::size_t>(plane.attach[m]);
          add_flow(request.id, plane.down[m], tree[at].device, share, 0, deepest + edge_latency(at));
        }
      } else if (reduce) {
        if (plane.tree.size() > 1)
          throw core::SimulationError("a reduce to one GPU over a multi-switch aggregation tree is not modelled");
        for (std::size_t m = 0; m < group.size(); ++m) add_flow(request.id, plane.up[m], spec_.gpus[group[m]], share, 0, traversal);
        add_flow(request.id, plane.down[member], plane.switch_device, share, 0, path_latency(plane.up[member], spec_.gpus[endpoint]));
      } else {
        if (plane.tree.size() > 1) throw core::SimulationError("a multicast over a multi-switch aggregation tree is not modelled");
        add_flow(request.id, plane.up[member], spec_.gpus[endpoint], share, 0, traversal);
        for (std::size_t m = 0; m < group.size(); ++m)
          add_flow(request.id, plane.down[m], plane.switch_device, share, 0, path_latency(plane.up[m], spec_.gpus[group[m]]));
      }
    }
  }
  auto& p = pending_.at(request.id);
  for (std::size_t i = first_flow; i < flows_.size(); ++i) p.path_latency = std::max(p.path_latency, flows_[i].latency);
  if (p.flows == 0) flowless_.push_back(request.id);
  request_update();
}

void FlowFabric::request_update() {
  if (update_requested_) return;
  update_requested_ = true;
  timers_.schedule(core::now_ps(), [this] {
    update_requested_ = false;
    update();
  });
}

void FlowFabric::finish_transfer(std::uint64_t transfer) {
  const auto it = pending_.find(transfer);
  const Pending p = it->second;
  pending_.erase(it);
  const std::uint64_t group = p.lockstep_group;
  const int group_size = p.lockstep_size;
  const TimePs at = std::max(core::now_ps(), completion_time(p));
  if (completion_ == nullptr) throw core::SimulationError("a transfer completed with no executor listening");
  if (group == 0) {
    // Fires at `at`: the callback reads the time rather than capture it, and
    // stays small enough for std::function to keep without an allocation.
    timers_.schedule(at, [this, transfer] { completion_->on_transfer_complete(transfer, core::now_ps()); });
    return;
  }
  // A ring's chunks each travel the whole ring: its step latencies add up
  // along the mean hop (path and synchronisation, as NCCL's model sums intra-
  // and inter-node step latencies), while its data waits for the slowest.
  auto& lockstep = lockstep_[group];
  if (lockstep.members.empty()) lockstep.paced = p;
  lockstep.members.push_back(transfer);
  lockstep.paced.start = std::max(lockstep.paced.start, p.start);
  lockstep.paced.data_end = std::max(lockstep.paced.data_end, p.data_end);
  lockstep.path_latency_sum += static_cast<double>(p.path_latency);
  lockstep.step_sync_sum += static_cast<double>(p.step_sync);
  if (static_cast<int>(lockstep.members.size()) < group_size) return;
  lockstep.paced.path_latency = static_cast<TimePs>(lockstep.path_latency_sum / group_size);
  lockstep.paced.step_sync = static_cast<TimePs>(lockstep.step_sync_sum / group_size);
  const TimePs all_at = std::max(core::now_ps(), completion_time(lockstep.paced));
  for (auto member : lockstep.members)
    timers_.schedule(all_at, [this, member] { completion_->on_transfer_complete(member, core::now_ps()); });
  lockstep_.erase(group);
}

TimePs FlowFabric::head_latency(int source, int destination, std::uint32_t flow) {
  TimePs latency = 0;
  for (const auto& p : graph_.paths_once(source, destination, flow))
    latency = std::max(latency, path_latency(p.hops, spec_.gpus[static_cast<std::size_t>(source)]));
  return latency;
}

TimePs FlowFabric::completion_time(const Pending& p) {
  const TimePs data = p.data_end > p.start ? p.data_end - p.start : 0;
  if (p.steps == 0) return p.start + data + p.path_latency + p.exposed;  // continues another transfer's step
  const TimePs plain = p.step_sync + p.path_latency;
  // Fill steps wait on the upstream pipeline: they pace like data steps and
  // overlap the data, so only their latency shows; but a store-and-forward
  // hop upstream holds the first chunk for a whole chunk time.
  const std::uint32_t overlapped = p.steps + p.fill_steps - p.chunk_fill_steps;
  const TimePs per_step = data / overlapped;
  TimePs paced = overlapped * std::max(plain, per_step) + p.chunk_fill_steps * std::max(plain, data / p.steps);
  // Where the upstream hops' own latencies are known (no store-and-forward
  // stage among them), the fill costs theirs, not this hop's: a tree's network
  // hop waits for NVLink chain steps upstream, not for network steps.
  if (p.fill_latency > 0 && p.chunk_fill_steps == 0) paced = std::max(p.steps * plain + p.fill_latency, data);
  return p.start + paced + std::min(plain, per_step) + p.exposed;
}

void FlowFabric::advance(Flow& f, double seconds) {
  if (seconds > 0) f.remaining -= std::min(f.remaining, f.rate * seconds);
}

void FlowFabric::book_progress(TimePs now) {
  const double dt = static_cast<double>(now - last_update_) / 1e12;
  last_update_ = now;
  for (auto& f : flows_) advance(f, dt);
}

void FlowFabric::book_moved(const Flow& f) {
  // A link's bytes are booked when a flow leaves it, not at every update: an
  // update then costs a pass over the flows, not over every flow's links.
  const double moved = f.total - f.remaining;
  for (int l : f.links) bytes_[static_cast<std::size_t>(l)] += moved;
}

void FlowFabric::schedule_faults(const std::vector<ResolvedFault>& timed, FaultTiming timing) {
  for (const auto& fault : timed)
    timers_.schedule(*fault.spec.at, [this, fault, timing] { strike(fault, timing); });
}

void FlowFabric::strike(const ResolvedFault& fault, FaultTiming timing) {
  const TimePs now = core::now_ps();
  book_progress(now);
  filling_.invalidate();  // capacities change, flows move
  FaultEvent event;
  event.fault = fault.spec.text;
  event.at = now;
  std::vector<char> dead(capacity_.size(), 0);
  for (int l : fault.links) {
    auto& text = timed_fault_[static_cast<std::size_t>(l)];
    if (!text.empty()) text += ", ";
    text += fault.spec.text;
    for (std::size_t id : {2 * static_cast<std::size_t>(l), 2 * static_cast<std::size_t>(l) + 1}) {
      capacity_[id] = fault.down() ? 0.0 : capacity_[id] * fault.spec.fraction;
      dead[id] = fault.down() ? 1 : 0;
    }
    if (fault.down()) {
      graph_.fail_link(l);
    } else {
      graph_.degrade_link(l, fault.spec.fraction);
    }
  }
  std::vector<Flow> cut_off;
  TimePs detection = 0;
  if (fault.down()) {
    auto on_dead = [&](const Flow& f) { return std::any_of(f.links.begin(), f.links.end(), [&](int l) { return dead[static_cast<std::size_t>(l)] != 0; }); };
    auto keep = std::stable_partition(flows_.begin(), flows_.end(), [&](const Flow& f) { return !on_dead(f); });
    cut_off.assign(std::make_move_iterator(keep), std::make_move_iterator(flows_.end()));
    flows_.erase(keep, flows_.end());
    for (const auto& f : cut_off) book_moved(f);
    std::vector<std::uint64_t> transfers;
    for (const auto& f : cut_off) {
      if (f.source < 0)
        throw core::SimulationError(fmt::format(
            "fault '{}' struck at {} under an in-switch (NVLS or SHARP) transfer: the multicast group loses a member's link, and "
            "NCCL aborts the communicator there rather than re-route; fabsim gives no figure for it (the same fault from the start, "
            "without @, shows the run NCCL plans without that link)", fault.spec.text, core::format_time(now)));
      // The network re-routes around a failed link or switch (the subnet
      // manager, adaptive routing) but not around a NIC: an RDMA connection
      // is bound to its two NICs. Traffic whose new route needs another NIC
      // has lost its connection.
      if (const auto lost = lost_nics(f); !lost.empty()) {
        std::string names;
        for (int nic : lost) names += fmt::format("{}'{}'", names.empty() ? "" : ", ", spec_.devices[static_cast<std::size_t>(nic)].name);
        throw core::SimulationError(fmt::format(
            "fault '{}' struck at {} with traffic through NIC {}, which it leaves with no way on: NCCL binds each network "
            "connection to one NIC and has no failover; its queue pairs fail after NCCL_IB_RETRY_CNT (7) retries of the "
            "NCCL_IB_TIMEOUT and the communicator aborts (src/transport/net_ib.cc); fabsim gives no figure for it (the same "
            "fault from the start, without @, shows the run NCCL plans on the remaining NICs)",
            fault.spec.text, core::format_time(now), names));
      }
      event.bytes_resent += f.remaining;
      transfers.push_back(f.transfer);
    }
    const bool local = std::any_of(fault.links.begin(), fault.links.end(), [&](int l) { return !is_network(spec_.links[static_cast<std::size_t>(l)].kind); });
    if (local && !cut_off.empty() && !timing.local)
      throw core::SimulationError(fmt::format(
          "fault '{}' struck at {} with traffic on an NVLink or PCIe bundle: on real hardware that is an uncorrectable NVLink error "
          "(Xid 74) that stops the GPU's work, and NCCL with it; fabsim gives no figure for it. Give --fault-detection DELAY to "
          "simulate the what-if of that traffic moving to the remaining links after DELAY, or drop the @ to plan without the link",
          fault.spec.text, core::format_time(now)));
    detection = local ? *timing.local : timing.network;
    std::sort(transfers.begin(), transfers.end());
    event.flows_resent = cut_off.size();
    event.transfers_hit = static_cast<std::uint64_t>(std::unique(transfers.begin(), transfers.end()) - transfers.begin());
  }
  if (!fault.down()) {
    // A degraded bundle: the hardware sprays packets by what each link takes
    // (credit flow control), so a point-to-point transfer striped over it
    // re-balances at once: its remaining bytes are striped again over its
    // paths by their new bandwidth. In-switch flows just slow down.
    std::vector<char> struck(capacity_.size(), 0);
    for (int l : fault.links) struck[2 * static_cast<std::size_t>(l)] = struck[2 * static_cast<std::size_t>(l) + 1] = 1;
    std::unordered_map<std::uint64_t, std::size_t> slot;  // transfer -> its merged flow
    for (const auto& f : flows_)
      if (f.source >= 0 && std::any_of(f.links.begin(), f.links.end(), [&](int l) { return struck[static_cast<std::size_t>(l)] != 0; }))
        slot.emplace(f.transfer, 0);
    auto keep = std::stable_partition(flows_.begin(), flows_.end(), [&](const Flow& f) { return f.source < 0 || !slot.contains(f.transfer); });
    std::vector<Flow> merged;
    for (auto it = keep; it != flows_.end(); ++it) {
      book_moved(*it);
      auto& index = slot.at(it->transfer);
      if (merged.empty() || merged[index].transfer != it->transfer) {
        index = merged.size();
        merged.push_back(std::move(*it));
        continue;
      }
      merged[index].remaining += it->remaining;
      merged[index].cap += it->cap;
      --pending_.at(it->transfer).flows;  // the merged flow stands for its siblings
    }
    flows_.erase(keep, flows_.end());
    event.transfers_hit = merged.size();
    event.transfers_restriped = merged.size();
    if (!merged.empty()) resend(std::move(merged));
  }
  event.resent_at = cut_off.empty() ? 0 : now + detection;
  fault_events_.push_back(event);
  if (!cut_off.empty()) {
    auto moved = std::make_shared<std::vector<Flow>>(std::move(cut_off));
    timers_.schedule(now + detection, [this, moved] { resend(std::move(*moved)); });
  }
  request_update();
}

std::vector<int> FlowFabric::nics_on(const std::vector<int>& link_ids, int first_device) const {
  std::vector<int> nics;
  int at = first_device;
  for (int id : link_ids) {
    at = graph_.neighbour(at, LinkDirectionRef{id / 2, id % 2 == 1});
    if (spec_.devices[static_cast<std::size_t>(at)].kind == DeviceKind::kNic) nics.push_back(at);
  }
  return nics;
}

std::vector<int> FlowFabric::lost_nics(const Flow& f) {
  std::vector<int> lost;
  const auto before = nics_on(f.links, spec_.gpus[static_cast<std::size_t>(f.source)]);
  if (before.empty()) return lost;
  for (const auto& p : graph_.paths_once(f.source, f.destination, f.channel)) {
    std::vector<int> ids;
    for (const auto& h : p.hops) ids.push_back(h.id());
    const auto after = nics_on(ids, spec_.gpus[static_cast<std::size_t>(f.source)]);
    for (int nic : before)
      if (std::find(after.begin(), after.end(), nic) == after.end() && std::find(lost.begin(), lost.end(), nic) == lost.end())
        lost.push_back(nic);
  }
  return lost;
}

void FlowFabric::resend(std::vector<Flow> flows) {
  book_progress(core::now_ps());
  for (auto& f : flows) {
    // What the flow had left goes over the routes that remain, striped as a new send would be.
    const auto& paths = graph_.paths_once(f.source, f.destination, f.channel);
    double total = 0;
    for (const auto& p : paths) total += p.bottleneck.bytes_per_second;
    auto& pending = pending_.at(f.transfer);
    --pending.flows;
    const std::size_t first = flows_.size();
    const std::uint64_t started = flows_started_;  // re-sent flows are the fault's figure, not new work units
    for (const auto& p : paths) {
      const double share = p.bottleneck.bytes_per_second / total;
      add_flow(f.transfer, p.hops, spec_.gpus[f.source], f.remaining * share, f.cap * share, 0, f.weight);
      flows_.back().source = f.source;
      flows_.back().destination = f.destination;
      flows_.back().channel = f.channel;
    }
    flows_started_ = started;
    for (std::size_t i = first; i < flows_.size(); ++i) pending.path_latency = std::max(pending.path_latency, flows_[i].latency);
  }
  request_update();
}

void FlowFabric::update() {
  ++rate_updates_;
  const TimePs now = core::now_ps();
  const double dt = static_cast<double>(now - last_update_) / 1e12;
  last_update_ = now;
  // One pass books what each flow moved since the last update and takes out
  // the flows within a nanosecond of their end, or within the completion
  // window of it: they finish now at their projected end, one update for a
  // wave of flows that end together, not one each. The flows that stay move
  // up in place (start order kept): no partition buffer the size of an
  // all-to-all's million flows at every update.
  std::vector<std::uint64_t> done;
  std::size_t kept = 0;
  for (std::size_t i = 0; i < flows_.size(); ++i) {
    auto& f = flows_[i];
    advance(f, dt);
    const double window_s = std::max(1e-9, completion_window_ * static_cast<double>(now - f.start) / 1e12);
    if (!(f.remaining <= 1e-6 || f.remaining <= f.rate * window_s)) {
      if (kept != i) flows_[kept] = std::move(f);
      ++kept;
      continue;
    }
    auto& p = pending_.at(f.transfer);
    const bool at_end = f.remaining <= 1e-6 || f.remaining <= f.rate * 1e-9;
    const TimePs end = at_end ? now : now + static_cast<TimePs>(std::llround(f.remaining / f.rate * 1e12));
    p.data_end = std::max(p.data_end, end);
    f.remaining = 0;
    book_moved(f);
    filling_.flow_left(f);
    if (--p.flows == 0) done.push_back(f.transfer);
  }
  flows_.resize(kept);
  for (auto id : done) finish_transfer(id);
  // Transfers sent with no flow complete after their latency too.
  for (auto id : flowless_) finish_transfer(id);
  flowless_.clear();
  filling_.solve(flows_, capacity_);
  double next = std::numeric_limits<double>::infinity();
  for (const auto& f : flows_)
    if (f.rate > 0) next = std::min(next, f.remaining / f.rate);
  if (!std::isfinite(next)) {
    if (!flows_.empty()) throw core::SimulationError(fmt::format("{} flows have no bandwidth to move on", flows_.size()));
    return;
  }
  const TimePs wake = now + std::max<TimePs>(1, static_cast<TimePs>(std::ceil(next * 1e12)));
  const std::uint64_t generation = ++wake_generation_;
  timers_.schedule(wake, [this, generation] {
    if (generation == wake_generation_) update();
  });
}

std::vector<double> FlowFabric::link_bytes() const {
  // Bytes are booked as flows leave; add what the flows still moving have
  // moved, up to now, so a mid-run sample (the replay timeline) sees long flows progress.
  std::vector<double> bytes = bytes_;
  const double dt = static_cast<double>(core::now_ps() - last_update_) / 1e12;
  for (const auto& f : flows_) {
    const double moved = f.total - f.remaining + (dt > 0 ? std::min(f.remaining, f.rate * dt) : 0.0);
    for (int l : f.links) bytes[static_cast<std::size_t>(l)] += moved;
  }
  return bytes;
}

std::vector<LinkUsage> FlowFabric::link_usage(TimePs elapsed) const {
  const std::vector<double> bytes = link_bytes();
  std::vector<LinkUsage> out;
  for (std::size_t l = 0; l < spec_.links.size(); ++l) {
    for (bool reverse : {false, true}) {
      const auto& link = spec_.links[l];
      const int id = LinkDirectionRef{static_cast<int>(l), reverse}.id();
      LinkUsage u;
      u.name = fmt::format("{}->{}", spec_.devices[reverse ? link.b : link.a].name, spec_.devices[reverse ? link.a : link.b].name);
      u.bytes = static_cast<Bytes>(std::llround(bytes[id]));
      // Busy at the bandwidth it started with: a bundle failing or degrading mid-run keeps the time it was busy before.
      const double start_capacity = link.effective_bandwidth().bytes_per_second;
      u.busy = start_capacity > 0 ? static_cast<TimePs>(bytes[id] / start_capacity * 1e12) : 0;
      u.utilisation = elapsed > 0 ? static_cast<double>(u.busy) / static_cast<double>(elapsed) : 0.0;
      u.effective_bandwidth = {capacity_[id]};
      u.fault = link.fault;
      if (!timed_fault_[l].empty() && !u.fault.empty()) u.fault += ", ";
      u.fault += timed_fault_[l];
      out.push_back(std::move(u));
    }
  }
  return out;
}

}  // namespace fabsim::topo
