#pragma once
/// The open devices of a route search, smallest (key, cost) first, where a
/// key is a device's cost plus a lower bound on the cost left. Without a bound
/// the key is the cost and the queue is Dial's buckets by cost (costs are small
/// integers; a full search over 400k devices stays linear); with one, a binary heap.

#include <algorithm>
#include <cstdint>
#include <functional>
#include <utility>
#include <vector>

namespace fabsim::topo {

class SearchQueue {
 public:
  /// Empties the queue; `by_cost`: every key will equal its cost.
  void reset(bool by_cost) {
    by_cost_ = by_cost;
    heap_.clear();
    for (auto& bucket : buckets_) bucket.clear();
    cursor_ = 0;
    size_ = 0;
  }

  void push(std::uint32_t key, std::uint32_t cost, int device) {
    if (by_cost_) {
      if (cost >= buckets_.size()) buckets_.resize(static_cast<std::size_t>(cost) + 1);
      buckets_[cost].push_back(device);
      cursor_ = std::min(cursor_, cost);
      ++size_;
      return;
    }
    heap_.emplace_back((static_cast<std::uint64_t>(key) << 32) | cost, device);
    std::push_heap(heap_.begin(), heap_.end(), std::greater<>());
  }

  bool empty() const { return by_cost_ ? size_ == 0 : heap_.empty(); }

  /// The smallest key; the queue must not be empty.
  std::uint32_t top_key() {
    if (!by_cost_) return static_cast<std::uint32_t>(heap_.front().first >> 32);
    while (buckets_[cursor_].empty()) ++cursor_;
    return cursor_;
  }

  /// Takes the smallest entry out: its cost and device. The queue must not be empty.
  std::pair<std::uint32_t, int> pop() {
    if (by_cost_) {
      const std::uint32_t cost = top_key();
      const int device = buckets_[cost].back();
      buckets_[cost].pop_back();
      --size_;
      return {cost, device};
    }
    std::pop_heap(heap_.begin(), heap_.end(), std::greater<>());
    const auto [key, device] = heap_.back();
    heap_.pop_back();
    return {static_cast<std::uint32_t>(key & 0xFFFFFFFFu), device};
  }

 private:
  bool by_cost_ = true;
  std::vector<std::pair<std::uint64_t, int>> heap_;  // ((key << 32) | cost, device)
  std::vector<std::vector<int>> buckets_;            // by cost
  std::uint32_t cursor_ = 0;                         // no bucket below it holds an entry
  std::size_t size_ = 0;
};

}  // namespace fabsim::topo
