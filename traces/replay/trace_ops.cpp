#include <array>
#include <utility>

#include "traces/replay/trace.hpp"

namespace fabsim::traces {

namespace {
constexpr std::array<std::pair<TraceOpType, const char*>, 14> kNames{{
    {TraceOpType::kCompute, "compute"},
    {TraceOpType::kAllReduce, "allreduce"},
    {TraceOpType::kAllGather, "allgather"},
    {TraceOpType::kReduceScatter, "reducescatter"},
    {TraceOpType::kAllToAll, "alltoall"},
    {TraceOpType::kAllToAllv, "alltoallv"},
    {TraceOpType::kBroadcast, "broadcast"},
    {TraceOpType::kReduce, "reduce"},
    {TraceOpType::kGather, "gather"},
    {TraceOpType::kScatter, "scatter"},
    {TraceOpType::kBarrier, "barrier"},
    {TraceOpType::kSend, "send"},
    {TraceOpType::kRecv, "recv"},
    {TraceOpType::kP2PBatch, "p2p_batch"},
}};
}  // namespace

std::string trace_op_name(TraceOpType type) {
  for (const auto& [t, name] : kNames)
    if (t == type) return name;
  return "?";
}

std::optional<TraceOpType> parse_trace_op(std::string_view name) {
  for (const auto& [t, n] : kNames)
    if (name == n) return t;
  return std::nullopt;
}

std::string trace_op_names() {
  std::string out;
  for (const auto& [t, name] : kNames) out += (out.empty() ? "" : ", ") + std::string(name);
  return out;
}

std::optional<core::Bytes> dtype_size(std::string_view dtype) {
  static constexpr std::pair<const char*, core::Bytes> kSizes[] = {{"i8", 1},  {"u8", 1},   {"i32", 4}, {"u32", 4},
                                                                   {"i64", 8}, {"u64", 8},  {"f16", 2}, {"bf16", 2},
                                                                   {"f32", 4}, {"f64", 8}, {"f8e4m3", 1}, {"f8e5m2", 1}};
  for (const auto& [name, size] : kSizes)
    if (dtype == name) return size;
  return std::nullopt;
}

bool is_point_to_point(TraceOpType type) {
  return type == TraceOpType::kSend || type == TraceOpType::kRecv || type == TraceOpType::kP2PBatch;
}

bool is_collective(TraceOpType type) { return type != TraceOpType::kCompute && !is_point_to_point(type); }

}  // namespace fabsim::traces
