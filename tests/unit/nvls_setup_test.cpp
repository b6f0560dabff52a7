#include <catch2/catch.hpp>

#include "test_support.hpp"
#include "traces/collectives/nvls_setup.hpp"

using namespace fabsim;

namespace {

const traces::NcclTunerRelease& setup_release(int major, int minor, int patch) {
  return *traces::nccl_tuner_release(traces::NcclVersion{major, minor, patch});
}

topo::NvlsParams nvls_with_channels(int channels) {
  auto p = testing::nvls_params();
  p.channels = channels;
  return p;
}

}  // namespace

TEST_CASE("NVLS channels on Hopper: the catalogue's in every release, one node or many", "[tuner][nvls]") {
  const auto hopper = nvls_with_channels(16);
  for (const auto* r : {&setup_release(2, 21, 5), &setup_release(2, 26, 2), &setup_release(2, 30, 7)}) {
    CHECK(traces::nccl_nvls_setup(hopper, "hopper", *r, {1, 8, 0, true}).channels == 16);
    const auto across = traces::nccl_nvls_setup(hopper, "hopper", *r, {4, 8, 50, true});
    CHECK(across.channels == 16);
    CHECK(across.tree_max_chunk == 64 * 1024);  // NCCL_NVLSTREE_MAX_CHUNKSIZE's default from 4 nodes
    CHECK(traces::nccl_nvls_setup(hopper, "hopper", *r, {2, 8, 50, true}).tree_max_chunk == 128 * 1024);
  }
}

TEST_CASE("NVLS channels on Blackwell follow NCCL's release: 32 up to 2.26, then 24 in one NVLink domain", "[tuner][nvls]") {
  const auto blackwell = nvls_with_channels(24);
  // An NVL72 rack on its own (MNNVL: one node of 72 ranks).
  CHECK(traces::nccl_nvls_setup(blackwell, "blackwell", setup_release(2, 26, 2), {1, 72, 0, true}).channels == 32);
  CHECK(traces::nccl_nvls_setup(blackwell, "blackwell", setup_release(2, 27, 3), {1, 72, 0, true}).channels == 24);
  CHECK(traces::nccl_nvls_setup(blackwell, "blackwell", setup_release(2, 30, 7), {1, 72, 0, true}).channels == 24);
  // Across nodes 2.26 to 2.29 run NVLS_NCHANNELS_SM100, 32, whatever the NICs.
  for (const auto* r : {&setup_release(2, 26, 2), &setup_release(2, 27, 3), &setup_release(2, 29, 7)}) {
    const auto s = traces::nccl_nvls_setup(blackwell, "blackwell", *r, {3, 8, 50, true});
    CHECK(s.channels == 32);
    CHECK(s.chunk == 128 * 1024);
    CHECK(s.tree_max_chunk == 128 * 1024);
    CHECK(traces::nccl_nvls_setup(blackwell, "blackwell", *r, {8, 8, 50, true}).tree_max_chunk == 64 * 1024);
  }
}

TEST_CASE("From NCCL 2.30.3 Blackwell's NVLSTree across nodes takes ncclNvlsTreeSm100Tuning's channels and chunks",
          "[tuner][nvls]") {
  const auto blackwell = nvls_with_channels(24);
  const auto& r = setup_release(2, 30, 7);
  auto setup = [&](int nodes, int ppn, double nic, bool near) { return traces::nccl_nvls_setup(blackwell, "blackwell", r, {nodes, ppn, nic, near}); };
  // Two HGX B200 nodes, 400 Gb/s NICs on the GPUs' PCIe switches: 32 channels, 64 KiB tree chunks.
  auto s = setup(2, 8, 50, true);
  CHECK(s.channels == 32);
  CHECK(s.chunk == 128 * 1024);
  CHECK(s.tree_max_chunk == 64 * 1024);
  CHECK(setup(2, 8, 50, false).tree_max_chunk == 128 * 1024);
  // Two trays of four GPUs: 256 KiB chunks.
  s = setup(2, 4, 50, true);
  CHECK(s.chunk == 256 * 1024);
  CHECK(s.tree_max_chunk == 256 * 1024);
  // Two NVL72 racks: 72 ranks per node.
  CHECK(setup(2, 72, 50, true).tree_max_chunk == 64 * 1024);
  // Beyond two nodes at 400 Gb/s: 24 channels.
  s = setup(20, 72, 50, true);
  CHECK(s.channels == 24);
  CHECK(s.tree_max_chunk == 64 * 1024);
  CHECK(setup(4, 8, 50, false).tree_max_chunk == 128 * 1024);
  // 800 Gb/s NICs: 24 channels and 256 KiB chunks at 8 ranks per node; 32 channels in a rack.
  s = setup(4, 8, 100, true);
  CHECK(s.channels == 24);
  CHECK(s.chunk == 256 * 1024);
  CHECK(setup(4, 72, 100, true).channels == 32);
  CHECK(setup(4, 16, 100, true).tree_max_chunk == 128 * 1024);
  // Slower NICs: NVLS_NCHANNELS_SM100 and the default tree chunk.
  s = setup(4, 8, 25, true);
  CHECK(s.channels == 32);
  CHECK(s.tree_max_chunk == 64 * 1024);
  CHECK(setup(3, 8, 25, true).tree_max_chunk == 128 * 1024);
}
