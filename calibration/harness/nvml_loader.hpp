#pragma once
// NVML through dlopen: the harness builds without NVML headers and runs where
// the driver provides libnvidia-ml.so.1; without it, NVML figures are skipped.

#include <optional>
#include <string>
#include <vector>

namespace harness {

struct NvlinkInfo {
  int active_links = 0;
  int version = 0;               ///< NVLink generation of the first active link
  std::vector<std::string> remote_bus_ids;  ///< PCI bus id at the far end of each active link
};

struct PcieInfo {
  int generation = 0;
  int width = 0;
};

class Nvml {
 public:
  Nvml();   ///< loads and initialises NVML, or records why it could not
  ~Nvml();
  bool available() const { return ok_; }
  const std::string& why_not() const { return why_not_; }
  std::optional<NvlinkInfo> nvlink(int device) const;
  std::optional<PcieInfo> pcie(int device) const;

 private:
  void* lib_ = nullptr;
  bool ok_ = false;
  std::string why_not_;
};

}  // namespace harness
