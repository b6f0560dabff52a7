#pragma once
// Every CUDA, NCCL and NVML call is checked: a failure names the call, the
// file and line, and the library's own message, then stops the harness.

#include <cuda_runtime.h>
#include <nccl.h>

#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>

namespace harness {

struct HarnessError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

inline void cuda_check(cudaError_t e, const char* call, const char* file, int line) {
  if (e != cudaSuccess)
    throw HarnessError(std::string(call) + " failed at " + file + ":" + std::to_string(line) + ": " + cudaGetErrorString(e));
}
inline void nccl_check(ncclResult_t r, const char* call, const char* file, int line) {
  if (r != ncclSuccess)
    throw HarnessError(std::string(call) + " failed at " + file + ":" + std::to_string(line) + ": " + ncclGetErrorString(r));
}

}  // namespace harness

#define CUDA_CHECK(call) ::harness::cuda_check((call), #call, __FILE__, __LINE__)
#define NCCL_CHECK(call) ::harness::nccl_check((call), #call, __FILE__, __LINE__)
