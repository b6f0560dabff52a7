// The importers on real traces that real jobs wrote (tests/data/traces/public/,
// sources in its README): every NCCL kernel or COLL line becomes an op of the
// right type, size and communicator size, partial jobs are refused or
// completed only when asked, and what is guessed is counted.

#include <catch2/catch.hpp>
#include <fmt/format.h>

#include "sim/core/error.hpp"
#include "sim/core/json_reader.hpp"
#include "import_test_support.hpp"
#include "test_support.hpp"
#include "traces/import/importers.hpp"
#include "traces/replay/trace_loader.hpp"

using namespace fabsim;
using nlohmann::json;
using testing::built;
using testing::ops_of;
using testing::warnings_containing;

namespace {

std::string pub(const std::string& name) { return testing::source_path("tests/data/traces/public/" + name); }

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

namespace {

std::vector<std::string> astra_workload(const std::string& name, const std::string& extension) {
  std::vector<std::string> files;
  for (int r = 0; r < 8; ++r)
    files.push_back(pub(fmt::format("astra-sim/workload__microbenchmarks__{}__8npus_1MB/{}.{}.{}", name, name, r, extension)));
  return files;
}

}  // namespace

TEST_CASE("astra-sim microbenchmarks: raw .et protobuf and its jsonizer form import to the same trace", "[import][public]") {
  for (const std::string name : {"all_reduce", "all_to_all"}) {
    auto from_et = traces::import_trace("chakra", astra_workload(name, "et"));
    auto from_json = traces::import_trace("chakra", astra_workload(name, "json"));
    const json et = built(from_et), js = built(from_json);
    CHECK(et["programs"] == js["programs"]);
    CHECK(et["world_size"] == 8);
    CHECK(group_size(et, "pg0") == 8);
    for (int rank : {0, 7}) {
      const json ops = ops_of(et, rank);
      REQUIRE(ops.size() == 1);
      CHECK(ops[0]["type"] == (name == "all_reduce" ? "allreduce" : "alltoall"));
      CHECK(ops[0]["bytes"] == 1048576);  // comm_size, an int64 attribute
    }
    // Never a silent assumption: no process-group node, no streams.
    CHECK(warnings_containing(from_et, "pg '' and '0' taken as the world") == 1);
    CHECK(warnings_containing(from_et, "without stream attributes") == 8);
    CHECK(traces::check_trace_completes(traces::parse_trace(et, "astra.json")));
  }
}

TEST_CASE("Chakra .et converted from a PyTorch job (gzip): 1,216 GPU nodes, its collectives with their sizes", "[import][public]") {
  auto b = traces::import_trace("chakra", {pub("chakra/feeder_tests_trace.chakra.0.et.gz")});
  const json ops = ops_of(built(b), 0);
  REQUIRE(ops.size() == 1216);
  std::vector<std::pair<std::string, std::uint64_t>> comms;
  for (const auto& op : ops)
    if (op["type"] != "compute") comms.emplace_back(op["type"], op["bytes"]);
  // The same job's Kineto trace (nccl_parser_config) shows these first sizes: 53120 floats, 53 longs.
  REQUIRE(comms.size() == 7);
  CHECK(comms[0] == std::make_pair(std::string("broadcast"), std::uint64_t{212480}));
  CHECK(comms[1] == std::make_pair(std::string("broadcast"), std::uint64_t{424}));
  CHECK(comms[2] == std::make_pair(std::string("allreduce"), std::uint64_t{8196000}));
  CHECK(warnings_containing(b, "dependencies on CPU nodes dropped") > 0);
}

TEST_CASE("Chakra's feeder JSON (workload_graph) imports, a PyTorch execution trace is refused with how to convert it", "[import]") {
  const std::string feeder = testing::write_temp("feeder.json", R"({"workload_graph": [
      {"Id": 1, "Name": "gemm", "NodeType": 4, "is_cpu_op": false, "runtime": 250, "data_deps": []},
      {"Id": 2, "Name": "ar", "NodeType": 7, "is_cpu_op": false, "runtime": 40, "data_deps": [1], "comm_type": 0, "comm_size": 65536},
      {"Id": 3, "Name": "host", "NodeType": 4, "is_cpu_op": true, "runtime": 5, "data_deps": []},
      {"Id": 4, "Name": "sync", "NodeType": 7, "is_cpu_op": false, "runtime": 3, "data_deps": [2], "comm_type": 0}]})");
  auto b = traces::import_trace("chakra", {feeder, feeder});
  const json ops = ops_of(built(b), 1);
  REQUIRE(ops.size() == 3);
  CHECK(ops[2]["bytes"] == 0);
  CHECK(warnings_containing(b, "without comm_size") == 2);  // one per file
  CHECK(ops[0]["type"] == "compute");
  CHECK(ops[0]["duration_ns"] == 250000);
  CHECK(ops[1]["type"] == "allreduce");
  CHECK(ops[1]["bytes"] == 65536);
  CHECK(ops[1]["deps"] == json::array({"1"}));

  const std::string et = testing::write_temp("pytorch_et.json", R"({"schema": "1.1.1-chakra.0.0.4", "pid": 7, "nodes": [{"id": 1, "name": "[pytorch|profiler|execution_trace|process]"}]})");
  CHECK_THROWS_WITH(traces::import_trace("chakra", {et}), Catch::Contains("is a PyTorch execution trace (schema \"1.1.1-chakra.0.0.4\")"));
}

