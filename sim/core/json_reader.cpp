#include "sim/core/json_reader.hpp"

#include "sim/core/gzip.hpp"

#include <fmt/format.h>

#include <array>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>
#include <unordered_set>
#include <vector>

namespace fabsim::core {

namespace {

/// Escapes a key for a JSON pointer (RFC 6901): '~' -> "~0", '/' -> "~1".
std::string pointer_token(std::string_view key) {
  std::string out;
  for (char c : key) {
    if (c == '~') out += "~0";
    else if (c == '/') out += "~1";
    else out += c;
  }
  return out;
}

std::string child_path(const std::string& parent, std::string_view key) {
  std::string out = parent;
  out.push_back('/');
  out.append(pointer_token(key));
  return out;
}

/// Builds the document in one SAX pass (through nlohmann's own DOM builder)
/// while checking what nlohmann lets through or reports without a location:
/// it keeps the last of two equal keys and says "number overflow" with no
/// path, so this builder finds both and names their JSON path.
class StrictJsonBuilder : public nlohmann::json_sax<nlohmann::json> {
 public:
  explicit StrictJsonBuilder(nlohmann::json& result) : dom_(result, false) {}

  /// Elements of the array at root key `key` go to `sink` one by one as they
  /// complete, instead of into the document (which keeps that array empty).
  void stream(std::string key, const ElementSink* sink) {
    stream_key_ = std::move(key);
    sink_ = sink;
  }

  std::optional<std::string> problem_path;
  std::string problem;

  bool null() override { return begin_element() && value() && active_->null() && end_element(); }
  bool boolean(bool v) override { return begin_element() && value() && active_->boolean(v) && end_element(); }
  bool number_integer(number_integer_t v) override { return begin_element() && value() && active_->number_integer(v) && end_element(); }
  bool number_unsigned(number_unsigned_t v) override { return begin_element() && value() && active_->number_unsigned(v) && end_element(); }
  bool number_float(number_float_t v, const string_t& s) override { return begin_element() && value() && active_->number_float(v, s) && end_element(); }
  bool string(string_t& v) override { return begin_element() && value() && active_->string(v) && end_element(); }
  bool binary(binary_t& v) override { return begin_element() && value() && active_->binary(v) && end_element(); }

  bool start_object(std::size_t n) override {
    if (!open_container() || !begin_element()) return false;
    push(true);
    return active_->start_object(n);
  }
  bool key(string_t& k) override {
    auto& f = frames_[depth_ - 1];
    if (!add_key(f, k)) {
      problem_path = child_path(path(), k);
      problem = fmt::format("duplicate key '{}' (each key may appear once in an object)", k);
      return false;
    }
    return active_->key(k);
  }
  bool end_object() override {
    --depth_;
    return value() && active_->end_object() && end_element();
  }
  bool start_array(std::size_t n) override {
    if (!open_container() || !begin_element()) return false;
    const bool streamed = sink_ != nullptr && depth_ == 1 && frames_[0].is_object && frames_[0].current_key() == stream_key_;
    push(false);
    if (streamed) streaming_ = true;
    return active_->start_array(n);
  }
  bool end_array() override {
    if (streaming_ && depth_ == 2 && active_ == &dom_) streaming_ = false;
    --depth_;
    return value() && active_->end_array() && end_element();
  }
  bool parse_error(std::size_t byte, const std::string&, const nlohmann::detail::exception& e) override {
    error_byte = byte;
    // 406 is nlohmann's "number overflow" (e.g. 1e999): it is a value error at a path.
    if (e.id == 406) {
      problem_path = depth_ == 0 ? std::string()
                     : frames_[depth_ - 1].is_object ? child_path(path(), frames_[depth_ - 1].current_key())
                                                     : child_path(path(), std::to_string(frames_[depth_ - 1].index));
      problem = "a number too large for a double (expected a finite number)";
    }
    return false;
  }

  std::size_t error_byte = 0;

