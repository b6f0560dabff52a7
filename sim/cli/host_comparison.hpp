#pragma once
/// What one GPU can tell about the catalogue: the calibration harness's host
/// figures (pinned copies, the GPU's read round trip to host memory, kernel
/// launches, NCCL's call on one rank) set beside the catalogue values they
/// bear on. Comparisons, not fits: each says how far the catalogue is from
/// the measurement and why the two are (or are not) the same quantity.

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "sim/calibration/measurements.hpp"

namespace fabsim::cli {

struct HostComparison {
  std::string quantity;   ///< what was measured
  std::string unit;       ///< "GB/s" or "us"
  double measured = 0;    ///< median over the harness runs given
  int runs = 0;           ///< how many runs it is the median of
  double catalogue = 0;   ///< the modelled counterpart, from the catalogue
  std::string catalogue_from;  ///< which catalogue values, and how they combine
  std::string meaning;         ///< how the two relate (same quantity, bound, ...)
  /// The catalogue values the modelled figure sums (key path as in a
  /// catalogue patch, e.g. "links/pcie-gen5-x16/latency", and value in us).
  std::vector<std::pair<std::string, double>> terms;

  double ratio() const { return catalogue > 0 ? measured / catalogue : 0; }
  nlohmann::json to_json() const;
};

/// Every pinned host-to-device and device-to-host copy rate (GB/s) the harness runs in `all` hold.
std::vector<double> pinned_copy_rates_gbps(const std::vector<calibration::Measurements>& all);

/// The comparisons the harness runs in `all` support (none when they hold no
/// host figures). `pcie_link` is the catalogue's model of the GPU's PCIe link;
/// the GPU's path to host memory is read from the stock topology of its
/// system (calibration::host_path_system) in `topology_dir`. What cannot be
/// compared goes to `skipped`.
std::vector<HostComparison> compare_host_figures(const std::vector<calibration::Measurements>& all, const std::string& pcie_link,
                                                 const std::string& topology_dir, std::vector<std::string>& skipped);

/// When the GPU's measured read round trip to host memory is below the
/// catalogue's path (the bound broken), a catalogue patch scaling every
/// latency on the path by measured / modelled, and the fitted entries for the
/// profile's record; nothing (null) when the bound holds or there is no such row.
nlohmann::json fit_host_path(const std::vector<HostComparison>& comparisons, nlohmann::json& fitted);

}  // namespace fabsim::cli
