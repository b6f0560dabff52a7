// The README's accuracy claims (its generated blocks, written by
// scripts/readme-claims), asserted as tightly as they are stated: error
// medians and worst errors may grow by 0.5 points at most, absolute figures
// may move by 0.5%. A model change that makes a figure worse fails here until
// the claim is updated in the same commit.
//
// "accuracy:" cases compare with data no parameter was fitted on (out of
// sample). "consistency:" cases compare with the data a parameter was fitted
// or set from: they catch a broken fit, and are never counted as validation.

#include <catch2/catch.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <map>
#include <utility>
#include <tuple>

#include "test_support.hpp"

using fabsim::testing::run_fabsim;
using fabsim::testing::source_path;
using nlohmann::json;

namespace {

constexpr double kErrorMargin = 0.005;   // 0.5 points on an error
constexpr double kFigureMargin = 0.005;  // 0.5% on an absolute figure

/// `fabsim validate` on the published measurements, with `extra` arguments.
/// Plain and --refit runs read the JSON of the one `validate --refit` run ctest
/// makes for every case (FABSIM_VALIDATE_JSON, its fixture), which holds both;
/// run alone, a case runs validate itself.
json validate(const std::string& extra = "") {
  if (const char* shared = std::getenv("FABSIM_VALIDATE_JSON"); shared != nullptr && (extra.empty() || extra == "--refit")) {
    std::ifstream in(shared);
    INFO("FABSIM_VALIDATE_JSON=" << shared);
    REQUIRE(in);
    return json::parse(in);
  }
  const auto r = run_fabsim("validate --measurements " + source_path("configs/measurements/published-measurements.json") + " --json " + extra);
  REQUIRE(r.exit_code == 0);
  return json::parse(r.out);
}

json rows(const std::string& topology, const std::string& args) {
  const auto r = run_fabsim("nccl-test --topology " + source_path("topologies/" + topology + ".json") + " " + args + " --format json");
  REQUIRE(r.exit_code == 0);
  return json::parse(r.out)["rows"];
}

double busbw(const std::string& topology, const std::string& args) { return rows(topology, args)[0]["busbw_GBps"].get<double>(); }

/// A claimed error group: sizes counted, median and worst |error| as the README states them.
struct Claim {
  std::string sample, scope, gpu, regime;
  std::size_t sizes;
  double median, worst;
};

/// Every group of `summary` whose sample starts with `sample_prefix` is claimed, and holds its claim.
void check_claims(const json& summary, const std::string& sample_prefix, const std::vector<Claim>& claims) {
  std::map<std::tuple<std::string, std::string, std::string, std::string>, const json*> groups;
  for (const auto& g : summary)
    if (g["sample"].get<std::string>().rfind(sample_prefix, 0) == 0) groups[{g["sample"], g["scope"], g["gpu"], g["regime"]}] = &g;
  CHECK(groups.size() == claims.size());
  for (const auto& c : claims) {
    const auto it = groups.find({c.sample, c.scope, c.gpu, c.regime});
    INFO(c.sample << " " << c.scope << " " << c.gpu << " " << c.regime);
    REQUIRE(it != groups.end());
    const json& g = *it->second;
    INFO("sizes " << g["sizes"] << ", median " << 100 * g["median_error"].get<double>() << "%, worst "
                  << 100 * g["worst_error"].get<double>() << "% at " << g["worst_at"]);
    CHECK(g["sizes"].get<std::size_t>() == c.sizes);
    CHECK(g["median_error"].get<double>() <= c.median + kErrorMargin);
    CHECK(g["worst_error"].get<double>() <= c.worst + kErrorMargin);
  }
}

void check_figure(double value, double claimed) {
  INFO("fabsim " << value << ", claimed " << claimed);
  CHECK(std::abs(value / claimed - 1) <= kFigureMargin);
}

}  // namespace

