#pragma once
/// A time-ordered queue of callbacks driven by one sc_event and one
/// SC_METHOD, so many pending wake-ups cost one kernel event each rather
/// than a thread each.

#include <cstdint>
#include <exception>
#include <functional>
#include <queue>
#include <systemc>
#include <vector>

#include "sim/core/units.hpp"

namespace fabsim::core {

/// Runs callbacks at absolute simulated times, in (time, insertion) order so
/// results never depend on the kernel's process order.
class TimerQueue : public sc_core::sc_module {
 public:
  explicit TimerQueue(sc_core::sc_module_name name);

  /// Schedules `callback` at absolute time `at` (>= now).
  void schedule(TimePs at, std::function<void()> callback);
  std::uint64_t fired() const { return fired_; }
  /// A callback that threw stops the simulation; this rethrows its exception
  /// (call after the kernel returns). Does nothing when none threw.
  void rethrow_failure() const;

 private:
  struct Entry {
    TimePs at;
    std::uint64_t sequence;
    std::function<void()> callback;
    bool operator>(const Entry& other) const {
      return at != other.at ? at > other.at : sequence > other.sequence;
    }
  };
  void on_wake();
  void arm();

  std::priority_queue<Entry, std::vector<Entry>, std::greater<>> queue_;
  sc_core::sc_event wake_;
  std::uint64_t next_sequence_ = 0;
  std::uint64_t fired_ = 0;
  TimePs armed_for_ = ~TimePs{0};
  std::exception_ptr failure_;
};

}  // namespace fabsim::core
