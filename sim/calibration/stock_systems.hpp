#pragma once
/// Which stock topology a measured system runs on, from the free-text
/// description its data set gives.

#include <string>

namespace fabsim::calibration {

/// The stock topology a multi-node measured system runs on, from its free-text
/// system and GPU description and its node count. Shared by calibrate and validate.
struct StockSystem {
  std::string topology;   ///< file name in topologies/; empty when none models the system
  std::string gpu_model;  ///< catalogue key of its GPUs
};
StockSystem multi_node_stock_topology(const std::string& description, int nodes);

/// The stock single-node topology of a measured system, from its free-text GPU
/// and system description: an 8-GPU NVSwitch baseboard of its GPU generation
/// (HGX A100, H100, H200, B200). PCIe cards ("PCIe", "H100 NVL") have none.
/// Shared by calibrate and validate, so both read a description alike.
StockSystem single_node_stock_topology(const std::string& description);

/// The stock topology whose GPU-to-host PCIe path (GPU, PCIe switch, root
/// complex) stands for a measured GPU's, and the GPU's catalogue key: an SXM
/// H100 or H200 ("NVIDIA H200") sits on the HGX baseboard of hgx-h100-2node.
/// Empty topology when no stock file models the GPU's host path.
StockSystem host_path_system(const std::string& gpu);

}  // namespace fabsim::calibration