TEST_CASE("accuracy: out-of-sample errors are the README's (H100 bandwidth-bound median 1.3%, A100 P2P 19.6%, B200 two-rank LL128 33.9%, one A3 Mega VM's "
          "8 GPUs 16.8% / 17.6% below 64 MiB, multi-node over InfiniBand and TCPXO 1.8% / 12.3% / 3.2%, GB200 across racks 17.4%, worst 77% on 20 NVL72 racks)",
          "[accuracy]") {
  const json doc = validate();
  check_claims(doc["summary"], "out-of-sample",
               {{"out-of-sample", "single node", "H100", "latency-bound", 1, 0.168, 0.168},
                {"out-of-sample", "single node", "H100", "mid", 2, 0.176, 0.197},
                {"out-of-sample", "single node", "H100", "bandwidth-bound", 34, 0.013, 0.097},
                {"out-of-sample", "single node", "A100", "bandwidth-bound", 4, 0.196, 0.523},
                // nccl#2343's two B200 ranks, Ring LL128 forced at 1 GiB: fabsim's per-CTA LL128 rate
                // gives 580 GB/s where 384 is measured.
                {"out-of-sample", "single node", "B200", "bandwidth-bound", 1, 0.339, 0.339},
                // nccl-tests#309's InfiniBand NDR sweeps: the VMs on 4 nodes and the second cluster on 8
                // (the bare-metal 2-node one fitted the one-process-per-GPU base and LL's staging rate, the
                // second cluster's 2 and 4 nodes NVLSTree's efficiencies) and the A3 Mega all-gather.
                // Rows whose two timings are over 15% apart are not counted (3 latency-bound, 5 mid).
                {"out-of-sample", "multi-node", "H100", "latency-bound", 13, 0.018, 0.062},
                {"out-of-sample", "multi-node", "H100", "mid", 16, 0.123, 0.338},
                {"out-of-sample", "multi-node", "H100", "bandwidth-bound", 25, 0.032, 0.153},
                // CoreWeave's 2- and 20-rack NVL72 sweeps (NVLSTree; the single rack fitted GB200's NVLS
                // efficiency): 2 racks 4-36% fast, 20 racks 52-77% fast; nccl#1801's three NVL4 and NVL8
                // partitions at 16 GiB: the ring 5-6% slow, the tree (Simple, as NCCL's tuner prices it
                // there, at the segment level) 3% and 5% slow.
                {"out-of-sample", "multi-node", "GB200", "bandwidth-bound", 16, 0.174, 0.772}});
  // How many rows each multi-node median speaks for: sizes within issue 15's 10% target.
  for (const auto& g : doc["summary"])
    if (g["sample"] == "out-of-sample" && g["scope"] == "multi-node" && g["gpu"] == "H100") {
      INFO(g.dump());
      const std::map<std::string, int> within = {{"latency-bound", 13}, {"mid", 7}, {"bandwidth-bound", 22}};
      CHECK(g["within_10_percent"].get<int>() >= within.at(g["regime"].get<std::string>()));
    }
  // The latency-bound rows by launch: the per-call base was fitted on one process driving 4 GPUs
  // (nccl-tests -g 4) and, for one process per GPU (-g 1), on the 2-node InfiniBand sweep; every
  // held-out latency-bound row across nodes ran one process per GPU.
  std::map<std::pair<std::string, int>, json> launches;
  for (const auto& g : doc["latency_by_launch"]) launches[{g["sample"], g["gpus_per_process"].is_null() ? 0 : g["gpus_per_process"].get<int>()}] = g;
  REQUIRE(launches.count({"in-sample", 4}) == 1);
  CHECK(launches[{"in-sample", 4}]["sizes"] == 38);
  CHECK(launches[{"in-sample", 4}]["median_error"].get<double>() <= 0.007 + kErrorMargin);
  REQUIRE(launches.count({"out-of-sample", 1}) == 1);
  REQUIRE(launches.count({"in-sample", 1}) == 1);
  CHECK(launches[{"in-sample", 1}]["sizes"] == 12);
  CHECK(launches[{"in-sample", 1}]["median_error"].get<double>() <= 0.026 + kErrorMargin);
  CHECK(launches[{"out-of-sample", 1}]["sizes"] == 13);
  CHECK(launches[{"out-of-sample", 1}]["median_error"].get<double>() <= 0.018 + kErrorMargin);
  CHECK(launches[{"out-of-sample", 8}]["sizes"] == 1);
  // Every family together (README: 3.1% and 2.1%).
  CHECK(doc["out_of_sample_pooled"]["bandwidth-bound"].get<double>() <= 0.031 + kErrorMargin);
  CHECK(doc["out_of_sample_pooled"]["latency-bound"].get<double>() <= 0.021 + kErrorMargin);
  // The rows left out, each with both of its timings: 14 of the file's 249 rows that have two.
  CHECK(doc["left_out_rows"].size() == 14);
  for (const auto& row : doc["left_out_rows"])
    if (row["id"] == "h100_64gpu_8node_all_reduce_ib400_cluster2_issue309")
      CHECK(row["reason"] == "out of place 1272.40 us, in place 321.40 us: 296% apart");
  // The EFA set stays skipped with its reason; both A3 Mega runs are predicted.
  std::map<std::string, std::string> skipped;
  for (const auto& s : doc["skipped"]) skipped[s["id"]] = s["reason"];
  CHECK_THAT(skipped["b200_32gpu_4node_all_reduce_torchbench_p6_efa"], Catch::StartsWith("per-size rows give busbw only, no time"));
  CHECK(skipped.count("h100_16gpu_2node_all_reduce_gcp_a3mega") == 0);
  CHECK(skipped.count("h100_16gpu_2node_all_gather_gcp_a3mega_tcpxo_nccl2.28") == 0);
  // nccl-tests#309's InfiniBand sweeps run on the stock NDR files: 2 nodes on hgx-h100-2node, 4 and 8 on the fat tree's
  // first nodes; the bare-metal pair fitted the one-process-per-GPU base and the second cluster's 4 nodes NVLSTree's
  // network efficiency beyond two nodes (in-sample), the others are held out.
  for (const char* id : {"h100_16gpu_2node_all_reduce_ib_ndr_nccl2.26_issue309", "h100_32gpu_4node_all_reduce_ib_ndr_vmware_nccl2.26_issue309",
                         "h100_32gpu_4node_all_reduce_ib400_cluster2_issue309", "h100_64gpu_8node_all_reduce_ib400_cluster2_issue309"}) {
    INFO(id);
    CHECK(skipped.count(id) == 0);
    std::string sample;
    for (const auto& ds : doc["datasets"])
      if (ds["id"] == id) sample = ds["sample"];
    const bool fitted = std::string(id) == "h100_16gpu_2node_all_reduce_ib_ndr_nccl2.26_issue309" ||
                        std::string(id) == "h100_32gpu_4node_all_reduce_ib400_cluster2_issue309";
    CHECK(sample == (fitted ? "in-sample" : "out-of-sample"));
  }
  // Repeats of one run count once: the 4-GPU Ring and auto sets repeat the fitted sweep's run.
  for (const auto& ds : doc["datasets"])
    if (ds["id"] == "h100_sxm_4gpu_all_reduce_auto_256M-8G_nccl2.29")
      for (const auto& row : ds["rows"]) CHECK_FALSE(row["counted"].get<bool>());
}

