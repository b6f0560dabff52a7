#include "sim/cli/work_estimate.hpp"

#include <fmt/format.h>
#include <fmt/ostream.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <ostream>
#include <tuple>
#include <vector>

#include "sim/core/error.hpp"
#include "topologies/network_segments.hpp"
#include "topologies/nvlink_domains.hpp"
#include "traces/collectives/chain_planner.hpp"
#include "traces/nccl_test_runner.hpp"
#include "traces/replay/trace.hpp"

namespace fabsim::cli {

namespace {

/// Events per segment along a path: GPU, switch, GPU inside a box; GPU,
/// PCIe, NIC and network switches across boxes.
int path_hops(const topo::TopologySpec& spec) {
  for (const auto& d : spec.devices)
    if (d.kind == topo::DeviceKind::kNic) return 6;
  return 3;
}

int channels_of(const topo::TopologySpec& spec) { return spec.gpus.empty() ? 1 : std::max(1, spec.gpu_model(0).ring_channels); }

/// Paths a transfer between two GPUs of a node is striped over: the NVLink
/// switch chips the first GPU is linked to (18 on an NVL72 rack, 4 on HGX H100).
int nvlink_stripes(const topo::TopologySpec& spec) {
  if (spec.gpus.empty()) return 1;
  const int gpu = spec.gpus.front();
  std::vector<int> switches;
  for (const auto& link : spec.links) {
    if (link.kind != topo::LinkKind::kNvlink || (link.a != gpu && link.b != gpu)) continue;
    const int other = link.a == gpu ? link.b : link.a;
    if (spec.devices[static_cast<std::size_t>(other)].kind == topo::DeviceKind::kSwitch) switches.push_back(other);
  }
  std::sort(switches.begin(), switches.end());
  return std::max<int>(1, static_cast<int>(std::unique(switches.begin(), switches.end()) - switches.begin()));
}

/// An all-to-all's events are dearer than a ring's: every pair's segments are
/// in flight at once on the same ports (0.24-0.57 M events/s measured for 72
/// and 144 ranks of NVL72 racks, against the 1.4-3 M of the stock sweeps), so
/// each counts this many times against the budgets.
constexpr double kAllToAllEventWeight = 6.0;

std::string advice(double events) {
  return fmt::format("about {:.2g} kernel events at segment level, more than fabsim runs ({:.0e}, a few minutes): use --model flow "
                     "(parameters/model \"flow\" in a scenario), or a larger segment size",
                     events, kMaxSegmentEvents);
}

/// An all-to-all of n ranks holds n(n-1) point-to-point flows at once.
void check_all_to_all_flows(double ranks, const std::string& origin) {
  const double flows = ranks * (ranks - 1);
  if (flows > kMaxAllToAllFlows)
    throw core::ConfigError(origin, "", fmt::format("an all-to-all of {:.0f} ranks holds about {:.2g} flows at flow level, more than fabsim runs "
                                                    "in about a minute ({:.1e}: each is routed, solved and timed, at about 0.7 KiB): "
                                                    "use fewer ranks",
                                                    ranks, flows, kMaxAllToAllFlows));
}

/// NVLS moves each chunk as reduce pieces up and copies down on every switch
/// plane: about 6x the events of a ring of the same bytes (README, Benchmarks:
/// 10.6 M events for the 8-GPU NCCL-default sweep, whose ring estimate is 1.8 M).
constexpr double kNvlsEventFactor = 6.0;

/// The segment a run's bytes are counted in: `segment` on NVLink paths, the
/// network cut (topologies/network_segments.hpp, 64 KiB for the stock 1 MiB
/// switch buffers) on the share of them that crosses a network. A ring or a
/// tree of ranks spread over d NVLink domains crosses the network on about d of
/// its n hops; an all-to-all on every pair but those inside a domain. The
/// harmonic mean of the two segments by those shares counts the same segments.
/// `gpus` are the run's GPUs, in rank order. Where NVLS may run, the caller
/// multiplies the events by kNvlsEventFactor, which NVLSTree's network hops
/// (plain sends) do not take: their segment is counted that much larger.
/// `network_segment` is topo::network_segment_size's (read once per run: it scans every device).
double counted_segment(const topo::NvlinkDomains& domains, const std::vector<int>& gpus, std::uint64_t segment, std::uint64_t network_segment,
                       bool all_to_all, bool nvls) {
  if (gpus.size() < 2) return static_cast<double>(segment);
  std::vector<int> used;
  for (int g : gpus) used.push_back(domains.domain_of_gpu[static_cast<std::size_t>(g)]);
  std::sort(used.begin(), used.end());
  const auto spanned = static_cast<double>(std::unique(used.begin(), used.end()) - used.begin());
  if (spanned < 2) return static_cast<double>(segment);
  const auto n = static_cast<double>(gpus.size());
  const double share = all_to_all ? 1.0 - (n / spanned - 1.0) / (n - 1.0) : spanned / n;
  const auto network = static_cast<double>(network_segment) * (nvls ? kNvlsEventFactor : 1.0);
  return 1.0 / ((1.0 - share) / static_cast<double>(segment) + share / network);
}

}  // namespace

double estimate_collective_events(std::int64_t ranks, double bytes_per_rank, double segment, int channels, int hops) {
  const double n = static_cast<double>(std::max<std::int64_t>(1, ranks));
  const double by_size = bytes_per_rank / std::max(1.0, segment);
  const double by_steps = 2.0 * n * channels;
  return n * std::max(by_size, by_steps) * hops;
}

double estimate_all_to_all_events(std::int64_t ranks, double bytes_per_rank, double segment, int stripes, int hops) {
  const double n = static_cast<double>(std::max<std::int64_t>(2, ranks));
  const double per_pair = std::ceil(bytes_per_rank / n / std::max(1.0, segment));
  return n * (n - 1) * std::max(1.0, per_pair) * stripes * hops * kAllToAllEventWeight;
}

bool reduces_in_network(const topo::TopologySpec& spec) {
  for (const auto& d : spec.devices)
    if (d.kind == topo::DeviceKind::kSwitch) {
      const auto it = spec.catalogue.switches.find(d.model);
      if (it != spec.catalogue.switches.end() && it->second.in_network_reduction) return true;
    }
  return false;
}

/// NCCL's tuner picks NVLS (or NVLSTree) by itself for all-reduce only; any
/// collective runs it when forced (nccl-test's --algo, replay's --algo).
bool may_run_nvls(bool all_reduce, std::optional<traces::Algorithm> forced, bool in_network) {
  if (!in_network) return false;
  if (forced) return *forced == traces::Algorithm::kNvls || *forced == traces::Algorithm::kNvlsTree;
  return all_reduce;
}

namespace {

/// A broadcast, a reduce or a tree inside one NVLink domain forced onto LL or
/// LL128 moves its steps in pieces of traces::line_forward_grain (4 KiB for
/// LL, 38,400 B for LL128 on the stock GPUs), which may be smaller than the
/// segment. Infinity where none is forced: NCCL's own choice takes LL and
/// LL128 only at sizes that one step per channel and ring step already counts.
double forced_line_grain(const SimulationRequest& request, const topo::TopologySpec& spec, const topo::NvlinkDomains& domains) {
  const auto& test = request.test;
  const bool chain = test.op == traces::CollectiveOp::kBroadcast || test.op == traces::CollectiveOp::kReduce ||
                     traces::parse_algorithm(test.algorithm) == traces::Algorithm::kTree;
  if (!chain || !test.protocol || *test.protocol == topo::Protocol::kSimple || spec.gpus.empty())
    return std::numeric_limits<double>::infinity();
  const auto gpus = request_ranks(request, spec);
  if (std::any_of(gpus.begin(), gpus.end(), [&](int g) {
        return domains.domain_of_gpu[static_cast<std::size_t>(g)] != domains.domain_of_gpu[static_cast<std::size_t>(gpus.front())];
      }))
    return std::numeric_limits<double>::infinity();  // across NICs the proxy sends whole steps
  const auto& protocols = spec.gpu_model(0).protocols;
  const auto it = protocols.find(*test.protocol);
  if (it == protocols.end()) return std::numeric_limits<double>::infinity();
  const core::Bytes grain = traces::line_forward_grain(*test.protocol, it->second);
  return grain == 0 ? std::numeric_limits<double>::infinity() : static_cast<double>(grain);
}

}  // namespace

double estimate_run_events(const SimulationRequest& request, const topo::TopologySpec& spec) {
  const std::int64_t ranks = request.test.gpus == 0 ? static_cast<std::int64_t>(spec.gpus.size()) : request.test.gpus;
  const int channels = channels_of(spec), hops = path_hops(spec);
  double events = 0;
  const bool all_to_all = request.test.op == traces::CollectiveOp::kAllToAll;
  // "auto" parses as no algorithm: NCCL's choice.
  const bool nvls = may_run_nvls(request.test.op == traces::CollectiveOp::kAllReduce, traces::parse_algorithm(request.test.algorithm),
                                 reduces_in_network(spec));
  const auto domains = topo::nvlink_domains(spec);
  const double segment = std::min(counted_segment(domains, request_ranks(request, spec), request.segment_size,
                                                  topo::network_segment_size(spec, request.segment_size), all_to_all, nvls),
                                   forced_line_grain(request, spec, domains));
  const auto row_events = [&](core::Bytes bytes) {
    return all_to_all ? estimate_all_to_all_events(ranks, static_cast<double>(bytes), segment, nvlink_stripes(spec), hops)
                      : estimate_collective_events(ranks, 2.0 * static_cast<double>(bytes), segment, channels, hops);
  };
  const core::Bytes above = request.test.extrapolate_above;
  bool extrapolates = false;
  for (const auto bytes : traces::nccl_test_sizes(request.test)) {
    if (above > 0 && bytes > above) {
      extrapolates = true;
    } else {
      events += row_events(bytes);
    }
  }
  // The probes of one choice (more choices above the line cost more).
  if (extrapolates) events += row_events(above / 4) + row_events(above / 2) + row_events(above);
  return nvls ? events * kNvlsEventFactor : events;
}

void check_run_work(const SimulationRequest& request, const topo::TopologySpec& spec) {
  const std::int64_t ranks = request.test.gpus == 0 ? static_cast<std::int64_t>(spec.gpus.size()) : request.test.gpus;
  if (request.flow_level) {
    if (request.test.op == traces::CollectiveOp::kAllToAll) check_all_to_all_flows(static_cast<double>(ranks), request.origin);
    return;
  }
  if (const double events = estimate_run_events(request, spec); events > kMaxSegmentEvents)
    throw core::ConfigError(request.origin, "", advice(events));
}

double estimate_replay_events(const std::vector<const traces::Trace*>& jobs, const topo::TopologySpec& spec, std::uint64_t segment,
                              std::optional<traces::Algorithm> forced) {
  const int channels = channels_of(spec), hops = path_hops(spec), stripes = nvlink_stripes(spec);
  const bool in_network = reduces_in_network(spec);
  // Placements are not known here: each job's ranks are counted on the GPUs of
  // the same index, which spans as many NVLink domains as a packed placement.
  const auto domains = topo::nvlink_domains(spec);
  const std::uint64_t network_segment = topo::network_segment_size(spec, segment);
  std::map<std::tuple<const traces::Trace*, int, bool, bool>, double> counted_by_comm;  // a trace's ops share few communicators
  double events = 0;
  for (const auto* trace : jobs)
    for (const auto& program : trace->programs)
      for (const auto& op : program.ops) {
        if (op.comm < 0) continue;
        const auto& comm = trace->communicators[static_cast<std::size_t>(op.comm)];
        const double group = comm.groups.empty() ? 1.0 : static_cast<double>(comm.groups.front().size());
        double bytes = static_cast<double>(op.bytes);
        for (const auto b : op.matrix) bytes += static_cast<double>(b);
        // Per rank of the program: its share of the collective's events.
        const bool all_to_all = op.type == traces::TraceOpType::kAllToAll || op.type == traces::TraceOpType::kAllToAllv;
        const auto ranks = static_cast<std::int64_t>(group);
        const double nvls = !all_to_all && may_run_nvls(op.type == traces::TraceOpType::kAllReduce, forced, in_network) ? kNvlsEventFactor : 1.0;
        const auto key = std::make_tuple(trace, op.comm, all_to_all, nvls > 1.0);
        auto known = counted_by_comm.find(key);
        if (known == counted_by_comm.end()) {
          std::vector<int> gpus;
          if (!comm.groups.empty())
            for (int r : comm.groups.front()) gpus.push_back(r % std::max<int>(1, static_cast<int>(spec.gpus.size())));
          known = counted_by_comm.emplace(key, counted_segment(domains, gpus, segment, network_segment, all_to_all, nvls > 1.0)).first;
        }
        const double counted = known->second;
        const double per_collective = all_to_all ? estimate_all_to_all_events(ranks, op.matrix.empty() || op.matrix_row ? bytes : bytes / group, counted, stripes, hops)
                                                 : estimate_collective_events(ranks, 2.0 * bytes, counted, channels, hops);
        events += per_collective * nvls / group * static_cast<double>(program.ranks.size()) * op.repeat * trace->iterations;
      }
  return events;
}

void check_replay_work(const std::vector<const traces::Trace*>& jobs, const topo::TopologySpec& spec, std::uint64_t segment,
                       std::optional<traces::Algorithm> forced, const std::string& origin) {
  if (segment == 0) {
    for (const auto* trace : jobs)
      for (const auto& program : trace->programs)
        for (const auto& op : program.ops)
          if (op.comm >= 0 && (op.type == traces::TraceOpType::kAllToAll || op.type == traces::TraceOpType::kAllToAllv)) {
            const auto& comm = trace->communicators[static_cast<std::size_t>(op.comm)];
            check_all_to_all_flows(comm.groups.empty() ? 1.0 : static_cast<double>(comm.groups.front().size()), origin);
          }
    return;
  }
  if (const double events = estimate_replay_events(jobs, spec, segment, forced); events > kMaxSegmentEvents)
    throw core::ConfigError(origin, "", advice(events));
}

void choose_extrapolation(SimulationRequest& request, const topo::TopologySpec& spec, std::ostream& err) {
  request.test.extrapolate_above = 0;
  const bool point_to_point = traces::runs_point_to_point(request.test.op);
  const double whole = estimate_run_events(request, spec);
  // Inside one NVLink domain the flow level agrees with the segment level within
  // a few percent (README, Models), and the segment level of a rack is far
  // dearer than its estimate: there, and for point-to-point operations, it is
  // --model auto's choice.
  const auto domains = topo::nvlink_domains(spec);
  const std::size_t ranks = std::min(request.test.gpus == 0 ? spec.gpus.size() : static_cast<std::size_t>(request.test.gpus),
                                     domains.domain_of_gpu.size());
  const auto used = domains.domain_of_gpu.begin() + static_cast<std::ptrdiff_t>(ranks);
  const bool across_domains = std::any_of(domains.domain_of_gpu.begin(), used, [&](int d) { return d != domains.domain_of_gpu.front(); });
  // Racks of NVL72 cost the same across domains: two racks' 64 MiB all-reduce
  // ran 8.1e6 events in 44 s and 0.76 GB (0.18 M events/s, a sixteenth of the
  // stock sweeps' rate), so probes estimated at 1.4e8 events would take 13 minutes.
  std::vector<std::size_t> domain_size(static_cast<std::size_t>(domains.count), 0);  // one pass: a 98k-GPU fabric has 12k domains
  for (auto it = domains.domain_of_gpu.begin(); it != used; ++it) ++domain_size[static_cast<std::size_t>(*it)];
  const bool rack_scale = std::any_of(domain_size.begin(), domain_size.end(), [](std::size_t n) { return n > topo::kLargestBoardGpus; });
  if (!across_domains || point_to_point || rack_scale) {  // point to point: nothing to extrapolate
    if (rack_scale && across_domains && !point_to_point)
      fmt::print(err, "fabsim: --extrapolate-above auto: NVLink domains of more than {} GPUs (racks): --model auto's choice\n", topo::kLargestBoardGpus);
    request.flow_level = auto_chooses_flow(whole, err);
    return;
  }
  if (whole <= kAutoSegmentEvents) {
    fmt::print(err, "fabsim: --extrapolate-above auto: segment level, every row simulated (about {:.2g} kernel events)\n", whole);
    return;
  }
  if (request.test.max_bytes > kAutoExtrapolateAbove) {
    request.test.extrapolate_above = kAutoExtrapolateAbove;
    if (const double part = estimate_run_events(request, spec); part <= kMaxSegmentEvents) {
      fmt::print(err, "fabsim: --extrapolate-above auto: segment level, rows above {} extrapolated (about {:.2g} kernel events, "
                      "{:.2g} for every row)\n", core::format_bytes(kAutoExtrapolateAbove), part, whole);
      return;
    }
    request.test.extrapolate_above = 0;
  } else if (whole <= kMaxSegmentEvents) {
    fmt::print(err, "fabsim: --extrapolate-above auto: segment level, every row simulated (about {:.2g} kernel events)\n", whole);
    return;
  }
  request.flow_level = true;
  fmt::print(err, "fabsim: --extrapolate-above auto: flow level (about {:.2g} kernel events at segment level, more than the {:.0e} it runs)\n",
             whole, kMaxSegmentEvents);
}

bool auto_chooses_flow(double events, std::ostream& err) {
  const bool flow = events > kAutoSegmentEvents;
  fmt::print(err, "fabsim: --model auto: {} level (about {:.2g} kernel events at segment level, {} the budget of {:.0e}, about 10 s)\n",
             flow ? "flow" : "segment", events, flow ? "over" : "within", kAutoSegmentEvents);
  return flow;
}

}  // namespace fabsim::cli
