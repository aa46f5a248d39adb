// Fuzz target graphql_response: what a GraphQL server answers, as the graphql plugin turns it into
// the call's item or error (plugins/graphql/graphql_response.h).
//
// Input: a first line "STATUS TYPE DATA_PATH HAS_NEXT_PATH" (space-separated; "-" for none:
// `200 application/json items.edges pageInfo.hasNextPage`), then the response body. A status
// that does not parse is 200; a path that does not parse is not set.
// Checks: an item is a strict JSON object with "data" (and, with has_next_path, "last_page");
// an error is an sdk::Error whose message is UTF-8 and whose details are empty or a strict JSON
// object; nothing else is thrown.
#include <charconv>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz_support.h"
#include "graphql_config.h"
#include "graphql_response.h"
#include <crank/sdk/error.hpp>
#include <crank/sdk/http/client.hpp>
#include <crank/sdk/path.hpp>

namespace {

using crank::fuzz::check;

/// The next space-separated word of `line`.
std::string_view word(std::string_view& line) {
    const std::size_t start = line.find_first_not_of(' ');
    if (start == std::string_view::npos) {
        line = {};
        return {};
    }
    line.remove_prefix(start);
    const std::size_t end = line.find(' ');
    const std::string_view w = line.substr(0, end);
    line.remove_prefix(end == std::string_view::npos ? line.size() : end);
    return w;
}

crank::graphql::DataPath dataPath(std::string_view text) {
    crank::graphql::DataPath out;
    if (text.empty() || text == "-") {
        return out;
    }
    if (auto path = crank::sdk::parsePath(text)) {
        out.text = std::string(text);
        out.path = std::move(*path);
    }
    return out;
}

}  // namespace

// NOLINTNEXTLINE(readability-identifier-naming): libFuzzer calls it by this name
extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view input = crank::fuzz::asText(data, size);
    const std::size_t newline = input.find('\n');
    std::string_view head = input.substr(0, newline);
    const std::string_view body =
        newline == std::string_view::npos ? std::string_view() : input.substr(newline + 1);

    crank::sdk::http::FetchedResponse response;
    response.prefix = "POST http://127.0.0.1:1/graphql: ";
    const std::string_view status = word(head);
    int code = 200;
    if (std::from_chars(status.data(), status.data() + status.size(), code).ec != std::errc{}) {
        code = 200;
    }
    response.status = code;
    const std::string_view type = word(head);
    response.type = type == "-" ? std::string() : std::string(type);
    response.body = std::string(body);
    crank::graphql::GraphqlConfig config;
    config.data_path = dataPath(word(head));
    config.has_next_path = dataPath(word(head));

    try {
        const std::string item = crank::graphql::graphqlItem(response, config);
        check(crank::fuzz::isJsonObject(item), "an item that is not a JSON object", item);
        check(item.rfind("{\"data\":", 0) == 0, "an item without data", item);
        check(!config.has_next_path.set() || item.find("\"last_page\":") != std::string::npos,
              "an item without last_page", item);
    } catch (const crank::sdk::Error& e) {
        const std::string_view message = e.what();
        check(!message.empty(), "an error without a message");
        check(crank::fuzz::isUtf8(message), "an error message that is not UTF-8", message);
        check(e.details().empty() || crank::fuzz::isJsonObject(e.details()),
              "error details that are not a JSON object", e.details());
    }
    return 0;
}
