#pragma once
/// Reported figures: data sets that give a plateau busbw in words ("~480 GB/s
/// with NVLS on 8 GPUs"), not a per-size sweep. `fabsim validate` predicts each
/// at nccl-tests' usual largest size and reports the error apart from the
/// per-size rows: they are rounded prose, and a range ("365-370") counts as
/// exact anywhere inside it.

#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/calibration/provenance.hpp"

namespace fabsim::cli {

struct ValidateOptions;

/// Where a data set gives no size, the size its plateau is predicted at:
/// nccl-tests' usual `-e 8G`, where every modelled algorithm has reached its
/// plateau (busbw moves under 1% from 4 to 8 GiB).
inline constexpr std::uint64_t kPlateauBytes = 8ull << 30;

struct ReportedFigure {
  std::size_t dataset_index = 0;  ///< in collective_datasets
  std::size_t row_index = 0;
  std::string id;                 ///< the data set's
  std::string collective;         ///< nccl-test --op
  std::string recorded;           ///< the row's algorithm text, as given
  std::string algorithm;          ///< nccl-test --algo it is predicted with
  int gpus = 0;
  int nodes = 1;                  ///< the data set's: across nodes a multi-node stock topology predicts it
  double low_GBps = 0;            ///< the measured busbw (a range: low..high)
  double high_GBps = 0;
  std::string topology;           ///< stock topology file
  std::string gpu_model;          ///< catalogue key of its GPU
  std::string family;             ///< "H100", "A100", ...
};

/// The figures of `doc` that a stock topology can predict: rows without a
/// size, with a busbw and a known GPU count, of data sets that give no
/// per-size times (single-node or multi-node). Rows that cannot be predicted go to `skipped`
/// ({"id", "row", "reason"}).
std::vector<ReportedFigure> plan_reported_figures(const nlohmann::json& doc, const ValidateOptions& options,
                                                  nlohmann::json& skipped);

/// The measured busbw a row gives: a number, "365-370", or "~230 (...)".
/// Empty when the text holds no figure.
std::optional<std::pair<double, double>> parse_reported_busbw(const nlohmann::json& value);

/// fabsim's predicted busbw (GB/s) and its algorithm/protocol at kPlateauBytes,
/// one child simulation per topology, GPU count and algorithm.
struct FigurePrediction {
  double busbw_GBps = 0;
  std::string algorithm;
  std::string protocol;
};
std::vector<FigurePrediction> predict_reported_figures(const std::vector<ReportedFigure>& figures, const ValidateOptions& options);

/// (predicted - measured) / measured time: 0 inside a range, else against
/// its nearer end (time is bytes over bandwidth, so measured busbw / predicted - 1).
double reported_figure_error(const ReportedFigure& figure, double predicted_busbw_GBps);

/// Every reported figure of `doc` against its prediction, one JSON object each
/// (measured and predicted busbw, error, in-sample or out-of-sample by `book`);
/// the rows that cannot be predicted go to `skipped`.
nlohmann::json check_reported_figures(const nlohmann::json& doc, const ValidateOptions& options, const calibration::SampleBook& book,
                                      nlohmann::json& skipped);

/// Figures, median and worst |error| of the checked figures, out of sample and in sample.
nlohmann::json reported_figures_summary(const nlohmann::json& figures);

/// The text report's table of the checked figures and the rows not predicted.
void print_reported_figures(std::ostream& out, const nlohmann::json& figures, const nlohmann::json& skipped);
void print_reported_figures_summary(std::ostream& out, const nlohmann::json& summary);

}  // namespace fabsim::cli
