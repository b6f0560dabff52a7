#pragma once
/// Writing results without losing anything: every output goes to a temporary
/// file beside its target and is renamed into place only once it is complete
/// and flushed; outputs that name an input, or that cannot be written, are
/// refused before any work starts.

#include <string>
#include <vector>

namespace fabsim::core {

/// Refuses (ConfigError naming `flag`) an output path that is a directory, a
/// special file (/dev/null, /dev/full, /proc/...), in a missing or unwritable
/// directory, or the same file as one of `inputs`. Call it before simulating.
void check_output_path(const std::string& flag, const std::string& path, const std::vector<std::string>& inputs = {});

/// Writes `content` to `path` atomically (temporary file, flush, fsync,
/// rename). A failed write removes the temporary file and throws a
/// ConfigError naming the path; the previous file, if any, is untouched.
void write_file_atomically(const std::string& path, const std::string& content);

/// True when `a` and `b` name the same file (both exist and are equivalent,
/// or their normalised absolute paths are equal).
bool same_file(const std::string& a, const std::string& b);

}  // namespace fabsim::core