TEST_CASE("accuracy: issue 15's targets per data set: 15 of 27 out-of-sample checks met (the 4-node VMware run 1.5% from 1 KiB, "
          "nccl#1801's trees 2.7% and 2.5%, but not the second cluster's 8 nodes (5.1% from 64 MiB), the NVL72 racks, "
          "nccl#1801's rings at 16 GiB and nccl#2343's B200 LL128), "
          "each median the one of its counted rows",
          "[accuracy]") {
  const json doc = validate();
  // Each check's median, recomputed from the data set's counted rows.
  std::map<std::string, const json*> datasets;
  for (const auto& ds : doc["datasets"]) datasets[ds["id"]] = &ds;
  std::map<std::string, std::pair<int, int>> met_of;  // sample -> (met, checks)
  std::map<std::pair<std::string, std::string>, const json*> checks;
  for (const auto& t : doc["targets"]) {
    const std::string id = t["id"], range = t["range"];
    INFO(id << " " << range);
    checks[{id, range}] = &t;
    auto& [met, total] = met_of[t["sample"]];
    ++total;
    met += t["met"].get<bool>() ? 1 : 0;
    REQUIRE(datasets.count(id) == 1);
    const bool multi_node = t["scope"] == "multi-node";
    std::vector<double> errors;
    for (const auto& row : (*datasets[id])["rows"]) {
      if (!row["counted"].get<bool>()) continue;
      const auto bytes = row["bytes"].get<std::uint64_t>();
      const bool in_range = range == "from 1 KiB" ? bytes >= 1024 : range == "below 1 MiB" ? bytes < (1u << 20) : bytes >= (64u << 20);
      if (in_range) errors.push_back(std::abs(row["error"].get<double>()));
    }
    CHECK(((range == "from 1 KiB") == multi_node || range == "from 64 MiB"));
    REQUIRE(errors.size() == t["sizes"].get<std::size_t>());
    std::sort(errors.begin(), errors.end());
    const std::size_t m = errors.size() / 2;
    const double median = errors.size() % 2 ? errors[m] : 0.5 * (errors[m - 1] + errors[m]);
    // The rows' errors are rounded to 0.01% in the JSON.
    CHECK(t["median_error"].get<double>() == Approx(median).margin(1e-4));
    CHECK(t["met"].get<bool>() == (t["median_error"].get<double>() <= t["target"].get<double>()));
  }
  CHECK((met_of["out-of-sample"] == std::pair{15, 27}));
  CHECK((met_of["in-sample"] == std::pair{11, 15}));
  const auto& vmware = *checks.at({"h100_32gpu_4node_all_reduce_ib_ndr_vmware_nccl2.26_issue309", "from 1 KiB"});
  CHECK(vmware["median_error"].get<double>() <= 0.015 + kErrorMargin);
  CHECK(vmware["sizes"] == 24);
  // The second cluster's four nodes, in-sample since NVLSTree's network efficiency beyond two nodes
  // was fitted on their rows from 1 GiB, meet both targets (7.3% from 1 KiB, 3.8% from 64 MiB).
  for (const char* range : {"from 1 KiB", "from 64 MiB"}) {
    const auto& four = *checks.at({"h100_32gpu_4node_all_reduce_ib400_cluster2_issue309", range});
    INFO(range);
    CHECK(four["met"].get<bool>());
  }
  for (const char* id : {"h100_64gpu_8node_all_reduce_ib400_cluster2_issue309", "gb200_144gpu_2rack_all_reduce_coreweave_readme", "gb200_1440gpu_20rack_all_reduce_coreweave_readme",
                         "b200_2gpu_all_reduce_ring_ll128_1G_nccl2.31_pr2343"}) {
    INFO(id);
    CHECK_FALSE((*checks.at({id, "from 64 MiB"}))["met"].get<bool>());
  }
  // nccl#1801's forced trees, NIC-bound, at the segment level: since a network path's segments
  // are cut to a sixteenth of a switch's input buffer and a link serves a connection's steps in
  // order, NVL4 2.7% and NVL8 2.5% slow (17.2% and 12.4% when whole 512 KiB segments stalled the
  // rail switches' inputs; 3.4% and 5.3% when a link shared itself among a connection's steps).
  for (const char* id : {"gb200_12gpu_3rack_nvl4_all_reduce_tree_nccl2.27_issue1801", "gb200_24gpu_3rack_nvl8_all_reduce_tree_nccl2.27_issue1801"}) {
    INFO(id);
    const auto& tree = *checks.at({id, "from 64 MiB"});
    CHECK(tree["met"].get<bool>());
    CHECK(tree["median_error"].get<double>() <= 0.027 + kErrorMargin);
  }
  CHECK((*checks.at({"h100_64gpu_8node_all_reduce_ib400_cluster2_issue309", "from 64 MiB"}))["median_error"].get<double>() <=
        0.051 + kErrorMargin);
  // nccl#1801's rings, NIC-bound: within 10% from 1 KiB, not within 5% at 16 GiB (5.1% and 5.7% slow).
  for (const char* id : {"gb200_12gpu_3rack_nvl4_all_reduce_ring_nccl2.27_issue1801", "gb200_24gpu_3rack_nvl8_all_reduce_ring_nccl2.27_issue1801"}) {
    INFO(id);
    const auto& ring = *checks.at({id, "from 1 KiB"});
    CHECK(ring["met"].get<bool>());
    CHECK(ring["median_error"].get<double>() <= 0.057 + kErrorMargin);
  }
}