 private:
  /// Frames are reused (depth_ counts the live ones), so the key lists keep
  /// their storage: a large document parses without a malloc per key.
  struct Frame {
    bool is_object = false;
    std::vector<std::string> keys;         ///< the first kSmallObject keys, compared linearly
    std::size_t key_count = 0;
    std::unordered_set<std::string> more;  ///< the keys after them
    std::size_t index = 0;
    const std::string& current_key() const {
      static const std::string kNone;
      return key_count == 0 ? kNone : key_count <= kSmallObject ? keys[key_count - 1] : last_big;
    }
    std::string last_big;
  };
  static constexpr std::size_t kSmallObject = 32;

  Frame& push(bool is_object) {
    if (depth_ == frames_.size()) frames_.emplace_back();
    Frame& f = frames_[depth_++];
    f.is_object = is_object;
    f.key_count = 0;
    f.more.clear();
    f.index = 0;
    return f;
  }

  /// False when `k` is already a key of this object.
  static bool add_key(Frame& f, const std::string& k) {
    const std::size_t small = std::min(f.key_count, kSmallObject);
    for (std::size_t i = 0; i < small; ++i)
      if (f.keys[i] == k) return false;
    if (f.key_count < kSmallObject) {
      if (f.keys.size() <= f.key_count) f.keys.emplace_back();
      f.keys[f.key_count] = k;
    } else {
      if (!f.more.insert(k).second) return false;
      f.last_big = k;
    }
    ++f.key_count;
    return true;
  }
  static constexpr std::size_t kMaxDepth = 256;

  bool open_container() {
    if (depth_ < kMaxDepth) return true;
    problem_path = path();
    problem = fmt::format("nesting deeper than {} levels (expected a flatter document)", kMaxDepth);
    return false;
  }
  bool value() {
    if (depth_ > 0 && !frames_[depth_ - 1].is_object) ++frames_[depth_ - 1].index;
    return true;
  }
  std::string path() const {
    std::string p;
    for (std::size_t i = 1; i < depth_; ++i) {
      const auto& parent = frames_[i - 1];
      p = child_path(p, parent.is_object ? parent.current_key() : std::to_string(parent.index));
    }
    return p;
  }

  /// A value starting directly inside the streamed array gets a DOM of its own.
  bool begin_element() {
    if (!streaming_ || depth_ != 2 || active_ != &dom_) return true;
    element_ = nlohmann::json();
    element_dom_.emplace(element_, false);
    active_ = &*element_dom_;
    return true;
  }
  /// Back at the streamed array's level: the element is complete.
  bool end_element() {
    if (active_ == &dom_ || depth_ != 2) return true;
    active_ = &dom_;
    (*sink_)(std::move(element_), frames_[1].index - 1);
    return true;
  }

  std::vector<Frame> frames_;
  std::size_t depth_ = 0;
  nlohmann::detail::json_sax_dom_parser<nlohmann::json> dom_;
  nlohmann::detail::json_sax_dom_parser<nlohmann::json>* active_ = &dom_;
  std::string stream_key_;
  const ElementSink* sink_ = nullptr;
  bool streaming_ = false;
  nlohmann::json element_;
  std::optional<nlohmann::detail::json_sax_dom_parser<nlohmann::json>> element_dom_;
};

std::string line_and_column(const std::string& text, std::size_t byte) {
  std::size_t line = 1, column = 1;
  for (std::size_t i = 0; i + 1 < byte && i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++line;
      column = 1;
    } else {
      ++column;
    }
  }
  return fmt::format("line {}, column {}", line, column);
}

}  // namespace

nlohmann::json parse_json_text(const std::string& text, const std::string& origin) { return parse_json_streaming(text, origin, "", nullptr); }

nlohmann::json parse_json_streaming(const std::string& text, const std::string& origin, const std::string& key, const ElementSink* sink) {
  nlohmann::json result;
  StrictJsonBuilder check(result);
  if (sink != nullptr) check.stream(key, sink);
  if (!nlohmann::json::sax_parse(text, &check)) {
    if (check.problem_path)
      throw ConfigError(origin, check.problem_path->empty() ? "/" : *check.problem_path, check.problem);
    throw ConfigError(origin, "", fmt::format("invalid JSON at {}: expected a JSON document", line_and_column(text, check.error_byte)));
  }
  return result;
}

