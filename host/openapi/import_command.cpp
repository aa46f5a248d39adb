#include "openapi/import_command.h"

#include <cerrno>
#include <cstdio>
#include <memory>
#include <system_error>

#include <fmt/core.h>

#include "util/read_input.h"

namespace crank::openapi {
namespace {

constexpr std::string_view kPrefix = "crankd: import-openapi: ";

}  // namespace

CommandOutput runImportCommand(const std::string& path, const ImportOptions& options) {
    CommandOutput output;
    const auto fail = [&](int code, std::string_view message) {
        output.exit_code = code;
        output.err = fmt::format("{}{}\n", kPrefix, message);
        return output;
    };
    if (auto ok = checkPrefix(options.prefix); !ok) {
        return fail(kImportUsage, ok.error().message);
    }
    if (options.server) {
        if (auto ok = checkServer(*options.server); !ok) {
            return fail(kImportUsage, ok.error().message);
        }
    }
    const std::string shown = path == "-" ? "standard input" : path;
    Result<std::string> text = readInput(path, shown, options.limits.max_document_bytes);
    if (!text) {
        return fail(kImportBadDocument, text.error().message);
    }
    Result<ImportResult> result = importOpenApi(*text, options);
    if (!result) {
        return fail(kImportBadDocument, fmt::format("{}: {}", shown, result.error().message));
    }
    for (const std::string& warning : result->warnings) {
        output.err += fmt::format("{}warning: {}\n", kPrefix, warning);
    }
    output.err += fmt::format("{}{} operation{} from {}\n", kPrefix, result->operation_count,
                              result->operation_count == 1 ? "" : "s", shown);
    output.out = std::move(result->json);
    return output;
}

}  // namespace crank::openapi
