#include <catch2/catch.hpp>

#include "sim/core/error.hpp"
#include "test_support.hpp"
#include "traces/replay/trace_loader.hpp"

using namespace fabsim;
using traces::TraceOpType;

namespace {

/// Op instances a replay runs: per program, its ranks x its ops' repeats, times the iterations.
std::size_t instances(const traces::Trace& t) {
  std::size_t n = 0;
  for (const auto& p : t.programs) {
    std::size_t per_rank = 0;
    for (const auto& op : p.ops) per_rank += static_cast<std::size_t>(op.repeat);
    n += per_rank * p.ranks.size();
  }
  return n * static_cast<std::size_t>(t.iterations);
}

/// Every message of the ConfigError `text` raises (as a trace file), one per line.
std::string errors_of(const std::string& text) {
  try {
    traces::parse_trace(nlohmann::json::parse(text), "t.json");
  } catch (const core::ConfigError& e) {
    std::string all;
    for (const auto& d : e.items()) all += d.to_string() + "\n";
    return all;
  }
  return "";
}

std::string one_op_trace(const std::string& op, int world = 2, const std::string& groups = "[[0, 1]]") {
  return R"({"format": "fabsim-trace", "version": 1, "world_size": )" + std::to_string(world) +
         R"(, "communicators": [{"id": "c", "groups": )" + groups + R"(}], "programs": [{"ranks": [)" +
         (world == 2 ? std::string("0, 1") : std::string("0, 1, 2, 3")) + R"(], "ops": [)" + op + "]}]}";
}

}  // namespace

TEST_CASE("The native example traces load with the op counts their README gives", "[trace]") {
  const std::string dir = testing::source_path("tests/data/traces/native/");
  const auto dp = traces::load_trace(dir + "dp8_ddp_bucketed_allreduce.json");
  CHECK(dp.world_size == 8);
  CHECK(dp.iterations == 3);
  CHECK(instances(dp) == 240);
  const auto& ops = dp.programs.at(0).ops;
  CHECK(ops.at(2).type == TraceOpType::kAllReduce);
  CHECK(ops.at(2).bytes == 26214400);
  CHECK(ops.at(2).delay == 15'000 * core::kPsPerNs);
  CHECK(ops.at(0).duration == 9'000'000 * core::kPsPerNs);
  // Compute ops default to the "compute" stream, collectives to their communicator's.
  CHECK(dp.programs[0].streams.at(static_cast<std::size_t>(ops.at(0).stream)) == "compute");
  CHECK(dp.programs[0].streams.at(static_cast<std::size_t>(ops.at(2).stream)) == "comm:dp");

  const auto tp = traces::load_trace(dir + "tp4_pp2_1f1b_step.json");
  CHECK(tp.programs.size() == 2);
  CHECK(instances(tp) == 144);
  CHECK(tp.communicators.at(0).groups.size() == 2);
  CHECK(tp.global_rank(1, 5, 0) == 1);  // rank 5's pp group is [1, 5]

  const auto moe = traces::load_trace(dir + "moe_ep8_alltoall.json");
  CHECK(instances(moe) == 192);
  const auto sweep = traces::load_trace(dir + "allreduce_sweep_microbench.json");
  CHECK(instances(sweep) == 1760);
}

TEST_CASE("The stock traces load and agree across ranks", "[trace]") {
  for (const char* name : {"dp8-ddp-step", "tp8-pp2-2node-step", "moe-nvl72-alltoall", "llm-1024-tp8-dp128"}) {
    INFO(name);
    const auto t = traces::load_trace(testing::source_path(std::string("configs/traces/") + name + ".json"));
    CHECK(t.world_size >= 8);
    CHECK(instances(t) > 0);
  }
}

TEST_CASE("Malformed traces name the file, the JSON path and what was expected", "[trace]") {
  CHECK_THAT(errors_of(R"({"format": "fabsim-trace", "version": 2, "world_size": 1, "communicators": [], "programs": []})"),
             Catch::Contains("t.json: /version: version 2 is newer than this fabsim reads (up to 1)"));
  CHECK_THAT(errors_of(R"({"format": "chakra", "version": 1, "world_size": 1, "communicators": [], "programs": []})"),
             Catch::Contains("t.json: /format: expected \"fabsim-trace\""));
  CHECK_THAT(errors_of(one_op_trace(R"({"id": "a", "type": "allreduce", "comm": "nope", "bytes": 8})")),
             Catch::Contains("/programs/0/ops/0/comm: unknown communicator 'nope' (defined: c)"));
  CHECK_THAT(errors_of(one_op_trace(R"({"id": "a", "type": "alltogether", "comm": "c", "bytes": 8})")),
             Catch::Contains("/programs/0/ops/0/type: unknown op type 'alltogether'"));
  CHECK_THAT(errors_of(one_op_trace(R"({"id": "a", "type": "compute", "duration_ns": 5, "colour": "red"})")),
             Catch::Contains("/programs/0/ops/0/colour: unknown key 'colour'"));
  CHECK(errors_of(one_op_trace(R"({"id": "a", "type": "compute", "duration_ns": 5, "x-colour": "red"})")).empty());
  CHECK_THAT(errors_of(one_op_trace(R"({"id": "a", "type": "reducescatter", "comm": "c", "bytes": 9})")),
             Catch::Contains("/programs/0/ops/0/bytes: 9 bytes of a reducescatter must divide by the group size 2 of 'c'"));
  CHECK_THAT(errors_of(one_op_trace(R"({"id": "a", "type": "broadcast", "comm": "c", "bytes": 8, "root": 2})")),
             Catch::Contains("/programs/0/ops/0/root: root 2 is outside rank 0's group of 'c' (size 2)"));
  CHECK_THAT(errors_of(one_op_trace(R"({"id": "a", "type": "compute", "duration_ns": 5, "deps": ["ghost"]})")),
             Catch::Contains("op 'a' depends on 'ghost', which is not an op of this program"));
  CHECK_THAT(errors_of(one_op_trace(R"({"id": "a", "type": "compute", "duration_ns": 5})", 4, "[[0, 1], [1, 2]]")),
             Catch::Contains("/communicators/0/groups/1/0: rank 1 is already in group 0 of communicator 'c'"));
  CHECK_THAT(errors_of(one_op_trace(R"({"id": "a", "type": "alltoallv", "comm": "c", "matrix_bytes": [[0, 1]]})")),
             Catch::Contains("the alltoallv matrix_bytes has 2 entries; the group of 'c' holding rank 0 needs 4"));
  CHECK_THAT(errors_of(one_op_trace(R"({"id": "a", "type": "send", "comm": "c", "peer": 0, "bytes": 8})")),
             Catch::Contains("rank 0 names itself (group-local 0) as its peer"));
}

TEST_CASE("A receive of the wrong size is named with its send", "[trace]") {
  const auto text = R"({"format": "fabsim-trace", "version": 1, "world_size": 2, "communicators": [{"id": "pp", "groups": [[0, 1]]}],
    "programs": [{"ranks": [0], "ops": [{"id": "s", "type": "send", "comm": "pp", "peer": 1, "bytes": 64}]},
                 {"ranks": [1], "ops": [{"id": "r", "type": "recv", "comm": "pp", "peer": 0, "bytes": 32}]}]})";
  CHECK_THAT(errors_of(text), Catch::Contains("/programs/1/ops/0: send #1 from rank 0 to rank 1 on 'pp' (s) carries 64 B but the "
                                              "matching receive (r) expects 32 B"));
}

