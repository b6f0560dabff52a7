#pragma once
/// `fabsim validate --refit`: leave one run out. For every run with in-sample
/// data sets, the latency parameters fitted on it (launch overhead, LL step
/// latency, reduce latency) are refitted by `fabsim calibrate --fit latencies`
/// on the other data sets they were fitted on, and the run's data sets are
/// predicted again. Parameters fitted on that run alone cannot be refitted
/// without it; they are listed as still in-sample.

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/calibration/accuracy_summary.hpp"
#include "sim/calibration/provenance.hpp"
#include "sim/cli/validate_plan.hpp"

namespace fabsim::cli {

/// The catalogue parameters fitted on a data set's run that can change its
/// prediction: every link, switch and NIC parameter, and its own GPU model's.
std::vector<std::string> relevant_fitted(const calibration::SampleBook& book, const DatasetPlan& plan);

/// One report entry per refitted run; the refitted predictions' errors go to `rows`
/// (in_sample marks rows whose data set still fixed some parameter).
nlohmann::json refit_in_sample(const std::vector<DatasetPlan>& plans, const calibration::SampleBook& book, const nlohmann::json& doc,
                               const ValidateOptions& options, std::vector<calibration::ErrorRow>& rows);

}  // namespace fabsim::cli
