#include "nvml_loader.hpp"

#include <dlfcn.h>

#include <cstdio>

namespace harness {

namespace {
// The few NVML entry points used, with NVML's C signatures.
using nvmlReturn_t = int;
using nvmlDevice_t = void*;
constexpr int kNvmlSuccess = 0;
constexpr int kMaxLinks = 18;  // NVML_NVLINK_MAX_LINKS on Hopper and Blackwell
struct PciInfo {  // nvmlPciInfo_t (v3 layout)
  char busIdLegacy[16];
  unsigned domain, bus, device, pciDeviceId, pciSubSystemId;
  char busId[32];
};
template <typename F>
F symbol(void* lib, const char* name) {
  return reinterpret_cast<F>(dlsym(lib, name));
}
}  // namespace

Nvml::Nvml() {
  lib_ = dlopen("libnvidia-ml.so.1", RTLD_NOW);
  if (lib_ == nullptr) {
    why_not_ = "libnvidia-ml.so.1 not found (no NVIDIA driver?)";
    return;
  }
  auto init = symbol<nvmlReturn_t (*)()>(lib_, "nvmlInit_v2");
  if (init == nullptr || init() != kNvmlSuccess) {
    why_not_ = "nvmlInit_v2 failed";
    return;
  }
  ok_ = true;
}

Nvml::~Nvml() {
  if (ok_) {
    if (auto shutdown = symbol<nvmlReturn_t (*)()>(lib_, "nvmlShutdown")) shutdown();
  }
  if (lib_ != nullptr) dlclose(lib_);
}

std::optional<NvlinkInfo> Nvml::nvlink(int index) const {
  if (!ok_) return std::nullopt;
  auto by_index = symbol<nvmlReturn_t (*)(unsigned, nvmlDevice_t*)>(lib_, "nvmlDeviceGetHandleByIndex_v2");
  auto state = symbol<nvmlReturn_t (*)(nvmlDevice_t, unsigned, int*)>(lib_, "nvmlDeviceGetNvLinkState");
  auto version = symbol<nvmlReturn_t (*)(nvmlDevice_t, unsigned, unsigned*)>(lib_, "nvmlDeviceGetNvLinkVersion");
  auto remote = symbol<nvmlReturn_t (*)(nvmlDevice_t, unsigned, PciInfo*)>(lib_, "nvmlDeviceGetNvLinkRemotePciInfo_v2");
  nvmlDevice_t dev = nullptr;
  if (by_index == nullptr || state == nullptr || by_index(static_cast<unsigned>(index), &dev) != kNvmlSuccess) return std::nullopt;
  NvlinkInfo info;
  for (unsigned link = 0; link < kMaxLinks; ++link) {
    int active = 0;
    if (state(dev, link, &active) != kNvmlSuccess || !active) continue;
    ++info.active_links;
    unsigned v = 0;
    if (info.version == 0 && version != nullptr && version(dev, link, &v) == kNvmlSuccess) info.version = static_cast<int>(v);
    PciInfo pci{};
    if (remote != nullptr && remote(dev, link, &pci) == kNvmlSuccess) info.remote_bus_ids.emplace_back(pci.busId);
  }
  return info;
}

std::optional<PcieInfo> Nvml::pcie(int index) const {
  if (!ok_) return std::nullopt;
  auto by_index = symbol<nvmlReturn_t (*)(unsigned, nvmlDevice_t*)>(lib_, "nvmlDeviceGetHandleByIndex_v2");
  auto gen = symbol<nvmlReturn_t (*)(nvmlDevice_t, unsigned*)>(lib_, "nvmlDeviceGetCurrPcieLinkGeneration");
  auto width = symbol<nvmlReturn_t (*)(nvmlDevice_t, unsigned*)>(lib_, "nvmlDeviceGetCurrPcieLinkWidth");
  nvmlDevice_t dev = nullptr;
  if (by_index == nullptr || gen == nullptr || width == nullptr || by_index(static_cast<unsigned>(index), &dev) != kNvmlSuccess)
    return std::nullopt;
  unsigned g = 0, w = 0;
  if (gen(dev, &g) != kNvmlSuccess || width(dev, &w) != kNvmlSuccess) return std::nullopt;
  return PcieInfo{static_cast<int>(g), static_cast<int>(w)};
}

}  // namespace harness
