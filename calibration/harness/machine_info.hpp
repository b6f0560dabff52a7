#pragma once
// The machine as the harness finds it: GPUs, driver, CUDA and NCCL versions,
// NVLink links and PCIe links per GPU (NVML), and which GPU pairs can reach
// each other's memory directly.

#include <nlohmann/json.hpp>

#include "nvml_loader.hpp"

namespace harness {

nlohmann::json describe_machine(const Nvml& nvml, nlohmann::json& skipped);

}  // namespace harness
