#include <catch2/catch.hpp>

#include "sim/core/error.hpp"
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

std::string real(const std::string& name) { return testing::source_path("tests/data/traces/real/" + name); }


}  // namespace

TEST_CASE("NCCL log import: communicators from init lines, ops in call order, group calls batched", "[import]") {
  auto b = traces::import_nccl_log({real("nccl_debug_info_4rank.log")});
  const json doc = built(b);
  CHECK(b.warnings.total() == 0);
  CHECK(doc["world_size"] == 4);
  REQUIRE(doc["communicators"].size() == 2);
  CHECK(doc["communicators"][0]["groups"] == json::parse("[[0, 1, 2, 3]]"));
  CHECK(doc["communicators"][1]["groups"] == json::parse("[[0, 1], [2, 3]]"));
  const json ops = ops_of(doc, 0);
  REQUIRE(ops.size() == 5);
  CHECK(ops[0]["type"] == "broadcast");
  CHECK(ops[0]["bytes"] == 256 * 8);  // count 256 of datatype 4 (int64)
  CHECK(ops[0]["root"] == 0);
  CHECK(ops[1]["type"] == "allgather");
  CHECK(ops[1]["bytes"] == 1048576 * 2);      // the per-rank shard: count x bf16
  CHECK(ops[2]["bytes"] == 1048576 * 2 * 2);  // reduce-scatter: count x size x nranks
  CHECK(ops[3]["bytes"] == 4194304 * 4);
  CHECK(ops[3]["measured"]["algo"] == "RING");
  CHECK(ops[3]["measured"]["proto"] == "SIMPLE");
  CHECK(ops[4]["type"] == "p2p_batch");
  CHECK(ops[4]["sends"] == json::parse(R"([{"peer": 2, "bytes": 4194304}])"));
  CHECK(ops[4]["recvs"] == json::parse(R"([{"peer": 2, "bytes": 4194304}])"));
  CHECK(ops_of(doc, 3)[4]["sends"][0]["peer"] == 1);
  CHECK_NOTHROW(traces::parse_trace(doc, "imported.json"));  // it replays as it is
}

TEST_CASE("NCCL log import reads a gzip-compressed log as the log itself", "[import]") {
  auto plain = traces::import_nccl_log({real("nccl_debug_info_4rank.log")});
  auto compressed = traces::import_nccl_log({real("nccl_debug_info_4rank.log.gz")});
  json a = built(plain), b = built(compressed);
  CHECK(b["communicators"] == a["communicators"]);
  CHECK(b["programs"] == a["programs"]);
  CHECK(ops_of(b, 3) == ops_of(a, 3));
  CHECK(compressed.warnings.total() == 0);
}

