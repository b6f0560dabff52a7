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

bool is_point_to_point(TraceOpType type) {
  return type == TraceOpType::kSend || type == TraceOpType::kRecv || type == TraceOpType::kP2PBatch;
}

bool is_collective(TraceOpType type) { return type != TraceOpType::kCompute && !is_point_to_point(type); }

}  // namespace fabsim::traces
