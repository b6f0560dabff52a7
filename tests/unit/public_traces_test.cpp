// The importers on real traces that real jobs wrote (tests/data/traces/public/,
// sources in its README): every NCCL kernel or COLL line becomes an op of the
// right type, size and communicator size, partial jobs are refused or
// completed only when asked, and what is guessed is counted.

#include <catch2/catch.hpp>

#include "sim/core/error.hpp"
#include "test_support.hpp"
#include "traces/import/importers.hpp"
#include "traces/replay/trace_loader.hpp"

using namespace fabsim;
using nlohmann::json;

namespace {

std::string pub(const std::string& name) { return testing::source_path("tests/data/traces/public/" + name); }

json built(traces::TraceBuilder& b) { return json::parse(b.build().dump()); }

json ops_of(const json& doc, int rank) {
  for (const auto& p : doc["programs"])
    for (const auto& r : p["ranks"])
      if (r == rank) return p["ops"];
  return json::array();
}

std::vector<json> comm_ops(const json& ops) {
  std::vector<json> out;
  for (const auto& op : ops)
    if (op["type"] != "compute") out.push_back(op);
  return out;
}

std::size_t group_size(const json& doc, const std::string& comm) {
  for (const auto& c : doc["communicators"])
    if (c["id"] == comm) return c["groups"][0].size();
  return 0;
}

std::uint64_t warnings_containing(const traces::TraceBuilder& b, const std::string& text) {
  std::uint64_t n = 0;
  for (const auto& [what, count] : b.warnings.counts())
    if (what.find(text) != std::string::npos) n += count;
  return n;
}

traces::ImportOptions symmetric() {
  traces::ImportOptions o;
  o.symmetric = true;
  return o;
}

}  // namespace

TEST_CASE("RCCL 2.27 log: ncclCommInitRankConfig_impl lines and COLL lines with acc, task and globalrank", "[import][public]") {
  auto b = traces::import_trace("nccl-log", {pub("nccl-log/rccl_2277_rocm_issue6074.log")});
  const json doc = built(b);
  CHECK(b.warnings.total() == 0);
  CHECK(doc["world_size"] == 2);
  REQUIRE(doc["communicators"].size() == 1);
  CHECK(doc["communicators"][0]["groups"] == json::parse("[[0, 1]]"));
  for (int rank : {0, 1}) {
    const json ops = ops_of(doc, rank);
    REQUIRE(ops.size() == 8);  // 16 AllReduce lines, 8 per process
    for (const auto& op : ops) {
      CHECK(op["type"] == "allreduce");
      CHECK(op["bytes"] == 4);  // count 1 of datatype 7 (float32)
    }
  }
  CHECK_NOTHROW(traces::parse_trace(doc, "rccl.json"));
}

TEST_CASE("Older NCCL log: prefix-less Init lines of 8 of 16 ranks keep the 16-rank communicator", "[import][public]") {
  const std::string log = pub("nccl-log/nccl_issue629_old_init_format.log");
  CHECK_THROWS_WITH(traces::import_trace("nccl-log", {log}),
                    Catch::Contains("covers 8 of the 16 ranks its communicators name (missing: 0-1, 3, 6-7, 10-11, 13)"));
  auto b = traces::import_trace("nccl-log", {log}, symmetric());
  const json doc = built(b);
  CHECK(doc["world_size"] == 16);
  REQUIRE(doc["communicators"].size() == 1);
  CHECK(doc["communicators"][0]["groups"][0].size() == 16);
  CHECK(warnings_containing(b, "without a commId") == 8);
  CHECK(warnings_containing(b, "no COLL lines") == 1);
  CHECK(warnings_containing(b, "ranks without input run rank 2's program") == 8);
}

TEST_CASE("NCCL log under Ray: launcher prefixes stripped, a 128-rank all-reduce stays 128 ranks", "[import][public]") {
  const std::string log = pub("nccl-log/nccl_issue1193_ray_prefixed.log");
  CHECK_THROWS_WITH(traces::import_trace("nccl-log", {log}), Catch::Contains("covers 3 of the 128 ranks"));
  auto b = traces::import_trace("nccl-log", {log}, symmetric());
  const json doc = built(b);
  CHECK(doc["world_size"] == 128);
  CHECK(group_size(doc, "world") == 128);
  // Three processes, each pasted from a different call: aligned by opCount 139d, 139e.
  CHECK(warnings_containing(b, "ranks given in order of appearance") == 3);
  CHECK(warnings_containing(b, "filled in") == 2);
  for (int rank : {0, 1, 2, 77, 127}) {
    const json ops = ops_of(doc, rank);
    REQUIRE(ops.size() == 2);
    CHECK(ops[0]["type"] == "allreduce");
    CHECK(ops[0]["bytes"] == 7382228ull * 4);
    CHECK(ops[1]["bytes"] == 7066572ull * 4);
  }
  CHECK_NOTHROW(traces::parse_trace(doc, "ray.json"));
}