TEST_CASE("A count with a dtype stands for bytes, a count without one, or an unknown dtype, is an error", "[trace]") {
  const auto t = traces::parse_trace(nlohmann::json::parse(one_op_trace(R"({"id": "a", "type": "allreduce", "comm": "c", "count": 1024, "dtype": "bf16"})")), "t.json");
  CHECK(t.programs[0].ops[0].bytes == 2048);
  CHECK_THAT(errors_of(one_op_trace(R"({"id": "a", "type": "allreduce", "comm": "c", "count": 1024})")),
             Catch::Contains("/programs/0/ops/0/count: a count needs a dtype"));
  CHECK_THAT(errors_of(one_op_trace(R"({"id": "a", "type": "allreduce", "comm": "c", "bytes": 8, "dtype": "float"})")),
             Catch::Contains("/programs/0/ops/0/dtype: unknown dtype 'float'"));
}

TEST_CASE("The completion check runs a trace with replay's blocking semantics", "[trace]") {
  // Each rank sends to r+1, then receives from r-1: on one stream every send
  // waits for a receive that is queued behind a send. Deadlock.
  auto ring = [](bool one_stream) {
    nlohmann::json programs = nlohmann::json::array();
    for (int r = 0; r < 4; ++r)
      programs.push_back({{"ranks", {r}},
                          {"ops", {{{"id", "s"}, {"type", "send"}, {"comm", "world"}, {"peer", (r + 1) % 4}, {"bytes", 1024}, {"stream", "main"}},
                                   {{"id", "r"}, {"type", "recv"}, {"comm", "world"}, {"peer", (r + 3) % 4}, {"bytes", 1024},
                                    {"stream", one_stream ? "main" : "recv"}}}}});
    return traces::parse_trace({{"format", "fabsim-trace"}, {"version", 1}, {"world_size", 4},
                                {"communicators", {{{"id", "world"}, {"groups", {{0, 1, 2, 3}}}}}}, {"programs", programs}},
                               "ring.json");
  };
  const auto serial = ring(true);  // every send has its receive: the matching checks pass...
  CHECK_THROWS_WITH(traces::check_trace_completes(serial),
                    Catch::Contains("send #1 from rank 0 to rank 1 (op 's' on rank 0) waits for its matching recv on rank 1"));
  CHECK(traces::check_trace_completes(ring(false)));  // receives on their own stream: it finishes
  CHECK_FALSE(traces::check_trace_completes(ring(false), 3));  // past the budget: not judged
}
