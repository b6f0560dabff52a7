#include <catch2/catch.hpp>

#include "test_support.hpp"
#include "traces/collectives/nccl_tuner_tables.hpp"
#include "traces/collectives/tuner.hpp"

using namespace fabsim;
using traces::CollectiveOp;
using traces::NcclVersion;

using testing::h100;

TEST_CASE("NCCL versions parse as releases, package names and the measurement files write them", "[tuner][nccl-version]") {
  CHECK(traces::parse_nccl_version("2.26.2") == NcclVersion{2, 26, 2});
  CHECK(traces::parse_nccl_version("2.26") == NcclVersion{2, 26, 0});
  CHECK(traces::parse_nccl_version("2.28.9-1") == NcclVersion{2, 28, 9});
  CHECK(traces::parse_nccl_version("2.29.2 (log header nccl-library=22902)") == NcclVersion{2, 29, 2});
  for (const char* bad : {"", "2", "2.", "v2.26.2", "2.26.x", "2..1", "2.26.2x", "99999.1", "2.26.2-", "latest"}) {
    INFO(bad);
    CHECK_FALSE(traces::parse_nccl_version(bad));
  }
  CHECK(NcclVersion{2, 28, 7} < NcclVersion{2, 28, 9});
  CHECK(traces::nccl_version_name({2, 26, 2}) == "2.26.2");
}

TEST_CASE("each NCCL release takes the tuner table of its run of releases and none before 2.19.1", "[tuner][nccl-version]") {
  const auto release = [](int minor, int patch) { return traces::nccl_tuner_release(NcclVersion{2, minor, patch}); };
  CHECK(release(18, 6) == nullptr);
  REQUIRE(release(19, 1) != nullptr);
  CHECK(release(20, 5)->nvls_nvlink_latency_us == 23);
  CHECK(release(21, 5)->nvls_nvlink_latency_us == 25);
  // Tree Simple: base 0, 28 us per hop up to 2.22; 8.4, 4.0 and 14 from 2.23.4.
  CHECK(release(22, 3)->tree_simple_net_latency_us == 28);
  CHECK(release(26, 2)->tree_simple_net_latency_us == 14);
  CHECK(release(26, 2)->nvls_pricing == traces::NcclNvlsPricing::kGraphSpeed);
  CHECK(release(28, 3)->nvls_pricing == traces::NcclNvlsPricing::kPerHead);
  // hwLat NET NVLSTree: 14 us up to 2.28.7, 20.9 from 2.28.9.
  CHECK(release(28, 7)->nvls_tree_net_latency_us == 14);
  CHECK(release(28, 9)->nvls_tree_net_latency_us == 20.9);
  CHECK(release(28, 8)->nvls_tree_net_latency_us == 14);  // an untagged release between: the earlier table
  CHECK(release(30, 7)->blackwell.nvls_tree_per_channel[2] == 80.0);
  CHECK(release(29, 7)->blackwell.nvls_tree_per_channel[2] == 43.8);
  CHECK(release(29, 2)->blackwell.ring_ll128_per_channel[0] == 34.5);
  // A later release than any read, and none at all, take the newest table.
  CHECK(release(31, 0) == &traces::newest_nccl_tuner_release());
  CHECK(traces::nccl_tuner_release(std::nullopt) == &traces::newest_nccl_tuner_release());
  CHECK(traces::nccl_tuner_description(NcclVersion{2, 26, 2}) == "2.26.2 (NCCL 2.23.4-2.26.6 tuner constants)");
  CHECK(traces::nccl_tuner_description(std::nullopt) == "2.30.7, the newest read (NCCL 2.30.3-2.30.7 tuner constants)");
  CHECK(traces::nccl_tuner_description(NcclVersion{2, 18, 6}) == "2.18.6 (no tuner table: older than 2.19.1)");
}

TEST_CASE("a release newer than any read is warned of, since its choices take an older release's constants", "[tuner][nccl-version]") {
  CHECK_FALSE(traces::nccl_version_warning(std::nullopt));
  CHECK_FALSE(traces::nccl_version_warning(NcclVersion{2, 26, 2}));
  CHECK_FALSE(traces::nccl_version_warning(NcclVersion{2, 30, 7}));  // the newest read
  const auto later = traces::nccl_version_warning(NcclVersion{2, 31, 2});
  REQUIRE(later);
  CHECK(later->find("NCCL 2.31.2 is newer than the newest release whose tuner fabsim has read (2.30.7)") == 0);
}

TEST_CASE("NCCL's graph search speed is the largest of its steps a path carries", "[tuner][nccl-version]") {
  CHECK(traces::nccl_search_speed_gbps(50) == 48);  // a 400 Gb/s NIC per head
  CHECK(traces::nccl_search_speed_gbps(25) == 24);  // 200 Gb/s
  CHECK(traces::nccl_search_speed_gbps(12.5) == 12);
  CHECK(traces::nccl_search_speed_gbps(0.01) == 0.12);
}

