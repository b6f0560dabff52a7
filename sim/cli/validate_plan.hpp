#pragma once
/// The data sets `fabsim validate` can run, with the topology and algorithm
/// each runs on, and the prediction of one (a child simulation).

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "traces/collectives/nccl_version.hpp"

namespace fabsim::cli {

struct ValidateOptions;

struct DatasetPlan {
  std::size_t index = 0;   ///< in collective_datasets
  std::string id;
  const nlohmann::json* dataset = nullptr;
  std::string topology;    ///< stock topology file
  std::string gpu_model;   ///< catalogue key of its GPU ("h100-sxm")
  std::string algorithm;   ///< what NCCL ran, forced or logged, else "auto"
  /// The data set's NCCL release, when it names one whose tuner fabsim has
  /// read; its choice of algorithm follows that release's constants.
  std::optional<traces::NcclVersion> nccl_version;
  std::string nccl_tuner;  ///< traces::nccl_tuner_description, and why the data set's version was not used, if so
  std::optional<int> gpus_per_process;  ///< nccl-tests -g of the run, where the data set records it
  std::vector<const nlohmann::json*> rows;  ///< rows with a byte count > 0 and a time
  std::vector<std::string> choices;         ///< per row: its nccl_choice ("tree/LL128"), "" without one
};

/// A data set's string field, or "" when it is missing or not a string.
std::string string_member(const nlohmann::json& object, const char* key);

/// A per-size row validate compares: a byte count > 0 and a time.
bool is_time_row(const nlohmann::json& row);

/// The runnable data sets of `doc`; the others go to `skipped` ({"id", "reason"}).
std::vector<DatasetPlan> plan_datasets(const nlohmann::json& doc, const ValidateOptions& options, nlohmann::json& skipped);

/// fabsim's rows (nccl-test JSON) for a data set, by size; `calibration` may be empty.
std::map<std::uint64_t, nlohmann::json> predict_dataset(const DatasetPlan& plan, const ValidateOptions& options,
                                                        const std::string& calibration);

}  // namespace fabsim::cli
