#include "traces/replay/link_sampler.hpp"

#include <algorithm>

#include "sim/core/kernel.hpp"

namespace fabsim::traces {

LinkSampler::LinkSampler(const topo::FabricBackend& fabric, core::TimerQueue& timers, std::function<bool()> running)
    : fabric_(fabric), timers_(timers), running_(std::move(running)) {
  // About 128 MiB of samples at most, whatever the fabric's size.
  const std::size_t directions = std::max<std::size_t>(1, fabric.spec().links.size() * 2);
  max_samples_ = std::clamp<std::size_t>((std::size_t{16} << 20) / directions, 64, 1024);
}

void LinkSampler::start() { sample(); }

void LinkSampler::sample() {
  timeline_.times.push_back(core::now_ps());
  timeline_.cumulative.push_back(fabric_.link_bytes());
  if (timeline_.times.size() >= max_samples_) {
    // Keep every other sample from the first: cumulative counters stay exact.
    std::size_t kept = 0;
    for (std::size_t i = 0; i < timeline_.times.size(); i += 2, ++kept) {
      if (kept == i) continue;  // a vector moved onto itself would be emptied
      timeline_.times[kept] = timeline_.times[i];
      timeline_.cumulative[kept] = std::move(timeline_.cumulative[i]);
    }
    timeline_.times.resize(kept);
    timeline_.cumulative.resize(kept);
    period_ *= 2;
  }
  if (!running_()) return;
  // Align to the period so decimated samples stay evenly spaced.
  const core::TimePs next = (core::now_ps() / period_ + 1) * period_;
  timers_.schedule(next, [this] { sample(); });
}

}  // namespace fabsim::traces
