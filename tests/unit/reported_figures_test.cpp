// fabsim validate's reported figures: plateaus a source gives in words.

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "sim/calibration/stock_systems.hpp"
#include "sim/cli/validate_command.hpp"
#include "sim/cli/validate_figures.hpp"

using fabsim::cli::parse_reported_busbw;
using fabsim::cli::plan_reported_figures;
using fabsim::cli::reported_figure_error;
using nlohmann::json;

TEST_CASE("a reported busbw is a number, a range or the leading figure of a sentence", "[figures]") {
  CHECK(parse_reported_busbw(json(480)) == std::pair{480.0, 480.0});
  CHECK(parse_reported_busbw(json("365-370")) == std::pair{365.0, 370.0});
  CHECK(parse_reported_busbw(json("~230 (expected peak at 8G)")) == std::pair{230.0, 230.0});
  CHECK(parse_reported_busbw(json("368.76")) == std::pair{368.76, 368.76});
  CHECK_FALSE(parse_reported_busbw(json("370-365")));  // a reversed range is no figure
  CHECK_FALSE(parse_reported_busbw(json("about half")));
  CHECK_FALSE(parse_reported_busbw(json(0)));
  CHECK_FALSE(parse_reported_busbw(json()));
  CHECK(parse_reported_busbw(json("230 GB/s")) == std::pair{230.0, 230.0});
  CHECK_FALSE(parse_reported_busbw(json("1.2.3")));
}

TEST_CASE("a hostile measurements file's long strings are read without recursion (no stack overflow)", "[figures]") {
  const std::string spaces(2'000'000, ' ');
  CHECK(parse_reported_busbw(json(spaces + "~" + spaces + "365" + spaces + "-" + spaces + "370")) == std::pair{365.0, 370.0});
  CHECK_FALSE(parse_reported_busbw(json(std::string(2'000'000, '9'))));
  const json doc = {{"collective_datasets",
                     {{{"id", "long"}, {"gpu", spaces + "H100"}, {"system", std::string(1'000'000, 'N')}, {"nodes", 1},
                       {"collective", "all_reduce"}, {"rows", {{{"gpus", spaces + "8" + spaces}, {"busbw_GBps", 480}}}}}}}};
  fabsim::cli::ValidateOptions options;
  json skipped = json::array();
  const auto figures = plan_reported_figures(doc, options, skipped);
  REQUIRE(figures.size() == 1);
  CHECK(figures[0].gpus == 8);
  CHECK(fabsim::calibration::single_node_stock_topology(std::string(1'000'000, 'N') + "VL H100").topology == "hgx-h100.json");
}

TEST_CASE("a reported figure's error is zero inside its range and in time terms outside it", "[figures]") {
  fabsim::cli::ReportedFigure f;
  f.low_GBps = 365;
  f.high_GBps = 370;
  CHECK(reported_figure_error(f, 366.5) == 0);
  CHECK(reported_figure_error(f, 400) == Approx(370.0 / 400 - 1));  // predicted faster: a shorter time, negative
  CHECK(reported_figure_error(f, 300) == Approx(365.0 / 300 - 1));
}

