// Fuzz target config: the configuration file (host/config/config_loader.h), loadConfigText over
// the whole text, and loadOperation over it as one operation (what the admin API receives).
//
// The input is the file's text. Secrets `{"env": NAME}` resolve from a fixed map (never the
// process environment); an input with a `{"file": PATH}` secret whose path holds a '/' is left
// alone (return -1), so that a run never reads /dev/stdin, a FIFO or a terminal. Checks: a load
// gives a config or errors, never both nor neither, and every error says what is wrong.
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include <rapidjson/document.h>
#include <rapidjson/memorystream.h>
#include <rapidjson/reader.h>

#include "config/config_loader.h"
#include "fuzz_support.h"
#include "json/json_parse.h"

namespace {

using crank::fuzz::check;
namespace config = crank::config;

/// True when every `"file": "..."` member in the text names a file in the working directory.
/// Read with the loader's own flags, so that escapes ("\/", "\u002f") are seen as it sees them.
bool secretFilesAreLocal(std::string_view text) {
    struct Handler : rapidjson::BaseReaderHandler<rapidjson::UTF8<>, Handler> {
        // RapidJSON fixes these names.
        // NOLINTBEGIN(readability-identifier-naming)
        bool Default() {
            after_file_key = false;
            return true;
        }
        bool Key(const char* s, rapidjson::SizeType length, bool /*copy*/) {
            after_file_key = std::string_view(s, length) == "file";
            return true;
        }
        bool String(const char* s, rapidjson::SizeType length, bool /*copy*/) {
            if (after_file_key && std::string_view(s, length).find('/') != std::string_view::npos) {
                local = false;
            }
            after_file_key = false;
            return true;
        }
        // NOLINTEND(readability-identifier-naming)
        bool after_file_key = false;
        bool local = true;
    };
    Handler handler;
    rapidjson::MemoryStream stream(text.data(), text.size());
    rapidjson::Reader reader;
    constexpr unsigned kFlags =
        rapidjson::kParseCommentsFlag | rapidjson::kParseTrailingCommasFlag |
        rapidjson::kParseIterativeFlag | rapidjson::kParseValidateEncodingFlag;
    reader.Parse<kFlags>(stream, handler);
    // Text after a parse error is never read by the loader either.
    return handler.local;
}

std::optional<std::string> fakeEnv(const std::string& name) {
    static const std::map<std::string, std::string, std::less<>> kEnv = {
        {"TOKEN", "t0ken"}, {"KEY", "abc-key-0123456789"}, {"EMPTY", ""}, {"PASSWORD", "pw"}};
    const auto it = kEnv.find(name);
    return it == kEnv.end() ? std::nullopt : std::optional<std::string>(it->second);
}

/// The config that operations are loaded against: two workspaces and a few auth profiles.
const config::Config& baseConfig() {
    static const config::Config base = [] {
        constexpr std::string_view kBase = R"({
          "auth": {"mode": "api_key",
                   "workspaces": [{"id": "default"}, {"id": "team-a"}],
                   "agents": [{"id": "bot", "workspace": "team-a", "api_key": {"env": "KEY"}}]},
          "auth_profiles": {
            "github": {"type": "bearer", "token": {"env": "TOKEN"}},
            "legacy": {"type": "basic", "username": "svc", "password": {"env": "PASSWORD"}},
            "public": {"type": "none"}}
        })";
        config::LoadOptions options;
        options.env = fakeEnv;
        config::LoadResult loaded = config::loadConfigText(kBase, "base", options);
        check(loaded.config.has_value(), "the base config does not load",
              loaded.errors.empty() ? "" : loaded.errors.front().toString());
        return std::move(*loaded.config);
    }();
    return base;
}

void checkErrors(const std::vector<config::ConfigError>& errors) {
    for (const config::ConfigError& e : errors) {
        check(!e.message.empty(), "an error without a message", e.path);
    }
}

}  // namespace

// NOLINTNEXTLINE(readability-identifier-naming): libFuzzer calls it by this name
extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view text = crank::fuzz::asText(data, size);
    if (!secretFilesAreLocal(text)) {
        return -1;
    }
    config::LoadOptions options;
    options.env = fakeEnv;
    const config::LoadResult loaded = config::loadConfigText(text, "fuzz.json", options);
    check(loaded.config.has_value() != !loaded.errors.empty(),
          "a load gave both a config and errors, or neither");
    checkErrors(loaded.errors);
    if (loaded.config) {
        for (const config::OperationConfig& op : loaded.config->operations) {
            check(!op.toolNames().empty(), "an operation that publishes no tool", op.name);
        }
    }

    rapidjson::Document doc;
    if (crank::json::parseJson(text, doc, "operation").ok()) {
        const config::OperationLoadResult op = config::loadOperation(doc, baseConfig());
        check(op.operation.has_value() != !op.errors.empty(),
              "an operation load gave both an operation and errors, or neither");
        checkErrors(op.errors);
    }
    return 0;
}
