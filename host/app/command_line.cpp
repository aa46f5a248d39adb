#include "app/command_line.h"

#include <array>
#include <optional>
#include <string>

#include "graphql/import_command.h"
#include "openapi/openapi_import.h"
#include "util/suggest.h"

namespace crank::app {
namespace {

constexpr std::array<std::string_view, 20> kOptions = {"--config",
                                                       "--listen",
                                                       "--check",
                                                       "--version",
                                                       "--log-format",
                                                       "--log-level",
                                                       "--help",
                                                       "-h",
                                                       "--json",
                                                       "plugins",
                                                       "--prefix",
                                                       "import-openapi",
                                                       "--server",
                                                       "upstreams",
                                                       "--endpoint",
                                                       "--depth",
                                                       "--header",
                                                       "import-graphql",
                                                       "--log-source-rate",
                                                       "--log-max-message-bytes"};

/// A positive decimal number within [low, high], for the numeric options.
std::optional<std::size_t> parseCount(std::string_view text, std::size_t low, std::size_t high) {
    if (text.empty() || text.size() > 9 || text.find_first_not_of("0123456789") != text.npos) {
        return std::nullopt;
    }
    const std::size_t n = std::stoul(std::string(text));
    return n >= low && n <= high ? std::optional<std::size_t>(n) : std::nullopt;
}

Error usageError(std::string message) {
    return Error{ErrorCode::invalid_argument, std::move(message)};
}

}  // namespace

std::string usage() {
    return "Usage: crankd [--config FILE] [--listen HOST:PORT] [--check]\n"
           "              [--log-format text|json] [--log-level LEVEL] [--version]\n"
           "              [--log-source-rate N] [--log-max-message-bytes N]\n"
           "       crankd plugins [--config FILE] [--json]\n"
           "       crankd upstreams [--config FILE]\n"
           "       crankd import-openapi SPEC.json [--prefix P] [--server URL]\n"
           "       crankd import-graphql ENDPOINT_OR_SCHEMA_FILE [--prefix P] [--endpoint URL]\n"
           "                             [--depth N] [--header 'Name: value']...\n"
           "\n"
           "Crank, an MCP gateway.\n"
           "\n"
           "  plugins              list the plugin libraries found in plugins.directories: name,\n"
           "                       version, ABI, status, path, and why any was refused\n"
           "                       (--json: as JSON); exits 1 when an enabled plugin failed\n"
           "  upstreams            test every upstream of the config (connect, initialize, ping;\n"
           "                       nothing kept) and print its state; exits 1 when one fails\n"
           "  import-openapi SPEC.json\n"
           "                       print {\"operations\": [...]}, one rest operation per\n"
           "                       path and method of an OpenAPI 3.0/3.1 JSON document\n"
           "                       (\"-\": stdin); warnings go to stderr. --prefix P begins\n"
           "                       every tool name; --server URL replaces the document's\n"
           "                       servers. Exits 1 on a bad document, 2 on bad arguments\n"
           "  import-graphql ENDPOINT_OR_SCHEMA_FILE\n"
           "                       print {\"operations\": [...]}, one graphql operation per\n"
           "                       root query and mutation field, from an endpoint's\n"
           "                       introspection (http:// or https://; --header adds a\n"
           "                       request header, e.g. credentials) or a schema file (SDL or\n"
           "                       introspection JSON; \"-\": stdin; --endpoint URL is then\n"
           "                       required). --prefix P begins every tool name; --depth N\n"
           "                       (1-8, default 2) bounds the selected object levels.\n"
           "                       Exits 1 on a bad schema, 2 on bad arguments\n"
           "  --config FILE        configuration file (JSON; comments and trailing commas "
           "allowed);\n"
           "                       without it, every setting has its default\n"
           "  --listen HOST:PORT   listen address, overriding server.listen (e.g. 127.0.0.1:8080,\n"
           "                       [::1]:8080; port 0 picks a free port)\n"
           "  --check              validate the configuration, print every error, and exit\n"
           "  --log-format FORMAT  text (default) or json (one object per line)\n"
           "  --log-level LEVEL    trace, debug, info (default), warn, error, critical or off\n"
           "  --log-source-rate N  lines one outside source (a plugin call, an upstream's\n"
           "                       stderr) may log per 10 s (1-1000000, default 100); the rest\n"
           "                       are dropped and counted\n"
           "  --log-max-message-bytes N\n"
           "                       longer messages are cut (256-1048576, default 8192)\n"
           "  --version            print the version and exit\n"
           "  --help               print this text and exit\n"
           "\n"
           "Exit status: 0 success, 1 runtime failure (address in use, store), 2 bad arguments,\n"
           "3 invalid configuration.\n";
}

Result<CommandLine> parseCommandLine(std::span<const std::string_view> args) {
    CommandLine out;
    for (std::size_t i = 0; i < args.size(); ++i) {
        std::string_view arg = args[i];
        std::optional<std::string_view> inlineValue;
        if (const auto eq = arg.find('='); arg.starts_with("--") && eq != std::string_view::npos) {
            inlineValue = arg.substr(eq + 1);
            arg = arg.substr(0, eq);
        }
        const auto value = [&]() -> Result<std::string> {
            if (inlineValue) {
                return std::string(*inlineValue);
            }
            if (i + 1 >= args.size()) {
                return usageError(std::string(arg) + " needs a value");
            }
            return std::string(args[++i]);
        };
        const auto flag = [&](bool& target) -> Result<void> {
            if (inlineValue) {
                return usageError(std::string(arg) + " takes no value");
            }
            target = true;
            return {};
        };
        Result<void> step;
        if (arg == "--config") {
            auto v = value();
            if (!v) {
                return v.error();
            }
            out.config_path = *v;
        } else if (arg == "--listen") {
            auto v = value();
            if (!v) {
                return v.error();
            }
            auto address = config::parseListenAddress(*v);
            if (!address) {
                return usageError("--listen: " + address.error().message);
            }
            out.listen = *address;
        } else if (arg == "--log-format") {
            auto v = value();
            if (!v) {
                return v.error();
            }
            auto format = log::parseFormat(*v);
            if (!format) {
                return usageError("--log-format: expected text or json, got \"" + *v + "\"");
            }
            out.log_format = *format;
        } else if (arg == "--log-level") {
            auto v = value();
            if (!v) {
                return v.error();
            }
            auto level = log::parseLevel(*v);
            if (!level) {
                return usageError(
                    "--log-level: expected trace, debug, info, warn, error, critical or off, got "
                    "\"" +
                    *v + "\"");
            }
            out.log_level = *level;
            out.log_level_given = true;
        } else if (arg == "--log-source-rate" || arg == "--log-max-message-bytes") {
            auto v = value();
            if (!v) {
                return v.error();
            }
            const bool rate = arg == "--log-source-rate";
            const auto n = rate ? parseCount(*v, 1, 1'000'000) : parseCount(*v, 256, 1 << 20);
            if (!n) {
                return usageError(std::string(arg) + ": expected a number from " +
                                  (rate ? "1 to 1000000" : "256 to 1048576") + ", got \"" + *v +
                                  "\"");
            }
            (rate ? out.log_limits.source_burst : out.log_limits.max_message_bytes) = *n;
        } else if (arg == "plugins" && i == 0) {
            out.plugins = true;
        } else if (arg == "upstreams" && i == 0) {
            out.upstreams = true;
        } else if (arg == "import-openapi" && i == 0) {
            out.import_openapi = true;
        } else if (arg == "import-graphql" && i == 0) {
            out.import_graphql = true;
        } else if (arg == "--prefix" && !out.import_openapi && !out.import_graphql) {
            return usageError(
                "--prefix is an option of the `import-openapi` and `import-graphql` commands");
        } else if (arg == "--endpoint" || arg == "--depth" || arg == "--header") {
            if (!out.import_graphql) {
                return usageError(std::string(arg) +
                                  " is an option of the `import-graphql` command");
            }
            auto v = value();
            if (!v) {
                return v.error();
            }
            if (arg == "--endpoint") {
                step = graphql_import::checkEndpoint(*v);
                out.endpoint = *v;
            } else if (arg == "--depth") {
                auto depth = graphql_import::parseDepth(*v);
                if (!depth) {
                    return depth.error();
                }
                out.depth = *depth;
            } else {
                step = graphql_import::checkHeader(*v);
                out.headers.push_back(*v);
            }
        } else if (arg == "--prefix" || arg == "--server") {
            if (!out.import_openapi && arg == "--server") {
                return usageError(std::string(arg) +
                                  " is an option of the `import-openapi` command");
            }
            auto v = value();
            if (!v) {
                return v.error();
            }
            if (arg == "--prefix") {
                step = openapi::checkPrefix(*v);
                out.prefix = *v;
            } else {
                step = openapi::checkServer(*v);
                out.server = *v;
            }
        } else if (out.import_openapi && !inlineValue && (arg == "-" || !arg.starts_with("-"))) {
            if (!out.openapi_path.empty()) {
                return usageError("import-openapi takes one document, got \"" + out.openapi_path +
                                  "\" and \"" + std::string(arg) + "\"");
            }
            out.openapi_path = std::string(arg);
        } else if (out.import_graphql && !inlineValue && (arg == "-" || !arg.starts_with("-"))) {
            if (!out.graphql_source.empty()) {
                return usageError("import-graphql takes one endpoint or schema file, got \"" +
                                  out.graphql_source + "\" and \"" + std::string(arg) + "\"");
            }
            out.graphql_source = std::string(arg);
        } else if (arg == "--json") {
            step = flag(out.json);
        } else if (arg == "--check") {
            step = flag(out.check);
        } else if (arg == "--version") {
            step = flag(out.version);
        } else if (arg == "--help" || arg == "-h") {
            step = flag(out.help);
        } else {
            std::string message = "unknown option \"" + std::string(arg) + "\"";
            if (auto close = closestMatch(arg, kOptions)) {
                message += " (did you mean \"" + *close + "\"?)";
            }
            return usageError(message);
        }
        if (!step) {
            return step.error();
        }
    }
    if (out.json && !out.plugins) {
        return usageError("--json is an option of the `plugins` command");
    }
    if (out.import_openapi && !out.help) {
        if (out.openapi_path.empty()) {
            return usageError(
                "import-openapi needs the OpenAPI document: crankd import-openapi "
                "SPEC.json [--prefix P] [--server URL]");
        }
        if (out.config_path || out.listen || out.check) {
            return usageError("import-openapi takes only --prefix and --server");
        }
    }
    if (out.import_graphql && !out.help) {
        if (out.graphql_source.empty()) {
            return usageError(
                "import-graphql needs a GraphQL endpoint or schema file: crankd import-graphql "
                "ENDPOINT_OR_SCHEMA_FILE [--prefix P] [--endpoint URL] [--depth N] "
                "[--header 'Name: value']...");
        }
        if (out.config_path || out.listen || out.check) {
            return usageError(
                "import-graphql takes only --prefix, --endpoint, --depth and --header");
        }
        if (!graphql_import::isUrl(out.graphql_source) && !out.endpoint) {
            return usageError(
                "import-graphql: --endpoint URL is needed with a schema file: the URL the "
                "operations send their requests to");
        }
    }
    return out;
}

}  // namespace crank::app