TEST_CASE("Chakra: typeless objects are counted, a trace with nothing to replay is an error, a torn .et names its message", "[import]") {
  const std::string only_cpu = testing::write_temp("cpu.json", R"({"version": "0.0.4"}{"id": "1", "name": "x"}{"id": "2", "name": "cpu", "type": "COMP_NODE",
      "attr": [{"name": "is_cpu_op", "boolVal": true}]})");
  CHECK_THROWS_WITH(traces::import_trace("chakra", {only_cpu}),
                    Catch::Contains("no GPU node to replay in any file") && Catch::Contains("1 x nodes without a type (INVALID_NODE): skipped"));
  const std::string et = core::read_text_file(pub("astra-sim/workload__microbenchmarks__all_reduce__8npus_1MB/all_reduce.1.et"));
  const std::string torn = testing::write_temp("torn.et", et.substr(0, et.size() - 5));
  CHECK_THROWS_WITH(traces::import_trace("chakra", {torn}), Catch::Contains("message 1 (at byte 8) of the Chakra protobuf has no valid length prefix"));
}

TEST_CASE("astra-sim's custom ring (send to r+1, then receive from r-1, no dependency) replays with eager sends", "[import]") {
  std::vector<std::string> files;
  for (int r = 0; r < 4; ++r)
    files.push_back(testing::write_temp(fmt::format("ring.{}.json", r), fmt::format(R"({{"version": "0.0.4"}}
        {{"id": "1", "name": "send", "type": "COMM_SEND_NODE", "attr": [{{"name": "is_cpu_op", "boolVal": false}},
          {{"name": "comm_dst", "int32Val": {}}}, {{"name": "comm_size", "int64Val": "65536"}}]}}
        {{"id": "2", "name": "recv", "type": "COMM_RECV_NODE", "attr": [{{"name": "is_cpu_op", "boolVal": false}},
          {{"name": "comm_src", "int32Val": {}}}, {{"name": "comm_size", "int64Val": "65536"}}]}})", (r + 1) % 4, (r + 3) % 4)));
  auto b = traces::import_trace("chakra", files);
  const json doc = built(b);
  CHECK(ops_of(doc, 0)[0]["stream"] != ops_of(doc, 0)[1]["stream"]);  // the send does not hold the receive back
  CHECK(traces::check_trace_completes(traces::parse_trace(doc, "ring.json")));
}

TEST_CASE("A Chakra .et whose node name is not UTF-8 imports with the bad bytes replaced and counted (fuzzing finding)", "[import]") {
  auto b = traces::import_trace("chakra", {testing::source_path("tests/fuzz/regressions/chakra/protobuf_name_not_utf8.et")});
  const json doc = built(b);  // dumps: no invalid UTF-8 left
  CHECK(warnings_containing(b, "not valid UTF-8") == 1);
  CHECK(ops_of(doc, 0)[0]["name"] == "a\xEF\xBF\xBD\xEF\xBF\xBD_to_all_8npus_1MB");
}

TEST_CASE("Kineto without sizes or groups: kernels kept as compute, uneven all-to-alls evened, all counted", "[import][public]") {
  // 2,020 all-reduce kernels, no collective arguments, annotations without Input Dims.
  auto sizeless = traces::import_trace("kineto", {pub("kineto/df_index_resolver__df_index_resolver.json.gz")}, symmetric());
  CHECK(warnings_containing(sizeless, "allreduce whose size the trace does not give") == 2020);
  // Rank 3 of 8: all_to_all inputs that do not divide by 8 (uneven, splits not recorded).
  auto uneven = traces::import_trace("kineto", {pub("kineto/trace_diff__control__control.json.gz")}, symmetric());
  CHECK(warnings_containing(uneven, "an even split of the nearest multiple assumed") == 12);
  CHECK(warnings_containing(uneven, "the world assumed") == 60);
  const json doc = built(uneven);
  for (const auto& op : ops_of(doc, 3))
    if (op["type"] == "alltoall") CHECK(op["bytes"].get<std::uint64_t>() % 8 == 0);
  CHECK(traces::check_trace_completes(traces::parse_trace(doc, "uneven.json")));
  // No distributedInfo at all: rank 0 of 1, said.
  auto single = traces::import_trace("kineto", {pub("kineto/amd_trace__mi250_minitoy_train_ROCm6_2_kineto.json.gz")});
  CHECK(single.world_size == 1);
  CHECK(warnings_containing(single, "without distributedInfo") == 1);
}
