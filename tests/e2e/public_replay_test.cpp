// Real Kineto traces (tests/data/traces/public/) imported and replayed through
// the CLI: their replay must take the trace's own GPU span. Labelled slow: the
// files are megabytes, so the sanitizer pass leaves them to the release pass
// (the importers run under ASan in the fuzzers).

#include <catch2/catch.hpp>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "sim/core/json_reader.hpp"
#include "cli_json.hpp"

using namespace fabsim;
using nlohmann::json;

namespace {

using testing::run_json;
using testing::topology;

}  // namespace

namespace {

/// A Kineto trace's own span, first GPU start to last GPU end (µs), read here, not by the importer.
double gpu_span_us(const std::string& file) {
  const json doc = core::read_json_file(file);
  double first = 1e300, last = 0;
  for (const auto& e : doc["traceEvents"]) {
    const std::string cat = e.value("cat", "");
    if (e.value("ph", "") != "X" || (cat != "kernel" && cat != "gpu_memcpy" && cat != "gpu_memset")) continue;
    first = std::min(first, e["ts"].get<double>());
    last = std::max(last, e["ts"].get<double>() + e["dur"].get<double>());
  }
  return last - first;
}

std::string public_kineto(const std::string& name) { return testing::source_path("tests/data/traces/public/kineto/" + name); }

}  // namespace

TEST_CASE("Compute-only Kineto traces of real jobs replay in their own GPU span (within 5%)", "[replay][public]") {
  // The last keeps 2,020 all-reduces whose sizes the trace does not record as compute of their
  // measured time: a 1,733 ms span (an earlier importer dropped them and replayed 643 ms).
  for (const char* name : {"ns_resolution_trace__rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz",
                           "critical_path__cuda_event_sync_multi_stream__event_sync_trace.json.gz",
                           "amd_trace__mi250_minitoy_train_ROCm6_2_kineto.json.gz", "triton_example__triton_example.json.gz",
                           "critical_path__alexnet__benchmark_result_2869224_1695835535_trace.json.gz",
                           "df_index_resolver__df_index_resolver.json.gz"}) {
    const std::string file = public_kineto(name);
    const auto out = testing::write_temp("compute-only.json", "");
    REQUIRE(testing::run_fabsim("trace import --from kineto --symmetric " + file + " -o " + out).exit_code == 0);
    const double makespan = run_json("replay -t " + topology("hgx-h100") + " " + out)["makespan_us"].get<double>();
    const double span = gpu_span_us(file);
    INFO(name << ": trace span " << span << " us, replay " << makespan << " us");
    CHECK(makespan == Approx(span).epsilon(0.05));
  }
}

TEST_CASE("A real Kineto trace with NCCL kernels replays within 5% of its GPU span", "[replay][public]") {
  // Rank 0 of a 2-rank job; rank 1 runs its program (--symmetric). Compute
  // keeps its measured times; the 21 collectives are simulated on an HGX H100
  // (the job's GPUs are not named in the trace: a figure of the whole step).
  const std::string file = public_kineto("nccl_parser_config__nccl_data.json.gz");
  const auto out = testing::write_temp("nccl-data.json", "");
  REQUIRE(testing::run_fabsim("trace import --from kineto --symmetric " + file + " -o " + out).exit_code == 0);
  const double makespan = run_json("replay -t " + topology("hgx-h100") + " " + out)["makespan_us"].get<double>();
  CHECK(makespan == Approx(gpu_span_us(file)).epsilon(0.05));
}
