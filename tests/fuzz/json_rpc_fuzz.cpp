// Fuzz target json_rpc: request bodies of the MCP endpoint (host/mcp/wire/json_rpc.h).
//
// The input is a body as a client POSTs it. It is read twice, with the default limits and with
// tight ones (batches of 2, nesting of 4), and what comes out is checked:
//  - a body is either refused as a whole (no entries) or gives one entry per message;
//  - every JSON text a message carries (params, result, error data) is strict JSON, and params
//    are an object or an array;
//  - a message written back with the writers (makeRequest, makeNotification, makeResult,
//    makeError) reads back as the same message: same kind, id, method and JSON texts;
//  - the answer to every rejection (makeError) is a valid error response with the same id;
//  - the params readers (extractMember, readRequestMeta, parseToolCallParams, parseListenFilter)
//    give strict JSON or an error;
//  - the 2026-07-28 routing headers: the input as a header value decodes or is refused, and as a
//    tool's schema and arguments beside hostile Mcp-Param-* headers it is checked, never trusted;
//  - modernResult() of an object is strict JSON again;
//  - the input as a requestState never opens (no key, no forgery), and as a tool's state it
//    seals and opens back byte for byte, once.
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <variant>

#include <Poco/Net/NameValueCollection.h>

#include "fuzz_support.h"
#include "mcp/modern/listen_hub.h"
#include "mcp/modern/modern_result.h"
#include "mcp/modern/protocol_era.h"
#include "mcp/modern/request_state_seal.h"
#include "mcp/modern/routing_headers.h"
#include "mcp/wire/json_rpc.h"
#include "mcp/wire/request_meta.h"
#include "mcp/wire/tool_call_params.h"