TEST_CASE("accuracy: validate --extrapolate (the segment level across nodes, large rows extrapolated): multi-node bandwidth-bound "
          "3.2%, latency-bound 2.8%, mid 14.3%, NVLSTree plateaus on 4 and 8 nodes within 0.8% and 2.2%, RoCE -2.8%",
          "[accuracy][extrapolate]") {
  // Both levels take NVLSTree's network efficiency beyond two nodes (fitted on
  // the second cluster's four nodes from 1 GiB at the flow level, which
  // --model auto takes for these large sweeps); the segment level's FIFO
  // credits and the tree's dependencies cost its 8 nodes 2% more. Its NVLSTree
  // rows of 8-32 MiB are faster than the flow level's, so its mid sizes are further off.
  const json doc = validate("--extrapolate");
  CHECK_THAT(doc["fidelity"].get<std::string>(), Catch::StartsWith("nccl-test --extrapolate-above auto"));
  check_claims(doc["summary"], "out-of-sample",
               {{"out-of-sample", "multi-node", "H100", "latency-bound", 13, 0.028, 0.069},
                {"out-of-sample", "multi-node", "H100", "mid", 16, 0.143, 0.312},
                {"out-of-sample", "multi-node", "H100", "bandwidth-bound", 25, 0.032, 0.195},
                // One NVLink domain: the same fidelity, and figures, as without --extrapolate.
                {"out-of-sample", "single node", "H100", "latency-bound", 1, 0.168, 0.168},
                {"out-of-sample", "single node", "H100", "mid", 2, 0.176, 0.197},
                {"out-of-sample", "single node", "H100", "bandwidth-bound", 34, 0.013, 0.097},
                {"out-of-sample", "single node", "A100", "bandwidth-bound", 4, 0.196, 0.523},
                {"out-of-sample", "single node", "B200", "bandwidth-bound", 1, 0.339, 0.339},
                // Racks of NVL72: --model auto's choice (the flow level), as without --extrapolate; nccl#1801's
                // partitions (4 and 8 GPUs a node): every row at the segment level either way.
                {"out-of-sample", "multi-node", "GB200", "bandwidth-bound", 16, 0.174, 0.772}});
  for (const auto& ds : doc["datasets"]) {
    const std::string id = ds["id"];
    if (id != "h100_32gpu_4node_all_reduce_ib400_cluster2_issue309" && id != "h100_64gpu_8node_all_reduce_ib400_cluster2_issue309") continue;
    for (const auto& row : ds["rows"])
      if (row["bytes"].get<std::uint64_t>() >= 2ull << 30) {
        INFO(id << " at " << row["bytes"] << " B: " << 100 * row["error"].get<double>() << "%");
        CHECK(std::abs(row["error"].get<double>()) <= (id == "h100_32gpu_4node_all_reduce_ib400_cluster2_issue309" ? 0.008 : 0.022) + kErrorMargin);
      }
  }
  const json& across = doc["reported_figures_summary"]["out_of_sample_multi_node"];
  CHECK(across["figures"] == 2);
  CHECK(across["median_error"].get<double>() <= 0.090 + kErrorMargin);
  for (const auto& f : doc["reported_figures"])
    if (f["id"] == "h100_32gpu_4node_all_reduce_roce400_issue1221" && f["predicted_algorithm"] == "NVLSTree") {
      INFO(f.dump());
      CHECK(std::abs(f["error"].get<double>()) <= 0.028 + kErrorMargin);
    }
}

