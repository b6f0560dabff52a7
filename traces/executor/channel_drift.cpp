#include "traces/executor/channel_drift.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

namespace fabsim::traces {

double normal_quantile(double p) {
  // P. J. Acklam, "An algorithm for computing the inverse normal cumulative distribution function" (2003).
  static constexpr double a[] = {-3.969683028665376e+01, 2.209460984245205e+02, -2.759285104469687e+02,
                                 1.383577518672690e+02,  -3.066479806614716e+01, 2.506628277459239e+00};
  static constexpr double b[] = {-5.447609879822406e+01, 1.615858368580409e+02, -1.556989798598866e+02,
                                 6.680131188771972e+01,  -1.328068155288572e+01};
  static constexpr double c[] = {-7.784894002430293e-03, -3.223964580411365e-01, -2.400758277161838e+00,
                                 -2.549732539343734e+00, 4.374664141464968e+00,  2.938163982698783e+00};
  static constexpr double d[] = {7.784695709041462e-03, 3.224671290700398e-01, 2.445134137142996e+00, 3.754408661907416e+00};
  constexpr double low = 0.02425, high = 1 - low;
  if (p < low) {
    const double q = std::sqrt(-2 * std::log(p));
    return (((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) / ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1);
  }
  if (p > high) {
    const double q = std::sqrt(-2 * std::log(1 - p));
    return -(((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) / ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1);
  }
  const double q = p - 0.5, r = q * q;
  return (((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5]) * q /
         (((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1);
}

double expected_normal_maximum(int n) {
  // Blom's approximation of the largest order statistic.
  return n <= 1 ? 0.0 : normal_quantile((n - 0.375) / (n + 0.25));
}

core::TimePs channel_drift(const CollectivePlan& plan, const topo::ChannelDrift& drift) {
  if (!drift.active() || plan.protocol != "Simple" || plan.algorithm == "P2P" || plan.transfers.empty()) return 0;
  // Bytes each rank puts on its links: in-switch reductions take every member's copy.
  std::vector<double> sent(static_cast<std::size_t>(plan.ranks), 0.0);
  for (const auto& t : plan.transfers) {
    if (t.kind == models::TransferKind::kReduceInSwitch || t.kind == models::TransferKind::kAllReduceInSwitch) {
      if (t.switch_group < 0) {
        for (auto& bytes : sent) bytes += static_cast<double>(t.payload);
      } else {
        for (int r : plan.switch_groups[static_cast<std::size_t>(t.switch_group)]) sent[static_cast<std::size_t>(r)] += static_cast<double>(t.payload);
      }
    } else {
      sent[static_cast<std::size_t>(t.issuer())] += static_cast<double>(t.payload);
    }
  }
  const int channels = std::max(1, plan.channels);
  const double units = *std::max_element(sent.begin(), sent.end()) / channels / static_cast<double>(drift.unit);
  const double ps = units * static_cast<double>(drift.mean) + std::sqrt(units) * static_cast<double>(drift.sd) * expected_normal_maximum(channels);
  return core::saturating_ps(std::round(ps));
}

}  // namespace fabsim::traces
