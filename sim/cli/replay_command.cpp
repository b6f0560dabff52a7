#include "sim/cli/replay_command.hpp"

#include <fmt/format.h>
#include <fmt/ostream.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <set>

#include "sim/cli/child_run.hpp"
#include "sim/cli/progress_option.hpp"
#include "sim/cli/simulation_request.hpp"
#include "sim/cli/whatif_command.hpp"
#include "sim/calibration/known_gaps.hpp"
#include "sim/cli/work_estimate.hpp"
#include "sim/core/data_root.hpp"
#include "sim/core/error.hpp"
#include "sim/core/kernel.hpp"
#include "sim/core/limits.hpp"
#include "sim/core/output_file.hpp"
#include "sim/core/text.hpp"
#include "sim/report/replay_report.hpp"
#include "topologies/fabric.hpp"
#include "topologies/flow_fabric.hpp"
#include "traces/collectives/tuner.hpp"
#include "traces/import/importers.hpp"
#include "traces/replay/trace_loader.hpp"

namespace fabsim::cli {

namespace {

struct ReplayFlags {
  std::string topology, hardware, calibration, format = "table", timeline, model, segment_size, algo = "auto",
                                               proto = "auto", channels = "auto", fault_detection, whatif, progress, nccl_version;
  int whatif_jobs = 1;
  std::vector<std::string> traces, jobs, stragglers, delays, faults;
  std::string command_line;  ///< for the JSON's provenance
};

constexpr const char* kOrigin = "command line";
/// A straggler computes at most this many times slower (or 1/this faster).
constexpr double kMaxStraggler = 1e6;
/// A start delay of at most 1e6 s, like every other duration.
constexpr double kMaxStartDelayUs = static_cast<double>(core::kMaxDurationNs) / 1e3;

/// "0-7", "0,2,4,6", "0-3,8-11": GPU indexes in order.
std::vector<int> parse_placement(const std::string& text, const std::string& flag) {
  std::vector<int> gpus;
  std::size_t pos = 0;
  auto fail = [&] {
    throw core::ConfigError(kOrigin, flag, fmt::format("'{}' is not a GPU placement (expected GPU indexes and ranges from 0 to {}: "
                                                       "0-7 or 0,2,4,6 or 0-3,8-11)", text, core::kMaxGpus - 1));
  };
  while (pos <= text.size()) {
    const auto comma = text.find(',', pos);
    const std::string part = text.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
    const auto dash = part.find('-');
    const auto first = core::parse_integer<int>(std::string_view(part).substr(0, dash));
    const auto last = dash == std::string::npos ? first : core::parse_integer<int>(std::string_view(part).substr(dash + 1));
    if (!first || !last || *first < 0 || *last < *first || *last >= core::kMaxGpus) fail();
    for (int g = *first; g <= *last; ++g) gpus.push_back(g);
    if (gpus.size() > static_cast<std::size_t>(core::kMaxGpus)) fail();
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  return gpus;
}

/// "[JOB:]RANK=VALUE" -> (job, rank, value); the value must be finite.
std::tuple<int, int, double> parse_rank_setting(const std::string& text, const std::string& flag, const char* what) {
  const auto eq = text.find('=');
  const std::string_view who = std::string_view(text).substr(0, eq == std::string::npos ? 0 : eq);
  const auto colon = who.find(':');
  const auto job = colon == std::string::npos ? std::optional<int>(0) : core::parse_integer<int>(who.substr(0, colon));
  const auto rank = core::parse_integer<int>(colon == std::string::npos ? who : who.substr(colon + 1));
  const auto value = eq == std::string::npos ? std::nullopt : core::parse_finite(std::string_view(text).substr(eq + 1));
  if (!job || !rank || !value || *job < 0 || *rank < 0)
    throw core::ConfigError(kOrigin, flag, fmt::format("'{}' is not [JOB:]RANK={} with a finite number (e.g. 3=1.5, or 1:3=1.5 for job 1)",
                                                       text, what));
  return {*job, *rank, *value};
}

struct LoadedJobs {
  std::vector<std::unique_ptr<traces::Trace>> traces;
  std::vector<traces::ReplayJob> jobs;
};

LoadedJobs load_jobs(const ReplayFlags& f, int gpu_count) {
  LoadedJobs out;
  std::vector<std::pair<std::string, std::string>> specs;  // trace path, placement ("" = next free GPUs)
  for (const auto& t : f.traces) specs.push_back({t, ""});
  for (const auto& j : f.jobs) {
    const auto at = j.rfind('@');
    if (at == std::string::npos || at == 0)
      throw core::ConfigError(kOrigin, "--job", fmt::format("'{}' is not TRACE@PLACEMENT (e.g. dp.json@0-7)", j));
    specs.push_back({j.substr(0, at), j.substr(at + 1)});
  }
  if (specs.empty()) throw core::ConfigError(kOrigin, "TRACE", "give a trace file, or one or more --job TRACE@PLACEMENT");
  std::set<int> used;
  for (std::size_t k = 0; k < specs.size(); ++k) {
    auto trace = std::make_unique<traces::Trace>(traces::load_trace(specs[k].first));
    traces::ReplayJob job;
    job.trace = trace.get();
    job.label = trace->name.empty() ? std::filesystem::path(specs[k].first).stem().string() : trace->name;
    if (specs[k].second.empty()) {
      // The lowest GPUs no earlier job holds.
      for (int g = 0; static_cast<int>(job.gpu_of_rank.size()) < trace->world_size; ++g)
        if (!used.contains(g)) job.gpu_of_rank.push_back(g);
    } else {
      job.gpu_of_rank = parse_placement(specs[k].second, "--job");
    }
    const std::string flag = specs[k].second.empty() ? "TRACE" : "--job";
    if (static_cast<int>(job.gpu_of_rank.size()) != trace->world_size)
      throw core::ConfigError(kOrigin, flag, fmt::format("{} has {} ranks but its placement names {} GPUs", specs[k].first, trace->world_size,
                                                         job.gpu_of_rank.size()));
    for (int g : job.gpu_of_rank) {
      if (g >= gpu_count)
        throw core::ConfigError(kOrigin, flag, fmt::format("{} needs GPU {} but the topology has {} GPUs (0..{})", specs[k].first, g,
                                                           gpu_count, gpu_count - 1));
      if (!used.insert(g).second)
        throw core::ConfigError(kOrigin, flag, fmt::format("GPU {} is given to two ranks (jobs may not share GPUs)", g));
    }
    out.jobs.push_back(std::move(job));
    out.traces.push_back(std::move(trace));
  }
  auto apply = [&](const std::vector<std::string>& settings, const std::string& flag, const char* what, auto&& set) {
    for (const auto& s : settings) {
      const auto [job, rank, value] = parse_rank_setting(s, flag, what);
      if (job >= static_cast<int>(out.jobs.size()))
        throw core::ConfigError(kOrigin, flag, fmt::format("'{}' names job {} but there are {} job(s)", s, job, out.jobs.size()));
      auto& j = out.jobs[static_cast<std::size_t>(job)];
      if (rank >= j.trace->world_size)
        throw core::ConfigError(kOrigin, flag, fmt::format("'{}' names rank {} but {} has {} ranks", s, rank, j.trace->file, j.trace->world_size));
      set(j, rank, value, s);
    }
  };
  apply(f.stragglers, "--straggler", "FACTOR", [&](traces::ReplayJob& j, int rank, double value, const std::string& s) {
    if (!(value > 0 && value <= kMaxStraggler))
      throw core::ConfigError(kOrigin, "--straggler", fmt::format("'{}': the compute factor must be > 0 and at most {}", s, kMaxStraggler));
    j.compute_scale.resize(static_cast<std::size_t>(j.trace->world_size), 1.0);
    j.compute_scale[static_cast<std::size_t>(rank)] = value;
  });
  apply(f.delays, "--start-delay", "MICROSECONDS", [&](traces::ReplayJob& j, int rank, double value, const std::string& s) {
    if (!(value >= 0 && value <= kMaxStartDelayUs))
      throw core::ConfigError(kOrigin, "--start-delay", fmt::format("'{}': the delay must be from 0 to {:.0e} us", s, kMaxStartDelayUs));
    j.start_delay.resize(static_cast<std::size_t>(j.trace->world_size), 0);
    j.start_delay[static_cast<std::size_t>(rank)] = static_cast<core::TimePs>(value * 1e6);
  });
  return out;
}

traces::ReplayOptions options_from(const ReplayFlags& f) {
  traces::ReplayOptions o;
  if (f.algo != "auto") {
    o.algorithm = traces::parse_algorithm(f.algo);
    if (!o.algorithm) throw core::ConfigError(kOrigin, "--algo", fmt::format("unknown algorithm '{}' (expected ring, tree, nvls, nvlstree, pat, collnet or auto)", f.algo));
  }
  if (f.proto != "auto") {
    o.protocol = traces::parse_protocol(f.proto);
    if (!o.protocol) throw core::ConfigError(kOrigin, "--proto", fmt::format("unknown protocol '{}' (expected LL, LL128, Simple or auto)", f.proto));
  }
  if (o.algorithm && o.protocol && *o.protocol != topo::Protocol::kSimple && traces::runs_simple_only(*o.algorithm))
    throw core::ConfigError(kOrigin, "--proto", fmt::format("{} runs the Simple protocol only, not {} (force Simple, or another algorithm)",
                                                            f.algo, topo::protocol_name(*o.protocol)));
  if (f.channels != "auto") {
    const auto c = core::parse_size_flag(f.channels);
    if (!c || *c < 1 || *c > 64) throw core::ConfigError(kOrigin, "--channels", fmt::format("'{}' is not a channel count (1..64 or auto)", f.channels));
    o.channels = static_cast<int>(*c);
  }
  if (!f.nccl_version.empty()) {
    if (const auto problem = traces::nccl_version_problem(f.nccl_version)) throw core::ConfigError(kOrigin, "--nccl-version", *problem);
    o.nccl = traces::nccl_tuner_release(traces::parse_nccl_version(f.nccl_version));
  }
  o.sample_links = !f.timeline.empty();
  return o;
}

/// `replay --whatif SCOPE`: the replay healthy, then with each single
/// failure of the scope (one per symmetry class), ranked by makespan.
int run_replay_whatif(const ReplayFlags& f) {
  if (!f.timeline.empty()) throw core::ConfigError(kOrigin, "--timeline", "a what-if study writes no timeline (run the failure you want to see)");
  const auto scope = parse_fault_scope(f.whatif, "--whatif");
  check_detection_has_timed_fault(parse_fault_flags(f.faults, f.fault_detection), kOrigin);  // here, not in every run of the study
  const topo::TopologySpec spec = topo::load_topology(f.topology, f.hardware, nullptr, calibration_patch(f.calibration));
  const auto loaded = load_jobs(f, static_cast<int>(spec.gpus.size()));
  std::set<int> used;
  for (const auto& job : loaded.jobs) used.insert(job.gpu_of_rank.begin(), job.gpu_of_rank.end());
  WhatifStudy study;
  study.self = self_executable();
  study.replay = true;
  study.scope = f.whatif;
  study.format = f.format;
  study.jobs = f.whatif_jobs;
  study.command_line = f.command_line;
  study.topology_name = spec.name;
  study.classes = topo::single_fault_classes(spec, std::vector<int>(used.begin(), used.end()), scope);
  study.args = {"replay", "-t", f.topology, "--algo", f.algo, "--proto", f.proto, "--channels", f.channels};
  if (!f.segment_size.empty()) study.args.insert(study.args.end(), {"--segment-size", f.segment_size});
  if (!f.nccl_version.empty()) study.args.insert(study.args.end(), {"--nccl-version", f.nccl_version});
  if (!f.model.empty()) study.args.insert(study.args.end(), {"--model", f.model});
  for (const auto& t : f.traces) study.args.push_back(t);
  auto repeat = [&](const char* flag, const std::vector<std::string>& values) {
    for (const auto& v : values) study.args.insert(study.args.end(), {flag, v});
  };
  repeat("--job", f.jobs);
  repeat("--straggler", f.stragglers);
  repeat("--start-delay", f.delays);
  repeat("--fault", f.faults);  // faults asked for hold in every run: the study adds one more
  if (!f.fault_detection.empty()) study.args.insert(study.args.end(), {"--fault-detection", f.fault_detection});
  if (!f.hardware.empty()) study.args.insert(study.args.end(), {"--hardware", f.hardware});
  if (!f.calibration.empty()) study.args.insert(study.args.end(), {"--calibration", f.calibration});
  std::string names;
  for (const auto& job : loaded.jobs) {
    if (!names.empty()) names += ", ";
    names += job.label;
  }
  study.workload = "replay of " + names;
  return run_whatif(study, std::cout, std::cerr);
}

int run_replay(const ReplayFlags& f) {
  if (!f.whatif.empty()) return run_replay_whatif(f);
  const auto wall_start = std::chrono::steady_clock::now();
  if (f.format != "table" && f.format != "json")
    throw core::ConfigError(kOrigin, "--format", fmt::format("unknown format '{}' (expected table or json)", f.format));
  if (!f.model.empty() && f.model != "segment" && f.model != "flow" && f.model != "auto")
    throw core::ConfigError(kOrigin, "--model", fmt::format("unknown model '{}' (expected auto, segment or flow)", f.model));
  const FaultRequest fault_request = parse_fault_flags(f.faults, f.fault_detection);
  const core::ProgressMode progress_mode = parse_progress_flag(f.progress);
  const auto segment = core::parse_size_flag(f.segment_size.empty() ? std::string("512K") : f.segment_size);
  if (!segment || *segment == 0) throw core::ConfigError(kOrigin, "--segment-size", fmt::format("'{}' is not a segment size > 0", f.segment_size));
  if (!f.segment_size.empty() && f.model == "flow") throw core::ConfigError(kOrigin, "--segment-size", segment_size_with_flow_model());
  const auto options = options_from(f);
  if (!f.timeline.empty()) {
    std::vector<std::string> inputs = f.traces;
    for (const auto& j : f.jobs) inputs.push_back(j.substr(0, j.rfind('@')));
    inputs.insert(inputs.end(), {f.topology, f.hardware, f.calibration});
    core::check_output_path("--timeline", f.timeline, inputs);
  }
  core::configure_kernel();
  topo::TopologySpec spec = topo::load_topology(f.topology, f.hardware, nullptr, calibration_patch(f.calibration));
  auto loaded = load_jobs(f, static_cast<int>(spec.gpus.size()));
  std::string model = f.model.empty() ? "auto" : f.model;  // "auto" (the default) becomes the level the estimate chooses
  PreparedFaults faults;
  {
    std::set<int> used;
    for (const auto& job : loaded.jobs) used.insert(job.gpu_of_rank.begin(), job.gpu_of_rank.end());
    bool flow = model == "flow";
    faults = prepare_faults(spec, fault_request, std::vector<int>(used.begin(), used.end()), kOrigin, f.model == "segment", "--model", flow, std::cerr);
    if (flow) model = "flow";
  }
  {
    std::vector<const traces::Trace*> traces;
    for (const auto& t : loaded.traces) traces.push_back(t.get());
    if (model == "auto") model = auto_chooses_flow(estimate_replay_events(traces, spec, *segment, options.algorithm), std::cerr) ? "flow" : "segment";
    check_replay_work(traces, spec, model == "segment" ? *segment : 0, options.algorithm, kOrigin);
  }
  std::unique_ptr<topo::FabricBackend> fabric;
  if (model == "flow") fabric = std::make_unique<topo::FlowFabric>(spec);
  else fabric = std::make_unique<topo::Fabric>(spec, topo::FabricOptions{*segment});
  schedule_faults(*fabric, faults, fault_request);
  core::ProgressLine progress(std::cerr, core::progress_wanted(progress_mode), "op instances");
  auto run_options = options;
  run_options.progress = &progress;
  traces::ReplayEngine engine(*fabric, loaded.jobs, run_options);
  const traces::ReplayResult result = engine.run();

  const auto nccl_version = traces::parse_nccl_version(f.nccl_version);
  report::ReplayDescription run{f.topology, spec.name, model, result.timer_events + fabric->backend_events(),
                                {f.command_line, spec.catalogue.file, f.calibration}, fault_request.faults, fabric->fault_events(),
                                traces::nccl_tuner_description(nccl_version), calibration::known_gap_warnings(spec, loaded.jobs)};
  if (auto warning = traces::nccl_version_warning(nccl_version)) run.warnings.push_back(std::move(*warning));
  if (f.format == "json") {
    std::cout << report::replay_to_json(run, loaded.jobs, result).dump(1) << '\n';
  } else {
    report::write_replay_table(std::cout, run, loaded.jobs, result);
  }
  if (!f.timeline.empty()) core::write_file_atomically(f.timeline, report::replay_timeline(spec, loaded.jobs, result, run.fault_events).dump() + "\n");
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
  fmt::print(std::cerr, "fabsim: replayed {} op instances, {} launches, {} simulated, {} kernel events, {:.3f} s wall\n",
             result.records.size(), result.collectives, core::format_time(result.makespan), run.kernel_events, wall);
  return 0;
}

struct ImportFlags {
  std::string from, output, step;
  std::vector<std::string> files;
  bool symmetric = false;
  int symmetric_from = -1;
};

traces::ImportOptions import_options(const ImportFlags& f) {
  traces::ImportOptions o;
  o.symmetric = f.symmetric || f.symmetric_from >= 0;
  o.symmetric_template = f.symmetric_from;
  if (!f.step.empty()) {
    const auto dash = f.step.find('-', 1);
    const auto first = core::parse_integer<std::int64_t>(std::string_view(f.step).substr(0, dash));
    const auto last = dash == std::string::npos ? first : core::parse_integer<std::int64_t>(std::string_view(f.step).substr(dash + 1));
    if (!first || !last || *first < 0 || *last < *first)
      throw core::ConfigError(kOrigin, "--step", fmt::format("'{}' is not a profiler step or range of steps (N or A-B, A <= B)", f.step));
    if (f.from != "kineto") throw core::ConfigError(kOrigin, "--step", "profiler steps exist in Kineto traces only (--from kineto)");
    o.steps = std::make_pair(*first, *last);
  }
  return o;
}

int run_import(const ImportFlags& f) {
  const std::string& from = f.from;
  const std::string& output = f.output;
  const auto& files = f.files;
  const traces::ImportOptions options = import_options(f);
  core::check_output_path("-o", output, files);
  traces::TraceBuilder builder = traces::import_trace(from, files, options);
  const nlohmann::ordered_json doc = builder.build();
  core::write_file_atomically(output, doc.dump(1) + "\n");
  std::size_t ops = 0;
  for (const auto& p : doc["programs"]) ops += p["ops"].size() * p["ranks"].size();
  fmt::print(std::cerr, "fabsim: {} -> {}: {} ranks, {} communicators, {} programs, {} ops; {} warning(s)\n", from, output,
             builder.world_size, builder.comms.size(), doc["programs"].size(), ops, builder.warnings.total());
  for (const auto& [what, count] : builder.warnings.counts()) fmt::print(std::cerr, "warning: {} x {}\n", count, what);
  try {
    traces::check_trace_completes(traces::parse_trace(nlohmann::json::parse(doc.dump()), output));
  } catch (const core::ConfigError& e) {
    // The file is written for inspection, but the import has failed: a trace
    // that does not pass `trace check` must not look like a success.
    for (std::size_t i = 0; i < e.items().size() && i < 5; ++i) fmt::print(std::cerr, "note: {}\n", e.items()[i].to_string().substr(7));
    throw core::ConfigError(kOrigin, "-o", fmt::format("{} was written but does not pass `fabsim trace check` (see above): "
                                                       "fix the input, or edit the trace", output));
  }
  return 0;
}

int run_check(const std::string& path) {
  const traces::Trace t = traces::load_trace(path);
  std::size_t ops = 0, instances = 0;
  for (const auto& p : t.programs) {
    std::size_t per_rank = 0;
    for (const auto& op : p.ops) per_rank += static_cast<std::size_t>(op.repeat);
    ops += p.ops.size();
    instances += per_rank * p.ranks.size();
  }
  const bool completes = traces::check_trace_completes(t);
  fmt::print(std::cout, "trace {} ({}): {} ranks, {} communicators, {} programs, {} ops, {} op instances over {} iteration(s); "
             "collectives agree and every send has its receive; {}\n",
             t.name.empty() ? path : t.name, path, t.world_size, t.communicators.size(), t.programs.size(), ops,
             instances * static_cast<std::size_t>(t.iterations), t.iterations,
             completes ? "it runs to completion as replay runs it (sends wait for their receives)"
                       : fmt::format("completion not checked (more than {} op instances to run)", traces::kCompletionCheckBudget));
  return 0;
}

}  // namespace

void register_trace(CLI::App& app, CommandSet& commands) {
  auto* trace = app.add_subcommand("trace", "Import traces from other formats, or check a native trace");
  trace->require_subcommand(1);
  auto fi = std::make_shared<ImportFlags>();
  auto* imp = trace->add_subcommand("import", "Convert NCCL debug logs, PyTorch profiler (Kineto) or Chakra traces to fabsim-trace JSON");
  imp->add_option("--from", fi->from, "nccl-log, kineto or chakra")->required();
  imp->add_option("files", fi->files, "Input files: one per rank (a merged NCCL log is fine), in rank order for chakra")->required();
  imp->add_option("-o,--output", fi->output, "The native trace to write")->required();
  imp->add_flag("--symmetric", fi->symmetric,
                "The files cover only some ranks: each missing rank runs the lowest covered rank's program (SPMD), with a warning");
  imp->add_option("--symmetric-from", fi->symmetric_from, "As --symmetric, with this covered rank's program")->check(CLI::Range(0, static_cast<int>(core::kMaxGpus - 1)));
  imp->add_option("--step", fi->step, "Kineto: only the GPU work of profiler step N (ProfilerStep#N), or of steps A-B");
  imp->callback([fi, &commands] { commands.action = [fi] { return run_import(*fi); }; });
  auto path = std::make_shared<std::string>();
  auto* check = trace->add_subcommand("check", "Load a native trace and run every consistency check, without a fabric");
  check->add_option("trace", *path, "Trace file")->required();
  check->callback([path, &commands] { commands.action = [path] { return run_check(core::resolve_stock(core::StockKind::kTrace, *path, "trace")); }; });
}

void register_replay(CLI::App& app, CommandSet& commands) {
  auto f = std::make_shared<ReplayFlags>();
  auto* cmd = app.add_subcommand("replay", "Replay workload traces (fabsim-trace JSON) on a topology");
  cmd->add_option("--topology,-t", f->topology, "Topology JSON file or stock name (fabsim list topologies)")->required();
  cmd->add_option("trace", f->traces, "Trace file(s) or stock names (fabsim list traces), placed on the GPUs in order");
  cmd->add_option("--job", f->jobs, "TRACE@PLACEMENT: a trace on the GPUs named (0-7, 0,2,4,6, 0-3,8-11); repeat for several jobs");
  cmd->add_option("--hardware", f->hardware, "Hardware catalogue (default: the topology's, else configs/hardware/catalogue.json)");
  cmd->add_option("--calibration", f->calibration, "Calibration profile (fabsim calibrate) whose fitted values replace the catalogue's");
  cmd->add_option("--format", f->format, "table or json")->capture_default_str();
  cmd->add_option("--timeline", f->timeline, "Write a Chrome/Perfetto trace of the run to this file");
  cmd->add_option("--model", f->model, "auto (the default: segment level where its estimated work fits about 10 s, else flow), segment or flow (max-min shared bandwidth, for large fabrics)");
  add_fault_options(*cmd, f->faults, f->fault_detection);
  add_progress_option(*cmd, f->progress);
  cmd->add_option("--whatif", f->whatif, "Rank single failures by the makespan they cost: links, devices or all (as fabsim whatif --scope)");
  cmd->add_option("-j,--jobs", f->whatif_jobs, "With --whatif: failures simulated at once (separate processes)")->capture_default_str();
  cmd->add_option("--segment-size", f->segment_size, "Largest segment per path (segment level; default 512K); a path through an InfiniBand or Ethernet switch takes at most 1/16 of its input buffer, not below 64 KiB");
  cmd->add_option("--algo", f->algo, "Force an NCCL algorithm for every collective: ring, tree, nvls, nvlstree, pat, collnet or auto")->capture_default_str();
  cmd->add_option("--proto", f->proto, "Force an NCCL protocol: LL, LL128, Simple or auto")->capture_default_str();
  cmd->add_option("--channels", f->channels, "Force a channel count or auto")->capture_default_str();
  cmd->add_option("--nccl-version", f->nccl_version,
                  "Choose algorithms with this NCCL release's tuner constants, e.g. 2.26.2 (default: the newest fabsim has read)");
  cmd->add_option("--straggler", f->stragglers, "[JOB:]RANK=FACTOR: that rank's compute takes FACTOR times longer");
  cmd->add_option("--start-delay", f->delays, "[JOB:]RANK=US: that rank starts US microseconds late");
  cmd->callback([f, &commands] {
    commands.action = [f, &commands] {
      ReplayFlags resolved = *f;
      resolved.command_line = commands.command_line;
      // Stock names ("hgx-h100", "dp8-ddp-step") to their files.
      resolved.topology = core::resolve_stock(core::StockKind::kTopology, f->topology, "--topology");
      for (auto& t : resolved.traces) t = core::resolve_stock(core::StockKind::kTrace, t, "trace");
      for (auto& j : resolved.jobs)
        if (const auto at = j.rfind('@'); at != std::string::npos)
          j = core::resolve_stock(core::StockKind::kTrace, j.substr(0, at), "--job") + j.substr(at);
      return run_replay(resolved);
    };
  });
}

}  // namespace fabsim::cli