TEST_CASE("NCCL log import counts what it cannot map", "[import]") {
  const std::string head =
      "h:1:1 [0] NCCL INFO ncclCommInitRank comm 0xa rank 0 nranks 2 cudaDev 0 nvmlDev 0 busId 1 commId 0x99 - Init COMPLETE\n"
      "h:2:2 [1] NCCL INFO ncclCommInitRank comm 0xb rank 1 nranks 2 cudaDev 1 nvmlDev 1 busId 2 commId 0x99 - Init COMPLETE\n";
  const std::string body =
      "h:1:1 [0] NCCL INFO AllReduce: opCount 0 sendbuff 0x1 recvbuff 0x1 count 8 datatype 42 op 0 root 0 comm 0xa [nranks=2] stream 0x5\n"
      "h:1:1 [0] NCCL INFO PutSignal: opCount 1 sendbuff 0x1 recvbuff 0x1 count 8 datatype 7 op 0 root 1 comm 0xa [nranks=2] stream 0x5\n"
      "h:1:1 [0] NCCL INFO AllReduce: opCount 2 sendbuff 0x1 recvbuff 0x1 count 8 datatype 7 op 0 root 0 comm 0xa [nranks=2] stream 0x5\n"
      "h:2:2 [1] NCCL INFO AllReduce: opCount 2 sendbuff 0x1 recvbuff 0x1 count 8 datatype 7 op 0 root 0 comm 0xb [nranks=2] st\n"
      "21001:21001 [1] NCCL INFO AllReduce: opCount 2 sendbuff (torn by another process writing at once)\n"
      "h:2:2 [1] NCCL INFO AllReduce: opCount 2 sendbuff 0x1 recvbuff 0x1 count 8 datatype 7 op 0 root 0 comm 0xc [nranks=2] stream 0x6\n";
  auto b = traces::import_nccl_log({testing::write_temp("odd.log", head + body)});
  CHECK(warnings_containing(b, "unknown NCCL datatype 42") == 1);
  CHECK(warnings_containing(b, "'PutSignal' has no native equivalent") == 1);
  CHECK(warnings_containing(b, "COLL line in an unknown layout") == 1);
  CHECK(warnings_containing(b, "not in its debug-line format") == 1);
  CHECK(warnings_containing(b, "no Init COMPLETE line") == 1);
  CHECK(ops_of(built(b), 0).size() == 1);
  CHECK_THROWS_WITH(traces::import_nccl_log({testing::write_temp("none.log", "hello\n")}),
                    Catch::Contains("no NCCL debug lines found"));
  CHECK_THROWS_WITH(traces::import_nccl_log({testing::write_temp("nothing.log", "h:1:1 [0] NCCL INFO Bootstrap : Using eth0\n")}),
                    Catch::Contains("no 'Init COMPLETE' or COLL lines"));
  // COLL lines alone: the world from [nranks=N], ranks in order of appearance, counted as guessed.
  auto guessed = traces::import_nccl_log({testing::write_temp("noinit.log", body)});
  CHECK(guessed.world_size == 2);
  CHECK(warnings_containing(guessed, "ranks given in order of appearance") == 2);
}

TEST_CASE("Kineto import: process groups, NCCL kernels with their sizes, compute and its stream wait", "[import]") {
  auto b = traces::import_kineto({real("kineto_rank0_tp2pp2.json")});
  const json doc = built(b);
  CHECK(doc["world_size"] == 4);
  // Only rank 0's file: the other ranks are refused, or run rank 0's program when the user says the job is SPMD.
  CHECK(b.covered_ranks == std::set<int>{0});
  CHECK_THROWS_WITH(traces::import_trace("kineto", {real("kineto_rank0_tp2pp2.json")}),
                    Catch::Contains("covers 1 of the 4 ranks its communicators name (missing: 1-3)"));
  const json ops = ops_of(doc, 0);
  REQUIRE(ops.size() == 5);
  CHECK(ops[0]["type"] == "allgather");
  CHECK(ops[0]["comm"] == "tp");
  CHECK(ops[0]["bytes"] == 4194304 * 2);  // In msg nelems x BFloat16
  CHECK(ops[0]["measured"]["dur_ns"] == 44384);
  CHECK(ops[1]["type"] == "compute");
  CHECK(ops[1]["duration_ns"] == 1748902);
  CHECK(ops[1]["deps"] == json::array({"comm0"}));  // after the cudaStreamWaitEvent
  CHECK(ops[2]["type"] == "reducescatter");
  CHECK(ops[2]["bytes"] == 8388608 * 2);
  CHECK(ops[3]["type"] == "send");
  CHECK(ops[3]["comm"] == "pp");
  CHECK(ops[3]["peer"] == 1);  // global rank 2 from "nccl:send 0->2" is local 1 of [0, 2]
  CHECK(ops[4]["type"] == "allreduce");
  CHECK(ops[4]["bytes"] == 4);
  json groups;
  for (const auto& c : doc["communicators"]) groups[c["id"].get<std::string>()] = c["groups"];
  CHECK(groups["default_pg"] == json::parse("[[0, 1, 2, 3]]"));
  CHECK(groups["tp"] == json::parse("[[0, 1]]"));
  CHECK(groups["pp"] == json::parse("[[0, 2]]"));
}

