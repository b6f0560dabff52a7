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

TEST_CASE("LL and LL128 receivers pass a step on per round of the primitive's threads, Simple per step", "[plan]") {
  topo::ProtocolParams ll128 = testing::simple_protocol();
  ll128.threads = 640;  // NCCL_LL128_MAX_NTHREADS: 20 warps of 2 KiB slices, 1,920 B of data each
  topo::ProtocolParams ll = testing::simple_protocol();
  ll.threads = 512;  // NCCL_LL_MAX_NTHREADS: one 16-byte line, 8 B of data, per thread
  CHECK(traces::line_forward_grain(topo::Protocol::kLL128, ll128) == 38400);
  CHECK(traces::line_forward_grain(topo::Protocol::kLL, ll) == 4096);
  CHECK(traces::line_forward_grain(topo::Protocol::kSimple, ll) == 0);
}

TEST_CASE("an LL128 broadcast at the segment level forwards each step piece by piece, streaming its steps", "[plan]") {
  topo::ProtocolParams p = testing::simple_protocol();
  p.slot_bytes = 576000;  // LL128's payload per step
  p.slots = 8;
  const core::Bytes grain = 38400;
  traces::ChainRequest request{CollectiveOp::kBroadcast, 4, 0, 2 * 576000, 1, topo::Protocol::kLL128, 4};
  request.forward_grain = grain;
  const auto plan = traces::plan_chain(request, p);
  // Two steps of 576,000 B, 15 pieces each, over 3 hops; every link still carries the buffer once.
  REQUIRE(plan.transfers.size() == 2 * 15 * 3);
  for (const auto& [pair, bytes] : bytes_by_pair(plan)) CHECK(bytes == 2 * 576000);
  int first_pieces = 0, step_starts = 0;
  for (std::size_t i = 0; i < plan.transfers.size(); ++i) {
    const auto& t = plan.transfers[i];
    CHECK(t.payload <= grain);
    CHECK(t.after_sent == traces::kNoTransfer);  // lines carry their flags: no fence waits for a landing
    if (t.source != 0) {
      // It forwards the same piece of the same step that its sender received.
      REQUIRE(t.after_received != traces::kNoTransfer);
      const auto& upstream = plan.transfers[static_cast<std::size_t>(t.after_received)];
      CHECK(upstream.destination == t.source);
      CHECK(upstream.payload == t.payload);
      CHECK(upstream.released_by == static_cast<std::int32_t>(i));
    }
    if (t.after_issued == traces::kNoTransfer) {
      ++first_pieces;  // the first piece of a connection's first step
    } else {
      const auto& before = plan.transfers[static_cast<std::size_t>(t.after_issued)];
      CHECK(before.source == t.source);
      CHECK(before.destination == t.destination);
    }
    if (!t.continues_step) ++step_starts;  // these wait for the channel cap's spacing
  }
  CHECK(first_pieces == 3);
  CHECK(step_starts == 2 * 3);
  // Simple, or the flow level (forward_grain 0), keeps one transfer per step and hop.
  request.forward_grain = 0;
  CHECK(traces::plan_chain(request, p).transfers.size() == 2 * 3);
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
  // 128 MiB a peer: from 4 channels (32 p2p channels over 8 ranks), doubled while a part exceeds 32 chunks: 8 each.
  CHECK(plan.channels == 8 * 7);
  core::Bytes total = 0;
  for (const auto& t : plan.transfers) {
    CHECK(t.payload <= 512 * 1024);
    total += t.payload;
  }
  CHECK(total == (1ull << 30) / 8 * 56);
  CHECK(traces::plan_p2p({CollectiveOp::kSendRecv, 2, 0, 4096}, h100()).protocol == "LL");
}

