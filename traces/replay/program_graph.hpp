#pragma once
/// What a program's ops wait for: their dependencies and the op before them
/// on their stream. Shared by the replay engine and the completion check, so
/// that `trace check` judges a trace by the ordering replay runs it with.

#include <algorithm>
#include <cstdint>
#include <vector>

#include "traces/replay/trace.hpp"

namespace fabsim::traces {

struct ProgramGraph {
  std::vector<std::vector<int>> successors;
  std::vector<std::uint32_t> initial_unmet;
  std::vector<int> roots;

  explicit ProgramGraph(const Program& p) : successors(p.ops.size()), initial_unmet(p.ops.size(), 0) {
    std::vector<int> last_on_stream(p.streams.size(), -1);
    for (std::size_t i = 0; i < p.ops.size(); ++i) {
      std::vector<int> preds = p.ops[i].deps;
      auto& previous = last_on_stream[static_cast<std::size_t>(p.ops[i].stream)];
      if (previous >= 0) preds.push_back(previous);
      previous = static_cast<int>(i);
      std::sort(preds.begin(), preds.end());
      preds.erase(std::unique(preds.begin(), preds.end()), preds.end());
      for (int d : preds) successors[static_cast<std::size_t>(d)].push_back(static_cast<int>(i));
      initial_unmet[i] = static_cast<std::uint32_t>(preds.size());
      if (preds.empty()) roots.push_back(static_cast<int>(i));
    }
  }
};

}  // namespace fabsim::traces
