#include "traces/executor/plan_executor.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <fmt/format.h>

#include "sim/core/error.hpp"
#include "sim/core/kernel.hpp"
#include "traces/executor/channel_drift.hpp"

namespace fabsim::traces {

core::TimePs step_sync(const ExecutionParams& params, int source, int destination, core::Bytes step_wire) {
  if (params.domain_of_gpu == nullptr || (params.net_step_latency == 0 && !params.net_staging_rate)) return params.step_latency;
  const auto& domain = *params.domain_of_gpu;
  const auto gpu = [&](int rank) { return static_cast<std::size_t>(params.gpu_of_rank[static_cast<std::size_t>(rank)]); };
  if (domain[gpu(source)] == domain[gpu(destination)]) return params.step_latency;
  const core::TimePs staging = params.net_staging_rate ? params.net_staging_rate->transfer_time(step_wire) : 0;
  return params.step_latency + params.net_step_latency + staging;
}

namespace {

/// Wire bytes of one of the transfer's steps on one of its channels.
core::Bytes step_wire_bytes(const CollectivePlan& plan, const PlannedTransfer& t) {
  const double wire = std::ceil(static_cast<double>(t.payload) / plan.efficiency_of(t));
  return static_cast<core::Bytes>(wire / (std::max<std::uint32_t>(1, t.steps) * std::max<std::uint32_t>(1, t.lanes)));
}

}  // namespace

PlanExecutor::PlanExecutor(models::Transport& transport, core::TimerQueue& timers, bool observe_transport)
    : transport_(transport), timers_(timers) {
  if (observe_transport) transport_.set_completion(this);
}

void PlanExecutor::start(CollectivePlan plan, ExecutionParams params, core::TimePs start,
                         std::function<void(const ExecutionResult&)> done, std::optional<std::uint64_t> id_base) {
  if (outstanding_ != 0) throw core::SimulationError("a collective was started while another was still running");
  id_base_ = id_base ? *id_base : id_base_ + plan_.transfers.size();
  plan_ = std::move(plan);
  params_ = std::move(params);
  start_ = start;
  done_ = std::move(done);
  const std::size_t n = plan_.transfers.size();
  state_.assign(n, {});
  for (auto* v : {&waits_on_received_, &waits_on_released_, &waits_on_sent_, &waits_on_issued_, &releases_}) v->assign(n, {});
  engine_free_.assign(static_cast<std::size_t>(plan_.ranks) * plan_.channels, start);
  result_ = {};
  result_.rank_finish.assign(static_cast<std::size_t>(plan_.ranks), start);
  result_.transfers = n;
  outstanding_ = n;
  drift_ = channel_drift(plan_, params_.drift);
  // A flattened pipeline's hops all start at once, each waiting out its fill
  // steps; the network steps upstream of a hop (a tree's link up to the other
  // node, then back down) delay its first chunk too: they add along the path.
  path_exposed_.assign(params_.flow_level ? n : 0, 0);
  const bool pipelined = plan_.fill_after.size() == n;
  for (std::size_t i = 0; i < path_exposed_.size(); ++i) {
    const auto& t = plan_.transfers[i];
    if (t.lockstep >= 0) continue;  // a ring's steps pay the network in their step sync
    core::TimePs upstream = 0;
    if (pipelined)
      for (auto u : plan_.fill_after[i]) upstream = std::max(upstream, path_exposed_.at(static_cast<std::size_t>(u)));
    path_exposed_[i] = upstream + step_sync(params_, t.source, t.destination, step_wire_bytes(plan_, t)) - params_.step_latency;
  }
  // Simple's store-and-forward stages on each pipeline path (see
  // TransferRequest::chunk_fill_steps): the in-switch ones, where an SM's
  // multimem load-reduce or store of a whole chunk precedes its post. NVLink
  // sends keep the overlapped fill the segment level shows for them, and the
  // proxy's network sends move at the NIC's rate.
  chunk_fill_.assign(params_.flow_level && pipelined && plan_.protocol == "Simple" ? n : 0, 0);
  for (std::size_t i = 0; i < chunk_fill_.size(); ++i)
    for (auto u : plan_.fill_after[i]) {
      const bool in_switch = plan_.transfers[static_cast<std::size_t>(u)].kind != models::TransferKind::kPointToPoint;
      chunk_fill_[i] = std::max(chunk_fill_[i], chunk_fill_[static_cast<std::size_t>(u)] + (in_switch ? 1u : 0u));
    }
  // The upstream hops' latencies along the pipeline path: each hop's step and
  // its path's head latency (the network step is in path_exposed_).
  fill_latency_.assign(params_.flow_level && pipelined ? n : 0, 0);
  for (std::size_t i = 0; i < fill_latency_.size(); ++i)
    for (auto u : plan_.fill_after[i]) {
      const auto& up = plan_.transfers[static_cast<std::size_t>(u)];
      if (up.lockstep >= 0 || up.kind != models::TransferKind::kPointToPoint) continue;
      const core::TimePs head = transport_.head_latency(params_.gpu_of_rank[static_cast<std::size_t>(up.source)],
                                                        params_.gpu_of_rank[static_cast<std::size_t>(up.destination)],
                                                        static_cast<std::uint32_t>(up.channel));
      fill_latency_[i] = std::max(fill_latency_[i], fill_latency_[static_cast<std::size_t>(u)] + params_.step_latency + head);
    }
  // One SM runs a channel's primitives at the segment level, so every
  // transfer a rank issues on a channel spends that SM's capped rate (a tree
  // node's send up and its sends down alike). A flattened pipeline runs them
  // all at once: each takes the cap in proportion to its bytes, so together
  // they end when the segment level's serialised SM would.
  cta_share_.assign(params_.flow_level && pipelined && params_.channel_cap ? n : 0, 1.0);
  if (!cta_share_.empty()) {
    // Payload per (issuer, channel), indexed as engine_free_ is.
    const auto sm = [&](const PlannedTransfer& t) { return static_cast<std::size_t>(t.issuer()) * plan_.channels + t.channel; };
    std::vector<double> issued(engine_free_.size(), 0.0);
    for (const auto& t : plan_.transfers) issued[sm(t)] += static_cast<double>(t.payload);
    for (std::size_t i = 0; i < n; ++i) {
      const auto& t = plan_.transfers[i];
      if (const double total = issued[sm(t)]; total > 0) cta_share_[i] = static_cast<double>(t.payload) / total;
    }
  }
  switch_group_gpus_.clear();
  group_ranks_.clear();
  for (const auto& members : plan_.switch_groups) {
    auto& gpus = switch_group_gpus_.emplace_back();
    for (int r : members) gpus.push_back(params_.gpu_of_rank.at(static_cast<std::size_t>(r)));
    auto& ranks = group_ranks_.emplace_back(members);
    std::sort(ranks.begin(), ranks.end());
  }
  all_ranks_.resize(static_cast<std::size_t>(plan_.ranks));
  std::iota(all_ranks_.begin(), all_ranks_.end(), 0);

  for (std::size_t i = 0; i < n; ++i) {
    const auto& t = plan_.transfers[i];
    const auto id = static_cast<std::int32_t>(i);
    auto& s = state_[i];
    if (t.after_received != kNoTransfer) { ++s.unmet; waits_on_received_[t.after_received].push_back(id); }
    for (auto extra : t.also_after_received) { ++s.unmet; waits_on_received_[extra].push_back(id); }
    if (t.after_released != kNoTransfer) { ++s.unmet; waits_on_released_[t.after_released].push_back(id); }
    if (t.after_sent != kNoTransfer) { ++s.unmet; waits_on_sent_[t.after_sent].push_back(id); }
    if (t.after_issued != kNoTransfer) { ++s.unmet; waits_on_issued_[t.after_issued].push_back(id); }
    if (t.released_by != kNoTransfer) releases_[t.released_by].push_back(id);
  }
  if (rank_done_) {
    rank_pending_.assign(static_cast<std::size_t>(plan_.ranks), 0);
    for (const auto& t : plan_.transfers) {
      if (t.kind != models::TransferKind::kPointToPoint) {
        for (int r : ranks_in(t)) ++rank_pending_[static_cast<std::size_t>(r)];
      } else {
        ++rank_pending_[static_cast<std::size_t>(t.source)];
        if (t.destination != t.source) ++rank_pending_[static_cast<std::size_t>(t.destination)];
      }
    }
    std::vector<int> idle;  // ranks no transfer involves finish at the start
    for (int r = 0; r < plan_.ranks; ++r)
      if (rank_pending_[static_cast<std::size_t>(r)] == 0) idle.push_back(r);
    if (!idle.empty())
      timers_.schedule(start, [this, idle = std::move(idle), start] {
        for (int r : idle) rank_done_(r, start);
      });
  }
  if (n == 0) {
    result_.rank_finish.assign(static_cast<std::size_t>(plan_.ranks), 0);  // relative to the start
    timers_.schedule(start, [this] {
      auto done = std::move(done_);
      done(result_);
    });
    return;
  }
  // Collect the roots first: issuing one satisfies others, which issue themselves.
  std::vector<std::int32_t> roots;
  for (std::size_t i = 0; i < n; ++i)
    if (state_[i].unmet == 0) roots.push_back(static_cast<std::int32_t>(i));
  timers_.schedule(start, [this, roots = std::move(roots)] {
    for (auto id : roots) issue(id);
  });
}

void PlanExecutor::satisfy(std::int32_t id) {
  if (--state_[id].unmet == 0) issue(id);
}

void PlanExecutor::issue(std::int32_t id) {
  state_[id].issued = true;
  const auto& t = plan_.transfers[id];
  const core::TimePs now = core::now_ps();
  auto& engine = engine_free_[static_cast<std::size_t>(t.issuer()) * plan_.channels + t.channel];
  const auto wire = static_cast<core::Bytes>(std::ceil(static_cast<double>(t.payload) / plan_.efficiency_of(t)));
  // One SM pushes at most channel_cap of payload: its steps are spaced by
  // their bytes at that rate, a step moving at the links' speed (as the
  // fitted step latencies assume). A later piece of a step goes at once and
  // adds its bytes to the spacing before the next step.
  const core::TimePs at = t.continues_step ? now : std::max(now, engine);
  if (!params_.flow_level)
    engine = std::max(engine, at) + (params_.channel_cap ? params_.channel_cap->transfer_time(t.payload) : 0);
  auto send = [this, id, wire] {
    const auto& tr = plan_.transfers[id];
    models::TransferRequest request{id_base_ + static_cast<std::uint64_t>(id), params_.gpu_of_rank[tr.source],
                                    params_.gpu_of_rank[tr.destination], tr.payload, wire, tr.kind,
                                    static_cast<std::uint32_t>(tr.channel),
                                    tr.switch_group < 0 ? &params_.gpu_of_rank
                                                        : &switch_group_gpus_[static_cast<std::size_t>(tr.switch_group)]};
    request.pipeline_steps = tr.steps;
    if (params_.flow_level && tr.lockstep >= 0) {
      request.lockstep_group = (id_base_ << 16) + static_cast<std::uint64_t>(tr.lockstep) + 1;
      request.lockstep_size = plan_.lockstep_sizes.at(static_cast<std::size_t>(tr.lockstep));
    }
    if (params_.flow_level) {
      // The SM cap spaces a channel's issues: n steps are n - 1 spacings, and
      // a single step moves at link speed.
      if (params_.channel_cap && tr.steps > 1)
        request.rate_cap = params_.channel_cap->bytes_per_second * tr.lanes * tr.steps / (tr.steps - 1) *
                           (cta_share_.empty() ? 1.0 : cta_share_[static_cast<std::size_t>(id)]);
      request.weight = tr.lanes;
      // The fabric paces the aggregated steps itself: their synchronisation
      // overlaps the data step by step.
      request.fill_steps = tr.fill_steps;
      if (!chunk_fill_.empty()) request.chunk_fill_steps = chunk_fill_[static_cast<std::size_t>(id)];
      request.step_sync = step_sync(params_, tr.source, tr.destination, step_wire_bytes(plan_, tr));
      // A ring's steps each wait for the last one's data: every network step
      // is on its path. Elsewhere the proxy keeps a connection's chunks in
      // flight (as at segment level, where only the receipt waits for it):
      // the network step is a latency of the hop, paid once.
      if (tr.lockstep < 0) {
        request.exposed_latency = path_exposed_[static_cast<std::size_t>(id)];
        if (!fill_latency_.empty()) request.fill_latency = fill_latency_[static_cast<std::size_t>(id)];
        request.step_sync = params_.step_latency;
      }
    }
    transport_.send(request);
    // What follows this one's issue goes now: a later piece of its step at once, the
    // first piece of the next step once the channel cap's spacing allows (issue above).
    for (auto next : waits_on_issued_[id]) satisfy(next);
    // Through a NIC the SM only fills the local staging slot and posts it;
    // the proxy moves the data while the SM goes on to its next primitive.
    if (tr.kind == models::TransferKind::kPointToPoint && !params_.flow_level &&
        transport_.proxied(request.source, request.destination)) {
      state_[id].proxied = true;
      timers_.schedule(core::now_ps() + params_.step_latency, [this, id] {
        for (auto next : waits_on_sent_[id]) satisfy(next);
      });
    }
  };
  if (at > now) {
    timers_.schedule(at, send);
  } else {
    send();
  }
}

void PlanExecutor::on_transfer_complete(std::uint64_t id, core::TimePs at) {
  const auto local = static_cast<std::int32_t>(id - id_base_);
  if (id < id_base_ || local >= static_cast<std::int32_t>(state_.size()))
    throw core::SimulationError(fmt::format("transfer {} completed outside the running plan [{}, {})", id, id_base_, id_base_ + state_.size()));
  if (state_[local].completed) throw core::SimulationError(fmt::format("transfer {} completed twice", id));
  state_[local].completed = true;
  // The receiver sees the data once the step's flag/fence synchronisation is done.
  // The forwarded slot at the far end is free once this send has landed.
  for (auto freed : releases_[local]) release(freed);
  // The sender's primitive ends with a fence and a flag post: its SM moves on to the
  // next slice once the data has landed (prims_simple.h posts and loops, it does not wait
  // to be seen), and the receiver sees the data one step latency after it landed.
  // (A reducing collective's extra cost is a per-call base, charged with the
  // launch: see GpuModel::reduce_overhead.)
  // At flow level the fabric has charged every step's synchronisation already.
  const auto& t = plan_.transfers[local];
  const core::TimePs posted = at + (params_.flow_level ? 0 : step_sync(params_, t.source, t.destination, step_wire_bytes(plan_, t)));
  if (!state_[local].proxied)
    for (auto next : waits_on_sent_[local]) satisfy(next);
  timers_.schedule(posted, [this, local] { on_received(local); });
}

void PlanExecutor::on_received(std::int32_t id) {
  auto& s = state_[id];
  s.received = true;
  const auto& t = plan_.transfers[id];
  const core::TimePs now = core::now_ps();
  if (t.kind == models::TransferKind::kPointToPoint) {
    result_.rank_finish[t.destination] = std::max(result_.rank_finish[t.destination], now);
    result_.rank_finish[t.source] = std::max(result_.rank_finish[t.source], now);
    rank_received(t.source, now);
    if (t.destination != t.source) rank_received(t.destination, now);
  } else {
    for (int r : ranks_in(t)) {  // every member of its switch group takes part
      auto& f = result_.rank_finish[static_cast<std::size_t>(r)];
      f = std::max(f, now);
      rank_received(r, now);
    }
  }
  if (t.released_by == kNoTransfer) release(id);
  for (auto next : waits_on_received_[id]) satisfy(next);
  if (--outstanding_ == 0) {
    for (auto& f : result_.rank_finish) f = f - start_ + drift_;
    // `done` may start the next plan, which replaces done_: call a moved-out copy.
    auto finish = [this] {
      auto done = std::move(done_);
      done(result_);
    };
    if (drift_ > 0) {
      timers_.schedule(now + drift_, finish);
    } else {
      finish();
    }
  }
}

void PlanExecutor::rank_received(int rank, core::TimePs at) {
  if (!rank_done_ || --rank_pending_[static_cast<std::size_t>(rank)] != 0) return;
  if (drift_ == 0) {
    rank_done_(rank, at);
    return;
  }
  timers_.schedule(at + drift_, [done = rank_done_, rank, at = at + drift_] { done(rank, at); });
}

const std::vector<int>& PlanExecutor::ranks_in(const PlannedTransfer& t) const {
  return t.switch_group < 0 ? all_ranks_ : group_ranks_[static_cast<std::size_t>(t.switch_group)];
}

void PlanExecutor::release(std::int32_t id) {
  for (auto next : waits_on_released_[id]) satisfy(next);
}

}  // namespace fabsim::traces

