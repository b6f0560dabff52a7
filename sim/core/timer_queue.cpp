#include "sim/core/timer_queue.hpp"

#include "sim/core/kernel.hpp"

namespace fabsim::core {

TimerQueue::TimerQueue(sc_core::sc_module_name name) : sc_core::sc_module(name) {
  SC_HAS_PROCESS(TimerQueue);
  SC_METHOD(on_wake);
  sensitive << wake_;
  dont_initialize();
}

void TimerQueue::schedule(TimePs at, std::function<void()> callback) {
  queue_.push({at, next_sequence_++, std::move(callback)});
  arm();
}

void TimerQueue::arm() {
  if (queue_.empty()) return;
  const TimePs next = queue_.top().at;
  const TimePs now = now_ps();
  if (next >= armed_for_ && armed_for_ >= now) return;  // an earlier or equal wake is pending
  armed_for_ = next;
  wake_.notify(ps_to_sc(next > now ? next - now : 0));
}

void TimerQueue::on_wake() {
  const TimePs now = now_ps();
  armed_for_ = ~TimePs{0};
  while (!queue_.empty() && queue_.top().at <= now) {
    // Move out before running: the callback may schedule more entries.
    auto callback = std::move(const_cast<Entry&>(queue_.top()).callback);
    queue_.pop();
    ++fired_;
    try {
      callback();
    } catch (...) {
      // An input problem found mid-run (a plan the fabric cannot carry):
      // stop the kernel and let the owner rethrow it after sc_start, rather
      // than let SystemC turn it into an opaque process error.
      failure_ = std::current_exception();
      sc_core::sc_stop();
      return;
    }
  }
  arm();
}

void TimerQueue::rethrow_failure() const {
  if (failure_) std::rethrow_exception(failure_);
}

}  // namespace fabsim::core
