#pragma once
/// Max-min fair rates of flows over link directions: weighted progressive
/// filling. Repeatedly the link (or capped flow) with the smallest fair share
/// per unit of weight is taken, its flows fixed at that level times their
/// weight, and their rate taken off every other link they cross.
///
/// Re-solving after flows leave is incremental. In the filling, every flow
/// is fixed at or below the level of each link it crosses; a leaving flow was
/// therefore fixed no lower than every link it was on, and the filling below
/// its level went exactly as it goes without it (its links' shares there only
/// rise). Flows fixed below the lowest level of a leaving flow keep their
/// rates; only the flows at or above it are filled again, over what the kept
/// flows leave of each link. When an all-to-all's fastest flows end first
/// (they are the highest levels) a re-solve touches a handful of flows, not a
/// million. Flows joining, or capacities changing, take a whole solve.

#include <concepts>
#include <cstddef>
#include <limits>
#include <vector>

namespace fabsim::topo {

/// A flow as the filling sees it: the link directions it crosses, its weight
/// (the plain flows it stands for), an own rate limit, and its results.
struct FilledFlow {
  std::vector<int> links;  ///< link direction ids
  double weight = 1;       ///< its share of a link relative to a plain flow
  double cap = 0;          ///< own limit in bytes per second (0: none)
  double rate = 0;         ///< bytes per second, from the last filling
  double level = 0;        ///< rate per unit of weight at which the filling fixed it
};

class MaxMinFilling {
 public:
  /// `link_directions`: how many link direction ids there are (ids run from 0).
  explicit MaxMinFilling(std::size_t link_directions);

  /// A flow leaves the fabric (call before removing it from the flows solved).
  void flow_left(const FilledFlow& flow);
  /// Flows joined, or a link's capacity changed: the next solve starts afresh.
  void invalidate() { whole_ = true; }

  /// Sets every flow's rate and level over `capacity` (bytes per second by
  /// link direction id): afresh, or for the flows at or above the lowest
  /// level of the flows that left since the last solve.
  /// Returns how many flows were filled again. `F` is the caller's flow
  /// record, a FilledFlow with more beside it.
  template <std::derived_from<FilledFlow> F>
  std::size_t solve(std::vector<F>& flows, const std::vector<double>& capacity) {
    return solve(FlowTable{&flows, flows.size(), [](void* v, std::size_t i) -> FilledFlow& { return (*static_cast<std::vector<F>*>(v))[i]; }},
                 capacity);
  }

 private:
  /// The caller's flows, whatever record holds them.
  struct FlowTable {
    void* flows;
    std::size_t size;
    FilledFlow& (*at)(void* flows, std::size_t i);
    FilledFlow& operator[](std::size_t i) const { return at(flows, i); }
  };
  std::size_t solve(const FlowTable& flows, const std::vector<double>& capacity);
  /// Fills the flows whose level is at least `floor` (all: -infinity).
  std::size_t fill(const FlowTable& flows, const std::vector<double>& capacity, double floor);

  bool whole_ = true;
  double lowest_left_ = std::numeric_limits<double>::infinity();  // level of the lowest flow that left
  std::vector<double> load_;  // by link direction: summed rate of the flows on it
  // Scratch, kept between solves to avoid reallocating.
  std::vector<double> left_;
  std::vector<int> count_;
  std::vector<double> weight_;           // by link: summed weight of its unfixed flows
  std::vector<std::size_t> refill_;      // the flows filled again
  std::vector<std::size_t> flow_begin_;  // by refilled flow: its first entry in flow_links_
  std::vector<int> flow_links_;          // every refilled flow's link direction ids, flow after flow
  std::vector<std::size_t> members_begin_, members_end_;  // by link: its flows in link_members_
  std::vector<int> link_members_;        // the refilled flows on each link (positions in refill_), link after link
  std::vector<int> touched_;             // links the refilled flows cross
};

}  // namespace fabsim::topo
