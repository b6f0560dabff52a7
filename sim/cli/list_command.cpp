#include "sim/cli/list_command.hpp"

#include <fmt/format.h>
#include <fmt/ostream.h>

#include <iostream>
#include <memory>

#include "sim/core/data_root.hpp"
#include "sim/core/error.hpp"
#include "sim/core/json_reader.hpp"
#include "topologies/hardware_catalogue.hpp"

namespace fabsim::cli {

namespace {

using nlohmann::json;

/// A description on one line: its first sentence, cut at a word near `width` characters.
std::string one_line(std::string text, std::size_t width = 110) {
  for (char& c : text)
    if (c == '\n' || c == '\r' || c == '\t') c = ' ';
  if (const auto stop = text.find(". "); stop != std::string::npos) text.resize(stop + 1);
  if (text.size() <= width) return text;
  const auto space = text.rfind(' ', width);
  text.resize(space == std::string::npos ? width : space);
  return text + " ...";
}

/// The description a stock file gives itself ("description", or a trace's "meta"/"description").
std::string description_of(const std::string& path) {
  try {
    const json doc = core::read_json_file(path);
    if (doc.contains("description") && doc["description"].is_string()) return doc["description"].get<std::string>();
    if (doc.contains("meta") && doc["meta"].is_object() && doc["meta"].contains("description") && doc["meta"]["description"].is_string())
      return doc["meta"]["description"].get<std::string>();
    return "(no description)";
  } catch (const core::ConfigError&) {
    return "(unreadable: fabsim cannot read this file)";
  }
}

void list_files(core::StockKind kind, std::ostream& out) {
  const auto files = core::stock_files(kind);
  std::size_t width = 0;
  for (const auto& f : files) width = std::max(width, f.name.size());
  for (const auto& f : files) fmt::print(out, "{:<{}}  {}\n", f.name, width, one_line(description_of(f.path)));
}

void list_models(std::ostream& out) {
  const auto catalogue = topo::load_hardware_catalogue(topo::default_catalogue_path());
  std::vector<std::pair<std::string, std::string>> lines;  // "kind name", description
  for (const auto& [n, m] : catalogue.gpus) lines.emplace_back("gpu " + n, m.description);
  for (const auto& [n, m] : catalogue.switches) lines.emplace_back("switch " + n, m.description);
  for (const auto& [n, m] : catalogue.links) lines.emplace_back(topo::link_kind_name(m.kind) + " " + n, m.description);
  for (const auto& [n, m] : catalogue.nics) lines.emplace_back("nic " + n, m.description);
  std::size_t width = 0;
  for (const auto& l : lines) width = std::max(width, l.first.size());
  for (const auto& [name, description] : lines) fmt::print(out, "{:<{}}  {}\n", name, width, one_line(description));
}

}  // namespace

void register_list(CLI::App& app, CommandSet& commands) {
  auto what = std::make_shared<std::string>();
  auto* cmd = app.add_subcommand("list", "List the stock topologies, hardware models, scenarios, sweeps or traces installed");
  cmd->add_option("what", *what, "topologies, models, scenarios, sweeps or traces")->required();
  cmd->callback([what, &commands] {
    commands.action = [what] {
      if (*what == "topologies") list_files(core::StockKind::kTopology, std::cout);
      else if (*what == "scenarios") list_files(core::StockKind::kScenario, std::cout);
      else if (*what == "sweeps") list_files(core::StockKind::kSweep, std::cout);
      else if (*what == "traces") list_files(core::StockKind::kTrace, std::cout);
      else if (*what == "models") list_models(std::cout);
      else
        throw core::ConfigError("command line", "what",
                                fmt::format("cannot list '{}' (expected topologies, models, scenarios, sweeps or traces)", *what));
      return 0;
    };
  });
}

}  // namespace fabsim::cli
