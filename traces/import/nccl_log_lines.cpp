#include "traces/import/nccl_log_lines.hpp"

#include <algorithm>
#include <cctype>
#include <vector>

namespace fabsim::traces::nccl_log {

namespace {

bool all_digits(std::string_view s) { return !s.empty() && std::all_of(s.begin(), s.end(), [](unsigned char c) { return std::isdigit(c) != 0; }); }
bool is_space(char c) { return c == ' ' || c == '\t'; }

std::vector<std::string_view> split_words(std::string_view s) {
  std::vector<std::string_view> words;
  std::size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && is_space(s[i])) ++i;
    const std::size_t start = i;
    while (i < s.size() && !is_space(s[i])) ++i;
    if (i > start) words.push_back(s.substr(start, i - start));
  }
  return words;
}

/// The debug line whose "] NCCL " marker is at `marker`, if what surrounds it fits.
std::optional<DebugLine> debug_line_at(std::string_view line, std::size_t marker) {
  const std::size_t open = line.rfind('[', marker);
  if (open == std::string_view::npos || open < 2 || line[open - 1] != ' ') return std::nullopt;
  const std::string_view device = line.substr(open + 1, marker - open - 1);
  if (!all_digits(device)) return std::nullopt;
  std::size_t token_start = open - 1;
  while (token_start > 0 && !is_space(line[token_start - 1])) --token_start;
  const std::string_view token = line.substr(token_start, open - 1 - token_start);
  const std::size_t tid_colon = token.rfind(':');
  if (tid_colon == std::string_view::npos || tid_colon == 0) return std::nullopt;
  const std::size_t pid_colon = token.rfind(':', tid_colon - 1);
  if (pid_colon == std::string_view::npos || pid_colon == 0) return std::nullopt;
  const std::string_view pid = token.substr(pid_colon + 1, tid_colon - pid_colon - 1);
  if (!all_digits(pid) || !all_digits(token.substr(tid_colon + 1))) return std::nullopt;
  // The level: an upper-case word (INFO, WARN, TRACE, ABORT).
  std::size_t level_end = marker + 7;
  while (level_end < line.size() && std::isupper(static_cast<unsigned char>(line[level_end])) != 0) ++level_end;
  if (level_end == marker + 7 || (level_end < line.size() && line[level_end] != ' ')) return std::nullopt;
  DebugLine d;
  d.host = std::string(token.substr(0, pid_colon));
  d.pid = std::string(pid);
  d.device = std::string(device);
  d.message = level_end < line.size() ? line.substr(level_end + 1) : std::string_view();
  return d;
}

const char* name_of(std::string_view value, const std::vector<const char*>& names) {
  if (!all_digits(value) || value.size() > 2) return nullptr;
  const std::size_t i = static_cast<std::size_t>(std::stoi(std::string(value)));
  return i < names.size() ? names[i] : nullptr;
}

}  // namespace

std::optional<DebugLine> read_debug_line(std::string_view line) {
  for (std::size_t marker = line.find("] NCCL "); marker != std::string_view::npos; marker = line.find("] NCCL ", marker + 1))
    if (auto d = debug_line_at(line, marker)) return d;
  return std::nullopt;
}

std::optional<InitLine> read_init_line(std::string_view message) {
  // COMPLETE, or START (NCCL 2.18+ prints the same fields there: a log cut during init still names its communicators).
  std::size_t complete = message.find(" - Init COMPLETE");
  if (complete == std::string_view::npos) complete = message.find(" - Init START");
  if (complete == std::string_view::npos) return std::nullopt;
  const auto words = split_words(message.substr(0, complete));
  std::size_t first = 0;
  InitLine l;
  if (!words.empty() && words[0] != "comm") {
    l.entry_point = std::string(words[0]);
    if (l.entry_point.size() > 5 && l.entry_point.ends_with("_impl")) l.entry_point.resize(l.entry_point.size() - 5);
    first = 1;
  }
  if (first >= words.size() || words[first] != "comm") return std::nullopt;
  for (std::size_t i = first; i + 1 < words.size(); i += 2) l.fields.emplace(std::string(words[i]), std::string(words[i + 1]));
  if (!l.fields.contains("nranks") && l.fields.contains("nRanks")) l.fields["nranks"] = l.fields["nRanks"];  // some builds capitalise it
  for (const char* key : {"comm", "rank", "nranks"})
    if (!l.fields.contains(key)) return std::nullopt;
  return l;
}

std::optional<CollLine> read_coll_line(std::string_view message) {
  const std::size_t colon = message.find(": opCount ");
  if (colon == std::string_view::npos || colon == 0) return std::nullopt;
  CollLine l;
  l.op = std::string(message.substr(0, colon));
  if (l.op.find(' ') != std::string::npos) return std::nullopt;
  const auto words = split_words(message.substr(colon + 2));
  for (std::size_t i = 0; i < words.size(); ++i) {
    const std::string_view w = words[i];
    if (w.starts_with("[nranks=") && w.ends_with("]")) {
      l.fields["nranks"] = std::string(w.substr(8, w.size() - 9));
    } else if (i + 1 < words.size()) {
      l.fields.emplace(std::string(w), std::string(words[i + 1]));
      ++i;
    }
  }
  static const char* const kRequired[] = {"opCount", "count", "datatype", "root", "comm", "stream"};
  l.complete = std::all_of(std::begin(kRequired), std::end(kRequired), [&](const char* key) { return l.fields.contains(key); });
  return l;
}

std::optional<TuningLine> read_tuning_line(std::string_view message) {
  const std::size_t arrow = message.find(" Bytes -> Algo ");
  if (arrow == std::string_view::npos) return std::nullopt;
  const auto words = split_words(message.substr(arrow + 15));
  if (words.size() < 3 || words[1] != "proto") return std::nullopt;
  // NCCL 2.21 prints the enums of info.h as numbers, later versions names.
  static const std::vector<const char*> kAlgos = {"TREE", "RING", "COLLNET_DIRECT", "COLLNET_CHAIN", "NVLS", "NVLS_TREE", "PAT"};
  static const std::vector<const char*> kProtos = {"LL", "LL128", "SIMPLE"};
  TuningLine t;
  const char* algo = name_of(words[0], kAlgos);
  const char* proto = name_of(words[2], kProtos);
  t.algo = algo != nullptr ? algo : std::string(words[0]);
  t.proto = proto != nullptr ? proto : std::string(words[2]);
  return t;
}

std::optional<std::uint64_t> parse_op_count(const std::string& text) {
  if (text.empty() || text.size() > 16) return std::nullopt;
  std::uint64_t v = 0;
  for (char c : text) {
    const int d = std::isdigit(static_cast<unsigned char>(c)) != 0 ? c - '0'
                  : (c >= 'a' && c <= 'f')                     ? c - 'a' + 10
                  : (c >= 'A' && c <= 'F')                     ? c - 'A' + 10
                                                               : -1;
    if (d < 0) return std::nullopt;
    v = v * 16 + static_cast<std::uint64_t>(d);
  }
  return v;
}

}  // namespace fabsim::traces::nccl_log
