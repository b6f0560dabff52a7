#include <catch2/catch.hpp>

#include <map>
#include <tuple>
#include <vector>

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

namespace {

/// Three GB200 NVL4 partitions on one InfiniBand rail switch per GPU index (nccl#1801's fabric).
topo::TopologySpec three_partitions() { return topo::load_topology(testing::source_path("topologies/gb200-nvl4-3rack.json")); }

/// The effective bandwidth of its InfiniBand links, bytes per second.
double infiniband_rate(const topo::TopologySpec& spec) {
  for (const auto& link : spec.links)
    if (link.kind == topo::LinkKind::kInfiniband) return link.effective_bandwidth().bytes_per_second;
  FAIL("no InfiniBand link");
  return 0;
}

}  // namespace

TEST_CASE("a path through a network switch is cut into segments of a sixteenth of its input buffer", "[model][switch]") {
  const auto spec = three_partitions();
  REQUIRE(spec.catalogue.switches.at("quantum-2").input_buffer == (1 << 20));
  testing::FabricProbe probe(spec, 512 * 1024);
  probe.send_at(0, 1, 0, 4, 4 << 20);  // node0.gpu0 to node1.gpu0, over rail 0
  probe.run();
  CHECK(probe.fabric().units_injected() == (4 << 20) / ((1 << 20) / 16));
}

TEST_CASE("a network switch's small input buffer cuts its paths no finer than 64 KiB", "[model][switch]") {
  auto spec = three_partitions();
  spec.catalogue.switches.at("quantum-2").input_buffer = 64 * 1024;  // a sixteenth would be 4 KiB
  testing::FabricProbe probe(spec, 512 * 1024);
  probe.send_at(0, 1, 0, 4, 4 << 20);
  probe.run();
  CHECK(probe.fabric().units_injected() == (4 << 20) / topo::kSmallestNetworkSegment);
}

namespace {

/// Streams of fixed-size chunks between GPUs, each with at most `window`
/// chunks in flight, as NCCL's FIFO steps run: a chunk is sent when one of
/// its stream's earlier chunks has arrived.
class WindowedStreams : public models::TransferCompletion {
 public:
  struct Stream {
    int source, destination;
    int chunks;
  };
  WindowedStreams(const topo::TopologySpec& spec, std::vector<Stream> streams, core::Bytes chunk, int window)
      : fabric_(spec, topo::FabricOptions{512 * 1024}), timers_("windowed_timers"), streams_(std::move(streams)), chunk_(chunk) {
    fabric_.set_completion(this);
    timers_.schedule(0, [this, window] {
      for (std::size_t s = 0; s < streams_.size(); ++s)
        for (int k = 0; k < window; ++k) send_next(s);
    });
  }
  void on_transfer_complete(std::uint64_t id, core::TimePs at) override {
    last_ = std::max(last_, at);
    send_next(stream_of_.at(id));
  }
  core::TimePs last_arrival() const { return last_; }

 private:
  void send_next(std::size_t s) {
    if (streams_[s].chunks == 0) return;
    --streams_[s].chunks;
    stream_of_[++sent_] = s;
    fabric_.send({sent_, streams_[s].source, streams_[s].destination, chunk_, chunk_, models::TransferKind::kPointToPoint,
                  static_cast<std::uint32_t>(s)});
  }
  topo::Fabric fabric_;
  core::TimerQueue timers_;
  std::vector<Stream> streams_;
  core::Bytes chunk_;
  std::map<std::uint64_t, std::size_t> stream_of_;
  std::uint64_t sent_ = 0;
  core::TimePs last_ = 0;
};

}  // namespace

TEST_CASE("a network switch input feeding a busy and an idle output keeps both fed (no segment-sized head-of-line stall)",
          "[model][switch]") {
  // NCCL's double tree over three nodes, as traffic on rail 0: node0 and node2 each send S to the
  // other and S/2 to node1, node1 S/2 to each, in 512 KiB chunks, two in flight per stream and
  // four streams per pair (channels). Max-min ends it at 1.5 S/B: node0's and node2's links carry
  // 1.5 S each way.
  const auto spec = three_partitions();
  const core::Bytes chunk = 512 * 1024;
  const int per_half = 16;  // chunks per stream for S/2: S = 4 streams x 2 x 16 x 512 KiB = 64 MiB
  const int node[] = {0, 4, 8};
  std::vector<WindowedStreams::Stream> streams;
  for (const auto& [from, to, halves] : std::vector<std::tuple<int, int, int>>{{0, 2, 2}, {0, 1, 1}, {2, 0, 2}, {2, 1, 1}, {1, 0, 1}, {1, 2, 1}})
    for (int k = 0; k < 4; ++k) streams.push_back({node[from], node[to], halves * per_half});
  WindowedStreams run(spec, streams, chunk, 2);
  core::run_to_completion();
  const double s_bytes = 4.0 * 2 * per_half * chunk;
  const double max_min_ps = 1.5 * s_bytes / infiniband_rate(spec) * 1e12;
  CHECK(static_cast<double>(run.last_arrival()) == Approx(max_min_ps).epsilon(0.03));
}