namespace {

using crank::fuzz::check;
using crank::fuzz::isStrictJson;
using crank::mcp::classifyPost;
using crank::mcp::Era;
using crank::mcp::EraVerdict;
using crank::mcp::extractMember;
using crank::mcp::JsonRpcEntry;
using crank::mcp::JsonRpcKind;
using crank::mcp::jsonRpcKindName;
using crank::mcp::JsonRpcLimits;
using crank::mcp::JsonRpcMessage;
using crank::mcp::JsonRpcRejection;
using crank::mcp::kInvalidRequest;
using crank::mcp::kParseError;
using crank::mcp::makeError;
using crank::mcp::makeNotification;
using crank::mcp::makeRequest;
using crank::mcp::makeResult;
using crank::mcp::ParsedBody;
using crank::mcp::parseJsonRpcBody;
using crank::mcp::parseToolCallParams;
using crank::mcp::readRequestMeta;

/// The only entry of a body that the writers produced: it must be a valid message.
JsonRpcMessage readBack(const std::string& text) {
    check(isStrictJson(text), "a writer produced invalid JSON", text);
    const ParsedBody parsed = parseJsonRpcBody(text);
    check(!parsed.fatal && !parsed.batch && parsed.entries.size() == 1,
          "a written message does not read back as one message", text);
    if (const auto* rejection = std::get_if<JsonRpcRejection>(&parsed.entries.front())) {
        crank::fuzz::fail("a written message reads back as a rejection",
                          text + " -> " + rejection->message);
    }
    return std::get<JsonRpcMessage>(parsed.entries.front());
}

/// What a handler reads from params.
void checkParamsReaders(const std::string& params) {
    for (const std::string_view key : {"name", "arguments", "_meta", "uri", "cursor"}) {
        const auto member = extractMember(params, key);
        if (member) {
            if (!member->empty() && !isStrictJson(*member)) {
                crank::fuzz::fail("extractMember gave invalid JSON", params + " -> " + *member);
            }
        } else {
            check(!member.error().message.empty(), "extractMember failed without a message");
        }
    }
    const auto meta = readRequestMeta(params);
    if (!meta) {
        check(!meta.error().message.empty(), "readRequestMeta failed without a message");
    }
    const auto call = parseToolCallParams(params);
    if (call) {
        check(isStrictJson(call->arguments_json), "parseToolCallParams gave invalid arguments");
    } else {
        check(!call.error().message.empty(), "parseToolCallParams failed without a message");
    }
    // Every part of params is itself an input to these readers.
    if (const auto part = extractMember(params, "_meta"); part && !part->empty()) {
        (void)extractMember(*part, "progressToken");
    }
}

void checkMessage(const JsonRpcMessage& m) {
    switch (m.kind) {
        case JsonRpcKind::request:
        case JsonRpcKind::notification: {
            check(m.id.has_value() == (m.kind == JsonRpcKind::request), "request without an id");
            check(m.result_json.empty() && m.error.message.empty(), "request with a result");
            if (!m.params_json.empty()) {
                check(isStrictJson(m.params_json), "params are not JSON", m.params_json);
                check(m.params_json.front() == '{' || m.params_json.front() == '[',
                      "params are neither an object nor an array", m.params_json);
            }
            const std::string written = m.id ? makeRequest(*m.id, m.method, m.params_json)
                                             : makeNotification(m.method, m.params_json);
            const JsonRpcMessage back = readBack(written);
            check(back.kind == m.kind && back.id == m.id && back.method == m.method &&
                      back.params_json == m.params_json,
                  "a request does not read back as itself", written);
            checkParamsReaders(m.params_json);
            {
                Poco::Net::NameValueCollection headers;
                headers.add("Mcp-Method", m.method.substr(0, 256));
                headers.add("Mcp-Name", m.params_json.substr(0, 256));
                if (const auto refusal = crank::mcp::checkStandardHeaders(headers, m)) {
                    check(refusal->code == crank::mcp::kHeaderMismatch,
                          "a routing header refusal with another code");
                }
            }
            break;
        }
        case JsonRpcKind::response: {
            check(m.id.has_value(), "a response without an id");
            check(isStrictJson(m.result_json), "result is not JSON", m.result_json);
            const std::string written = makeResult(*m.id, m.result_json);
            const JsonRpcMessage back = readBack(written);
            check(back.kind == m.kind && back.id == m.id && back.result_json == m.result_json,
                  "a response does not read back as itself", written);
            break;
        }
        case JsonRpcKind::error_response: {
            check(m.error.data_json.empty() || isStrictJson(m.error.data_json),
                  "error data is not JSON", m.error.data_json);
            const std::string written =
                makeError(m.id, m.error.code, m.error.message, m.error.data_json);
            const JsonRpcMessage back = readBack(written);
            check(back.kind == m.kind && back.id == m.id && back.error.code == m.error.code &&
                      back.error.message == m.error.message &&
                      back.error.data_json == m.error.data_json,
                  "an error response does not read back as itself", written);
            break;
        }
    }
    (void)jsonRpcKindName(m.kind);
}

void checkRejection(const JsonRpcRejection& r) {
    check(!r.message.empty(), "a rejection without a message");
    check(r.code == kParseError || r.code == kInvalidRequest, "a rejection with an odd code");
    const std::string answer = makeError(r);
    const JsonRpcMessage back = readBack(answer);
    check(back.kind == JsonRpcKind::error_response && back.id == r.id &&
              back.error.code == r.code && back.error.message == r.message,
          "the answer to a rejection does not read back as itself", answer);
}

void checkBody(std::string_view body, const JsonRpcLimits& limits) {
    const ParsedBody parsed = parseJsonRpcBody(body, limits);
    if (parsed.fatal) {
        check(parsed.entries.empty(), "a refused body with entries");
        check(!parsed.fatal->id.has_value(), "a refused body with an id");
        checkRejection(*parsed.fatal);
        return;
    }
    check(!parsed.entries.empty(), "an accepted body without entries");
    check(parsed.batch || parsed.entries.size() == 1, "a single message gave several entries");
    check(parsed.entries.size() <= limits.max_batch_size, "a batch over the limit was read");
    check(isStrictJson(body), "a body that is not strict JSON was read", body);
    for (const JsonRpcEntry& entry : parsed.entries) {
        if (const auto* m = std::get_if<JsonRpcMessage>(&entry)) {
            checkMessage(*m);
        } else {
            checkRejection(std::get<JsonRpcRejection>(entry));
        }
    }
    // The era of the body, under either era's header: a refusal always says why, with JSON data.
    for (const std::string_view header : {"2026-07-28", "2025-11-25", ""}) {
        const EraVerdict verdict = classifyPost(parsed, header);
        if (verdict.refusal) {
            check(verdict.era == Era::modern, "a legacy request refused by the era check");
            check(!verdict.refusal->message.empty(), "an era refusal without a message");
            check(verdict.refusal->data_json.empty() || isStrictJson(verdict.refusal->data_json),
                  "an era refusal with invalid data");
        }
    }
}

/// The 2026-07-28 readers of what a client sends beside (and in) a body.
void checkModernReaders(std::string_view text) {
    if (const auto decoded = crank::mcp::decodeHeaderValue(text)) {
        check(decoded->size() <= text.size(), "a decoded header value grew", std::string(text));
    }
    if (auto filter = crank::mcp::parseListenFilter(text); !filter) {
        check(!filter.error().message.empty(), "parseListenFilter failed without a message");
    }
    Poco::Net::NameValueCollection headers;
    const std::string value(text.substr(0, 256));
    for (const char* name : {"Mcp-Param-A", "Mcp-Param-Region", "Mcp-Method", "Mcp-Name"}) {
        headers.add(name, value);
    }
    const std::string body(text);
    if (const auto refusal =
            crank::mcp::checkParamHeaders(headers, crank::mcp::compileParamHeaders(body), body)) {
        check(refusal->status == 400 && !refusal->message.empty(), "a param refusal without why");
    }
    const std::string schema =
        R"({"type":"object","properties":{"a":{"type":"string","x-mcp-header":"A"},)"
        R"("n":{"type":"integer","x-mcp-header":"Region"}}})";
    (void)crank::mcp::checkParamHeaders(headers, crank::mcp::compileParamHeaders(schema), body);
    if (isStrictJson(body) && !body.empty() &&
        body.find_first_not_of(" \t\r\n") != std::string::npos &&
        body[body.find_first_not_of(" \t\r\n")] == '{') {
        const std::string out = crank::mcp::modernResult(body, R"({"name":"crank","version":"1"})",
                                                         crank::mcp::CacheHint{5, "public"});
        check(isStrictJson(out), "modernResult gave invalid JSON", out);
    }
}

}  // namespace

