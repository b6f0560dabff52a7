#include <catch2/catch.hpp>

#include "fabric_probe.hpp"
#include "test_support.hpp"

using namespace fabsim;

using testing::kIdealLinkLatency;

namespace {
/// Serialisation on an ideal link in whole picoseconds, as the link model rounds it.
core::TimePs serialise_whole_ps(core::Bytes b) { return static_cast<core::TimePs>(testing::ideal_serialise_ps(b)); }
}  // namespace

TEST_CASE("one segment over one link takes latency + bytes / bandwidth", "[model][link]") {
  const auto spec = topo::load_topology(testing::star_topology("direct_one", 2, true));
  testing::FabricProbe probe(spec, 1 << 20);
  const core::Bytes bytes = 500'000;
  probe.send_at(0, 1, 0, 1, bytes);
  probe.run();
  CHECK(probe.done(1) == kIdealLinkLatency + serialise_whole_ps(bytes));
}

TEST_CASE("a transfer cut into segments still takes latency + bytes / bandwidth (back to back)", "[model][link]") {
  const auto spec = topo::load_topology(testing::star_topology("direct_many", 2, true));
  testing::FabricProbe probe(spec, 64 * 1024);
  const core::Bytes bytes = 4 * 1000 * 1000;
  probe.send_at(2'000'000, 7, 1, 0, bytes);
  probe.run();
  CHECK(static_cast<double>(probe.done(7)) == Approx(2'000'000 + kIdealLinkLatency + serialise_whole_ps(bytes)).epsilon(1e-9));
}

namespace {
constexpr core::Bytes kTransferBytes = 1 << 20;

/// When two 1 MiB transfers, both sent at time 0 from gpu0 to gpu1 in 16 KiB
/// segments on the given channels, complete.
std::pair<core::TimePs, core::TimePs> two_transfers_done(const std::string& name, std::uint32_t first_channel,
                                                        std::uint32_t second_channel) {
  const auto spec = topo::load_topology(testing::star_topology(name, 2, true));
  testing::FabricProbe probe(spec, 16 * 1024);
  std::uint64_t id = 1;
  for (std::uint32_t channel : {first_channel, second_channel}) {
    models::TransferRequest request{id++, 0, 1, kTransferBytes, kTransferBytes};
    request.flow = channel;
    probe.send_request_at(0, request);
  }
  probe.run();
  return {probe.done(1), probe.done(2)};
}
}  // namespace

TEST_CASE("two connections on one link share it round robin and finish together", "[model][link]") {
  const auto [first, second] = two_transfers_done("direct_share", 0, 1);
  const double both = static_cast<double>(kIdealLinkLatency + serialise_whole_ps(2 * kTransferBytes));
  CHECK(static_cast<double>(second) == Approx(both).epsilon(1e-6));
  // Interleaved segment by segment, the first ends at most two segments before the second
  // (it took the idle link first), not a whole transfer before it.
  CHECK(second - first <= 2 * serialise_whole_ps(16 * 1024));
}

TEST_CASE("two transfers of one connection go over a link in order", "[model][link]") {
  // A queue pair executes its RDMA writes in order and an SM writes a
  // channel's steps in order: the second step waits for the first, rather
  // than both landing late together.
  const auto [first, second] = two_transfers_done("direct_order", 3, 3);
  CHECK(static_cast<double>(first) == Approx(static_cast<double>(kIdealLinkLatency + serialise_whole_ps(kTransferBytes))).epsilon(1e-6));
  CHECK(static_cast<double>(second) == Approx(static_cast<double>(kIdealLinkLatency + serialise_whole_ps(2 * kTransferBytes))).epsilon(1e-6));
}

TEST_CASE("link usage counts the bytes and busy time of each direction", "[model][link]") {
  const auto spec = topo::load_topology(testing::star_topology("direct_stats", 2, true));
  testing::FabricProbe probe(spec, 1 << 20);
  probe.send_at(0, 1, 0, 1, 1'000'000);
  probe.run();
  const auto usage = probe.fabric().link_usage(probe.done(1));
  REQUIRE(usage.size() == 2);
  CHECK(usage[0].name == "gpu0->gpu1");
  CHECK(usage[0].bytes == 1'000'000);
  CHECK(usage[0].busy == serialise_whole_ps(1'000'000));
  CHECK(usage[1].bytes == 0);
}
