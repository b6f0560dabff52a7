#pragma once
/// Samples every link direction's byte counter while a replay runs, for the
/// timeline's link tracks. Samples are cumulative, so halving the resolution
/// when too many pile up (dropping every other sample) loses nothing but
/// detail: a run of any length keeps a bounded number of samples.

#include <functional>
#include <vector>

#include "sim/core/timer_queue.hpp"
#include "topologies/fabric_backend.hpp"

namespace fabsim::traces {

/// Cumulative bytes per link direction at each sample time.
struct LinkTimeline {
  std::vector<core::TimePs> times;
  std::vector<std::vector<double>> cumulative;  ///< by sample, by link direction id
};

class LinkSampler {
 public:
  /// Observers `fabric` and `timers` must outlive the sampler. `running`
  /// says whether the replay still has work: sampling stops once it has none.
  LinkSampler(const topo::FabricBackend& fabric, core::TimerQueue& timers, std::function<bool()> running);

  /// Takes the first sample now and schedules the rest.
  void start();
  LinkTimeline take() { return std::move(timeline_); }

 private:
  void sample();

  const topo::FabricBackend& fabric_;
  core::TimerQueue& timers_;
  std::function<bool()> running_;
  core::TimePs period_ = core::kPsPerUs;
  std::size_t max_samples_ = 1024;
  LinkTimeline timeline_;
};

}  // namespace fabsim::traces
