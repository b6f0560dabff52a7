#pragma once
/// Adds devices and links to a TopologySpec, resolving models against its
/// catalogue and reporting unknown models as diagnostics at a JSON path.
/// The explicit reader and the generators both build through it.

#include <map>
#include <optional>
#include <string>

#include "sim/core/error.hpp"
#include "topologies/topology_spec.hpp"

namespace fabsim::topo {

class TopologyBuilder {
 public:
  TopologyBuilder(TopologySpec& spec, core::Diagnostics& diagnostics) : spec_(spec), diag_(diagnostics) {}

  /// Adds a device; returns its index, or -1 (with a diagnostic) when the
  /// model is unknown or the name taken.
  /// `model_path`, when given, is where an unknown-model error points.
  int add_device(std::string name, DeviceKind kind, const std::string& model, const std::string& json_path,
                 const std::string& model_path = "");
  /// Adds a link bundle; returns false (with a diagnostic) when the model is unknown.
  bool add_link(int a, int b, const std::string& model, int count, const std::string& json_path,
                std::optional<double> bandwidth = std::nullopt, std::optional<double> latency = std::nullopt,
                const std::string& model_path = "");

  /// The device of that name, or -1.
  int find(std::string_view name) const;

  /// Whole-fabric checks once every device and link is in: link kinds fit
  /// both ends, no device uses more ports of a kind than its model has, and
  /// there is a GPU.
  void check_ports();

  core::Diagnostics& diagnostics() { return diag_; }
  const TopologySpec& spec() const { return spec_; }

 private:
  TopologySpec& spec_;
  core::Diagnostics& diag_;
  std::map<std::string, int, std::less<>> index_;
};

}  // namespace fabsim::topo