TEST_CASE("accuracy: NVLSTree's mid sizes on nccl-tests#309's InfiniBand pair (1-256 MiB: worst 10.9%) and four held-out VMs "
          "(32-128 MiB: worst 3.8%)",
          "[accuracy]") {
  // Its chunk as NCCL's and the leaf's in-switch reduction holding the first
  // chunk whole: the 8-256 MiB rows were 7-22% fast before (README, Accuracy).
  // Both runs name NCCL 2.26.2, whose tuner (graph-speed NVLSTree pricing,
  // 14 us per network hop) takes NVLSTree on the pair from 1 MiB, where
  // 2.30's took Tree LL128 (1-4 MiB: +9...+19% then), and Ring from 256 MiB
  // on four nodes, whose NVLSTree it prices at half speed. Both ran one
  // process per GPU; the pair fitted that launch's per-call base (its small
  // sizes only; the base is paid on every call, so these rows moved 10 us
  // faster: pair 9.3% -> 10.9% worst, VMs 7.7% -> 9.4%). The VMs' four nodes then took NVLSTree's
  // network efficiency beyond two nodes (fitted on the second cluster's four nodes): 9.4% -> 3.8%.
  const json doc = validate();
  const struct {
    const char* id;
    std::uint64_t from, to;
    double worst;
    int rows;
  } claims[] = {{"h100_16gpu_2node_all_reduce_ib_ndr_nccl2.26_issue309", 1ull << 20, 256ull << 20, 0.109, 9},
                {"h100_32gpu_4node_all_reduce_ib_ndr_vmware_nccl2.26_issue309", 32ull << 20, 128ull << 20, 0.038, 3}};
  for (const auto& c : claims) {
    int rows = 0;
    double worst = 0;
    for (const auto& ds : doc["datasets"])
      if (ds["id"] == c.id)
        for (const auto& row : ds["rows"]) {
          CHECK(ds["nccl_tuner"] == "2.26.2 (NCCL 2.23.4-2.26.6 tuner constants)");
          const auto bytes = row["bytes"].get<std::uint64_t>();
          if (bytes < c.from || bytes > c.to) continue;
          ++rows;
          worst = std::max(worst, std::abs(row["error"].get<double>()));
        }
    INFO(c.id << ": " << rows << " rows, worst " << 100 * worst << "%");
    CHECK(rows == c.rows);
    CHECK(worst <= c.worst + kErrorMargin);
  }
}

TEST_CASE("accuracy: reported plateaus (nccl-tests#212, nccl#1455, nccl#2140, nccl-tests#309) out-of-sample 9 figures, median 0.8%, "
          "worst 1.4%, and the two the NVLink efficiencies came from in-sample, and across nodes (nccl#1221, RoCE) 2 figures, median 9.6%",
          "[accuracy][figures]") {
  const json doc = validate();
  const json& out = doc["reported_figures_summary"]["out_of_sample"];
  const json& in = doc["reported_figures_summary"]["in_sample"];
  INFO(doc["reported_figures"].dump(1));
  CHECK(out["figures"] == 9);
  CHECK(out["median_error"].get<double>() <= 0.008 + kErrorMargin);
  CHECK(out["worst_error"].get<double>() <= 0.014 + kErrorMargin);
  CHECK(in["figures"] == 2);
  CHECK(in["worst_error"].get<double>() <= 0.041 + kErrorMargin);
  // Across nodes: nccl#1221's four HGX H100 nodes on 400 Gb/s RoCE reach 320 GB/s with NVLS on or
  // off; fabsim is optimistic there (NVLSTree 333.3, Ring 377.7 GB/s), as issue 15 found for RoCE.
  const json& across = doc["reported_figures_summary"]["out_of_sample_multi_node"];
  CHECK(across["figures"] == 2);
  CHECK(across["median_error"].get<double>() <= 0.096 + kErrorMargin);
  CHECK(across["worst_error"].get<double>() <= 0.153 + kErrorMargin);
  CHECK(doc["reported_figures_summary"]["in_sample_multi_node"]["figures"] == 0);
  std::map<std::string, std::string> sample;  // "id row" -> sample
  for (const auto& f : doc["reported_figures"]) {
    CHECK(f["bytes"] == 8ull << 30);
    sample[f["id"].get<std::string>() + " " + std::to_string(f["row"].get<int>())] = f["sample"];
    // NCCL's default on 8 H100s at 8 GiB is NVLS, across four nodes NVLSTree; with NVLS off or disabled, Ring.
    const std::string recorded = f["recorded_algorithm"];
    const bool across_nodes = f["nodes"].get<int>() > 1;
    if (recorded.find("off") != std::string::npos || recorded.find("disabled") != std::string::npos) CHECK(f["predicted_algorithm"] == "Ring");
    if (recorded.find("default") != std::string::npos || recorded.find("NVLS on") != std::string::npos)
      CHECK(f["predicted_algorithm"] == (across_nodes ? "NVLSTree" : "NVLS"));
  }
  CHECK(sample["a100_8gpu_all_reduce_expectation 0"] == "in-sample");
  CHECK(sample["h100_all_reduce_busbw_vs_gpucount_issue1455 4"] == "out-of-sample");
  // B300 has no model, and one rounded figure for a range of GPU counts is not checked per count.
  std::vector<std::string> not_predicted;
  for (const auto& s : doc["skipped_figures"]) not_predicted.push_back(s["id"].get<std::string>() + " " + std::to_string(s["row"].get<int>()));
  CHECK(not_predicted == std::vector<std::string>{"h100_all_reduce_busbw_vs_gpucount_issue1455 0", "h100_all_reduce_busbw_vs_gpucount_issue1455 5",
                                                  "h100_8gpu_all_reduce_nvls_on_off_issue2140 2", "h100_8gpu_all_reduce_nvls_on_off_issue2140 3"});
}

