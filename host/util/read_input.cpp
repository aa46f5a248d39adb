#include "util/read_input.h"

#include <cerrno>
#include <cstdio>
#include <memory>
#include <system_error>

namespace crank {
namespace {

struct FileCloser {
    void operator()(std::FILE* f) const {
        if (f != nullptr) {
            std::fclose(f);  // NOLINT(cert-err33-c): read-only file, nothing to lose
        }
    }
};

/// The whole content of `path` ("-": stdin), at most `max_bytes`; `shown` names it in errors.
}  // namespace

Result<std::string> readInput(const std::string& path, const std::string& shown,
                              std::size_t max_bytes) {
    std::unique_ptr<std::FILE, FileCloser> owned;
    std::FILE* file = stdin;
    if (path != "-") {
        owned.reset(std::fopen(path.c_str(), "rb"));
        if (!owned) {
            return Error{ErrorCode::io,
                         "cannot read " + path + ": " + std::generic_category().message(errno)};
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
                         shown + ": larger than " + std::to_string(max_bytes) + " bytes"};
        }
        if (n < chunk.size()) {
            if (std::ferror(file) != 0) {
                return Error{ErrorCode::io, "cannot read " + shown + ": " +
                                                std::generic_category().message(errno)};
            }
            break;
        }
    }
    return text;
}

}  // namespace crank
