#include "traces/import/kineto_events.hpp"

#include <algorithm>

#include "sim/core/json_reader.hpp"
#include "sim/core/text.hpp"

namespace fabsim::traces::kineto {

namespace {

using nlohmann::json;

std::int64_t int_of(const json& obj, const char* key, std::int64_t fallback) {
  const auto it = obj.find(key);
  return it != obj.end() && it->is_number_integer() ? it->get<std::int64_t>() : fallback;
}
double number_of(const json& obj, const char* key) {
  const auto it = obj.find(key);
  return it != obj.end() && it->is_number() ? it->get<double>() : 0.0;
}

bool is_nccl_kernel_name(const std::string& name) { return name.rfind("ncclKernel_", 0) == 0 || name.rfind("ncclDevKernel_", 0) == 0; }

void sort_spans(std::map<std::int64_t, std::vector<CpuSpan>>& by_thread) {
  for (auto& [tid, spans] : by_thread) std::stable_sort(spans.begin(), spans.end(), [](const CpuSpan& a, const CpuSpan& b) { return a.ts < b.ts; });
}

}  // namespace

const CpuSpan* enclosing(const std::vector<CpuSpan>& spans, double t) {
  // Spans nest (or follow) on one thread: the last one starting at or before t that is still open.
  auto it = std::upper_bound(spans.begin(), spans.end(), t, [](double v, const CpuSpan& s) { return v < s.ts; });
  for (int scanned = 0; it != spans.begin() && scanned < 64; ++scanned) {  // nothing older is still open in practice
    --it;
    if (it->end >= t) return &*it;
  }
  return nullptr;
}

RankEvents read_rank_events(const std::string& file) {
  RankEvents r;
  static const json kNoArgs = json::object();
  std::map<std::int64_t, std::pair<double, std::int64_t>> runtime_call;  // correlation -> CPU time, thread
  struct Wait {
    double ts;
    std::int64_t tid;
  };
  std::vector<Wait> runtime_waits;
  std::vector<json> sync_waits;  // the args of cuda_sync "Stream Wait Event" events
  auto keep = [&](json& args) -> const json* { return &r.kept_args.emplace_back(std::move(args)); };
  const core::ElementSink sink = [&](json&& e, std::size_t) {
    if (!e.is_object()) return;
    const auto ph = e.find("ph");
    if (ph == e.end() || !ph->is_string() || *ph != "X") return;
    const std::string cat = e.value("cat", "");
    const std::string name = e.contains("name") && e["name"].is_string() ? e["name"].get<std::string>() : std::string();
    json no_args = json::object();
    json& args = e.contains("args") && e["args"].is_object() ? e["args"] : no_args;
    const double ts = number_of(e, "ts"), dur = std::max(0.0, number_of(e, "dur"));
    const std::int64_t tid = int_of(e, "tid", 0);
    if (cat == "kernel" || cat == "gpu_memcpy" || cat == "gpu_memset") {
      GpuActivity a;
      a.ts = ts;
      a.dur = dur;
      a.stream = int_of(args, "stream", tid);
      a.correlation = int_of(args, "correlation", -1);
      a.external = int_of(args, "External id", -1);
      a.nccl_kernel = cat == "kernel" && (is_nccl_kernel_name(name) || args.contains("Collective name"));
      a.args = a.nccl_kernel ? keep(args) : &kNoArgs;
      a.name = name;
      r.gpu.push_back(std::move(a));
    } else if (cat == "cuda_runtime" || cat == "cuda_driver") {
      const std::int64_t corr = int_of(args, "correlation", -1);
      if (corr >= 0) runtime_call[corr] = {ts, tid};
      if (name == "cudaEventRecord" || name == "cuEventRecord") r.event_records_by_thread[tid].push_back(ts);
      else if (name == "cudaStreamWaitEvent" || name == "cuStreamWaitEvent") runtime_waits.push_back({ts, tid});
    } else if (cat == "cuda_sync") {
      if (args.value("cuda_sync_kind", std::string()) == "Stream Wait Event") {
        args["x-ts"] = ts;
        sync_waits.push_back(std::move(args));
      }
    } else if (cat == "cpu_op" && name == "record_param_comms") {
      CpuSpan s{ts, ts + dur, tid, int_of(args, "External id", -1), name, keep(args)};
      if (s.external >= 0) r.record_params_by_external[s.external] = s;
      r.record_params_by_thread[tid].push_back(s);
    } else if (cat == "user_annotation" || cat == "cpu_instant_event") {
      if (name.rfind("nccl:", 0) == 0) {
        CpuSpan s{ts, ts + dur, tid, int_of(args, "External id", -1), name, keep(args)};
        if (s.external >= 0) r.annotations_by_external[s.external] = s;
        r.annotations_by_thread[tid].push_back(s);
      } else if (name.rfind("ProfilerStep#", 0) == 0) {
        if (const auto n = core::parse_integer<std::int64_t>(std::string_view(name).substr(13)))
          r.steps.push_back({*n, CpuSpan{ts, ts + dur, tid, -1, name, &kNoArgs}});
      }
    }
  };
  r.header = core::parse_json_streaming(core::read_text_file(file), file, "traceEvents", &sink);
  for (auto& a : r.gpu)
    if (const auto it = runtime_call.find(a.correlation); it != runtime_call.end()) {
      a.launch = it->second.first;
      a.launch_tid = it->second.second;
    } else {
      a.launch = a.ts;
    }
  std::stable_sort(r.gpu.begin(), r.gpu.end(), [](const GpuActivity& x, const GpuActivity& y) { return x.ts < y.ts; });
  sort_spans(r.record_params_by_thread);
  sort_spans(r.annotations_by_thread);
  for (auto& [tid, times] : r.event_records_by_thread) std::sort(times.begin(), times.end());
  std::sort(r.steps.begin(), r.steps.end(), [](const auto& a, const auto& b) { return a.first < b.first; });

  // Newer Kineto names both streams of a wait; older only has the call.
  r.has_sync_events = !sync_waits.empty();
  for (const json& args : sync_waits) {
    StreamWait w;
    const std::int64_t corr = int_of(args, "correlation", -1);
    const auto call = runtime_call.find(corr);
    w.at = call != runtime_call.end() ? call->second.first : number_of(args, "x-ts");
    w.tid = call != runtime_call.end() ? call->second.second : -1;
    w.waiter = int_of(args, "stream", -1);
    w.source = int_of(args, "wait_on_stream", -1);
    if (const auto rec = runtime_call.find(int_of(args, "wait_on_cuda_event_record_corr_id", -1)); rec != runtime_call.end())
      w.recorded = rec->second.first;
    if (w.waiter >= 0 && w.source >= 0 && w.waiter != w.source) r.waits.push_back(w);
  }
  if (!r.has_sync_events)
    for (const auto& e : runtime_waits) r.waits.push_back(StreamWait{e.ts, e.tid, -1, -1, -1});
  return r;
}

}  // namespace fabsim::traces::kineto
