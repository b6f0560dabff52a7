#pragma once
/// How each measured sweep was launched (nccl-tests `-g`: the GPUs one process
/// drives), and the latency-bound errors by launch. A single thread launching
/// NCCL on several GPUs pays per-call CPU costs a process per GPU does not
/// (nccl-tests#333: "the CUDA latency overheads of single process jobs"), and
/// fabsim's per-call launch base was fitted on one launch: the summary shows
/// which errors come from runs launched otherwise.

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/calibration/accuracy_summary.hpp"

namespace fabsim::cli {

/// A data set's optional `gpus_per_process` (1 to its GPU count); nullopt when
/// absent or null. Anything else is a core::ConfigError naming `file` and `at`.
std::optional<int> gpus_per_process(const nlohmann::json& dataset, const std::string& file, const std::string& at);

/// "one process per GPU (nccl-tests -g 1)", "one process drives 4 GPUs (nccl-tests -g 4)" or "not recorded".
std::string launch_description(std::optional<int> gpus_per_process);

/// One line per sample (in-sample first) and launch: the latency-bound rows, their median |error|.
struct LaunchGroup {
  bool in_sample = false;
  std::optional<int> gpus_per_process;
  std::size_t sizes = 0;
  double median_error = 0;
};
std::vector<LaunchGroup> latency_by_launch(const std::vector<calibration::ErrorRow>& rows);

}  // namespace fabsim::cli