TEST_CASE("NCCL 2.26 prices NVLSTree by the graph's speed and picks it from 1 MiB on 2 HGX H100 nodes, where 2.30 takes Tree LL128",
          "[tuner][nccl-version]") {
  traces::TunerRequest request{CollectiveOp::kAllReduce, 16, 0, {}, {}, {}, false};
  request.nodes = 2;
  request.network_bus_gbps = 400;
  request.nvls_in_every_node = true;
  request.nccl = traces::nccl_tuner_release(NcclVersion{2, 26, 2});
  // Latency: NVLink 25 + 2 x log2(2) x NET 14 = 53 us. Bandwidth: 8 heads x 48 GB/s (the search's speed for a
  // 50 GB/s NIC) x 5/6 = 320 GB/s algbw on 2 nodes, half that beyond.
  CHECK(traces::nccl_nvls_tree_model_time_us(h100(), request) == Approx(53.0).margin(1e-9));
  request.bytes = 1ull << 30;
  CHECK(traces::nccl_nvls_tree_model_time_us(h100(), request) == Approx(53.0 + (1ull << 30) / (1000.0 * 320)).epsilon(1e-9));
  request.nodes = 4;
  request.ranks = 32;
  CHECK(traces::nccl_nvls_tree_model_time_us(h100(), request) == Approx(25 + 4 * 14 + (1ull << 30) / (1000.0 * 160)).epsilon(1e-9));

  request.nodes = 2;
  request.ranks = 16;
  request.bytes = 1 << 20;
  CHECK(traces::choose(h100(), request).algorithm == traces::Algorithm::kNvlsTree);
  request.nccl = traces::nccl_tuner_release(NcclVersion{2, 30, 7});
  CHECK(traces::choose(h100(), request).algorithm == traces::Algorithm::kTree);
  CHECK(traces::choose(h100(), request).protocol == topo::Protocol::kLL128);
}

TEST_CASE("PAT is not among NCCL 2.22's choices: it came in 2.23.4", "[tuner][nccl-version]") {
  traces::TunerRequest request{CollectiveOp::kAllGather, 16, 64 << 10, {}, {}, {}, false};
  request.nodes = 16;
  request.network_bus_gbps = 50;
  CHECK(traces::choose(h100(), request).algorithm == traces::Algorithm::kPat);
  request.nccl = traces::nccl_tuner_release(NcclVersion{2, 22, 3});
  CHECK(traces::choose(h100(), request).algorithm == traces::Algorithm::kRing);
}

TEST_CASE("NCCL corrects a tree's bandwidth from 64 B up to 512 MiB only, so a forced tree takes Simple at 16 GiB",
          "[tuner][nccl-version]") {
  using topo::Protocol;
  // NCCL's log2i rounds down and is -1 for 0.
  CHECK(traces::nccl_log2i(0) == -1);
  CHECK(traces::nccl_log2i(1) == 0);
  CHECK(traces::nccl_log2i(3) == 1);
  CHECK(traces::nccl_log2i(16ull << 30) == 34);
  // treeCorrectionFactor's columns are log2(bytes / 64) = 0 .. 22; ncclTopoGetAlgoTime applies none outside.
  CHECK(traces::nccl_tree_correction(Protocol::kSimple, 32) == 1.0);
  CHECK(traces::nccl_tree_correction(Protocol::kSimple, 64) == 0.9);
  CHECK(traces::nccl_tree_correction(Protocol::kLL, 1 << 20) == 0.5);  // 2^14 x 64 B
  CHECK(traces::nccl_tree_correction(Protocol::kSimple, 256ull << 20) == 0.9);
  CHECK(traces::nccl_tree_correction(Protocol::kLL128, 256ull << 20) == 1.0);
  CHECK(traces::nccl_tree_correction(Protocol::kSimple, 512ull << 20) == 1.0);
  CHECK(traces::nccl_tree_correction(Protocol::kSimple, 16ull << 30) == 1.0);

  // Three nodes, the tree forced (nccl#1801's runs): Simple's 0.92 x the graph's bandwidth
  // beats LL128's 0.92 x 120/128 once no correction applies; at 256 MiB Simple's 0.9 tips it.
  traces::TunerRequest request{CollectiveOp::kAllReduce, 24, 16ull << 30, {}, {}, traces::Algorithm::kTree, false};
  request.nodes = 3;
  request.network_bus_gbps = 8 * 50;
  request.nccl = traces::nccl_tuner_release(NcclVersion{2, 27, 3});
  CHECK(traces::choose(h100(), request).protocol == Protocol::kSimple);
  request.bytes = 256ull << 20;
  CHECK(traces::choose(h100(), request).protocol == Protocol::kLL128);
}

TEST_CASE("NCCL's tree latency counts floor(log2) network levels: three nodes cost what two do, four one level more",
          "[tuner][nccl-version]") {
  // tuning.cc: 2 x ((nRanks/nNodes - 1) x intraLat + log2i(nNodes) x interLat), log2i rounding down.
  traces::TunerRequest request{CollectiveOp::kAllReduce, 16, 8, {}, {}, traces::Algorithm::kTree, false};
  request.network_bus_gbps = 8 * 50;
  request.nccl = traces::nccl_tuner_release(NcclVersion{2, 27, 3});
  const auto time_us = [&](int nodes) {
    request.nodes = nodes;
    request.ranks = 8 * nodes;
    return traces::nccl_tree_model_time_us(h100(), request, topo::Protocol::kLL);
  };
  const double two = time_us(2), three = time_us(3), four = time_us(4);
  CHECK(three == Approx(two).margin(0.01));
  CHECK(four - two == Approx(2 * 5.0).margin(0.01));  // hwLat[NET][Tree][LL] = 5.0 us per level, up and down
}
