// The max-min filling on its own: closed forms, and the incremental solve
// after flows leave against a whole solve of what remains.

#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

#include "topologies/max_min_filling.hpp"

using namespace fabsim;

namespace {

topo::FilledFlow filled_flow(std::vector<int> links, double weight = 1, double cap = 0) {
  topo::FilledFlow f;
  f.links = std::move(links);
  f.weight = weight;
  f.cap = cap;
  return f;
}

/// A random fabric of `links` link directions and `count` flows crossing 1-5
/// of them, some weighted, some capped: the same seed gives the same set.
std::vector<topo::FilledFlow> random_filled_flows(std::mt19937_64& rng, int links, int count) {
  std::uniform_int_distribution<int> link(0, links - 1), hops(1, 5), weight(1, 4);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  std::vector<topo::FilledFlow> flows;
  for (int i = 0; i < count; ++i) {
    std::vector<int> path;
    const int n = hops(rng);
    while (static_cast<int>(path.size()) < n) {
      const int l = link(rng);
      if (std::find(path.begin(), path.end(), l) == path.end()) path.push_back(l);
    }
    flows.push_back(filled_flow(path, unit(rng) < 0.2 ? weight(rng) : 1, unit(rng) < 0.1 ? 1e9 * (0.5 + unit(rng)) : 0));
  }
  return flows;
}

}  // namespace

TEST_CASE("max-min filling: closed forms of the classic cases") {
  const double c = 100e9;
  // Flow 0 crosses both links, flow 1 link 0, flow 2 link 1 (capacity c / 2):
  // link 1 is the bottleneck at c / 4 each, flow 1 takes what flow 0 leaves of link 0.
  std::vector<topo::FilledFlow> flows{filled_flow({0, 1}), filled_flow({0}), filled_flow({1})};
  topo::MaxMinFilling filling(2);
  filling.solve(flows, {c, c / 2});
  CHECK(flows[0].rate == Approx(c / 4));
  CHECK(flows[2].rate == Approx(c / 4));
  CHECK(flows[1].rate == Approx(c - c / 4));
  // A flow standing for 3 channels gets 3 shares; a capped flow its cap, the rest to the others.
  std::vector<topo::FilledFlow> weighted{filled_flow({0}, 3), filled_flow({0}), filled_flow({0}, 1, c / 10)};
  topo::MaxMinFilling second(1);
  second.solve(weighted, {c});
  CHECK(weighted[2].rate == Approx(c / 10));
  CHECK(weighted[0].rate == Approx(3 * (c - c / 10) / 4));
  CHECK(weighted[1].rate == Approx((c - c / 10) / 4));
}

TEST_CASE("max-min filling: after flows leave, the incremental solve gives the whole solve's rates, refilling only the upper levels") {
  constexpr int kLinks = 40;
  const std::vector<double> capacity = [] {
    std::vector<double> c;
    for (int l = 0; l < kLinks; ++l) c.push_back(1e9 * (1 + l % 7));
    return c;
  }();
  for (std::uint64_t seed = 1; seed <= 20; ++seed) {
    std::mt19937_64 rng(seed);
    auto flows = random_filled_flows(rng, kLinks, 300);
    topo::MaxMinFilling incremental(kLinks);
    incremental.solve(flows, capacity);
    std::size_t refilled = 0, solved = 0;
    while (flows.size() > 10) {
      // Alternately the fastest flows leave (as they finish first) and random ones.
      std::vector<std::size_t> order(flows.size());
      for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
      if (flows.size() % 2 == 0) {
        std::stable_sort(order.begin(), order.end(), [&](auto a, auto b) { return flows[a].level > flows[b].level; });
      } else {
        std::shuffle(order.begin(), order.end(), rng);
      }
      order.resize(1 + flows.size() / 20);
      std::sort(order.begin(), order.end());
      for (auto it = order.rbegin(); it != order.rend(); ++it) {
        incremental.flow_left(flows[*it]);
        flows.erase(flows.begin() + static_cast<std::ptrdiff_t>(*it));
      }
      refilled += incremental.solve(flows, capacity);
      solved += flows.size();
      auto whole = flows;
      topo::MaxMinFilling fresh(kLinks);
      fresh.solve(whole, capacity);
      for (std::size_t i = 0; i < flows.size(); ++i) {
        INFO("seed " << seed << ", flow " << i << " of " << flows.size());
        REQUIRE(flows[i].rate == Approx(whole[i].rate).epsilon(1e-9));
      }
    }
    // The point of it: most re-solves touch a part of the flows.
    CHECK(refilled < solved);
  }
}

TEST_CASE("max-min filling: a link's capacity changing takes a whole solve") {
  std::vector<topo::FilledFlow> flows{filled_flow({0}), filled_flow({0, 1}), filled_flow({1})};
  topo::MaxMinFilling filling(2);
  std::vector<double> capacity{10e9, 10e9};
  filling.solve(flows, capacity);
  CHECK(flows[1].rate == Approx(5e9));
  capacity[1] = 2e9;
  filling.invalidate();
  CHECK(filling.solve(flows, capacity) == flows.size());
  CHECK(flows[1].rate == Approx(1e9));
  CHECK(flows[0].rate == Approx(9e9));
  // Nothing left, nothing joined: nothing to do.
  CHECK(filling.solve(flows, capacity) == 0);
}