TEST_CASE("reported figures: what each row is predicted with, and why a row is not", "[figures]") {
  const json doc = json::parse(R"json({"collective_datasets": [
    {"id": "words", "gpu": "H100", "system": "8x H100 SXM", "gpus": 8, "nodes": 1, "collective": "all_reduce", "rows": [
      {"bytes": null, "algorithm": "Ring (NCCL_ALGO=RING)", "busbw_GBps": 370},
      {"bytes": null, "algorithm": "NVLS (default)", "busbw_GBps": "~480"},
      {"gpus": 5, "algorithm": "NVLS", "busbw_GBps": 420},
      {"gpus": "2-4", "algorithm": "NVLS", "busbw_GBps": "365-370"},
      {"system": "8x B300", "algorithm": "NVLS off", "busbw_GBps": 695},
      {"system": "8x H100", "algorithm": "NVLS disabled", "busbw_GBps": 368.76},
      {"bytes": null, "algorithm": null, "busbw_GBps": "fast"}]},
    {"id": "sweep", "gpu": "H100 SXM", "gpus": 8, "nodes": 1, "collective": "all_reduce",
     "rows": [{"bytes": 1024, "time_us": 20.0, "busbw_GBps": 0.1}]},
    {"id": "pcie", "gpu": "H100 PCIe", "gpus": 2, "nodes": 1, "collective": "all_reduce", "rows": [{"bytes": null, "busbw_GBps": 50}]},
    {"id": "cluster", "gpu": "B200", "gpus": 32, "nodes": 4, "collective": "all_reduce", "rows": [{"bytes": null, "busbw_GBps": 380}]},
    {"id": "roce", "gpu": "H100", "system": "4x HGX H100 nodes, 8x 400 Gb/s RoCE NICs each", "gpus": 32, "nodes": 4,
     "collective": "all_reduce", "rows": [{"bytes": null, "algorithm": "NVLS on", "busbw_GBps": 320}]}
  ]})json");
  fabsim::cli::ValidateOptions options;
  options.topology_dir = "topologies";
  json skipped = json::array();
  const auto figures = plan_reported_figures(doc, options, skipped);
  REQUIRE(figures.size() == 5);
  CHECK(figures[0].algorithm == "ring");
  CHECK(figures[0].gpus == 8);
  CHECK(figures[0].topology == "topologies/hgx-h100.json");
  CHECK(figures[0].gpu_model == "h100-sxm");
  CHECK(figures[1].algorithm == "auto");  // NCCL's default: the prediction checks fabsim's tuner too
  CHECK(figures[1].low_GBps == 480);
  CHECK(figures[2].gpus == 5);
  CHECK(figures[2].algorithm == "nvls");
  CHECK(figures[3].algorithm == "ring");  // NVLS disabled: NCCL's single-node large-size choice is Ring
  CHECK(figures[3].row_index == 5);
  CHECK(figures[3].nodes == 1);
  // Across nodes a multi-node stock file predicts the plateau: the RoCE rail fabric's first four nodes.
  CHECK(figures[4].id == "roce");
  CHECK(figures[4].nodes == 4);
  CHECK(figures[4].gpus == 32);
  CHECK(figures[4].algorithm == "auto");
  CHECK(figures[4].topology == "topologies/roce-rail-2048.json");
  // The sweep is validated per size, the B200 cluster has no stock system: neither is a figure.
  std::vector<std::string> reasons;
  for (const auto& s : skipped) reasons.push_back(s["id"].get<std::string>() + " " + std::to_string(s["row"].get<int>()) + ": " +
                                                  s["reason"].get<std::string>());
  REQUIRE(reasons.size() == 5);
  CHECK_THAT(reasons[0], Catch::StartsWith("words 3: GPU count \"2-4\""));
  CHECK(reasons[1] == "words 4: no stock topology for '8x B300'");
  CHECK(reasons[2] == "words 6: no busbw figure");
  CHECK(reasons[3] == "pcie 0: no stock topology for 'H100 PCIe '");
  CHECK(reasons[4] == "cluster 0: no stock topology for 'B200 ' on 4 nodes");
}

TEST_CASE("calibrate and validate read a single-node system description alike", "[figures]") {
  using fabsim::calibration::single_node_stock_topology;
  CHECK(single_node_stock_topology("H100 80GB HBM3 (SXM5) 8x H100 node").topology == "hgx-h100.json");
  CHECK(single_node_stock_topology("NVIDIA H200 8x HGX H200").gpu_model == "h200-sxm");
  CHECK(single_node_stock_topology("A100 (SXM) 8x A100 NVLink (NVSwitch) node").topology == "dgx-a100.json");
  CHECK(single_node_stock_topology("H100 PCIe with an NVLink bridge").topology.empty());
  CHECK(single_node_stock_topology("NVIDIA H100 NVL").topology.empty());  // the NVL card, not NVLink
  CHECK(single_node_stock_topology("MI300X").topology.empty());
  // A GB200 NVL72 rack is one NVLink domain of 72 GPUs, not an 8-GPU B200 board.
  const auto rack = single_node_stock_topology("GB200 GB200 NVL72 rack (18 compute trays of 4 GPUs)");
  CHECK(rack.topology == "gb200-nvl72.json");
  CHECK(rack.gpu_model == "gb200");
  CHECK(single_node_stock_topology("B200 8x HGX B200").topology == "hgx-b200.json");
}