std::string read_text_file(const std::string& path) {
  std::error_code ec;
  const auto type = std::filesystem::status(path, ec).type();
  if (type == std::filesystem::file_type::directory) throw ConfigError(path, "", "is a directory (expected a file)");
  // /dev/zero would never end, /dev/null is always empty: a device is no input (a pipe is, /dev/stdin included).
  if (type == std::filesystem::file_type::character || type == std::filesystem::file_type::block)
    throw ConfigError(path, "", "is a device (expected a file or a pipe)");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ConfigError(path, "", "cannot open the file (does it exist and is it readable?)");
  const auto too_large = [&] {
    return ConfigError(path, "", fmt::format("is larger than {} GiB, the most fabsim reads (expected a JSON or trace file)",
                                             kMaxDecompressedBytes >> 30));
  };
  // One read into a string of the file's size (no stream buffer copies: traces reach gigabytes).
  std::string text;
  in.seekg(0, std::ios::end);
  const auto size = in.tellg();
  in.seekg(0, std::ios::beg);
  if (size > 0) {
    if (static_cast<std::uint64_t>(size) > kMaxDecompressedBytes) throw too_large();
    text.resize(static_cast<std::size_t>(size));
    in.read(text.data(), size);
    text.resize(static_cast<std::size_t>(in.gcount()));
  }
  if (in.bad()) throw ConfigError(path, "", "cannot read the file");
  if (size <= 0) {  // a pipe or a special file: read what it gives, up to the same bound (/dev/zero never ends)
    in.clear();
    std::array<char, 1 << 16> chunk{};
    while (in.read(chunk.data(), chunk.size()) || in.gcount() > 0) {
      text.append(chunk.data(), static_cast<std::size_t>(in.gcount()));
      if (text.size() > kMaxDecompressedBytes) throw too_large();
    }
    if (in.bad()) throw ConfigError(path, "", "cannot read the file");
  }
  return is_gzip(text) ? gunzip(text, path) : text;
}

std::optional<std::int64_t> integer_in_range(const nlohmann::json& j, std::int64_t min, std::int64_t max) {
  if (!j.is_number_integer()) return std::nullopt;
  if (j.is_number_unsigned() && j.get<std::uint64_t>() > static_cast<std::uint64_t>(max)) return std::nullopt;
  const auto v = j.get<std::int64_t>();
  if (v < min || v > max) return std::nullopt;
  return v;
}

std::optional<std::vector<int>> int_list_in_range(const nlohmann::json& j, int min, int max) {
  if (!j.is_array()) return std::nullopt;
  std::vector<int> out;
  for (const auto& v : j) {
    const auto i = integer_in_range(v, min, max);
    if (!i) return std::nullopt;
    out.push_back(static_cast<int>(*i));
  }
  return out;
}

std::string resolve_relative(const std::string& referencing_file, const std::string& name) {
  const std::filesystem::path p(name);
  if (p.is_absolute()) return name;
  return (std::filesystem::path(referencing_file).parent_path() / p).lexically_normal().string();
}

std::optional<std::string> unreadable_reference(const std::string& resolved, std::string_view relative_to) {
  if (std::filesystem::is_regular_file(resolved)) return std::nullopt;
  return fmt::format("'{}' is not a readable file (a relative path is relative to {})", resolved, relative_to);
}

nlohmann::json read_json_file(const std::string& path) { return parse_json_text(read_text_file(path), path); }

namespace {
std::string type_name(const nlohmann::json& j) {
  if (j.is_string()) return fmt::format("the string \"{}\"", j.get<std::string>());
  if (j.is_number()) return fmt::format("the number {}", j.dump());
  return j.type_name();
}
}  // namespace

JsonObject::JsonObject(const nlohmann::json& json, std::string path, Diagnostics& diagnostics)
    : json_(json), path_(std::move(path)), diagnostics_(diagnostics) {
  if (!json_.is_object())
    diagnostics_.error(path_.empty() ? "/" : path_, fmt::format("expected an object, found {}", type_name(json_)));
}

bool JsonObject::has(std::string_view key) const { return json_.is_object() && json_.contains(key); }

std::string JsonObject::path_of(std::string_view key) const { return fmt::format("{}/{}", path_, key); }

const nlohmann::json* JsonObject::fetch(std::string_view key, bool required, std::string_view expected) {
  known_.emplace(key);
  if (!json_.is_object()) return nullptr;
  const auto it = json_.find(key);
  if (it == json_.end()) {
    if (required) diagnostics_.error(path_.empty() ? "/" : path_, fmt::format("missing required key '{}' ({})", key, expected));
    return nullptr;
  }
  return &*it;
}