TEST_CASE("p2p plans at flow level: one transfer per pair and channel, as coalescing the chunk plan gives, grouped by destination", "[plan]") {
  // 1 GiB / 8 + 1 MiB + 3 bytes a pair: parts of 16 MiB and more take 16 channels a peer; 259 chunks of 512 KiB, the last one 3 bytes.
  const core::Bytes size = 8 * ((1ull << 27) + (1ull << 20) + 3);
  const traces::P2PRequest request{CollectiveOp::kAllToAll, 8, 0, size};
  const auto chunked = traces::coalesce_for_flow(traces::plan_p2p(request, h100()), false);
  const auto direct = traces::plan_p2p(request, h100(), true);
  CHECK(direct.aggregated);
  CHECK(direct.channels == chunked.channels);
  CHECK(direct.protocol == chunked.protocol);
  REQUIRE(direct.transfers.size() == 56 * 16);
  using Key = std::tuple<int, int, int>;  // channel, source, destination
  std::map<Key, std::pair<core::Bytes, std::uint32_t>> expected, got;
  for (const auto& t : chunked.transfers) expected[{t.channel, t.source, t.destination}] = {t.payload, t.steps};
  for (const auto& t : direct.transfers) got[{t.channel, t.source, t.destination}] = {t.payload, t.steps};
  CHECK(got == expected);
  const core::Bytes chunks = (size / 8 + 512 * 1024 - 1) / (512 * 1024);
  CHECK(chunks == 259);
  // Channel 2 of a pair (chunks 2, 18, ..., 258) carries the short last chunk.
  const auto& first_pair = got.at({2, 0, 1});
  CHECK(first_pair.second == 17);
  CHECK(first_pair.first == 16 * 512 * 1024 + 3);
  CHECK(got.at({3, 0, 1}).second == 16);
  for (std::size_t i = 1; i < direct.transfers.size(); ++i)
    CHECK(direct.transfers[i - 1].destination <= direct.transfers[i].destination);
}

