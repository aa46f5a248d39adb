#pragma once

// Helpers shared by the config unit tests: loading text with a fake environment, collecting
// error strings, building operations, and temporary files that clean up after themselves.

#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <gtest/gtest.h>

#include "config/config_loader.h"
#include "temp_dir.h"

namespace crank::config::test {

/// The environment seen by `{"env": NAME}` secrets. Tests never read the process environment
/// unless they say so.
using EnvMap = std::map<std::string, std::string>;

inline LoadOptions optionsWith(EnvMap env) {
    LoadOptions options;
    options.env = [env = std::move(env)](const std::string& name) -> std::optional<std::string> {
        const auto it = env.find(name);
        if (it == env.end()) {
            return std::nullopt;
        }
        return it->second;
    };
    return options;
}

/// Loads `text` as the file "crank.json".
inline LoadResult load(std::string_view text, EnvMap env = {}) {
    return loadConfigText(text, "crank.json", optionsWith(std::move(env)));
}

/// Every error of a result as "path: message".
inline std::vector<std::string> messages(const LoadResult& result) {
    std::vector<std::string> out;
    out.reserve(result.errors.size());
    for (const ConfigError& error : result.errors) {
        out.push_back(error.toString());
    }
    return out;
}

/// Loads `text` and returns its errors; a load that succeeds yields an empty list.
inline std::vector<std::string> errorsOf(std::string_view text, EnvMap env = {}) {
    const LoadResult result = load(text, std::move(env));
    EXPECT_EQ(result.config.has_value(), result.errors.empty());
    return messages(result);
}

/// One operation object with the required fields, `execution` and optional extra members
/// (`extra` starts with a comma when given).
inline std::string operation(const std::string& name, const std::string& execution = "{}",
                             const std::string& extra = "") {
    return R"({"name": ")" + name + R"(", "description": "d", "protocol": "rest", "execution": )" +
           execution + extra + "}";
}

/// A config holding only these operations.
inline std::string withOperations(std::initializer_list<std::string> operations) {
    std::string out = R"({"operations": [)";
    bool first = true;
    for (const std::string& op : operations) {
        out += (first ? "" : ", ") + op;
        first = false;
    }
    return out + "]}";
}

/// A directory under the system temporary directory, removed with everything in it.
using crank::testing::TempDir;

}  // namespace crank::config::test
