#pragma once
/// The work of a segment-level run, estimated before anything is built, so
/// that a run that cannot finish in reasonable time or memory is refused at
/// once with its estimate and the advice (the flow level, larger segments).

#include <cstddef>
#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>

#include "sim/cli/simulation_request.hpp"
#include "topologies/topology_spec.hpp"
#include "traces/collectives/tuner.hpp"

namespace fabsim::traces {
struct Trace;
}

namespace fabsim::cli {

/// Kernel events a segment-level run may take: about 2 minutes at the
/// 0.5-3 M events/s measured on a 2-core machine (README, "Input limits").
inline constexpr double kMaxSegmentEvents = 3e8;

/// Estimated kernel events of one collective at segment level: each of the
/// `ranks` GPUs moves `bytes_per_rank` in segments of `segment` bytes on
/// average (smaller across a network: see work_estimate.cpp), and at least one
/// segment per ring step and channel; each segment takes about `hops` events
/// along its path.
double estimate_collective_events(std::int64_t ranks, double bytes_per_rank, double segment, int channels, int hops);

/// Estimated kernel events of one all-to-all at segment level: every ordered
/// pair of the `ranks` moves its share of `bytes_per_rank` in segments of at
/// most `segment` bytes, striped over `stripes` NVLink switch chips, each
/// taking about `hops` events; weighted for the all-to-all's slower events.
double estimate_all_to_all_events(std::int64_t ranks, double bytes_per_rank, double segment, int stripes, int hops);

/// `--model auto` takes the segment level up to this many estimated kernel
/// events (about 10 s at the 3 M events/s of the stock sweeps on a 2-core
/// machine; README, "Fidelity chosen for the user"), the flow level above.
inline constexpr double kAutoSegmentEvents = 3e7;

/// `--extrapolate-above auto` extrapolates the rows above this size (NCCL's
/// chunk sizes stop changing with the size well below it on the stock
/// fabrics; the probes' own line check says where they do not).
inline constexpr core::Bytes kAutoExtrapolateAbove = 256ull << 20;
/// `--extrapolate-above auto`: inside one NVLink domain, across rack-scale
/// domains, and for point-to-point operations, --model auto's choice.
/// Across domains: every row at segment level where the sweep fits
/// the auto budget; else, above kAutoExtrapolateAbove, rows extrapolated from
/// segment-level probes where the rest fits kMaxSegmentEvents; else the flow
/// level. Sets request.test.extrapolate_above (or flow_level), says which on `err`.
void choose_extrapolation(SimulationRequest& request, const topo::TopologySpec& spec, std::ostream& err);
/// Estimated kernel events of an nccl-test request at segment level: the rows
/// it simulates and, where it extrapolates, one set of probes.
double estimate_run_events(const SimulationRequest& request, const topo::TopologySpec& spec);

/// Estimated kernel events of replaying `jobs` at segment level with segments of `segment` bytes, each
/// collective run by `forced` (replay's --algo) or, without one, by the algorithm NCCL may choose.
double estimate_replay_events(const std::vector<const traces::Trace*>& jobs, const topo::TopologySpec& spec, std::uint64_t segment,
                              std::optional<traces::Algorithm> forced = std::nullopt);

/// The fidelity `--model auto` takes for a run of `events` estimated segment-level
/// events: true for the flow level. Says which and why on `err`.
bool auto_chooses_flow(double events, std::ostream& err);

/// Point-to-point transfers one all-to-all may hold at flow level: each is a
/// flow of about 0.7 KiB, routed, solved and timed (1 GiB on a 2-core
/// machine, scripts/bench: 1,024 ranks of ib-fat-tree-1024, 1.05e6 transfers,
/// 5.6 s, 748 MiB; 2,048 ranks of ib-fat-tree-16k, 4.2e6, 47 s, 2.8 GiB).
inline constexpr double kMaxAllToAllFlows = 4.5e6;

/// Refuses (core::ConfigError) an nccl-test request whose segment-level run
/// exceeds kMaxSegmentEvents, or whose flow-level all-to-all exceeds
/// kMaxAllToAllFlows.
void check_run_work(const SimulationRequest& request, const topo::TopologySpec& spec);

/// The same for the replay of `traces` (one per job); `segment` is 0 at flow level.
void check_replay_work(const std::vector<const traces::Trace*>& jobs, const topo::TopologySpec& spec, std::uint64_t segment,
                       std::optional<traces::Algorithm> forced, const std::string& origin);

}  // namespace fabsim::cli