TEST_CASE("p2p channels in one node follow NCCL's split by size and release, and a forced channel count", "[plan][p2p]") {
  const auto gpu = h100();  // 32 p2p channels, 512 KiB chunks
  const auto newest = traces::p2p_channel_setup(gpu, std::nullopt, nullptr);
  CHECK(newest.p2p_channels == 32);
  CHECK(newest.per_peer == 32);
  CHECK(newest.split == traces::NcclP2pSplit::kAllChannels);
  // sendrecv on 8 ranks (nccl-tests' ring shift): 4 channels a peer, doubled while a part exceeds 16 MiB.
  CHECK(traces::p2p_single_node_channels(gpu, newest, 8, 64 * 1024) == 1);  // parts of at least 64 KiB
  CHECK(traces::p2p_single_node_channels(gpu, newest, 8, 1 << 20) == 4);
  CHECK(traces::p2p_single_node_channels(gpu, newest, 8, 64ull << 20) == 4);
  CHECK(traces::p2p_single_node_channels(gpu, newest, 8, 128ull << 20) == 8);
  CHECK(traces::p2p_single_node_channels(gpu, newest, 8, 256ull << 20) == 16);
  CHECK(traces::p2p_single_node_channels(gpu, newest, 8, 512ull << 20) == 32);
  CHECK(traces::p2p_single_node_channels(gpu, newest, 8, 8ull << 30) == 32);
  CHECK(traces::p2p_single_node_channels(gpu, newest, 2, 1 << 20) == 16);  // two ranks: 16 each from the start
  // Up to 2.19 a peer took at most 4 x 32 / 8 = 16 channels on 8 ranks.
  const auto old = traces::p2p_channel_setup(gpu, std::nullopt, traces::nccl_tuner_release(traces::NcclVersion{2, 19, 3}));
  CHECK(old.split == traces::NcclP2pSplit::kQuarterLoad);
  CHECK(traces::p2p_single_node_channels(gpu, old, 8, 128ull << 20) == 8);
  CHECK(traces::p2p_single_node_channels(gpu, old, 8, 1ull << 30) == 16);
  CHECK(traces::p2p_single_node_channels(gpu, old, 2, 1ull << 30) == 32);
  CHECK(traces::p2p_channel_setup(gpu, std::nullopt, traces::nccl_tuner_release(traces::NcclVersion{2, 20, 3})).split ==
        traces::NcclP2pSplit::kAllChannels);
  // A forced count is the communicator's, rounded up to a power of two.
  const auto forced = traces::p2p_channel_setup(gpu, 6, nullptr);
  CHECK(forced.p2p_channels == 8);
  CHECK(forced.per_peer == 8);
  CHECK(traces::p2p_single_node_channels(gpu, forced, 8, 1ull << 30) == 8);
  CHECK(traces::plan_p2p({CollectiveOp::kSendRecv, 8, 0, 1ull << 30}, gpu, false, nullptr, &forced).channels == 8);
  CHECK(traces::plan_p2p({CollectiveOp::kSendRecv, 8, 0, 128ull << 20}, gpu).channels == 8);
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

namespace {
/// Two NVLink domains of `per_domain` ranks each, a 400 Gb/s NIC per GPU (4 channels per network peer).
traces::P2PNetwork two_domains(int per_domain, int channels_per_net_peer = 4) {
  traces::P2PNetwork n;
  for (int r = 0; r < 2 * per_domain; ++r) n.domain_of_rank.push_back(r / per_domain);
  n.channels_per_net_peer = channels_per_net_peer;
  return n;
}
std::map<std::pair<int, int>, core::Bytes> largest_chunk_by_pair(const traces::CollectivePlan& plan) {
  std::map<std::pair<int, int>, core::Bytes> out;
  for (const auto& t : plan.transfers) out[{t.source, t.destination}] = std::max(out[{t.source, t.destination}], t.payload);
  return out;
}
}  // namespace

TEST_CASE("NCCL's channels for a network peer: one per NIC, one per 14 GB/s of NIC bandwidth", "[plan][p2p]") {
  CHECK(traces::p2p_net_peer_channels(1, 50.0) == 4);   // 400 Gb/s (NDR, CX-7)
  CHECK(traces::p2p_net_peer_channels(1, 25.0) == 2);   // 200 Gb/s (TCPXO)
  CHECK(traces::p2p_net_peer_channels(1, 100.0) == 8);  // 800 Gb/s (CX-8)
  CHECK(traces::p2p_net_peer_channels(2, 12.5) == 2);   // two 100 Gb/s NICs: one channel each
  CHECK(traces::p2p_net_peer_channels(0, 0.0) == 1);
}

TEST_CASE("p2p across nodes runs as NCCL's multi-node communicators do: 128 KiB chunks, a network peer's channels, Simple", "[plan][p2p]") {
  const auto network = two_domains(8);
  // The ring shift on 16 ranks, 1 GiB each: every pair gets 4 channels (the network peer's), parts of at most 128 KiB.
  const auto plan = traces::plan_p2p({CollectiveOp::kSendRecv, 16, 0, 1ull << 30}, h100(), false, &network);
  CHECK(plan.protocol == "Simple");
  CHECK(plan.channels == 4);
  for (const auto& [pair, chunk] : largest_chunk_by_pair(plan)) CHECK(chunk == 128 * 1024);  // NVLink pairs too
  // Small messages: Simple even where LL would serve one node (no LL buffers for network P2P), and the
  // network pairs' chunk quartered below one chunk, halved below eight.
  CHECK(traces::plan_p2p({CollectiveOp::kSendRecv, 16, 0, 16 * 1024}, h100()).protocol == "LL");
  CHECK(traces::plan_p2p({CollectiveOp::kSendRecv, 16, 0, 16 * 1024}, h100(), false, &network).protocol == "Simple");
  const auto small = traces::plan_p2p({CollectiveOp::kSendRecv, 16, 0, 64 * 1024}, h100(), false, &network);
  const auto small_chunks = largest_chunk_by_pair(small);
  CHECK(small_chunks.at({7, 8}) == 32 * 1024);   // crosses: 128 KiB / 4
  CHECK(small_chunks.at({0, 1}) == 64 * 1024);   // NVLink pair: the whole 64 KiB in one 128 KiB chunk
  const auto mid = largest_chunk_by_pair(traces::plan_p2p({CollectiveOp::kSendRecv, 16, 0, 512 * 1024}, h100(), false, &network));
  CHECK(mid.at({15, 0}) == 64 * 1024);  // crosses: 128 KiB / 2
  CHECK(mid.at({3, 4}) == 128 * 1024);
}

TEST_CASE("p2p across nodes: many ranks share the p2p channels, one channel a pair at 1,024 ranks", "[plan][p2p]") {
  const auto gpu = h100();  // 32 p2p channels
  // 16 ranks: 4 channels a pair for large messages (parts of at most 128 KiB), 2 for 256 KiB, 1 for 64 KiB.
  CHECK(traces::p2p_multi_node_channels(gpu, two_domains(8), 16, 1ull << 30) == 4);
  CHECK(traces::p2p_multi_node_channels(gpu, two_domains(8), 16, 256 * 1024) == 2);
  CHECK(traces::p2p_multi_node_channels(gpu, two_domains(8), 16, 64 * 1024) == 1);
  // 1,024 ranks in batches of 8 p2p operations: 4 x 128 batches exceed 32 channels, so one each.
  CHECK(traces::p2p_multi_node_channels(gpu, two_domains(512), 1024, 1ull << 30) == 1);
  // TCPXO's 200 Gb/s NICs: 2 channels a network peer.
  CHECK(traces::p2p_multi_node_channels(gpu, two_domains(8, 2), 16, 1ull << 30) == 2);
}
