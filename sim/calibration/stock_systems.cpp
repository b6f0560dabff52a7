#include "sim/calibration/stock_systems.hpp"

#include <cctype>

namespace fabsim::calibration {

namespace {

/// A PCIe card rather than an SXM module on a baseboard: "PCIe" or the
/// H100 NVL card (NVL as a word: not NVLink, not NVL72). No std::regex: its
/// recursion overflows the stack on long descriptions.
bool pcie_card(const std::string& text) {
  if (text.find("PCIe") != std::string::npos) return true;
  const auto word_char = [&](std::size_t i) { return i < text.size() && std::isalnum(static_cast<unsigned char>(text[i])); };
  for (auto at = text.find("NVL"); at != std::string::npos; at = text.find("NVL", at + 1))
    if ((at == 0 || !word_char(at - 1)) && !word_char(at + 3)) return true;
  return false;
}

bool names(const std::string& text, const char* word) { return text.find(word) != std::string::npos; }

}  // namespace

StockSystem multi_node_stock_topology(const std::string& description, int nodes) {
  // GB200 NVL72 racks (one NVLink domain each, a "node" to NCCL's MNNVL) on InfiniBand: the two
  // stock cluster files, 2 racks on one rail tier and 20 on a three-tier fat tree.
  if (names(description, "NVL72") && names(description, "GB200")) {
    // One NVLink partition of each of three racks (NCCL: one node per partition), InfiniBand between them.
    if (nodes == 3 && names(description, "NVL4 NVLink partition")) return {"gb200-nvl4-3rack.json", "gb200"};
    if (nodes == 3 && names(description, "NVL8 NVLink partition")) return {"gb200-nvl8-3rack.json", "gb200"};
    if (nodes == 2) return {"gb200-nvl72-2rack.json", "gb200"};
    if (nodes == 20) return {"gb200-nvl72-20rack.json", "gb200"};
    return {};
  }
  // GCP A3 Mega: 8 H100 and 8 GPUDirect-TCPXO NICs per VM.
  if (nodes == 2 && names(description, "A3 Mega")) return {"gcp-a3mega-2node.json", "h100-sxm"};
  // GCP A3 Ultra: 8 H200 and 8 ConnectX-7 RoCE NICs per VM.
  if (nodes == 2 && names(description, "A3 Ultra")) return {"gcp-a3ultra-2node.json", "h200-sxm"};
  // AWS p5.48xlarge: 8 H100 and a 400 Gb/s EFA device per GPU, up to 32 instances.
  if (nodes >= 2 && nodes <= 32 && names(description, "p5.48xlarge")) return {"aws-p5-32node.json", "h100-sxm"};
  // HGX/DGX H100 nodes with a 400 Gb/s InfiniBand NIC per GPU: two on the stock pair, three to 32
  // on the first nodes of the 1,024-GPU fat tree (its first 32 nodes share one leaf per rail, so
  // their traffic never leaves a leaf, as on one rail switch per NIC index).
  const bool ndr = names(description, "InfiniBand") && (names(description, "NDR") || names(description, "400 Gb/s"));
  if (ndr && names(description, "H100") && !pcie_card(description)) {
    if (nodes == 2) return {"hgx-h100-2node.json", "h100-sxm"};
    if (nodes > 2 && nodes <= 32) return {"ib-fat-tree-1024.json", "h100-sxm"};
  }
  // HGX H100 nodes with a 400 Gb/s RoCE NIC per GPU: the first nodes of the 2,048-GPU rail fabric
  // (its first 64 nodes share one leaf per rail).
  const bool roce400 = names(description, "RoCE") && (names(description, "400 Gb/s") || names(description, "400G"));
  if (roce400 && names(description, "H100") && !pcie_card(description) && nodes >= 2 && nodes <= 64)
    return {"roce-rail-2048.json", "h100-sxm"};
  return {};
}

StockSystem single_node_stock_topology(const std::string& description) {
  if (pcie_card(description)) return {};
  // A GB200 NVL72 rack: one NVLink domain of 72 GPUs (NCCL's MNNVL treats it as one node).
  if (names(description, "NVL72") && names(description, "GB200")) return {"gb200-nvl72.json", "gb200"};
  if (names(description, "H200")) return {"hgx-h200.json", "h200-sxm"};
  if (names(description, "H100")) return {"hgx-h100.json", "h100-sxm"};
  if (names(description, "A100")) return {"dgx-a100.json", "a100-sxm"};
  if (names(description, "B200")) return {"hgx-b200.json", "b200"};
  return {};
}

StockSystem host_path_system(const std::string& gpu) {
  // The HGX H100 and H200 baseboards are one design (hardware-specs.json 'NVLink4 (H100/H200/GH200)'):
  // each GPU behind a PCIe Gen5 switch on the way to the CPU, as the stock HGX nodes with NICs model it.
  if (pcie_card(gpu)) return {};
  if (names(gpu, "H200")) return {"hgx-h100-2node.json", "h200-sxm"};
  if (names(gpu, "H100")) return {"hgx-h100-2node.json", "h100-sxm"};
  return {};
}

}  // namespace fabsim::calibration
