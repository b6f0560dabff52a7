#include <catch2/catch.hpp>

#include "fabric_probe.hpp"
#include "test_support.hpp"

using namespace fabsim;

using testing::ideal_serialise_ps;
using testing::kIdealLinkLatency;  // per link
using testing::kIdealTraversal;    // per switch

TEST_CASE("through a switch, cut-through adds latencies but serialises once", "[model][switch]") {
  const auto spec = topo::load_topology(testing::star_topology("switch_one", 3));
  testing::FabricProbe probe(spec, 128 * 1024);
  const core::Bytes bytes = 2'000'000;
  probe.send_at(0, 1, 0, 2, bytes);
  probe.run();
  CHECK(static_cast<double>(probe.done(1)) == Approx(2 * kIdealLinkLatency + kIdealTraversal + ideal_serialise_ps(bytes)).epsilon(1e-6));
}

TEST_CASE("two senders into one switch output share it", "[model][switch]") {
  const auto spec = topo::load_topology(testing::star_topology("switch_share", 3));
  testing::FabricProbe probe(spec, 16 * 1024);
  const core::Bytes bytes = 1 << 20;
  probe.send_at(0, 1, 0, 2, bytes);
  probe.send_at(0, 2, 1, 2, bytes);
  probe.run();
  const double shared = 2 * kIdealLinkLatency + kIdealTraversal + ideal_serialise_ps(2 * bytes);
  // Each gets half the output: both finish within one segment of 2S/B.
  for (std::uint64_t id : {1, 2}) {
    CHECK(static_cast<double>(probe.done(id)) <= shared + 1);
    CHECK(static_cast<double>(probe.done(id)) >= shared - ideal_serialise_ps(16 * 1024) - 1);
  }
}

TEST_CASE("finite switch buffers back-pressure the senders through credits", "[model][switch]") {
  const auto spec = topo::load_topology(testing::star_topology("switch_credits", 3, false, "48 KiB"));
  testing::FabricProbe probe(spec, 16 * 1024);
  const core::Bytes bytes = 1 << 20;
  probe.send_at(0, 1, 0, 2, bytes);
  probe.send_at(0, 2, 1, 2, bytes);
  probe.run();
  const double shared = 2 * kIdealLinkLatency + kIdealTraversal + ideal_serialise_ps(2 * bytes);
  const auto usage = probe.fabric().link_usage(probe.done(2));
  for (const auto& link : usage) {
    if (link.name == "gpu0->sw" || link.name == "gpu1->sw") {
      CHECK(link.peak_buffer == 48 * 1024);  // the input buffer filled up, and no further
      CHECK(link.bytes == bytes);
    }
  }
  // Back-pressure slows the senders, not the shared output: the pair still takes about 2S/B.
  CHECK(static_cast<double>(std::max(probe.done(1), probe.done(2))) == Approx(shared).epsilon(0.02));
}
