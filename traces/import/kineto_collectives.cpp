#include "traces/import/kineto_collectives.hpp"

#include <cstdio>
#include <map>

#include "sim/core/limits.hpp"

namespace fabsim::traces::kineto {

std::string native_type_of_collective(const std::string& collective) {
  static const std::map<std::string, std::string> kTypes = {
      {"allreduce", "allreduce"},       {"all_reduce", "allreduce"},
      {"allreduce_coalesced", "allreduce"},
      {"all_gather", "allgather"},       {"allgather", "allgather"},
      {"_allgather_base", "allgather"},  {"_all_gather_base", "allgather"},
      {"all_gather_into_tensor", "allgather"}, {"allgather_into_tensor_coalesced", "allgather"},
      {"reduce_scatter", "reducescatter"}, {"_reduce_scatter_base", "reducescatter"},
      {"reduce_scatter_tensor", "reducescatter"}, {"reduce_scatter_tensor_coalesced", "reducescatter"},
      {"all_to_all", "alltoall"},        {"all_to_all_single", "alltoall"}, {"alltoall_base", "alltoall"},
      {"all_to_allv", "alltoallv"},      {"broadcast", "broadcast"},        {"reduce", "reduce"},
      {"gather", "gather"},              {"scatter", "scatter"},            {"send", "send"},
      {"recv", "recv"},                  {"recv_any_source", "recv"},      {"barrier", "barrier"},
      {"_reduce_oop", "reduce"},         {"allgather_coalesced", "allgather"}, {"all_gather_coalesced", "allgather"},
      {"_reduce_scatter_tensor_coalesced", "reducescatter"}};
  const auto it = kTypes.find(collective);
  return it == kTypes.end() ? std::string() : it->second;
}

std::string native_type_of_kernel(const std::string& kernel_name) {
  std::string rest;
  for (const char* prefix : {"ncclKernel_", "ncclDevKernel_"})
    if (kernel_name.rfind(prefix, 0) == 0) rest = kernel_name.substr(std::string(prefix).size());
  const std::string op = rest.substr(0, rest.find_first_of("_("));
  static const std::map<std::string, std::string> kTypes = {
      {"AllReduce", "allreduce"}, {"AllGather", "allgather"}, {"ReduceScatter", "reducescatter"},
      {"Broadcast", "broadcast"}, {"Reduce", "reduce"},       {"SendRecv", "sendrecv"}};
  const auto it = kTypes.find(op);
  return it == kTypes.end() ? std::string() : it->second;
}

core::Bytes element_bytes(const std::string& dtype, std::string& native) {
  static const std::map<std::string, std::pair<const char*, core::Bytes>> kTypes = {
      // record_param_comms spells ScalarType names...
      {"Float", {"f32", 4}}, {"Half", {"f16", 2}}, {"BFloat16", {"bf16", 2}}, {"Double", {"f64", 8}},
      {"Long", {"i64", 8}}, {"Int", {"i32", 4}}, {"Short", {"f16", 2}}, {"Char", {"i8", 1}}, {"Byte", {"u8", 1}},
      {"Bool", {"u8", 1}}, {"Float8_e4m3fn", {"f8e4m3", 1}}, {"Float8_e5m2", {"f8e5m2", 1}},
      // ...and "Input type" the C++ ones.
      {"float", {"f32", 4}}, {"c10::Half", {"f16", 2}}, {"c10::BFloat16", {"bf16", 2}}, {"double", {"f64", 8}},
      {"long int", {"i64", 8}}, {"long", {"i64", 8}}, {"int", {"i32", 4}}, {"short int", {"f16", 2}}, {"short", {"f16", 2}},
      {"signed char", {"i8", 1}}, {"unsigned char", {"u8", 1}}, {"bool", {"u8", 1}},
      {"c10::Float8_e4m3fn", {"f8e4m3", 1}}, {"c10::Float8_e5m2", {"f8e5m2", 1}}};
  const auto it = kTypes.find(dtype);
  if (it == kTypes.end()) return 0;
  native = it->second.first;  // 2-byte integers replay as f16: the same width
  return it->second.second;
}

AnnotatedCollective read_annotation(const std::string& name, const nlohmann::json& args) {
  AnnotatedCollective a;
  const std::string body = name.substr(5);  // after "nccl:"
  a.type = native_type_of_collective(body.substr(0, body.find(' ')));
  int x = -1, y = -1;
  if (std::sscanf(body.c_str(), "send %d->%d", &x, &y) == 2 || std::sscanf(body.c_str(), "recv %d<-%d", &x, &y) == 2) a.peer = y;
  const auto dims = args.find("Input Dims");
  const auto types = args.find("Input type");
  if (dims == args.end() || types == args.end() || !dims->is_array() || !types->is_array() || dims->empty() || types->empty() ||
      !(*dims)[0].is_array() || (*dims)[0].empty() || !(*types)[0].is_string())
    return a;
  const core::Bytes element = element_bytes((*types)[0].get<std::string>(), a.dtype);
  if (element == 0) return a;
  core::Bytes total = element;
  for (const auto& d : (*dims)[0]) {
    if (!d.is_number_integer() || d.get<std::int64_t>() < 0) return a;
    const auto n = d.get<std::uint64_t>();
    if (n != 0 && total > core::kMaxBytes / n) return a;
    total *= n;
  }
  a.bytes = total;
  return a;
}

}  // namespace fabsim::traces::kineto