namespace fabsim::traces {

std::string PlanExecutor::describe_stuck(std::size_t limit) const {
  std::string out;
  std::size_t shown = 0, stuck = 0;
  auto pending = [&](std::int32_t dep, bool (State::*flag)) { return dep != kNoTransfer && !(state_[dep].*flag); };
  for (std::size_t i = 0; i < state_.size(); ++i) {
    if (state_[i].issued) continue;
    ++stuck;
    if (shown == limit) continue;
    ++shown;
    const auto& t = plan_.transfers[i];
    std::string waits;
    if (pending(t.after_received, &State::received)) waits += fmt::format(" the receipt of transfer {},", t.after_received);
    for (auto extra : t.also_after_received)
      if (pending(extra, &State::received)) waits += fmt::format(" the receipt of transfer {},", extra);
    if (t.after_released != kNoTransfer) waits += fmt::format(" the release of the slot of transfer {},", t.after_released);
    if (pending(t.after_sent, &State::completed)) waits += fmt::format(" the completion of transfer {},", t.after_sent);
    if (pending(t.after_issued, &State::issued)) waits += fmt::format(" the issue of transfer {},", t.after_issued);
    if (!waits.empty()) waits.pop_back();
    out += fmt::format("\n  {} transfer {} (rank {} -> {}, channel {}, {} bytes) waits for{}", plan_.algorithm, i, t.source,
                       t.destination, t.channel, t.payload, waits.empty() ? " nothing it can name" : waits);
  }
  if (stuck > shown) out += fmt::format("\n  ... and {} more transfers never issued", stuck - shown);
  return out;
}

}  // namespace fabsim::traces
