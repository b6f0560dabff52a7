#include "sim/cli/commands.hpp"

#include <fmt/format.h>

#include <filesystem>
#include <iostream>
#include <memory>

#include "sim/cli/check_command.hpp"
#include "sim/cli/child_run.hpp"
#include "sim/cli/list_command.hpp"
#include "sim/cli/regress_command.hpp"
#include "sim/cli/replay_command.hpp"
#include "sim/cli/progress_option.hpp"
#include "sim/cli/simulation_request.hpp"
#include "sim/cli/calibrate_command.hpp"
#include "sim/cli/sweep_command.hpp"
#include "sim/cli/validate_command.hpp"
#include "sim/cli/whatif_command.hpp"
#include "sim/core/data_root.hpp"
#include "sim/core/error.hpp"
#include "sim/core/limits.hpp"
#include "sim/core/text.hpp"
#include "topologies/topology_spec.hpp"
#include "topologies/topology_summary.hpp"
#include "topologies/topology_writer.hpp"
#include <fmt/ostream.h>
#include "traces/collectives/tuner.hpp"

namespace fabsim::cli {

namespace {

struct NcclTestFlags {
  std::string topology, hardware, op = "all_reduce", min_bytes = "8", max_bytes = "8", algo = "auto", proto = "auto",
                                    channels = "auto", format = "table", segment_size,
                                    model, calibration, fault_detection, progress, nccl_version, extrapolate_above;
  std::vector<std::string> faults;
  double factor = 2.0;
  int gpus = -1;  ///< -1: not given (all GPUs)
  int gpus_per_process = -1;  ///< -1: not given
  int root = 0;
  bool links = false;
};

core::Bytes size_flag(const std::string& flag, const std::string& value, core::Diagnostics& diag) {
  const auto v = core::parse_size_flag(value);
  if (!v) diag.error(flag, fmt::format("'{}' is not a size (expected bytes with an optional K, M, G or T suffix, at most 16 TiB)", value));
  return v.value_or(0);
}

/// --extrapolate-above SIZE|auto: the segment level, rows above SIZE (or where
/// the sweep is over the budget) extrapolated from probes; with what cannot be
/// extrapolated (the flow level, link and fault reports, point-to-point ops) refused.
void extrapolation_from_flags(const NcclTestFlags& f, SimulationRequest& r, core::Diagnostics& diag) {
  constexpr const char* flag = "--extrapolate-above";
  if (f.model == "flow") diag.error(flag, "extrapolates segment-level runs: it cannot be combined with --model flow");
  if (f.links) diag.error(flag, "--links reports the traffic simulated, and the rows it extrapolates are not: use one or the other");
  if (!f.faults.empty()) diag.error(flag, "a fault changes the runs it strikes, which a line through other sizes cannot follow: use one or the other");
  if (f.extrapolate_above == "auto") {
    r.extrapolate_auto = true;
  } else {
    constexpr core::Bytes kSmallest = 1 << 20;
    const core::Bytes above = size_flag(flag, f.extrapolate_above, diag);
    if (above < kSmallest && core::parse_size_flag(f.extrapolate_above))
      diag.error(flag, fmt::format("'{}' is below 1M: a collective's time is not yet linear in its size there (expected a size of at "
                                   "least 1M, or auto)", f.extrapolate_above));
    if (traces::runs_point_to_point(r.test.op))
      diag.error(flag, fmt::format("{} runs point to point, without NCCL's algorithms: its rows are not extrapolated", f.op));
    r.test.extrapolate_above = above;
  }
  r.model_auto = false;  // the segment level, or (auto) the flow level where even the probes are too much
}

SimulationRequest request_from_flags(const NcclTestFlags& f) {
  core::Diagnostics diag("command line");
  SimulationRequest r;
  r.origin = "command line";
  r.topology_path = core::resolve_stock(core::StockKind::kTopology, f.topology, "--topology");
  r.catalogue_path = f.hardware;
  if (auto op = traces::parse_collective(f.op)) {
    r.test.op = *op;
  } else {
    diag.error("--op", fmt::format("unknown collective '{}' (expected one of: {})", f.op, traces::collective_names()));
  }
  r.test.min_bytes = size_flag("-b", f.min_bytes, diag);
  r.test.max_bytes = size_flag("-e", f.max_bytes, diag);
  r.test.factor = f.factor;
  if (f.gpus == -1) r.test.gpus = 0;
  else if (f.gpus < 1 || f.gpus > core::kMaxGpus) diag.error("-g", fmt::format("expected 1 to {} GPUs, found {}", core::kMaxGpus, f.gpus));
  else r.test.gpus = f.gpus;
  r.test.root = f.root;
  r.test.algorithm = core::lower_case(f.algo);
  if (f.proto != "auto" && f.proto != "AUTO") {
    if (auto p = traces::parse_protocol(f.proto)) {
      r.test.protocol = p;
    } else {
      diag.error("--proto", fmt::format("unknown protocol '{}' (expected LL, LL128, Simple or auto)", f.proto));
    }
  }
  if (!f.nccl_version.empty()) {
    if (const auto problem = traces::nccl_version_problem(f.nccl_version)) diag.error("--nccl-version", *problem);
    else r.test.nccl_version = traces::parse_nccl_version(f.nccl_version);
  }
  if (f.gpus_per_process != -1) {
    if (f.gpus_per_process < 1 || f.gpus_per_process > core::kMaxGpus)
      diag.error("--gpus-per-process", fmt::format("expected 1 to {} GPUs per process, found {}", core::kMaxGpus, f.gpus_per_process));
    else r.test.gpus_per_process = f.gpus_per_process;
  }
  if (f.channels != "auto") {
    const auto c = core::parse_size_flag(f.channels);
    if (!c || *c < 1 || *c > 64) {
      diag.error("--channels", fmt::format("'{}' is not a channel count (expected 1..64 or auto)", f.channels));
    } else {
      r.test.channels = static_cast<int>(*c);
    }
  }
  if (auto fmt_ = report::parse_output_format(f.format)) {
    r.format = *fmt_;
  } else {
    diag.error("--format", fmt::format("unknown format '{}' (expected table, json or csv)", f.format));
  }
  if (!f.segment_size.empty()) {
    r.segment_size = size_flag("--segment-size", f.segment_size, diag);
    if (r.segment_size == 0) diag.error("--segment-size", "expected a segment size > 0");
    if (f.model == "flow") diag.error("--segment-size", segment_size_with_flow_model());
  }
  r.links = f.links;
  r.calibration_path = f.calibration;
  r.model_given = !f.model.empty();
  r.model_auto = f.model.empty() || f.model == "auto";
  r.flow_level = f.model == "flow";
  if (r.model_given && f.model != "segment" && f.model != "flow" && f.model != "auto")
    diag.error("--model", fmt::format("unknown model '{}' (expected auto, segment or flow)", f.model));
  if (!f.extrapolate_above.empty()) extrapolation_from_flags(f, r, diag);
  diag.throw_if_any();
  r.faults = parse_fault_flags(f.faults, f.fault_detection);
  r.progress = parse_progress_flag(f.progress);
  return r;
}

void register_nccl_test(CLI::App& app, CommandSet& commands) {
  auto flags = std::make_shared<NcclTestFlags>();
  auto* cmd = app.add_subcommand("nccl-test", "Sweep a collective over sizes like nccl-tests' *_perf binaries");
  cmd->add_option("--topology,-t", flags->topology, "Topology JSON file or stock name (fabsim list topologies)")->required();
  cmd->add_option("--hardware", flags->hardware, "Hardware catalogue (default: the topology's, else configs/hardware/catalogue.json)");
  cmd->add_option("--op", flags->op, "all_reduce, all_gather, reduce_scatter, broadcast, reduce, alltoall, sendrecv, gather or scatter")->capture_default_str();
  cmd->add_option("-b,--minbytes", flags->min_bytes, "Smallest size (K/M/G suffixes)")->capture_default_str();
  cmd->add_option("-e,--maxbytes", flags->max_bytes, "Largest size (K/M/G suffixes)")->capture_default_str();
  cmd->add_option("-f,--stepfactor", flags->factor, "Size multiplier between rows")->capture_default_str();
  cmd->add_option("-g,--ngpus", flags->gpus, "Use the first N GPUs of the topology (default: all)");
  cmd->add_option("-r,--root", flags->root, "Root rank of broadcast, reduce, gather and scatter")->capture_default_str();
  cmd->add_option("--algo", flags->algo, "NCCL algorithm: ring, tree, nvls, nvlstree, pat, collnet or auto")->capture_default_str();
  cmd->add_option("--proto", flags->proto, "NCCL protocol: LL, LL128, Simple or auto")->capture_default_str();
  cmd->add_option("--channels", flags->channels, "Channel count or auto")->capture_default_str();
  cmd->add_option("--nccl-version", flags->nccl_version,
                  "Choose algorithms with this NCCL release's tuner constants, e.g. 2.26.2 (default: the newest fabsim has read)");
  cmd->add_option("--gpus-per-process", flags->gpus_per_process,
                  "nccl-tests' own -g: GPUs one process drives. 1 (MPI, torchrun) takes the per-call base fitted on one process "
                  "per GPU; more, or not given, the base fitted on one thread driving 4 GPUs");
  cmd->add_option("--format", flags->format, "table, json or csv")->capture_default_str();
  cmd->add_option("--segment-size", flags->segment_size, "Largest segment per path (segment level; default 512K); a path through an InfiniBand or Ethernet switch takes at most 1/16 of its input buffer, not below 64 KiB");
  cmd->add_option("--model", flags->model,
                  "auto (the default: segment level where its estimated work fits about 10 s, else flow), segment (packet-train "
                  "fidelity) or flow (max-min shared bandwidth, for large fabrics)");
  cmd->add_option("--extrapolate-above", flags->extrapolate_above,
                  "Segment level, but rows above this size are extrapolated along runs at it and its half with each row's "
                  "algorithm, protocol and channels (at least 1M); auto: above 256M where the sweep is over the --model auto budget");
  cmd->add_flag("--links", flags->links, "Report bytes and utilisation of every link direction");
  add_fault_options(*cmd, flags->faults, flags->fault_detection);
  cmd->add_option("--calibration", flags->calibration, "Calibration profile (fabsim calibrate) whose fitted values replace the catalogue's");
  add_progress_option(*cmd, flags->progress);
  cmd->callback([flags, &commands] {
    commands.action = [flags, &commands] {
      SimulationRequest request = request_from_flags(*flags);
      request.command_line = commands.command_line;
      execute(request, std::cout, std::cerr);
      return 0;
    };
  });
}

void register_run(CLI::App& app, CommandSet& commands) {
  auto path = std::make_shared<std::string>();
  auto format = std::make_shared<std::string>();
  auto links = std::make_shared<bool>(false);
  auto* cmd = app.add_subcommand("run", "Run a scenario file (topology + workload + parameters + output)");
  cmd->add_option("scenario", *path, "Scenario JSON file or stock name (fabsim list scenarios)")->required();
  cmd->add_option("--format", *format, "Override the scenario's output format: table, json or csv");
  cmd->add_flag("--links", *links, "Report link usage even if the scenario does not ask for it");
  auto model = std::make_shared<std::string>();
  cmd->add_option("--model", *model, "Override the scenario's fabric model: auto, segment or flow");
  auto calibration = std::make_shared<std::string>();
  cmd->add_option("--calibration", *calibration, "Calibration profile overriding the scenario's");
  auto faults = std::make_shared<std::vector<std::string>>();
  auto detection = std::make_shared<std::string>();
  add_fault_options(*cmd, *faults, *detection);
  auto progress = std::make_shared<std::string>();
  add_progress_option(*cmd, *progress);
  cmd->callback([path, format, links, model, calibration, faults, detection, progress, &commands] {
    commands.action = [path, format, links, model, calibration, faults, detection, progress, &commands] {
      SimulationRequest request = load_scenario(core::resolve_stock(core::StockKind::kScenario, *path, "scenario"));
      request.command_line = commands.command_line;
      if (!calibration->empty()) request.calibration_path = *calibration;
      if (!model->empty()) {
        if (*model != "segment" && *model != "flow" && *model != "auto")
          throw core::ConfigError("command line", "--model", fmt::format("unknown model '{}' (expected auto, segment or flow)", *model));
        request.flow_level = *model == "flow";
        request.model_auto = *model == "auto";
        request.model_given = true;
      }
      // Faults on the command line add to the scenario's; its detection delay gives way to the flag's.
      const FaultRequest extra = parse_fault_flags(*faults, *detection);
      request.faults.faults.insert(request.faults.faults.end(), extra.faults.begin(), extra.faults.end());
      if (extra.detection) {
        request.faults.detection = extra.detection;
        request.faults.detection_where = extra.detection_where;
      }
      if (!format->empty()) {
        const auto f = report::parse_output_format(*format);
        if (!f) throw core::ConfigError("command line", "--format", fmt::format("unknown format '{}' (expected table, json or csv)", *format));
        request.format = *f;
      }
      request.links = request.links || *links;
      request.progress = parse_progress_flag(*progress);
      execute(request, std::cout, std::cerr);
      return 0;
    };
  });
}

void register_describe(CLI::App& app, CommandSet& commands) {
  auto model = std::make_shared<std::string>();
  auto hardware = std::make_shared<std::string>();
  auto* cmd = app.add_subcommand("describe", "Print a hardware model's parameters and where each value comes from");
  cmd->add_option("model", *model, "Model name (omit to list all)");
  cmd->add_option("--hardware", *hardware, "Hardware catalogue (default: configs/hardware/catalogue.json)");
  cmd->callback([model, hardware, &commands] {
    commands.action = [model, hardware] {
      const auto catalogue = topo::load_hardware_catalogue(hardware->empty() ? topo::default_catalogue_path() : *hardware);
      auto print = [&](const std::string& kind, const std::string& name, const std::string& description,
                       const std::vector<topo::ParamSource>& sources) {
        if (!model->empty() && *model != name) return false;
        fmt::print(std::cout, "{} {}: {}\n", kind, name, description);
        for (const auto& s : sources) fmt::print(std::cout, "  {:<32} {:<12} {}\n", s.name, s.value, s.source);
        return true;
      };
      bool found = false;
      for (const auto& [n, m] : catalogue.gpus) found |= print("gpu", n, m.description, m.sources);
      for (const auto& [n, m] : catalogue.switches) found |= print("switch", n, m.description, m.sources);
      for (const auto& [n, m] : catalogue.links) found |= print("link (" + topo::link_kind_name(m.kind) + ")", n, m.description, m.sources);
      for (const auto& [n, m] : catalogue.nics) found |= print("nic", n, m.description, m.sources);
      if (!found) {
        std::string names;
        for (const auto& [n, m] : catalogue.gpus) names += (names.empty() ? "" : ", ") + n;
        for (const auto& [n, m] : catalogue.switches) names += ", " + n;
        for (const auto& [n, m] : catalogue.links) names += ", " + n;
        for (const auto& [n, m] : catalogue.nics) names += ", " + n;
        throw core::ConfigError(catalogue.file, "", fmt::format("no model named '{}' (models: {})", *model, names));
      }
      return 0;
    };
  });
}

void register_validate(CLI::App& app, CommandSet& commands) {
  auto options = std::make_shared<ValidateOptions>();
  auto* cmd = app.add_subcommand("validate", "Compare predictions with a measurements file (published-measurements.json format)");
  cmd->add_option("--measurements,-m", options->measurements, "Measurements JSON")->required();
  cmd->add_option("--topologies", options->topology_dir, "Folder of the stock topologies (default: the installed ones)");
  cmd->add_option("--max-bandwidth-error", options->max_bandwidth_error,
                  "Fail (exit 1) above this out-of-sample median error at >= 64 MiB, e.g. 0.05");
  cmd->add_option("--max-latency-error", options->max_latency_error,
                  "Fail (exit 1) above this out-of-sample median error below 256 KiB, e.g. 0.15");
  cmd->add_flag("--json", options->json, "Print the comparison as JSON");
  cmd->add_flag("--refit", options->refit,
                "Leave one run out: predict each in-sample data set again with the parameters it fixed refitted without it");
  cmd->add_option("--calibration", options->calibration,
                  "Calibration profile: the comparison runs without it, then with it, and the bounds apply to the second");
  cmd->add_flag("--extrapolate", options->extrapolate,
                "Predict with nccl-test --extrapolate-above auto: across nodes the segment level with its largest rows extrapolated, "
                "where the default (--model auto) takes the flow level for large sweeps");
  cmd->callback([options, &commands] {
    commands.action = [options, &commands] {
      ValidateOptions o = *options;
      o.command_line = commands.command_line;
      o.self = self_executable();
      o.topology_dir = o.topology_dir.empty() ? core::data_path("topologies")
                                           : std::filesystem::path(o.topology_dir).lexically_normal().string();
      if (o.calibration.empty()) return run_validate(o, std::cout);
      if (o.refit)  // refused before the run without the profile, not after it
        throw core::ConfigError("command line", "--refit", "cannot be combined with --calibration: the refit replaces the fitted values itself");
      (void)calibration_patch(o.calibration);  // a bad profile is refused before the run without it, not after
      ValidateOptions before = o;
      before.calibration.clear();
      before.max_bandwidth_error = before.max_latency_error = 0;
      before.refit = false;
      if (!o.json) std::cout << "# before calibration (the catalogue's values)\n";
      run_validate(before, std::cout);
      if (!o.json) std::cout << "# after calibration (" << o.calibration << ")\n";
      return run_validate(o, std::cout);
    };
  });
}

void register_regress(CLI::App& app, CommandSet& commands) {
  auto options = std::make_shared<RegressOptions>();
  auto* cmd = app.add_subcommand("regress", "Re-run a baseline's scenarios and report the figures that moved");
  cmd->add_option("baseline", options->baseline, "Baseline JSON (fabsim-baseline/1)")->required();
  cmd->add_flag("--update", options->update, "Record the current figures in the baseline");
  cmd->callback([options, &commands] {
    commands.action = [options, &commands] {
      RegressOptions o = *options;
      o.command_line = commands.command_line;
      o.self = self_executable();
      return run_regress(o, std::cout);
    };
  });
}

void register_sweep(CLI::App& app, CommandSet& commands) {
  auto options = std::make_shared<SweepOptions>();
  auto* cmd = app.add_subcommand("sweep", "Run the product of parameter axes over a base scenario, one process per point");
  cmd->add_option("sweep", options->sweep, "Sweep JSON (fabsim-sweep/1) or stock name (fabsim list sweeps)")->required();
  cmd->add_option("-j,--jobs", options->jobs, "Points simulated at once (separate processes)")->capture_default_str();
  cmd->add_option("-o,--out", options->out_dir, "Write sweep.csv, sweep.json and the points here (default: CSV on stdout)");
  cmd->add_option("--calibration", options->calibration, "Calibration profile applied to every point");
  add_fault_options(*cmd, options->faults, options->fault_detection);
  cmd->callback([options, &commands] {
    commands.action = [options, &commands] {
      SweepOptions o = *options;
      o.command_line = commands.command_line;
      o.sweep = core::resolve_stock(core::StockKind::kSweep, o.sweep, "sweep");
      o.self = self_executable();
      return run_sweep(o, std::cout);
    };
  });
}

void print_summary(std::ostream& out, const topo::TopologySpec& spec, const topo::TopologySummary& s) {
  fmt::print(out, "topology {}: {}\n", spec.name, spec.description);
  fmt::print(out, "  GPUs                      {} in {} NVLink domain{}\n", s.gpus, s.nvlink_domains, s.nvlink_domains == 1 ? "" : "s");
  fmt::print(out, "  switches                  {} NVLink, {} PCIe (switches and root complexes), {} network\n", s.nvlink_switches,
             s.pcie_switches, s.network_switches);
  fmt::print(out, "  NICs                      {}\n", s.nics);
  fmt::print(out, "  links                     {} in {} bundles\n", s.links, s.link_bundles);
  fmt::print(out, "  NVLink per GPU            {:.1f} GB/s line rate, {:.1f} GB/s effective (one direction)\n",
             s.injection_line.gbytes_per_second(), s.injection_effective.gbytes_per_second());
  fmt::print(out, "  network per GPU           {:.1f} GB/s line rate (NIC ports / GPUs, one direction)\n", s.network_per_gpu.gbytes_per_second());
  fmt::print(out, "  bisection                 {:.1f} GB/s line rate (first half of the GPUs to the second, one direction)\n",
             s.bisection_line.gbytes_per_second());
  for (const auto& t : s.tiers) {
    if (t.up.bytes_per_second > 0)
      fmt::print(out, "  network tier {}            {} switches, {:.1f} GB/s down, {:.1f} GB/s up: oversubscription {:.2f}:1\n", t.tier,
                 t.switches, t.down.gbytes_per_second(), t.up.gbytes_per_second(), t.oversubscription());
    else
      fmt::print(out, "  network tier {}            {} switches, {:.1f} GB/s down (top tier)\n", t.tier, t.switches, t.down.gbytes_per_second());
  }
  fmt::print(out, "  diameter                  {}{} links between GPUs{}\n", s.diameter_sampled ? ">= " : "", s.diameter,
             s.diameter_sampled ? " (routes from a sample of GPUs)" : "");
}

void register_topo(CLI::App& app, CommandSet& commands) {
  auto path = std::make_shared<std::string>();
  auto hardware = std::make_shared<std::string>();
  auto dot = std::make_shared<bool>(false);
  auto* topo_cmd = app.add_subcommand("topo", "Check or draw a topology");
  topo_cmd->require_subcommand(1);
  auto* check = topo_cmd->add_subcommand("check", "Validate a topology, route it and print its figures");
  auto* show = topo_cmd->add_subcommand("show", "Print a topology as Graphviz DOT");
  auto* expand = topo_cmd->add_subcommand("expand", "Print a (generated) topology in the explicit format");
  for (auto* cmd : {check, show, expand}) {
    cmd->add_option("file", *path, "Topology JSON file or stock name (fabsim list topologies)")->required();
    cmd->add_option("--hardware", *hardware, "Hardware catalogue override");
  }
  show->add_flag("--dot", *dot, "Graphviz DOT (the only format so far)");
  check->callback([path, hardware, &commands] {
    commands.action = [path, hardware] {
      const auto spec = topo::load_topology(core::resolve_stock(core::StockKind::kTopology, *path, "file"), *hardware);
      topo::FabricGraph graph(spec);
      print_summary(std::cout, spec, topo::summarise(spec, graph));
      return 0;
    };
  });
  expand->callback([path, hardware, &commands] {
    commands.action = [path, hardware] {
      const auto spec = topo::load_topology(core::resolve_stock(core::StockKind::kTopology, *path, "file"), *hardware);
      topo::FabricGraph graph(spec);  // expand only what routes
      topo::write_explicit_topology(std::cout, spec);
      return 0;
    };
  });
  show->callback([path, hardware, &commands] {
    commands.action = [path, hardware] {
      const auto spec = topo::load_topology(core::resolve_stock(core::StockKind::kTopology, *path, "file"), *hardware);
      topo::FabricGraph graph(spec);
      topo::write_dot(std::cout, spec, graph);
      return 0;
    };
  });
}

}  // namespace

void register_calibrate(CLI::App& app, CommandSet& commands) {
  auto options = std::make_shared<CalibrateOptions>();
  auto* cmd = app.add_subcommand("calibrate", "Fit model parameters to measurements and write a calibration profile");
  cmd->add_option("--measurements,-m", options->measurements,
                  "nccl-tests output (text), a measurements JSON, or the harness's JSON; repeat for several")->required();
  cmd->add_option("--topology,-t", options->topology, "The measured system's topology (default: a stock one chosen by GPU model)");
  cmd->add_option("--topologies", options->topology_dir, "Folder of the stock topologies (default: the installed ones)");
  cmd->add_option("-o,--output", options->output, "Profile to write (fabsim-calibration/1)")->required();
  cmd->add_option("--pcie-link", options->pcie_link, "PCIe link model the host transfers fix")->capture_default_str();
  cmd->add_option("--dataset", options->datasets,
                  "Fit only the data set with this id (repeat for several); the others stay held out for fabsim validate");
  auto fit = std::make_shared<std::string>("all");
  cmd->add_option("--fit", *fit, "What to fit: all, or latencies (launch overhead, LL step and reduce latency; the efficiency keeps its value)")
      ->check(CLI::IsMember({"all", "latencies"}))
      ->capture_default_str();
  cmd->callback([options, fit, &commands] {
    commands.action = [options, fit] {
      CalibrateOptions o = *options;
      if (!o.topology.empty()) o.topology = core::resolve_stock(core::StockKind::kTopology, o.topology, "--topology");
      o.latencies_only = *fit == "latencies";
      o.self = self_executable();
      o.topology_dir = o.topology_dir.empty() ? core::data_path("topologies")
                                           : std::filesystem::path(o.topology_dir).lexically_normal().string();
      return run_calibrate(o, std::cout);
    };
  });
}

void register_commands(CLI::App& app, CommandSet& commands) {
  register_calibrate(app, commands);
  register_topo(app, commands);
  register_regress(app, commands);
  register_sweep(app, commands);
  register_validate(app, commands);
  register_nccl_test(app, commands);
  register_run(app, commands);
  register_replay(app, commands);
  register_trace(app, commands);
  register_describe(app, commands);
  register_list(app, commands);
  register_check(app, commands);
  register_whatif(app, commands);
}

}  // namespace fabsim::cli