TEST_CASE("a measured multi-node system maps to the stock file of its cloud machine type", "[figures]") {
  using fabsim::calibration::multi_node_stock_topology;
  CHECK(multi_node_stock_topology("H100 2x GCP A3 Mega (8x H100 80GB each)", 2).topology == "gcp-a3mega-2node.json");
  const auto ultra = multi_node_stock_topology("H200 2x GCP A3 Ultra (a3-ultragpu-8g)", 2);
  CHECK(ultra.topology == "gcp-a3ultra-2node.json");
  CHECK(ultra.gpu_model == "h200-sxm");
  CHECK(multi_node_stock_topology("H200 4x GCP A3 Ultra", 4).topology.empty());  // the stock file has two VMs
  CHECK(multi_node_stock_topology("B200 4x AWS p6-b200.48xlarge", 4).topology.empty());
  // GB200 NVL72 racks: a rack is a node (MNNVL); the stock clusters have 2 and 20 racks.
  const auto racks = multi_node_stock_topology("GB200 2 GB200 NVL72 racks on InfiniBand", 2);
  CHECK(racks.topology == "gb200-nvl72-2rack.json");
  CHECK(racks.gpu_model == "gb200");
  CHECK(multi_node_stock_topology("GB200 20 GB200 NVL72 racks on InfiniBand", 20).topology == "gb200-nvl72-20rack.json");
  CHECK(multi_node_stock_topology("GB200 4 GB200 NVL72 racks on InfiniBand", 4).topology.empty());
  // One NVLink partition of each of three racks (nccl#1801): a partition is a node.
  const auto nvl4 = multi_node_stock_topology("GB200 3 GB200 NVL72 racks, one NVL4 NVLink partition of each (1 compute tray)", 3);
  CHECK(nvl4.topology == "gb200-nvl4-3rack.json");
  CHECK(nvl4.gpu_model == "gb200");
  CHECK(multi_node_stock_topology("GB200 3 GB200 NVL72 racks, one NVL8 NVLink partition of each", 3).topology == "gb200-nvl8-3rack.json");
  CHECK(multi_node_stock_topology("GB200 4 GB200 NVL72 racks, one NVL8 NVLink partition of each", 4).topology.empty());
  // HGX H100 nodes on 400 Gb/s RoCE: the rail fabric's first nodes (64 share a leaf per rail).
  const auto roce = multi_node_stock_topology("H100 4x HGX H100 nodes, 8x 400 Gb/s RoCE NICs each", 4);
  CHECK(roce.topology == "roce-rail-2048.json");
  CHECK(roce.gpu_model == "h100-sxm");
  CHECK(multi_node_stock_topology("H100 2x HGX H100, 8x 200 Gb/s RoCE", 2).topology.empty());  // no 200G RoCE file
  CHECK(multi_node_stock_topology("H100 128x HGX H100, 8x 400 Gb/s RoCE", 128).topology.empty());  // beyond one leaf per rail
  // The rate, not any "400" in the text: 4000-series hosts on 200 Gb/s RoCE have no stock file.
  CHECK(multi_node_stock_topology("H100 2x HGX H100 (PowerEdge XE4000), 8x 200 Gb/s RoCE", 2).topology.empty());
  CHECK(multi_node_stock_topology("H100 2x HGX H100, 8x 400G RoCE", 2).topology == "roce-rail-2048.json");
}