TEST_CASE("Kineto (PyTorch 2.0, gzip): 21 NCCL kernels become 15 all-reduces and 6 broadcasts of their sizes", "[import][public]") {
  auto b = traces::import_trace("kineto", {pub("kineto/nccl_parser_config__nccl_data.json.gz")}, symmetric());
  const json doc = built(b);
  CHECK(doc["world_size"] == 2);
  const auto ops = comm_ops(ops_of(doc, 0));
  REQUIRE(ops.size() == 21);
  int allreduce = 0, broadcast = 0;
  for (const auto& op : ops) {
    allreduce += op["type"] == "allreduce";
    broadcast += op["type"] == "broadcast";
    CHECK(group_size(doc, op["comm"]) == 2);
    CHECK(op["bytes"].get<std::uint64_t>() % 4 == 0);
  }
  CHECK(allreduce == 15);
  CHECK(broadcast == 6);
  // The first three kernels' "In msg nelems" and dtype: 53120 Float, 53 Long, 2049000 Float.
  CHECK(ops[0]["type"] == "broadcast");
  CHECK(ops[0]["bytes"] == 53120 * 4);
  CHECK(ops[1]["bytes"] == 53 * 8);
  CHECK(ops[2]["type"] == "allreduce");
  CHECK(ops[2]["bytes"] == 2049000 * 4);
  CHECK(warnings_containing(b, "issue order") == 0);  // every kernel linked by External id
}

TEST_CASE("Kineto without collective arguments: the nccl: annotation around each launch gives type and size", "[import][public]") {
  auto b = traces::import_trace("kineto", {pub("kineto/trace_filter__sampled_rank-1.json.gz")}, symmetric());
  const json doc = built(b);
  CHECK(doc["world_size"] == 128);
  const auto ops = comm_ops(ops_of(doc, 1));
  REQUIRE(ops.size() == 10);  // its 10 ncclKernel_* kernels, none lost
  CHECK(ops[0]["type"] == "alltoall");
  CHECK(ops[0]["bytes"] == 339738624);  // Input Dims [[339738624]] of unsigned char
  CHECK(ops[2]["type"] == "allreduce");
  CHECK(ops[2]["bytes"] == 19618307ull * 4);
  CHECK(ops[4]["type"] == "allgather");
  CHECK(ops[4]["bytes"] == 16777216);
  CHECK(warnings_containing(b, "the world assumed") == 10);  // the trace names no process group
  CHECK(warnings_containing(b, "kept as compute") == 0);
}

TEST_CASE("Kineto stream waits: the waiting stream depends on the stream it waits for, and only it", "[import][public]") {
  auto b = traces::import_trace("kineto", {pub("kineto/critical_path__cuda_event_sync_multi_stream__event_sync_trace.json.gz")});
  const json ops = ops_of(built(b), 0);
  REQUIRE(ops.size() == 3);
  // cuda_sync "Stream Wait Event": stream 24 waits on stream 20's recorded work.
  CHECK(ops[2]["stream"] == "s24");
  CHECK(ops[2]["deps"] == json::array({"compute0"}));
  CHECK(ops[0]["stream"] == "s20");
  CHECK(!ops[1].contains("deps"));  // stream 28's host-side Event Sync is no stream dependency
}

TEST_CASE("Kineto --step picks the GPU work launched in ProfilerStep#N", "[import][public]") {
  const std::string file = pub("kineto/nccl_parser_config__nccl_data.json.gz");
  traces::ImportOptions o = symmetric();
  auto all = traces::import_trace("kineto", {file}, o);
  o.steps = std::make_pair(std::int64_t{5}, std::int64_t{5});
  auto one = traces::import_trace("kineto", {file}, o);
  const auto all_ops = comm_ops(ops_of(built(all), 0)).size(), step_ops = comm_ops(ops_of(built(one), 0)).size();
  CHECK(step_ops > 0);
  CHECK(step_ops < all_ops);
  o.steps = std::make_pair(std::int64_t{40}, std::int64_t{41});
  CHECK_THROWS_WITH(traces::import_trace("kineto", {file}, o), Catch::Contains("no profiler step in 40-41 (it has steps 4-6)"));
}
