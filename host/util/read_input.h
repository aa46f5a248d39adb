#pragma once

// Reading a command's input document: a file, or standard input for "-", bounded.

#include <cstddef>
#include <string>

#include "util/error.h"

namespace crank {

/// The whole content of `path` ("-": standard input), at most `max_bytes`; `shown` names it in
/// errors ("cannot read spec.json: No such file or directory", "spec.json: larger than N bytes").
Result<std::string> readInput(const std::string& path, const std::string& shown,
                              std::size_t max_bytes);

}  // namespace crank