/// Remembers the last id only: enough for one state opened twice in a row, and bounded however
/// long the fuzzer runs.
class LastUsedState final : public crank::mcp::UsedStates {
public:
    crank::Result<bool> consume(std::string_view id, const crank::mcp::StateOwner& /*owner*/,
                                std::int64_t /*expires_at_ms*/) override {
        if (id == last_) {
            return false;
        }
        last_ = id;
        return true;
    }

private:
    std::string last_;
};

/// The input as a client's requestState, and as a tool's state.
void checkRequestState(std::string_view text) {
    static const crank::mcp::RequestStateSeal seal("fuzz deployment secret", "fuzz",
                                                   std::chrono::milliseconds(60'000),
                                                   std::make_shared<LastUsedState>());
    const crank::mcp::StateBinding binding{"ws", "agent", "tools/call", "tool", std::string(text)};
    const auto forged = seal.open(text, binding);
    check(!forged, "a requestState the seal never issued opened", std::string(text));
    const std::string sealed = seal.seal(binding, text, 1);
    const auto opened = seal.open(sealed, binding);
    check(opened && opened->payload == text, "a sealed state did not open to its payload",
          std::string(text));
    check(!seal.open(sealed, binding), "a sealed state opened twice", std::string(text));
}

// NOLINTNEXTLINE(readability-identifier-naming): libFuzzer calls it by this name
extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view body = crank::fuzz::asText(data, size);
    checkBody(body, JsonRpcLimits{});
    checkBody(body, JsonRpcLimits{2, 4});
    // The readers also see text that is not params.
    (void)extractMember(body, "id");
    (void)readRequestMeta(body);
    (void)parseToolCallParams(body);
    checkModernReaders(body);
    checkRequestState(body);
    return 0;
}
