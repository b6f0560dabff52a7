#include "topologies/flow_fabric.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <optional>
#include <queue>
#include <unordered_map>

#include "sim/core/error.hpp"
#include "sim/core/kernel.hpp"

namespace fabsim::topo {

FlowFabric::FlowFabric(const TopologySpec& spec, double completion_window, const char* timer_name)
    : spec_(spec), graph_(spec), timers_(timer_name), completion_window_(completion_window) {
  capacity_.resize(spec.links.size() * 2);
  for (std::size_t l = 0; l < spec.links.size(); ++l)
    capacity_[2 * l] = capacity_[2 * l + 1] = spec.links[l].effective_bandwidth().bytes_per_second;
  bytes_.assign(capacity_.size(), 0.0);
  left_.assign(capacity_.size(), 0.0);
  count_.assign(capacity_.size(), 0);
  weight_.assign(capacity_.size(), 0.0);
  members_begin_.assign(capacity_.size(), 0);
  members_end_.assign(capacity_.size(), 0);
  timed_fault_.resize(spec.links.size());
}

TimePs FlowFabric::path_latency(const std::vector<LinkDirectionRef>& hops, int first_device) const {
  TimePs latency = 0;
  int at = first_device;
  for (std::size_t h = 0; h < hops.size(); ++h) {
    if (h > 0) latency += forwarding_latency(spec_, at);
    latency += spec_.links[hops[h].link].latency;
    at = graph_.neighbour(at, hops[h]);
  }
  return latency;
}

void FlowFabric::add_flow(std::uint64_t transfer, const std::vector<LinkDirectionRef>& hops, int first_device, double bytes,
                          double cap, TimePs extra_latency, double weight) {
  Flow f;
  f.transfer = transfer;
  f.remaining = bytes;
  f.cap = cap;
  f.weight = weight;
  f.latency = extra_latency;
  f.start = core::now_ps();
  int at = first_device;
  for (std::size_t h = 0; h < hops.size(); ++h) {
    if (h > 0) f.latency += forwarding_latency(spec_, at);
    f.latency += spec_.links[hops[h].link].latency;
    f.links.push_back(hops[h].id());
    at = graph_.neighbour(at, hops[h]);
  }
  flows_.push_back(std::move(f));
  ++pending_[transfer].flows;
  ++flows_started_;
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
  pending.step_sync = request.step_sync;
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
      const TimePs traversal = forwarding_latency(spec_, plane.switch_device);
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
          return s == 0 ? TimePs{0} : forwarding_latency(spec_, tree[s].device) + spec_.links[tree[s].up.front().link].latency;
        };
        TimePs deepest = 0;
        for (std::size_t m = 0; m < group.size(); ++m) {
          const auto at = static_cast<std::size_t>(plane.attach[m]);
          add_flow(request.id, plane.up[m], spec_.gpus[group[m]], share, 0, forwarding_latency(spec_, tree[at].device));
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
    timers_.schedule(at, [this, transfer, at] { completion_->on_transfer_complete(transfer, at); });
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
    timers_.schedule(all_at, [this, member, all_at] { completion_->on_transfer_complete(member, all_at); });
  lockstep_.erase(group);
}

TimePs FlowFabric::completion_time(const Pending& p) {
  const TimePs data = p.data_end > p.start ? p.data_end - p.start : 0;
  if (p.steps == 0) return p.start + data + p.path_latency;  // continues another transfer's step
  const TimePs plain = p.step_sync + p.path_latency;
  const TimePs per_step = data / (p.steps + p.fill_steps);
  // Fill steps wait on the upstream pipeline: they pace like data steps.
  const TimePs paced = (p.steps + p.fill_steps) * std::max(plain, per_step);
  return p.start + paced + std::min(plain, per_step);
}

void FlowFabric::book_progress(TimePs now) {
  const double dt = static_cast<double>(now - last_update_) / 1e12;
  last_update_ = now;
  for (auto& f : flows_) {
    const double moved = std::min(f.remaining, f.rate * dt);
    f.remaining -= moved;
    for (int l : f.links) bytes_[l] += moved;
  }
}

void FlowFabric::schedule_faults(const std::vector<ResolvedFault>& timed, FaultTiming timing) {
  for (const auto& fault : timed)
    timers_.schedule(*fault.spec.at, [this, fault, timing] { strike(fault, timing); });
}

void FlowFabric::strike(const ResolvedFault& fault, FaultTiming timing) {
  const TimePs now = core::now_ps();
  book_progress(now);
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
  book_progress(now);
  // Flows within a nanosecond of their end, or within the completion window
  // of it, finish now at their projected end: one update for a wave of flows
  // that end together, not one each.
  std::vector<std::uint64_t> done;
  auto keep = std::stable_partition(flows_.begin(), flows_.end(), [&](const Flow& f) {
    const double window_s = std::max(1e-9, completion_window_ * static_cast<double>(now - f.start) / 1e12);
    return !(f.remaining <= 1e-6 || f.remaining <= f.rate * window_s);
  });
  for (auto it = keep; it != flows_.end(); ++it) {
    for (int l : it->links) bytes_[l] += it->remaining;
    auto& p = pending_.at(it->transfer);
    const bool at_end = it->remaining <= 1e-6 || it->remaining <= it->rate * 1e-9;
    const TimePs end = at_end ? now : now + static_cast<TimePs>(std::llround(it->remaining / it->rate * 1e12));
    p.data_end = std::max(p.data_end, end);
    if (--p.flows == 0) done.push_back(it->transfer);
  }
  flows_.erase(keep, flows_.end());
  for (auto id : done) finish_transfer(id);
  // Transfers whose every flow was empty complete after their latency too.
  for (auto it = pending_.begin(); it != pending_.end();) {
    if (it->second.flows == 0) {
      const std::uint64_t id = it->first;
      ++it;
      finish_transfer(id);
    } else {
      ++it;
    }
  }
  assign_rates();
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

void FlowFabric::assign_rates() {
  // Weighted progressive filling: repeatedly take the link (or capped flow)
  // with the smallest fair share per unit of weight, fix its flows at that
  // level times their weight, and take their rate off every other link they
  // cross. A flow standing for k channels gets what k flows would.
  // The flows' links and weights are first copied into flat arrays, and each
  // link's flows listed by counting (flows in start order): an all-to-all's
  // filling then walks contiguous memory, not a record and a vector per flow.
  const std::size_t n = flows_.size();
  std::vector<int> touched;
  flow_begin_.resize(n + 1);
  flow_links_.clear();
  flow_weight_.resize(n);
  for (std::size_t i = 0; i < n; ++i) {
    flow_begin_[i] = flow_links_.size();
    flow_weight_[i] = flows_[i].weight;
    for (int l : flows_[i].links) {
      if (count_[l] == 0) {
        touched.push_back(l);
        left_[l] = capacity_[l];
        weight_[l] = 0;
      }
      ++count_[l];
      weight_[l] += flows_[i].weight;
      flow_links_.push_back(l);
    }
  }
  flow_begin_[n] = flow_links_.size();
  std::size_t offset = 0;
  for (int l : touched) {
    members_begin_[l] = offset;
    members_end_[l] = offset;
    offset += static_cast<std::size_t>(count_[l]);
  }
  link_members_.resize(offset);
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t k = flow_begin_[i]; k < flow_begin_[i + 1]; ++k) link_members_[members_end_[flow_links_[k]]++] = static_cast<int>(i);
  using Entry = std::pair<double, long>;  // level, link id (>= 0) or -1 - flow index
  std::priority_queue<Entry, std::vector<Entry>, std::greater<>> heap;
  for (int l : touched) heap.push({left_[l] / weight_[l], l});
  for (std::size_t i = 0; i < n; ++i)
    if (flows_[i].cap > 0) heap.push({flows_[i].cap / flows_[i].weight, -1 - static_cast<long>(i)});
  std::vector<char> fixed(n, 0);
  std::vector<double> rate(n, 0.0);
  auto fix = [&](std::size_t i, double level) {
    fixed[i] = 1;
    const double r = level * flow_weight_[i];
    rate[i] = r;
    for (std::size_t k = flow_begin_[i]; k < flow_begin_[i + 1]; ++k) {
      const int l = flow_links_[k];
      left_[l] = std::max(0.0, left_[l] - r);
      weight_[l] -= flow_weight_[i];
      --count_[l];
    }
  };
  // Fixing flows at a level no higher than a link's share never lowers that
  // share: a link's entry is at most its share, so a popped entry below its
  // link's share is pushed again at the share, and one that equals it is the
  // smallest share there is. No entry for every link a round of fixing
  // touches (an all-to-all's round touches thousands).
  while (!heap.empty()) {
    const auto [level, id] = heap.top();
    heap.pop();
    if (id < 0) {
      const auto i = static_cast<std::size_t>(-1 - id);
      if (!fixed[i]) fix(i, level);
      continue;
    }
    if (count_[id] == 0) continue;
    const double current = left_[id] / std::max(weight_[id], 1e-9);
    if (current > level * (1 + 1e-12) + 1e-9) {
      heap.push({current, id});
      continue;
    }
    for (std::size_t k = members_begin_[id]; k < members_end_[id]; ++k) {
      const auto i = static_cast<std::size_t>(link_members_[k]);
      if (!fixed[i]) fix(i, current);
    }
  }
  for (int l : touched) count_[l] = 0;
  for (std::size_t i = 0; i < n; ++i) flows_[i].rate = rate[i];
}

std::vector<double> FlowFabric::link_bytes() const {
  // Bytes are booked at rate updates; count what moved since the last one,
  // so a mid-run sample (the replay timeline) sees long flows progress.
  std::vector<double> bytes = bytes_;
  const double dt = static_cast<double>(core::now_ps() - last_update_) / 1e12;
  if (dt > 0)
    for (const auto& f : flows_)
      for (int l : f.links) bytes[static_cast<std::size_t>(l)] += std::min(f.remaining, f.rate * dt);
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
