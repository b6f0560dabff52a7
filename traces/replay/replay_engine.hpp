#pragma once
/// Replays traces on an elaborated fabric: each rank's operations run as a
/// DAG (dependencies plus stream order), collectives start once every member
/// has issued them and run through the collective planners on the shared
/// fabric, so concurrent operations (streams, jobs) contend for its links.
/// Several jobs may share one fabric, each placed on its own GPUs.

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "sim/core/progress.hpp"
#include "sim/core/timer_queue.hpp"
#include "topologies/fabric_backend.hpp"
#include "traces/collectives/collective_planner.hpp"
#include "traces/executor/concurrent_plans.hpp"
#include "traces/replay/link_sampler.hpp"
#include "traces/replay/program_graph.hpp"
#include "traces/replay/trace.hpp"

namespace fabsim::traces {

/// One trace placed on the fabric.
struct ReplayJob {
  const Trace* trace = nullptr;      ///< observer; must outlive the engine
  std::string label;                 ///< how reports name the job
  std::vector<int> gpu_of_rank;      ///< global GPU index of each trace rank
  std::vector<double> compute_scale; ///< per rank: compute durations are multiplied by it (stragglers); empty = 1
  std::vector<core::TimePs> start_delay;  ///< per rank: when it starts; empty = 0
};

struct ReplayOptions {
  std::optional<Algorithm> algorithm;  ///< forced, like NCCL_ALGO
  std::optional<topo::Protocol> protocol;
  std::optional<int> channels;
  const NcclTunerRelease* nccl = nullptr;  ///< whose tuner chooses; null: the newest
  bool sample_links = false;  ///< record link traffic over time (for --timeline)
  core::ProgressLine* progress = nullptr;  ///< redrawn as the replay goes (op instances done of total); may be null
};

/// One executed instance of an op on one rank. Times are absolute (ps).
struct OpRecord {
  int job = 0;
  int rank = 0;
  int op = 0;         ///< index in the rank's program
  int iteration = 0;
  int instance = 0;   ///< repeat index
  core::TimePs ready = 0;  ///< dependencies met
  core::TimePs issue = 0;  ///< issued (ready + delay)
  core::TimePs end = 0;
  std::int64_t gate = -1;        ///< the record whose completion made this op ready; -1: the start
  std::int64_t waited_for = -1;  ///< collectives and p2p: the member record that issued last
  core::Bytes bytes = 0;         ///< this rank's bytes (input buffer; sends for p2p)
  std::int16_t algorithm = -1;   ///< index into ReplayResult::plan_names: "Ring/LL" etc.
};

struct ReplayResult {
  std::vector<OpRecord> records;
  std::vector<std::string> plan_names;  ///< "Ring/Simple/16ch" by index
  std::vector<core::TimePs> job_end;    ///< last completion of each job
  core::TimePs makespan = 0;
  std::uint64_t collectives = 0;        ///< collective and p2p instances launched on the fabric
  std::uint64_t timer_events = 0;
  LinkTimeline links;  ///< empty unless ReplayOptions::sample_links
};

class ReplayEngine {
 public:
  /// `fabric` must be freshly elaborated and outlive the engine.
  ReplayEngine(topo::FabricBackend& fabric, std::vector<ReplayJob> jobs, ReplayOptions options);
  ~ReplayEngine();

  /// Runs every job to completion. Throws core::ConfigError naming the stuck
  /// operations when a trace cannot finish (an ordering deadlock).
  ReplayResult run();

 private:
  struct Actor;
  struct PendingCollective;
  struct PendingPart;

  /// A timer of the engine's own; counted, so link sampling knows when only waiting is left.
  void schedule(core::TimePs at, std::function<void()> callback);
  void start_iteration(int actor, std::int64_t gate);
  void make_ready(int actor, int op, std::int64_t gate);
  void issue(int actor, int op, core::TimePs ready, std::int64_t gate);
  void complete(int actor, std::int64_t record);
  void arrive_collective(int actor, int op, std::int64_t record);
  void launch_collective(int job, int comm, int group, PendingCollective& pending);
  void post_part(int actor, int op, std::int64_t record, int peer_global, core::Bytes bytes, bool is_send);
  void launch_part(int job, int comm, PendingPart& part);
  void part_done(std::int64_t record, core::TimePs at);
  std::int16_t plan_name(const CollectivePlan& plan);
  std::string describe_stuck() const;

  topo::FabricBackend& fabric_;
  std::vector<ReplayJob> jobs_;
  ReplayOptions options_;
  core::TimerQueue timers_;
  ConcurrentPlans plans_;
  CollectivePlanner planner_;
  std::vector<std::vector<ProgramGraph>> graphs_;  // by job, by program
  std::vector<Actor> actors_;
  std::vector<int> first_actor_;  // by job
  std::map<std::tuple<int, int, int, std::uint32_t>, PendingCollective> pending_collectives_;  // (job, comm, group, instance)
  std::map<std::tuple<int, int, int, int, std::uint32_t>, PendingPart> pending_parts_;           // (job, comm, src, dst, index)
  std::map<std::tuple<int, int, int, int>, std::pair<std::uint32_t, std::uint32_t>> part_counters_;  // sends, recvs posted
  std::unordered_map<std::int64_t, std::uint32_t> parts_left_;  // by record: p2p parts not yet done
  ReplayResult result_;
  std::map<std::string, std::int16_t> plan_index_;
  std::size_t finished_actors_ = 0;
  std::uint64_t instances_done_ = 0, instances_total_ = 0;  // op instances over all ranks and iterations, for progress
  std::size_t scheduled_ = 0;  // engine timers pending
  LinkSampler sampler_;
};

/// Bytes of one element of a native dtype ("bf16" -> 2); 4 when unknown or empty.
core::Bytes dtype_bytes(const std::string& dtype);

}  // namespace fabsim::traces
