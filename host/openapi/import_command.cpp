#include "openapi/import_command.h"

#include <cerrno>
#include <cstdio>
#include <memory>
#include <system_error>

#include <fmt/core.h>

namespace crank::openapi {
namespace {

constexpr std::string_view kPrefix = "crankd: import-openapi: ";

struct FileCloser {
    void operator()(std::FILE* f) const {
        if (f != nullptr) {
            std::fclose(f);  // NOLINT(cert-err33-c): read-only file, nothing to lose
        }
    }
};

/// The whole content of `path` ("-": stdin), at most `max_bytes`; `shown` names it in errors.
Result<std::string> readDocument(const std::string& path, const std::string& shown,
                                 std::size_t max_bytes) {
    std::unique_ptr<std::FILE, FileCloser> owned;
    std::FILE* file = stdin;
    if (path != "-") {
        owned.reset(std::fopen(path.c_str(), "rb"));
        if (!owned) {
            return Error{ErrorCode::io, fmt::format("cannot read {}: {}", path,
                                                    std::generic_category().message(errno))};
        }
        file = owned.get();
    }
    std::string text;
    std::string chunk(std::size_t{64} * 1024, '\0');
    while (true) {
        const std::size_t n = std::fread(chunk.data(), 1, chunk.size(), file);
        text.append(chunk.data(), n);
        if (text.size() > max_bytes) {
            return Error{ErrorCode::invalid_argument,
                         fmt::format("{}: larger than {} bytes", shown, max_bytes)};
        }
        if (n < chunk.size()) {
            if (std::ferror(file) != 0) {
                return Error{ErrorCode::io, fmt::format("cannot read {}: {}", shown,
                                                        std::generic_category().message(errno))};
            }
            break;
        }
    }
    return text;
}

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
    Result<std::string> text = readDocument(path, shown, options.limits.max_document_bytes);
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
