#include "sim/calibration/stock_systems.hpp"

namespace fabsim::calibration {

StockSystem multi_node_stock_topology(const std::string& description, int nodes) {
  // GCP A3 Mega: 8 H100 and 8 GPUDirect-TCPXO NICs per VM.
  if (nodes == 2 && description.find("A3 Mega") != std::string::npos) return {"gcp-a3mega-2node.json", "h100-sxm"};
  return {};
}

}  // namespace fabsim::calibration
