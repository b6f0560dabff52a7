#pragma once
/// What an NCCL kernel of a Kineto trace did, from the best source there is:
/// its own "Collective name" arguments (PyTorch 2.1+), the record_param_comms
/// it shares an External id with or that encloses its nccl:* annotation, the
/// annotation alone (`nccl:all_reduce`, with Input Dims and Input type), and
/// last its kernel name (`ncclKernel_AllReduce_RING_LL_Sum_float`), which
/// gives the type but not the size.

#include <cstdint>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "sim/core/units.hpp"

namespace fabsim::traces::kineto {

/// Native type of a PyTorch collective name ("allreduce", "_allgather_base",
/// "all_to_all", "send", ...), or "" when it has none.
std::string native_type_of_collective(const std::string& collective);

/// Native type implied by an NCCL kernel name: "allreduce", ..., "sendrecv"
/// (send, recv or all-to-all: the kernel cannot tell), or "" when unknown.
std::string native_type_of_kernel(const std::string& kernel_name);

/// Element size and native name of a profiler dtype, either spelling:
/// record_param_comms's ("Float", "BFloat16") or Input type's ("float",
/// "c10::BFloat16", "unsigned char"). 0 when unknown.
core::Bytes element_bytes(const std::string& dtype, std::string& native);

/// An nccl:* annotation read alone: the op, the bytes of its first input
/// tensor, and the peer of "nccl:send 0->2" / "nccl:recv 2<-0".
struct AnnotatedCollective {
  std::string type;        ///< native, "" when unknown
  std::optional<core::Bytes> bytes;  ///< none: Input Dims absent or a TensorList
  std::string dtype;
  int peer = -1;           ///< global rank
};
AnnotatedCollective read_annotation(const std::string& name, const nlohmann::json& args);

}  // namespace fabsim::traces::kineto