TEST_CASE("consistency: in-sample errors on the sweeps the latencies, drift and gather/scatter efficiency were fitted on",
          "[accuracy]") {
  check_claims(validate()["summary"], "in-sample",
               {{"in-sample", "single node", "H100", "latency-bound", 38, 0.007, 0.192},
                // The GB200 NVL72 rack its NVLS efficiency was fitted on (from 4 GiB; 0.5-2 GiB carry an unexplained fixed cost).
                {"in-sample", "single node", "GB200", "bandwidth-bound", 5, 0.079, 0.251},
                {"in-sample", "single node", "H100", "mid", 23, 0.128, 0.412},
                {"in-sample", "single node", "H100", "bandwidth-bound", 24, 0.006, 0.036},
                // The A3 Mega all-reduce the TCPXO values were fitted on (README: its mid sizes stay far off),
                // the 2-node InfiniBand sweep NVLSTree's in-node efficiency was fitted on (from 1 MiB), the
                // 4-node one its network efficiency beyond two nodes (from 1 GiB), and the bare-metal 2-node
                // one the one-process-per-GPU base and LL's staging rate were fitted on.
                {"in-sample", "multi-node", "H100", "latency-bound", 26, 0.020, 0.173},
                {"in-sample", "multi-node", "H100", "mid", 25, 0.157, 0.689},
                {"in-sample", "multi-node", "H100", "bandwidth-bound", 33, 0.023, 0.492}});
}

TEST_CASE("accuracy: leave one run out, the fitted sweeps predicted with the latencies refitted without them", "[accuracy]") {
  const json doc = validate("--refit");
  check_claims(doc["refit_summary"], "refitted",
               {{"refitted, out-of-sample", "single node", "H100", "latency-bound", 12, 0.007, 0.096},
                {"refitted, out-of-sample", "single node", "H100", "mid", 8, 0.146, 0.412},
                {"refitted, out-of-sample", "single node", "H100", "bandwidth-bound", 8, 0.015, 0.036},
                {"refitted, partly in-sample", "single node", "H100", "latency-bound", 26, 0.009, 0.192},
                {"refitted, partly in-sample", "single node", "H100", "mid", 15, 0.108, 0.331},
                {"refitted, partly in-sample", "single node", "H100", "bandwidth-bound", 16, 0.005, 0.022}});
  for (const auto& run : doc["refit"]) {
    INFO(run["run"]);
    if (run["run"] == "h100_16gpu_2node_all_reduce_gcp_a3mega") {
      // The TCPXO values have no other run to be refitted on: it stays in-sample, and says so.
      CHECK(run["refitted_on"].empty());
      CHECK(run["still_in_sample"].size() == 2);
    } else if (run["run"] == "coreweave-pr43-nvl72-rack") {
      CHECK(run["refitted_on"].empty());
      CHECK(run["still_in_sample"] == json::array({"gpus/gb200/nvls/payload_efficiency"}));
    } else if (run["run"] == "issue309-qoofyk-2node-baremetal") {
      // Nor have the one-process-per-GPU base and LL's staging rate (scripts/fit-process-launch).
      CHECK(run["refitted_on"].empty());
      CHECK(run["still_in_sample"] == json::array({"gpus/h100-sxm/launch_overhead_one_gpu_per_process", "gpus/h100-sxm/protocols/ll/net_staging_rate"}));
    } else if (run["run"] == "issue309-gj-aion-2node") {
      // Nor has NVLSTree's in-node efficiency (--refit refits latencies only).
      CHECK(run["refitted_on"].empty());
      CHECK(run["still_in_sample"] == json::array({"gpus/h100-sxm/nvls/tree_payload_efficiency"}));
    } else if (run["run"] == "issue309-gj-aion-4node") {
      // Nor has NVLSTree's network efficiency beyond two nodes (scripts/fit-tree-network-efficiency).
      CHECK(run["refitted_on"].empty());
      CHECK(run["still_in_sample"] == json::array({"gpus/h100-sxm/nvls/network_efficiency_beyond_two_nodes"}));
    } else {
      CHECK(run["refitted_on"].size() == 2);  // the other two 4-GPU sweeps
    }
  }
}

