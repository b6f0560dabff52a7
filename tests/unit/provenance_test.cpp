// Fitted versus held-out bookkeeping: which data sets the catalogue's
// parameters were fitted on, runs that count once, and how errors are grouped.

#include <catch2/catch.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include <fstream>
#include <set>

#include "sim/calibration/accuracy_summary.hpp"
#include "sim/calibration/provenance.hpp"
#include "sim/core/error.hpp"
#include "sim/core/json_reader.hpp"
#include "test_support.hpp"
#include "topologies/hardware_catalogue.hpp"

using namespace fabsim;
using nlohmann::json;

namespace {

json measurements_with_runs() {
  return json::parse(R"({"collective_datasets": [
    {"id": "sweep", "provenance": {"run": "r1"}},
    {"id": "repeat", "provenance": {"run": "r1"}},
    {"id": "other"},
    {"id": "held_out", "provenance": {"run": "r2"}}]})");
}

}  // namespace

TEST_CASE("a data set is in-sample when a parameter was fitted on any data set of its run", "[provenance]") {
  const json catalogue = json::parse(R"({"gpus": {"g": {
    "launch_overhead": {"value": "1 us", "source": "fit", "fitted_on": ["sweep", "missing"]},
    "protocols": {"ll": {"step_latency": {"value": "1 us", "source": "fit", "fitted_on": ["other"]}}},
    "ring_channels": {"value": 24, "source": "datasheet"}}}})");
  const auto fitted = calibration::fitted_parameters(catalogue);
  REQUIRE(fitted.size() == 2);
  CHECK(fitted[0].path == "gpus/g/launch_overhead");
  CHECK(fitted[1].path == "gpus/g/protocols/ll/step_latency");
  const calibration::SampleBook book(measurements_with_runs(), fitted);
  CHECK(book.run_of("repeat") == "r1");
  CHECK(book.run_of("other") == "other");  // no provenance.run: a run of its own
  CHECK(book.fitted_on("repeat") == std::vector<std::string>{"gpus/g/launch_overhead"});  // fitted on its run's other data set
  CHECK(book.fitted_on("other") == std::vector<std::string>{"gpus/g/protocols/ll/step_latency"});
  CHECK_FALSE(book.in_sample("held_out"));
  CHECK(book.unknown_ids() == std::vector<std::string>{"missing"});
  CHECK(book.run_members("r1") == std::vector<std::string>{"repeat", "sweep"});
  const auto marks = book.marks();  // every data set in document order, marked
  REQUIRE(marks.size() == 4);
  CHECK(marks[0].first == "sweep");
  CHECK(marks[3].first == "held_out");
  CHECK(marks[3].second.empty());  // not used by the model
}

TEST_CASE("errors are grouped by sample, scope, GPU family and size regime", "[provenance]") {
  using calibration::Regime;
  CHECK(calibration::regime_of(256 * 1024 - 1) == Regime::kLatency);
  CHECK(calibration::regime_of(256 * 1024) == Regime::kMid);
  CHECK(calibration::regime_of((64u << 20) - 1) == Regime::kMid);
  CHECK(calibration::regime_of(64u << 20) == Regime::kBandwidth);
  CHECK(calibration::gpu_family("NVIDIA H100 80GB HBM3 (SXM5)") == "H100");
  CHECK(calibration::gpu_family("GB200 NVL72") == "GB200");
  const std::vector<calibration::ErrorRow> rows{{"a", 8, 0.10, false, false, "H100"},
                                                {"a", 16, -0.30, false, false, "H100"},
                                                {"a", 32, 0.20, false, false, "H100"},
                                                {"b", 1u << 30, 0.01, true, false, "H100"}};
  const auto groups = calibration::summarize(rows);
  REQUIRE(groups.size() == 2);
  CHECK_FALSE(groups[0].in_sample);  // out-of-sample first
  CHECK(groups[0].sizes == 3);
  CHECK(groups[0].median_error == Approx(0.20));
  CHECK(groups[0].worst_error == Approx(0.30));
  CHECK(groups[0].worst_at == "a at 16 B");
  CHECK(groups[0].within_target == 1);  // 10% is within the 10% target; 20% and 30% are not
  CHECK(groups[1].in_sample);
  CHECK(groups[1].within_target == 1);
  CHECK(groups[1].regime == Regime::kBandwidth);
}

TEST_CASE("the stock catalogue's fitted_on names published data sets, and every fitted value has one", "[provenance]") {
  const json catalogue = core::read_json_file(topo::default_catalogue_path());
  // The published data sets and the AWS p5 EFA sweeps, kept in a file of their own (slow to validate).
  json published = core::read_json_file(testing::source_path("configs/measurements/published-measurements.json"));
  const json efa = core::read_json_file(testing::source_path("configs/measurements/aws-p5-efa.json"));
  for (const auto& ds : efa["collective_datasets"]) published["collective_datasets"].push_back(ds);
  const auto fitted = calibration::fitted_parameters(catalogue);
  const calibration::SampleBook book(published, fitted);
  INFO("unknown: " << fmt::format("{}", fmt::join(book.unknown_ids(), ", ")));
  CHECK(book.unknown_ids().empty());
  CHECK(fitted.size() >= 20);
  // A value whose source says it was fitted ("fit:") must say on what.
  std::set<std::string> with_list;
  for (const auto& p : fitted) with_list.insert(p.path);
  std::function<void(const json&, const std::string&)> walk = [&](const json& node, const std::string& path) {
    if (!node.is_object()) return;
    if (node.contains("value") && node.contains("source")) {
      const std::string source = node["source"];
      INFO(path << ": " << source);
      if (source.rfind("fit", 0) == 0 || source.find(": fit:") != std::string::npos) CHECK(with_list.count(path) == 1);
      return;
    }
    for (const auto& [k, v] : node.items()) walk(v, path.empty() ? k : path + "/" + k);
  };
  walk(catalogue, "");
}

TEST_CASE("a catalogue's fitted_on must list data set ids", "[provenance]") {
  json doc = core::read_json_file(topo::default_catalogue_path());
  doc["gpus"]["h100-sxm"]["launch_overhead"]["fitted_on"] = json::array({"ok", 3});
  const auto path = testing::write_temp("bad-fitted-on.json", doc.dump());
  try {
    (void)topo::load_hardware_catalogue(path);
    FAIL("expected a ConfigError");
  } catch (const core::ConfigError& e) {
    CHECK_THAT(e.what(), Catch::Contains("/gpus/h100-sxm/launch_overhead/fitted_on/1") &&
                             Catch::Contains("expected a measurement data set id"));
  }
}
