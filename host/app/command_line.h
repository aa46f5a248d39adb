#pragma once

#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "config/listen_address.h"
#include "log/log.h"
#include "util/error.h"

namespace crank::app {

/// What crankd was asked to do, from its arguments.
struct CommandLine {
    std::optional<std::string> config_path;       ///< --config FILE
    std::optional<config::ListenAddress> listen;  ///< --listen HOST:PORT
    bool check = false;                           ///< --check
    bool plugins = false;                         ///< the `plugins` command
    bool upstreams = false;                       ///< the `upstreams` command
    bool json = false;                            ///< --json (with `plugins`)
    bool import_openapi = false;                  ///< the `import-openapi` command
    std::string openapi_path;                     ///< its SPEC.json ("-": standard input)
    std::string prefix;                           ///< --prefix P (with either import command)
    std::optional<std::string> server;            ///< --server URL (with `import-openapi`)
    bool import_graphql = false;                  ///< the `import-graphql` command
    std::string graphql_source;                   ///< its endpoint URL or schema file ("-": stdin)
    std::optional<std::string> endpoint;          ///< --endpoint URL (with `import-graphql`)
    std::size_t depth = 2;                        ///< --depth N (with `import-graphql`)
    std::vector<std::string> headers;             ///< --header 'Name: value' (`import-graphql`)
    bool version = false;                         ///< --version
    bool help = false;                            ///< --help, -h
    log::Format log_format = log::Format::text;   ///< --log-format text|json
    log::Level log_level = log::Level::info;      ///< --log-level LEVEL
    bool log_level_given = false;  ///< --log-level was given (the file's is not used)
    log::LogLimits log_limits;     ///< --log-source-rate N, --log-max-message-bytes N
};

/// Parses crankd's arguments (without argv[0]). Both `--name value` and `--name=value` work.
/// An unknown option gets "did you mean" when it is close to a known one.
Result<CommandLine> parseCommandLine(std::span<const std::string_view> args);

/// The --help text.
std::string usage();

}  // namespace crank::app
