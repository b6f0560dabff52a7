#include <catch2/catch.hpp>

#include <map>
#include <tuple>

#include "test_support.hpp"
#include "topologies/topology_spec.hpp"
#include "traces/collectives/chain_planner.hpp"
#include "traces/collectives/flow_plans.hpp"
#include "traces/collectives/p2p_planner.hpp"

using namespace fabsim;
using traces::CollectiveOp;

using testing::h100;

namespace {
std::map<std::pair<int, int>, core::Bytes> bytes_by_pair(const traces::CollectivePlan& plan) {
  std::map<std::pair<int, int>, core::Bytes> out;
  for (const auto& t : plan.transfers) out[{t.source, t.destination}] += t.payload;
  return out;
}
}  // namespace

TEST_CASE("broadcast is a chain from the root: every link of the chain carries the buffer once", "[plan]") {
  const core::Bytes S = 10ull << 20;
  const auto plan = traces::plan_chain({CollectiveOp::kBroadcast, 4, 2, S, 3, topo::Protocol::kSimple, 4}, testing::simple_protocol());
  const auto pairs = bytes_by_pair(plan);
  REQUIRE(pairs.size() == 3);
  CHECK(pairs.at({2, 3}) == S);
  CHECK(pairs.at({3, 0}) == S);
  CHECK(pairs.at({0, 1}) == S);
  for (const auto& t : plan.transfers) {
    CHECK_FALSE(t.reduced_on_receipt);
    CHECK(t.payload <= 512 * 1024);  // one step per chunk
    if (t.source != 2) REQUIRE(t.after_received != traces::kNoTransfer);  // forwards what it received
  }
}

TEST_CASE("reduce is a chain ending at the root, reducing at every hop", "[plan]") {
  const core::Bytes S = 4ull << 20;
  const auto plan = traces::plan_chain({CollectiveOp::kReduce, 4, 0, S, 2, topo::Protocol::kSimple, 4}, testing::simple_protocol());
  const auto pairs = bytes_by_pair(plan);
  CHECK(pairs.at({1, 2}) == S);
  CHECK(pairs.at({2, 3}) == S);
  CHECK(pairs.at({3, 0}) == S);
  for (const auto& t : plan.transfers) CHECK(t.reduced_on_receipt);
}

TEST_CASE("point-to-point flows follow nccl-tests: ring shift, all pairs, to and from the root", "[plan]") {
  const core::Bytes S = 8ull << 20;
  CHECK(traces::p2p_flows({CollectiveOp::kSendRecv, 4, 0, S}).size() == 4);
  const auto a2a = traces::p2p_flows({CollectiveOp::kAllToAll, 4, 0, S});
  CHECK(a2a.size() == 12);
  for (const auto& f : a2a) CHECK(f.bytes == S / 4);
  for (const auto& f : traces::p2p_flows({CollectiveOp::kGather, 4, 1, S})) CHECK(f.destination == 1);
  for (const auto& f : traces::p2p_flows({CollectiveOp::kScatter, 4, 3, S})) CHECK(f.source == 3);
}

TEST_CASE("p2p plans: chunks of 512 KiB over the peer's channels, LL only for small messages", "[plan]") {
  const auto plan = traces::plan_p2p({CollectiveOp::kAllToAll, 8, 0, 1ull << 30}, h100());
  CHECK(plan.protocol == "Simple");
  CHECK(plan.channels == 4 * 7);  // 32 p2p channels shared by 7 peers: 4 each
  core::Bytes total = 0;
  for (const auto& t : plan.transfers) {
    CHECK(t.payload <= 512 * 1024);
    total += t.payload;
  }
  CHECK(total == (1ull << 30) / 8 * 56);
  CHECK(traces::plan_p2p({CollectiveOp::kSendRecv, 2, 0, 4096}, h100()).protocol == "LL");
}

TEST_CASE("p2p plans at flow level: one transfer per pair and channel, as coalescing the chunk plan gives, grouped by destination", "[plan]") {
  // 1 GiB / 8 + 1 MiB + 3 bytes a pair: 4 channels per peer, 259 chunks of 512 KiB, the last one 3 bytes.
  const core::Bytes size = 8 * ((1ull << 27) + (1ull << 20) + 3);
  const traces::P2PRequest request{CollectiveOp::kAllToAll, 8, 0, size};
  const auto chunked = traces::coalesce_for_flow(traces::plan_p2p(request, h100()), false);
  const auto direct = traces::plan_p2p(request, h100(), true);
  CHECK(direct.aggregated);
  CHECK(direct.channels == chunked.channels);
  CHECK(direct.protocol == chunked.protocol);
  REQUIRE(direct.transfers.size() == 56 * 4);
  using Key = std::tuple<int, int, int>;  // channel, source, destination
  std::map<Key, std::pair<core::Bytes, std::uint32_t>> expected, got;
  for (const auto& t : chunked.transfers) expected[{t.channel, t.source, t.destination}] = {t.payload, t.steps};
  for (const auto& t : direct.transfers) got[{t.channel, t.source, t.destination}] = {t.payload, t.steps};
  CHECK(got == expected);
  const core::Bytes chunks = (size / 8 + 512 * 1024 - 1) / (512 * 1024);
  CHECK(chunks == 259);
  // Channel 2 of a pair (chunks 2, 6, ..., 258) carries the short last chunk.
  const auto& first_pair = got.at({2, 0, 1});
  CHECK(first_pair.second == 65);
  CHECK(first_pair.first == 64 * 512 * 1024 + 3);
  for (std::size_t i = 1; i < direct.transfers.size(); ++i)
    CHECK(direct.transfers[i - 1].destination <= direct.transfers[i].destination);
}

TEST_CASE("tree all-reduce on one node: reduce up the chain to rank 0, broadcast back down", "[plan][tree]") {
  const core::Bytes S = 6ull << 20;
  const auto plan = traces::plan_tree_all_reduce({CollectiveOp::kAllReduce, 4, 0, S, 2, topo::Protocol::kSimple, 4}, testing::simple_protocol());
  CHECK(plan.algorithm == "Tree");
  const auto pairs = bytes_by_pair(plan);
  REQUIRE(pairs.size() == 6);
  for (int r = 1; r < 4; ++r) {
    CHECK(pairs.at({r, r - 1}) == S);  // up
    CHECK(pairs.at({r - 1, r}) == S);  // down
  }
  for (const auto& t : plan.transfers) CHECK(t.reduced_on_receipt == (t.destination < t.source));
  // A chunk goes down only after it has been reduced at rank 0.
  for (const auto& t : plan.transfers)
    if (t.source == 0) CHECK(plan.transfers[t.after_received].destination == 0);
}
