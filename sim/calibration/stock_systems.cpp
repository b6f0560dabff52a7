#include "sim/calibration/stock_systems.hpp"

namespace fabsim::calibration {

StockSystem multi_node_stock_topology(const std::string& description, int nodes) {
  // GCP A3 Mega: 8 H100 and 8 GPUDirect-TCPXO NICs per VM.
  if (nodes == 2 && description.find("A3 Mega") != std::string::npos) return {"gcp-a3mega-2node.json", "h100-sxm"};
  return {};
}

StockSystem host_path_system(const std::string& gpu) {
  // The HGX H100 and H200 baseboards are one design (hardware-specs.json 'NVLink4 (H100/H200/GH200)'):
  // each GPU behind a PCIe Gen5 switch on the way to the CPU, as the stock HGX nodes with NICs model it.
  const bool pcie_card = gpu.find("PCIe") != std::string::npos || gpu.find("NVL") != std::string::npos;
  if (pcie_card) return {};
  if (gpu.find("H200") != std::string::npos) return {"hgx-h100-2node.json", "h200-sxm"};
  if (gpu.find("H100") != std::string::npos) return {"hgx-h100-2node.json", "h100-sxm"};
  return {};
}

}  // namespace fabsim::calibration
