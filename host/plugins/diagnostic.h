#pragma once

#include <string>

namespace crank::plugins {

/// One problem a plugin's validate() found in an operation config: where (a path such as
/// "headers.accept", from the details {"path": ...} of set_error; empty when the plugin named
/// none) and what is wrong, in the plugin's words.
struct Diagnostic {
    std::string path;
    std::string message;
};

}  // namespace crank::plugins