TEST_CASE("Kineto import of every rank's file gives a trace that replays, unknown fields pass, unknown collectives count", "[import]") {
  auto file = [](int rank) {
    const std::string r = std::to_string(rank);
    return testing::write_temp("k" + r + ".json", R"J({"schemaVersion": 1, "x-vendor": {"anything": true},
      "distributedInfo": {"rank": )J" + r + R"J(, "world_size": 2, "pg_config": [{"pg_name": "0", "pg_desc": "default_pg", "pg_size": 2, "ranks": []}]},
      "traceEvents": [
        {"ph": "X", "cat": "kernel", "name": "gemm", "pid": 0, "tid": 7, "ts": 100.0, "dur": 50.0, "args": {"stream": 7, "correlation": 1, "new-field": 3}},
        {"ph": "X", "cat": "kernel", "name": "gemm", "pid": 0, "tid": 7, "ts": 150.0, "dur": 25.0, "args": {"stream": 7, "correlation": 2}},
        {"ph": "X", "cat": "kernel", "name": "ncclDevKernel_AllReduce_Sum_f32_RING_LL(x)", "pid": 0, "tid": 20, "ts": 200.0, "dur": 9.0,
         "args": {"stream": 20, "correlation": 3, "Collective name": "allreduce", "In msg nelems": 1048576, "Out msg nelems": 1048576,
                  "dtype": "Float", "Process Group Name": "0", "Group size": 2}},
        {"ph": "X", "cat": "kernel", "name": "ncclDevKernel_Generic_1(x)", "pid": 0, "tid": 20, "ts": 300.0, "dur": 9.0,
         "args": {"stream": 20, "Collective name": "frobnicate", "In msg nelems": 1, "dtype": "Float", "Process Group Name": "0"}}]})J");
  };
  auto b = traces::import_kineto({file(0), file(1)});
  CHECK(warnings_containing(b, "'frobnicate' has no native equivalent") == 2);
  const json doc = built(b);
  CHECK(doc["programs"].size() == 1);  // both ranks run the same program: merged
  const json ops = ops_of(doc, 1);
  REQUIRE(ops.size() == 3);
  CHECK(ops[0]["duration_ns"] == 75000);  // the two kernels of stream 7, busy time
  CHECK(ops[1]["bytes"] == 1048576 * 4);
  CHECK(ops[2]["type"] == "compute");     // the unknown collective keeps its measured 9 us
  CHECK(ops[2]["duration_ns"] == 9000);
  CHECK_NOTHROW(traces::parse_trace(doc, "imported.json"));
  // Not a torch.distributed job: rank 0 of 1, said; nothing on the GPU: an error, never an empty trace.
  CHECK_THROWS_WITH(traces::import_kineto({testing::write_temp("bad.json", R"({"traceEvents": []})")}),
                    Catch::Contains("/traceEvents: no GPU activity"));
  auto single = traces::import_kineto({testing::write_temp("single.json", R"({"traceEvents": [
      {"ph": "X", "cat": "kernel", "name": "gemm", "pid": 0, "tid": 7, "ts": 100.0, "dur": 50.0, "args": {"stream": 7}}]})")});
  CHECK(single.world_size == 1);
  CHECK(warnings_containing(single, "without distributedInfo") == 1);
}

TEST_CASE("Chakra import: GPU nodes, their data dependencies, process groups from the metadata node", "[import]") {
  auto b = traces::import_chakra({real("chakra_et_rank0.jsonizer.json")});
  const json doc = built(b);
  CHECK(doc["world_size"] == 4);
  const json ops = ops_of(doc, 0);
  REQUIRE(ops.size() == 5);
  CHECK(ops[0]["id"] == "11");
  CHECK(ops[0]["type"] == "allgather");
  CHECK(ops[0]["bytes"] == 8388608);
  CHECK(ops[1]["id"] == "21");
  CHECK(ops[1]["duration_ns"] == 1749000);
  CHECK(ops[1]["deps"] == json::array({"11"}));  // its CPU launcher (20) is not replayed
  CHECK(ops[2]["type"] == "reducescatter");
  CHECK(ops[3]["type"] == "send");
  CHECK(ops[3]["peer"] == 1);  // comm_dst 2 in pg "3" = [0, 2]
  CHECK(ops[4]["bytes"] == 4);
  CHECK(warnings_containing(b, "dependencies on CPU nodes dropped") == 5);
  json groups;
  for (const auto& c : doc["communicators"]) groups[c["id"].get<std::string>()] = c["groups"];
  CHECK(groups["default_pg"] == json::parse("[[0, 1, 2, 3]]"));  // "ranks": [] means every rank
}