TEST_CASE("accuracy: the latency floor fitted on 4 GPUs grows with the GPU count as NCCL's own model does (2, 6 and 8 H100s)",
          "[accuracy][latency]") {
  // NCCL 2.29.2's tuning table (NCCL_DEBUG=INFO), logged on the H100 box that
  // measured the 4-GPU sweeps the floor was fitted on (waynehacking8/
  // nccl-collectives-bench, results/scaling_attributed/g{2,4,6}_Ring.log,
  // commit ec97f06): Ring LL all-reduce 7.8 / 10.2 / 12.6 us and all-gather
  // 7.2 / 8.4 / 9.6 us on 2 / 4 / 6 GPUs, i.e. a base per call and 0.6 us per
  // ring step (hwLat, NVLink). No 2- or 8-GPU small-size measurement is public
  // in the data, so the check is on the growth per added GPU: fabsim's floor
  // minus its 4-GPU floor against NCCL's, within one hop (0.6 us).
  const auto floor_us = [](const std::string& op, int gpus) {
    return rows("hgx-h100", "--op " + op + " -g " + std::to_string(gpus) + " -b 2K -e 2K --algo ring --proto LL")[0]["time_us"].get<double>();
  };
  const std::map<std::string, std::map<int, double>> nccl = {{"all_reduce", {{2, 7.8}, {4, 10.2}, {6, 12.6}, {8, 15.0}}},
                                                             {"all_gather", {{2, 7.2}, {4, 8.4}, {6, 9.6}, {8, 10.8}}}};
  for (const auto& [op, by_gpus] : nccl) {
    const double four = floor_us(op, 4);
    for (int gpus : {2, 6, 8}) {
      const double growth = floor_us(op, gpus) - four;
      const double expected = by_gpus.at(gpus) - by_gpus.at(4);  // 8 GPUs: NCCL's formula, 6.6 + 2(n-1) x 0.6 (AR)
      INFO(op << " on " << gpus << " GPUs: fabsim grows " << growth << " us from 4 GPUs, NCCL's model " << expected << " us");
      CHECK(std::abs(growth - expected) <= 0.6);
    }
  }
}

TEST_CASE("consistency: the 8-GPU ring all-reduce plateau is NCCL's ~370 GB/s, the share the NVLink4 efficiency was set from",
          "[accuracy]") {
  const json r = rows("hgx-h100", "-g 8 -b 256M -e 8G --algo ring");
  check_figure(r.front()["busbw_GBps"].get<double>(), 343.1);
  check_figure(r.back()["busbw_GBps"].get<double>(), 366.5);
}

TEST_CASE("accuracy: NVLS all-reduce on 5 to 8 H100s against nccl#1455 and nccl-tests#212", "[accuracy][nvls]") {
  const json eight = rows("hgx-h100", "-g 8 -b 1G -e 8G --algo nvls");
  check_figure(eight.front()["busbw_GBps"].get<double>(), 463.6);
  check_figure(eight.back()["busbw_GBps"].get<double>(), 482.3);
  check_figure(busbw("hgx-h100", "-g 5 -b 4G -e 4G --algo nvls"), 411.1);
  check_figure(busbw("hgx-h100", "-g 6 -b 4G -e 4G --algo nvls"), 440.1);
  check_figure(busbw("hgx-h100", "-g 7 -b 4G -e 4G --algo nvls"), 461.8);
}

TEST_CASE("accuracy: on 8 H100s the default switches from Ring LL to NVLS between 1 and 2 MiB (nccl-tests#309)", "[accuracy][nvls]") {
  const json r = rows("hgx-h100", "-g 8 -b 1M -e 2M");
  CHECK(r[0]["algorithm"] == "Ring");
  CHECK(r[0]["protocol"] == "LL");
  CHECK(r[1]["algorithm"] == "NVLS");
}

TEST_CASE("accuracy: 8-GPU all-gather at 1 GiB, NVLS slower than the ring (nccl#1506), and the ring never loses the default",
          "[accuracy][nvls]") {
  check_figure(busbw("hgx-h100", "--op all_gather -g 8 -b 1G -e 1G --algo nvls"), 270.4);
  check_figure(busbw("hgx-h100", "--op all_gather -g 8 -b 1G -e 1G --algo ring"), 329.9);
  CHECK(rows("hgx-h100", "--op all_gather -g 8 -b 1G -e 1G")[0]["algorithm"] == "Ring");
}

TEST_CASE("consistency: 8-GPU A100 ring all-reduce at 8 GiB against the ~230 GB/s the NVLink3 efficiency was set from", "[accuracy]") {
  check_figure(busbw("dgx-a100", "-b 8G -e 8G --algo ring"), 239.9);
}

