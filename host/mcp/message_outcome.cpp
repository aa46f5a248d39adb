#include "mcp/message_outcome.h"

#include <rapidjson/memorystream.h>
#include <rapidjson/reader.h>

#include "mcp/json_rpc.h"

namespace crank::mcp {
namespace {

constexpr std::string_view kKnownMethods[] = {
    "initialize",
    "ping",
    "logging/setLevel",
    "server/discover",
    "subscriptions/listen",
    "tools/list",
    "tools/call",
    "tasks/get",
    "tasks/list",
    "tasks/cancel",
    "tasks/result",
    "tasks/update",
    "resources/list",
    "resources/read",
    "resources/templates/list",
    "resources/subscribe",
    "resources/unsubscribe",
    "prompts/list",
    "prompts/get",
    "completion/complete",
    "notifications/initialized",
    "notifications/cancelled",
    "notifications/progress",
    "notifications/roots/list_changed",
};

/// Reads the top-level members of a reply only as far as it takes to tell a result from an error
/// and, for an error, its code.
class OutcomeReader : public rapidjson::BaseReaderHandler<rapidjson::UTF8<>, OutcomeReader> {
public:
    std::string_view outcome = "ok";

    bool Default() { return true; }
    bool StartObject() {
        ++depth_;
        return true;
    }
    bool EndObject(rapidjson::SizeType /*members*/) {
        --depth_;
        return depth_ > 0;
    }
    bool StartArray() {
        ++depth_;
        return true;
    }
    bool EndArray(rapidjson::SizeType /*elements*/) {
        --depth_;
        return true;
    }
    bool Key(const char* text, rapidjson::SizeType length, bool /*copy*/) {
        const std::string_view key(text, length);
        if (depth_ == 1 && key == "result") {
            outcome = "ok";
            return false;  // a result: nothing more to read
        }
        if (depth_ == 1 && key == "error") {
            in_error_ = true;
            outcome = "server_error";
        }
        code_next_ = in_error_ && depth_ == 2 && key == "code";
        return true;
    }
    bool Int(int value) { return code(value); }
    bool Int64(std::int64_t value) { return code(value); }
    bool Uint(unsigned value) { return code(value); }
    bool Uint64(std::uint64_t /*value*/) { return code(0); }

private:
    bool code(std::int64_t value) {
        if (code_next_) {
            outcome = errorName(value);
            return false;  // done
        }
        return true;
    }
    int depth_ = 0;
    bool in_error_ = false;
    bool code_next_ = false;
};

}  // namespace

std::string_view methodLabel(std::string_view method) {
    for (const std::string_view known : kKnownMethods) {
        if (method == known) {
            return known;
        }
    }
    return "unknown";
}

std::string_view errorName(std::int64_t code) {
    switch (code) {
        case kParseError:
            return "parse_error";
        case kInvalidRequest:
            return "invalid_request";
        case kMethodNotFound:
            return "method_not_found";
        case kInvalidParams:
            return "invalid_params";
        case kInternalError:
            return "internal_error";
        case kResourceNotFound:
            return "resource_not_found";
        case kUrlElicitationRequired:
            return "url_elicitation_required";
        default:
            return "server_error";
    }
}

std::string_view replyOutcome(std::string_view reply) {
    OutcomeReader reader;
    rapidjson::Reader parser;
    rapidjson::MemoryStream stream(reply.data(), reply.size());
    parser.Parse<rapidjson::kParseStopWhenDoneFlag>(stream, reader);
    return reader.outcome;
}

}  // namespace crank::mcp