TEST_CASE("Chakra import rejects what is not jsonizer output and dependency cycles", "[import]") {
  CHECK_THROWS_WITH(traces::import_chakra({testing::write_temp("bad.et.json", "{\"id\": \"1\"}{\"id\": ")}),
                    Catch::Contains("is not valid JSON: expected chakra_jsonizer output"));
  const auto cycle = testing::write_temp("cycle.et.json", R"({"attr": []}
    {"id": "1", "name": "a", "type": "COMP_NODE", "dataDeps": ["2"], "durationMicros": "5", "attr": [{"name": "is_cpu_op", "boolVal": false}]}
    {"id": "2", "name": "b", "type": "COMP_NODE", "dataDeps": ["1"], "durationMicros": "5", "attr": [{"name": "is_cpu_op", "boolVal": false}]})");
  CHECK_THROWS_WITH(traces::import_chakra({cycle}), Catch::Contains("the data dependencies of nodes 1, 2 form a cycle"));
}

TEST_CASE("NCCL log lines: launcher prefixes, every Init form, START lines, RCCL's fields, PyTorch's own lines", "[import]") {
  const std::string log =
      "[rank0]:[W319 12:03:46.604992123 ProcessGroupNCCL.cpp:4721] [PG ID 0 PG GUID 0 Rank 0] using GPU 0 (NCCL)\n"
      "w0: w0:19484:21054 [0] NCCL INFO comm 0x557e rank 0 nranks 2 cudaDev 0 nvmlDev 0 busId 4f000 commId 0x9ad9 - Init START\n"
      "w0: w0:19484:21054 [0] NCCL INFO ncclCommInitRankConfig comm 0x557e rank 0 nranks 2 cudaDev 0 nvmlDev 0 busId 4f000 commId 0x9ad9 - Init COMPLETE\n"
      "(RayTrainWorker pid=7, ip=10.0.0.2) w1:19485:21058 [1] NCCL INFO ncclCommInitRankScalable_impl comm 0x55d8 rank 1 nRanks 2 cudaDev 1 "
      "busId 52000 commId 0x9ad9 - Init COMPLETE\n"
      "w0: w0:19484:19484 [0] NCCL INFO AllReduce: opCount 0 sendbuff 0x1 recvbuff 0x1 acc (nil) count 256 datatype 9 op 0 root 0 "
      "comm 0x557e [nranks=2] stream (nil) task 0 globalrank 0\n"
      "(RayTrainWorker pid=7, ip=10.0.0.2) w1:19485:19485 [1] NCCL INFO AllReduce: opCount 0 sendbuff 0x1 recvbuff 0x1 acc (nil) count 256 "
      "datatype 9 op 0 root 0 comm 0x55d8 [nranks=2] stream (nil) task 0 globalrank 1\n";
  auto b = traces::import_nccl_log({testing::write_temp("forms.log", log)});
  CHECK(b.warnings.total() == 0);  // PyTorch's "(NCCL)" line is no torn NCCL line
  const json doc = built(b);
  CHECK(doc["communicators"][0]["groups"] == json::parse("[[0, 1]]"));
  for (int rank : {0, 1}) {
    const json ops = ops_of(doc, rank);
    REQUIRE(ops.size() == 1);
    CHECK(ops[0]["bytes"] == 512);  // 256 bf16
  }
  // A log cut during init still names its communicators from the START lines.
  auto cut = traces::import_nccl_log({testing::write_temp("cut.log", log.substr(0, log.find("w0: w0:19484:21054 [0] NCCL INFO ncclCommInitRankConfig")))});
  CHECK(cut.world_size == 2);
}