TEST_CASE("accuracy: Blackwell on NCCL's Blackwell figures, 8x B200 against 8x B300 (nccl#2140) and NVL72 against NVIDIA's",
          "[accuracy][blackwell]") {
  check_figure(busbw("hgx-b200", "-g 8 -b 8G -e 8G --algo ring"), 706.1);   // 695 measured on B300
  check_figure(busbw("hgx-b200", "-g 8 -b 8G -e 8G --algo nvls"), 810.6);   // 845 measured on B300
  check_figure(busbw("gb200-nvl72", "-b 8G -e 8G --algo ring --model flow"), 707.0);   // 680 quoted
  // 850 quoted, 835 measured on the rack whose plateau fitted the gb200 NVLS efficiency (a consistency check).
  check_figure(busbw("gb200-nvl72", "-b 8G -e 8G --algo nvls --model flow"), 842.2);
}

TEST_CASE("accuracy: nccl#1801's forced tree across three GB200 partitions takes Simple, as its rate says NCCL did: "
          "-2.6% and -2.3% at the flow level, -2.6% on NVL4 at the segment level",
          "[accuracy][blackwell]") {
  // Measured 234.4 (NVL4, 12 GPUs) and 485.7 GB/s (NVL8, 24) at 16 GiB: above what LL128's
  // 120-of-128-byte lines allow at the rings' NIC rate (225 and 451), so NCCL ran Simple. Its
  // tuner does: from 512 MiB a tree's bandwidth takes no treeCorrectionFactor, so Simple's 0.92
  // beats LL128's 0.92 x 120/128. The segment level is within 0.1% of the flow level on NVL4 (NVL8
  // there: 474.1, -2.4%, not run here: 45 s); with whole 512 KiB segments in the rail switches'
  // 1 MiB input buffers it lost a tenth to head-of-line stalls (200.0 and 432.3), and while a link
  // shared itself among one connection's steps in flight, 1-4% more (226.7 and 461.1).
  const std::string args = "-b 16G -e 16G --algo tree --nccl-version 2.27.3";
  for (const char* topology : {"gb200-nvl4-3rack", "gb200-nvl8-3rack"}) {
    const json row = rows(topology, args + " --model flow")[0];
    INFO(topology);
    CHECK(row["protocol"] == "Simple");
    check_figure(row["busbw_GBps"].get<double>(), std::string(topology) == "gb200-nvl4-3rack" ? 228.4 : 474.6);
  }
  check_figure(busbw("gb200-nvl4-3rack", args + " --model segment"), 228.3);
}

TEST_CASE("accuracy: EFA on p5, fitted on 4 instances, against held-out plateaus on 8 and 16 (-2.0%, -1.5%, -1.2%), Ring LL128 "
          "on 8 (-5.3%) and all-gather floors on 2 and 32 (+6.0%, +15.2%)",
          "[accuracy][efa]") {
  // links/efa-400/efficiency is fitted on h100_32gpu_4node_all_reduce_aws_p5_efa_nccl2.27 alone. The Ring Simple and
  // LL128 rows are where aws-ofi-nccl's tuner ran them on 8 and 16 instances (LL128 at NCCL's per-graph-channel cap:
  // 8 graph channels x 36.7 GB/s over 16 CTAs; it was 19% fast at 24 x 36.7); the 32 MiB all-gathers are NCCL's own
  // Ring LL128, whose time on 32 instances is mostly the plugin's 75 us per network crossing
  // (configs/measurements/aws-p5-efa.json, time = bytes / out-of-place algbw). Flow level where it agrees with the
  // segment level within 0.1% (the 64- and 128-GPU Simple rings, the 256-GPU all-gather); the others at segment level.
  const struct {
    int gpus;
    const char* args;
    double measured_us, claimed_error;
  } claims[] = {{64, "-b 4G -e 4G --algo ring --proto Simple --model flow", 24068.18, -0.020},
                {64, "-b 8G -e 8G --algo ring --proto Simple --model flow", 47589.67, -0.015},
                {128, "-b 8G -e 8G --algo ring --proto Simple --model flow", 47844.13, -0.012},
                {64, "-b 1G -e 1G --algo ring --proto LL128 --model segment", 7702.04, -0.053},
                {16, "-b 32M -e 32M --op all_gather", 239.57, 0.060},
                {256, "-b 32M -e 32M --op all_gather --model flow", 2699.47, 0.152}};
  for (const auto& c : claims) {
    const json row = rows("aws-p5-32node", fmt::format("-g {} {} --nccl-version 2.27.7", c.gpus, c.args))[0];
    const double error = row["time_us"].get<double>() / c.measured_us - 1;
    INFO(c.gpus << " GPUs, " << c.args << ": " << row["time_us"] << " us against " << c.measured_us << " us, " << 100 * error << "%");
    CHECK(std::abs(error) <= std::abs(c.claimed_error) + kErrorMargin);
  }
}
