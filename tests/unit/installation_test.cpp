// The pieces an installed fabsim rests on: finding its data, stock files by
// name, and the content hash its outputs carry.

#include <catch2/catch.hpp>

#include <cstdlib>
#include <filesystem>

#include "sim/core/data_root.hpp"
#include "sim/core/error.hpp"
#include "sim/core/sha256.hpp"
#include "test_support.hpp"

using fabsim::core::ConfigError;
using fabsim::core::StockKind;

TEST_CASE("SHA-256 gives FIPS 180-4's digests, across the one- and two-block paddings", "[unit][install]") {
  using fabsim::core::sha256_hex;
  CHECK(sha256_hex("") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  CHECK(sha256_hex("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  // 56 bytes: the length no longer fits the first block.
  CHECK(sha256_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq") ==
        "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  CHECK(sha256_hex(std::string(1000000, 'a')) == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST_CASE("the data root is found beside the executable, and FABSIM_DATA_DIR overrides it", "[unit][install]") {
  // The test binary sits in the build folder's tests/, so ../share/fabsim is the build folder's link to the sources.
  ::unsetenv("FABSIM_DATA_DIR");
  const auto root = fabsim::core::data_root();
  CHECK(std::filesystem::equivalent(root / "configs/hardware/catalogue.json",
                                    fabsim::testing::source_path("configs/hardware/catalogue.json")));
  ::setenv("FABSIM_DATA_DIR", fabsim::testing::source_path("").c_str(), 1);
  CHECK(std::filesystem::equivalent(fabsim::core::data_root(), fabsim::testing::source_path("")));
  ::setenv("FABSIM_DATA_DIR", "/nonexistent", 1);
  try {
    (void)fabsim::core::data_root();
    FAIL("a FABSIM_DATA_DIR without the catalogue was accepted");
  } catch (const ConfigError& e) {
    CHECK_THAT(e.items().at(0).to_string(),
               Catch::Contains("FABSIM_DATA_DIR: '/nonexistent' does not hold fabsim's data (expected configs/hardware/catalogue.json under it)"));
  }
  ::unsetenv("FABSIM_DATA_DIR");
}

TEST_CASE("stock names resolve to their files, a file wins, and an unknown name lists the valid ones", "[unit][install]") {
  ::unsetenv("FABSIM_DATA_DIR");
  const auto h100 = fabsim::core::resolve_stock(StockKind::kTopology, "hgx-h100", "--topology");
  CHECK(std::filesystem::equivalent(h100, fabsim::testing::source_path("topologies/hgx-h100.json")));
  CHECK(fabsim::core::resolve_stock(StockKind::kTopology, "hgx-h100.json", "--topology") == h100);
  CHECK(std::filesystem::equivalent(fabsim::core::resolve_stock(StockKind::kScenario, "hgx-h100-allreduce", "scenario"),
                                    fabsim::testing::source_path("configs/scenarios/hgx-h100-allreduce.json")));
  CHECK(std::filesystem::equivalent(fabsim::core::resolve_stock(StockKind::kTrace, "dp8-ddp-step", "trace"),
                                    fabsim::testing::source_path("configs/traces/dp8-ddp-step.json")));
  // A path with a folder is the loader's to open (or to refuse), never a stock name.
  CHECK(fabsim::core::resolve_stock(StockKind::kTopology, "./hgx-h100", "--topology") == "./hgx-h100");
  // A file of that name in the working directory wins.
  const auto here = std::filesystem::current_path();
  const auto dir = std::filesystem::path(fabsim::testing::write_temp("hgx-h100", "{}")).parent_path();
  std::filesystem::current_path(dir);
  CHECK(fabsim::core::resolve_stock(StockKind::kTopology, "hgx-h100", "--topology") == "hgx-h100");
  std::filesystem::current_path(here);
  try {
    (void)fabsim::core::resolve_stock(StockKind::kTopology, "hgx-h999", "--topology");
    FAIL("an unknown stock name was accepted");
  } catch (const ConfigError& e) {
    const std::string message = e.items().at(0).to_string();
    CHECK_THAT(message, Catch::StartsWith("error: command line: --topology: 'hgx-h999' is neither a file nor a stock topology (stock "
                                          "topologies: aws-p5-32node, dgx-a100, gb200-nvl4-3rack, gb200-nvl72, gb200-nvl72-20rack, gb200-nvl72-2rack, gb200-nvl8-3rack, "
                                          "gcp-a3mega-2node, gcp-a3ultra-2node, hgx-b200, "));
    CHECK_THAT(message, Catch::Contains("`fabsim list topologies` describes them"));
  }
  // Every stock kind lists its files, sorted.
  const auto topologies = fabsim::core::stock_files(StockKind::kTopology);
  REQUIRE(topologies.size() >= 11);
  CHECK(std::is_sorted(topologies.begin(), topologies.end(), [](const auto& a, const auto& b) { return a.name < b.name; }));
  CHECK(fabsim::core::stock_files(StockKind::kSweep).size() == 5);
}
