#pragma once
/// The events of one PyTorch profiler (Kineto) trace that an import needs,
/// indexed: GPU activities with their launches, the CPU-side NCCL metadata
/// (record_param_comms, nccl:* annotations) by External id and by time,
/// CUDA event records and stream waits, and the ProfilerStep#N spans.

#include <cstdint>
#include <deque>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace fabsim::traces::kineto {

/// A kernel, copy or memset on the GPU timeline (times in µs, as Kineto writes them).
struct GpuActivity {
  double ts = 0, dur = 0;
  std::int64_t stream = 0, correlation = -1, external = -1;
  double launch = -1;           ///< CPU time of its launch call; the GPU start when that call is absent
  std::int64_t launch_tid = -1;
  std::string name;
  const nlohmann::json* args = nullptr;
  bool nccl_kernel = false;     ///< ncclKernel_* / ncclDevKernel_*, or it carries "Collective name"
};

/// A CPU-side span on one thread: record_param_comms, an nccl:* annotation, a ProfilerStep.
struct CpuSpan {
  double ts = 0, end = 0;
  std::int64_t tid = 0, external = -1;
  std::string name;
  const nlohmann::json* args = nullptr;
};

/// A stream that waits for another: from cuda_sync "Stream Wait Event" events
/// (the streams named), or resolved from a cudaStreamWaitEvent call alone.
struct StreamWait {
  double at = 0;            ///< CPU time of the cudaStreamWaitEvent call
  std::int64_t tid = -1;
  std::int64_t waiter = -1;  ///< -1: the stream of the thread's next launch
  std::int64_t source = -1;  ///< -1: the stream of the thread's last launch before the event record
  double recorded = -1;      ///< CPU time of the cudaEventRecord it waits on; -1 unknown
};

struct RankEvents {
  // Pointers into kept_args and the span vectors must survive a move: a copy
  // would leave them pointing into the original, so copying is not allowed
  // (a std::vector of RankEvents then moves them when it grows, instead of
  // copying because std::deque's move is not noexcept).
  RankEvents() = default;
  RankEvents(const RankEvents&) = delete;
  RankEvents& operator=(const RankEvents&) = delete;
  RankEvents(RankEvents&&) = default;
  RankEvents& operator=(RankEvents&&) = default;

  nlohmann::json header;          ///< the document without its events (distributedInfo, ...); traceEvents is []
  std::deque<nlohmann::json> kept_args;  ///< the args objects the pointers above point into (only those needed)
  std::vector<GpuActivity> gpu;  ///< in GPU start order
  std::map<std::int64_t, CpuSpan> record_params_by_external;
  std::map<std::int64_t, std::vector<CpuSpan>> record_params_by_thread, annotations_by_thread;  ///< by start time
  std::map<std::int64_t, CpuSpan> annotations_by_external;
  std::map<std::int64_t, std::vector<double>> event_records_by_thread;  ///< CPU times, sorted
  std::vector<StreamWait> waits;
  std::vector<std::pair<std::int64_t, CpuSpan>> steps;  ///< ProfilerStep#N, by N
  bool has_sync_events = false;  ///< cuda_sync "Stream Wait Event" present (newer Kineto)
};

/// Reads and indexes one trace (gzip or plain JSON), streaming its events:
/// each is read, indexed and dropped, so a trace of gigabytes needs memory
/// for what the import keeps, not for its DOM. A core::ConfigError for a
/// file that is not JSON.
RankEvents read_rank_events(const std::string& file);

/// The innermost span of `spans` (sorted by start) that contains time t, or null.
const CpuSpan* enclosing(const std::vector<CpuSpan>& spans, double t);

}  // namespace fabsim::traces::kineto
