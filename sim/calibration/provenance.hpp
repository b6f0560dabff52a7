#pragma once
/// Which measurements the model was fitted on. The catalogue's parameters list
/// the data sets they were fitted on or derived from (`fitted_on`), and each
/// data set names its run (`provenance.run`): data sets of one run are one
/// measurement, or copies of one. A prediction of a data set is in-sample when
/// a parameter was fitted on any data set of its run.

#include <map>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace fabsim::calibration {

struct FittedParameter {
  std::string path;                   ///< JSON path in the catalogue, e.g. "gpus/h100-sxm/launch_overhead"
  std::vector<std::string> datasets;  ///< its fitted_on ids
};

/// Every parameter of a catalogue document (or a calibration patch) that has a
/// `fitted_on` list, in document order.
std::vector<FittedParameter> fitted_parameters(const nlohmann::json& catalogue);

class SampleBook {
 public:
  /// `measurements` is a document of the published-measurements.json form.
  SampleBook(const nlohmann::json& measurements, std::vector<FittedParameter> fitted);

  /// The run of a data set: its provenance.run, else its own id.
  const std::string& run_of(const std::string& id) const;
  /// The ids of the data sets of a run.
  std::vector<std::string> run_members(const std::string& run) const;
  /// Catalogue paths of the parameters fitted on this data set or another of its run.
  std::vector<std::string> fitted_on(const std::string& id) const;
  bool in_sample(const std::string& id) const { return !fitted_on(id).empty(); }
  /// Every data set of the document, in document order, with the parameters fitted on its run.
  std::vector<std::pair<std::string, std::vector<std::string>>> marks() const;
  /// fitted_on ids the measurements document does not have.
  std::vector<std::string> unknown_ids() const;
  const std::vector<FittedParameter>& parameters() const { return fitted_; }

 private:
  std::vector<FittedParameter> fitted_;
  std::map<std::string, std::string> run_;  ///< id -> run
  std::vector<std::string> order_;          ///< ids in document order
};

}  // namespace fabsim::calibration
