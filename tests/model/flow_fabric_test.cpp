// The flow-level fabric: max-min fair shares, rates recomputed as flows end,
// and path latency added once.

#include <catch2/catch.hpp>

#include <limits>
#include <string>

#include "fabric_probe.hpp"
#include "test_support.hpp"

using namespace fabsim;

namespace {
constexpr double kLinkRate = 100e9;           // ideal_catalogue(): 100 GB/s, efficiency 1
constexpr core::TimePs kPathLatency = 250'000;  // two 100 ns links and a 50 ns switch
double at_us(core::TimePs t) { return static_cast<double>(t) / 1e6; }
}  // namespace

TEST_CASE("flow level: one flow moves at the link rate plus the path latency", "[model][flow]") {
  const auto spec = topo::load_topology(testing::star_topology("flow_one", 2));
  testing::FabricProbe probe(spec, 0);
  probe.send_at(0, 1, 0, 1, 1'000'000);
  probe.run();
  CHECK(at_us(probe.done(1)) == Approx(at_us(kPathLatency + static_cast<core::TimePs>(1e6 / kLinkRate * 1e12))));
}

TEST_CASE("flow level: a store-and-forward fill step costs a whole chunk time and an overlapped one only its latency", "[model][flow]") {
  // Two transfers on disjoint paths (0->1, 2->3), 1 MB in 4 pipelined steps
  // behind 3 fill steps: 10 us of data, 2.5 us a chunk. The second's fill
  // has 2 in-switch stages upstream that hold each chunk whole.
  const auto spec = topo::load_topology(testing::star_topology("flow_fill", 4));
  testing::FabricProbe probe(spec, 0);
  models::TransferRequest overlapped{1, 0, 1, 1'000'000, 1'000'000};
  overlapped.pipeline_steps = 4;
  overlapped.fill_steps = 3;
  models::TransferRequest held = overlapped;
  held.id = 2;
  held.source = 2;
  held.destination = 3;
  held.chunk_fill_steps = 2;
  probe.send_request_at(0, overlapped);
  probe.send_request_at(0, held);
  probe.run();
  const double data_us = 1e6 / kLinkRate * 1e6;
  // Overlapped: the fill hides in the data; 7 paced steps of 10/7 us each, then one path latency.
  CHECK(at_us(probe.done(1)) == Approx(data_us + at_us(kPathLatency)).epsilon(0.001));
  // Held: two more chunk times (2 x 2.5 us).
  CHECK(at_us(probe.done(2)) - at_us(probe.done(1)) == Approx(2 * data_us / 4).epsilon(0.001));
}

TEST_CASE("flow level: max-min shares, and the freed share goes to who can use it", "[model][flow]") {
  // A 0->3, B 1->3, C 2->3 share switch->gpu3 (a third each). D 1->0 shares
  // gpu1->switch with B only, so it gets the two thirds B cannot use. When
  // A, B, C end, D takes the whole link.
  const auto spec = topo::load_topology(testing::star_topology("flow_maxmin", 4));
  testing::FabricProbe probe(spec, 0);
  const core::Bytes mb = 1'000'000;
  probe.send_at(0, 1, 0, 3, mb);
  probe.send_at(0, 2, 1, 3, mb);
  probe.send_at(0, 3, 2, 3, mb);
  probe.send_at(0, 4, 1, 0, 3 * mb);
  probe.run();
  const double third_done_us = 1e6 / (kLinkRate / 3) * 1e6;  // 30 us
  for (std::uint64_t id : {1, 2, 3}) CHECK(at_us(probe.done(id)) == Approx(third_done_us + at_us(kPathLatency)).epsilon(1e-4));
  // D: 2 MB at two thirds of the link in 30 us, then 1 MB alone in 10 us.
  CHECK(at_us(probe.done(4)) == Approx(40.0 + at_us(kPathLatency)).epsilon(1e-4));
}

TEST_CASE("flow level and segment level agree on a shared link", "[model][flow]") {
  // Both levels run in one simulation (one elaboration per process): the same
  // two 8 MiB transfers into gpu2 share the switch->gpu2 link on each fabric.
  const auto spec = topo::load_topology(testing::star_topology("flow_vs_segment", 3));
  testing::FabricProbe flow(spec, 0, "flow_timers");
  testing::FabricProbe segment(spec, 512 * 1024, "segment_timers");
  for (auto* probe : {&flow, &segment}) {
    probe->send_at(0, 1, 0, 2, 8 << 20);
    probe->send_at(0, 2, 1, 2, 8 << 20);
  }
  flow.run();
  const double flow_done = at_us(std::max(flow.done(1), flow.done(2)));
  const double segment_done = at_us(std::max(segment.done(1), segment.done(2)));
  // 16 MiB through one 100 GB/s link either way: 167.8 us plus the path latency.
  // Segments cut through the switch, so the segment level adds no pipeline fill
  // here (at most one segment, 512 KiB at 100 GB/s = 5.2 us, could show).
  const double expected = 16.0 * 1048576 / kLinkRate * 1e6 + at_us(kPathLatency);
  CHECK(flow_done == Approx(expected).epsilon(1e-3));
  CHECK(segment_done >= expected * (1 - 1e-3));
  CHECK(segment_done <= expected + 512.0 * 1024 / kLinkRate * 1e6);
  INFO("flow " << flow_done << " us, segment " << segment_done << " us");
  CHECK(segment_done == Approx(flow_done).epsilon(1e-3));
}