std::optional<std::string> JsonObject::string(std::string_view key, bool required) {
  const auto* j = fetch(key, required, "a string");
  if (!j) return std::nullopt;
  if (!j->is_string()) {
    diagnostics_.error(path_of(key), fmt::format("expected a string, found {}", type_name(*j)));
    return std::nullopt;
  }
  return j->get<std::string>();
}

std::optional<double> JsonObject::number(std::string_view key, bool required) {
  const auto* j = fetch(key, required, "a number");
  if (!j) return std::nullopt;
  if (!j->is_number()) {
    diagnostics_.error(path_of(key), fmt::format("expected a number, found {}", type_name(*j)));
    return std::nullopt;
  }
  return j->get<double>();
}

std::optional<std::int64_t> JsonObject::integer(std::string_view key, bool required, std::int64_t min, std::int64_t max) {
  const auto* j = fetch(key, required, "an integer");
  if (!j) return std::nullopt;
  if (!j->is_number_integer()) {
    diagnostics_.error(path_of(key), fmt::format("expected an integer, found {}", type_name(*j)));
    return std::nullopt;
  }
  const auto v = integer_in_range(*j, min, max);
  if (!v) diagnostics_.error(path_of(key), fmt::format("{} is out of range (expected an integer from {} to {})", j->dump(), min, max));
  return v;
}

std::optional<bool> JsonObject::boolean(std::string_view key, bool required) {
  const auto* j = fetch(key, required, "true or false");
  if (!j) return std::nullopt;
  if (!j->is_boolean()) {
    diagnostics_.error(path_of(key), fmt::format("expected true or false, found {}", type_name(*j)));
    return std::nullopt;
  }
  return j->get<bool>();
}

std::optional<double> JsonObject::quantity(std::string_view key, QuantityKind kind, bool required) {
  const auto* j = fetch(key, required, "a value with a unit");
  if (!j) return std::nullopt;
  if (!j->is_string()) {
    const char* example = kind == QuantityKind::kBytes ? "\"64 MiB\"" : kind == QuantityKind::kTime ? "\"150 ns\"" : "\"25 GB/s\"";
    diagnostics_.error(path_of(key), fmt::format("expected a string with a unit such as {}, found {}", example, type_name(*j)));
    return std::nullopt;
  }
  std::string why;
  const auto v = parse_quantity(j->get<std::string>(), kind, why);
  if (!v) diagnostics_.error(path_of(key), why);
  return v;
}

const nlohmann::json* JsonObject::child(std::string_view key, nlohmann::json::value_t type, bool required) {
  const char* expected = type == nlohmann::json::value_t::array ? "an array" : "an object";
  const auto* j = fetch(key, required, expected);
  if (!j) return nullptr;
  if (j->type() != type) {
    diagnostics_.error(path_of(key), fmt::format("expected {}, found {}", expected, type_name(*j)));
    return nullptr;
  }
  return j;
}

void JsonObject::expect_format(std::string_view expected) {
  // A file of another format fails every later check too: report the format alone.
  if (const auto format = string("format"); format && *format != expected) {
    diagnostics_.error(path_of("format"), fmt::format("unsupported format '{}' (expected \"{}\")", *format, expected));
    diagnostics_.throw_if_any();
  }
}

void JsonObject::reject_unknown_keys() {
  if (!json_.is_object()) return;
  for (const auto& [key, value] : json_.items()) {
    if (known_.contains(key)) continue;
    if (!allowed_prefix_.empty() && key.starts_with(allowed_prefix_)) continue;
    if (key == "$schema" && path_.empty()) {  // the file's JSON Schema, for editors: fabsim's own checks are the authority
      if (!value.is_string()) diagnostics_.error("/$schema", "expected a string (the URI or path of the file's JSON Schema)");
      continue;
    }
    std::string valid;
    for (const auto& k : known_) valid += (valid.empty() ? "" : ", ") + k;
    diagnostics_.error(path_of(key), fmt::format("unknown key '{}' (valid keys here: {})", key, valid));
  }
}

}  // namespace fabsim::core
