#include "machine_info.hpp"

#include "checks.hpp"

namespace harness {

nlohmann::json describe_machine(const Nvml& nvml, nlohmann::json& skipped) {
  int count = 0, driver = 0, runtime = 0, nccl = 0;
  CUDA_CHECK(cudaGetDeviceCount(&count));
  CUDA_CHECK(cudaDriverGetVersion(&driver));
  CUDA_CHECK(cudaRuntimeGetVersion(&runtime));
  NCCL_CHECK(ncclGetVersion(&nccl));
  nlohmann::json m = {{"gpu_count", count}, {"cuda_driver", driver}, {"cuda_runtime", runtime}, {"nccl", nccl}, {"gpus", nlohmann::json::array()}};
  if (!nvml.available()) skipped.push_back("NVLink and PCIe link state: " + nvml.why_not());
  for (int d = 0; d < count; ++d) {
    cudaDeviceProp p{};
    CUDA_CHECK(cudaGetDeviceProperties(&p, d));
    char bus[32] = {};
    CUDA_CHECK(cudaDeviceGetPCIBusId(bus, sizeof bus, d));
    nlohmann::json g = {{"index", d}, {"name", p.name}, {"pci_bus_id", bus}, {"sm_count", p.multiProcessorCount},
                        {"compute_capability", std::to_string(p.major) + "." + std::to_string(p.minor)},
                        {"memory_bytes", p.totalGlobalMem}};
    if (const auto nv = nvml.nvlink(d)) g["nvlink"] = {{"active_links", nv->active_links}, {"version", nv->version}, {"remote_pci_bus_ids", nv->remote_bus_ids}};
    if (const auto pcie = nvml.pcie(d)) g["pcie"] = {{"generation", pcie->generation}, {"width", pcie->width}};
    m["gpus"].push_back(g);
  }
  // The GPU-to-GPU connection matrix: direct access and CUDA's performance rank.
  nlohmann::json matrix = nlohmann::json::array();
  for (int a = 0; a < count; ++a) {
    nlohmann::json row = nlohmann::json::array();
    for (int b = 0; b < count; ++b) {
      if (a == b) {
        row.push_back(nullptr);
        continue;
      }
      int access = 0, rank = 0;
      CUDA_CHECK(cudaDeviceGetP2PAttribute(&access, cudaDevP2PAttrAccessSupported, a, b));
      CUDA_CHECK(cudaDeviceGetP2PAttribute(&rank, cudaDevP2PAttrPerformanceRank, a, b));
      row.push_back({{"p2p", access != 0}, {"performance_rank", rank}});
    }
    matrix.push_back(row);
  }
  m["connections"] = matrix;
  return m;
}

}  // namespace harness