TEST_CASE("flow level: ends within the completion window share one re-solve, each within the window of its exact end",
          "[model][flow]") {
  // An all-to-all of 6 GPUs on one switch whose 30 transfers differ in size
  // by 0.002% steps: exactly, each end is its own re-solve; with the window,
  // ends within 0.1% of their age are taken together at their projected ends.
  const auto spec = topo::load_topology(testing::star_topology("flow_window", 6));
  testing::FabricProbe exact(spec, 0, "exact_probe", 0.0, "exact_flow_timers");
  testing::FabricProbe windowed(spec, 0, "windowed_probe", topo::FlowFabric::kCompletionWindow, "windowed_flow_timers");
  std::uint64_t id = 0;
  for (int s = 0; s < 6; ++s)
    for (int d = 0; d < 6; ++d) {
      if (s == d) continue;
      ++id;
      const auto bytes = static_cast<core::Bytes>(4'000'000 * (1 + 2e-5 * static_cast<double>(id)));
      exact.send_at(0, id, s, d, bytes);
      windowed.send_at(0, id, s, d, bytes);
    }
  exact.run();
  for (std::uint64_t t = 1; t <= id; ++t) {
    INFO("transfer " << t);
    CHECK(at_us(windowed.done(t)) == Approx(at_us(exact.done(t))).epsilon(topo::FlowFabric::kCompletionWindow));
  }
  INFO("re-solves: exact " << exact.fabric().backend_events() << ", windowed " << windowed.fabric().backend_events());
  CHECK(exact.fabric().backend_events() >= 20);
  CHECK(windowed.fabric().backend_events() * 4 <= exact.fabric().backend_events());
}

namespace {
std::string one_gpu_fat_tree(const std::string& name, int oversubscription) {
  return testing::write_temp(name + ".json", R"({"format": "fabsim-topology/1", "name": ")" + name + R"(", "hardware": ")" +
                                                 testing::source_path("configs/hardware/catalogue.json") + R"(",
    "generate": {"nodes": 16, "node": {"gpus": 1, "gpu_model": "h100-sxm",
      "pcie": {"switch_model": "pcie-gen5-switch", "link_model": "pcie-gen5-x16"}, "nics": {"model": "cx7-ndr400", "per_node": 1}},
      "network": {"tiers": 2, "switch_model": "quantum-2", "link_model": "ib-ndr-400", "nodes_per_leaf": 8,
                  "oversubscription": [)" + std::to_string(oversubscription) + "]}}}");
}
}  // namespace

TEST_CASE("flow level: an all-to-all on a 4:1 leaf tier shows its hashed collisions with the completion window as without it",
          "[model][flow]") {
  // 16 one-GPU nodes, two leaves of 8: 8 up-links per leaf at 1:1, 2 at 4:1.
  // Each pair's channel feeds the ECMP hash, so some up-links carry more
  // pairs than others and the ends spread out.
  const auto blocking = topo::load_topology(one_gpu_fat_tree("leaf-4to1", 4));
  const auto open = topo::load_topology(one_gpu_fat_tree("leaf-1to1", 1));
  testing::FabricProbe exact(blocking, 0, "exact_probe", 0.0, "exact_flow_timers");
  testing::FabricProbe windowed(blocking, 0, "windowed_probe", topo::FlowFabric::kCompletionWindow, "windowed_flow_timers");
  testing::FabricProbe non_blocking(open, 0, "open_probe", topo::FlowFabric::kCompletionWindow, "open_flow_timers");
  std::uint64_t id = 0;
  for (int s = 0; s < 16; ++s)
    for (int d = 0; d < 16; ++d) {
      if (s == d) continue;
      ++id;
      for (auto* probe : {&exact, &windowed, &non_blocking}) probe->send_at(0, id, s, d, 4'000'000);
    }
  exact.run();
  core::TimePs exact_last = 0, windowed_last = 0, open_last = 0, exact_first = std::numeric_limits<core::TimePs>::max();
  for (std::uint64_t t = 1; t <= id; ++t) {
    INFO("transfer " << t);
    CHECK(at_us(windowed.done(t)) == Approx(at_us(exact.done(t))).epsilon(topo::FlowFabric::kCompletionWindow));
    exact_last = std::max(exact_last, exact.done(t));
    exact_first = std::min(exact_first, exact.done(t));
    windowed_last = std::max(windowed_last, windowed.done(t));
    open_last = std::max(open_last, non_blocking.done(t));
  }
  INFO("last end: 1:1 " << at_us(open_last) << " us, 4:1 exact " << at_us(exact_last) << " us, windowed " << at_us(windowed_last)
                        << " us; first end at 4:1 " << at_us(exact_first) << " us");
  // 64 cross-leaf pairs of 4 MB per leaf over 2 up-links instead of 8: at least 2x the non-blocking time.
  CHECK(at_us(windowed_last) >= 2.0 * at_us(open_last));
  CHECK(at_us(windowed_last) == Approx(at_us(exact_last)).epsilon(1e-4));
  CHECK(at_us(exact_last) >= 1.5 * at_us(exact_first));  // the collisions spread the ends
}
