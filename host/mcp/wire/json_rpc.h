#pragma once

// The JSON-RPC 2.0 message layer of the MCP server: parsing a request body into validated
// messages, and writing messages. JSON stays text at this boundary (params, result and error data
// are compact JSON text); RapidJSON stays inside json_scanner.cpp, which json_rpc.cpp reads
// bodies with.
//
// THREADING: every function here is pure (no shared state) and may run on any thread.

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "mcp/wire/request_id.h"
#include "util/error.h"

namespace crank::mcp {

/// Error codes of JSON-RPC 2.0 (-32700 ... -32603) and of MCP.
inline constexpr std::int64_t kParseError = -32700;      ///< the body is not valid JSON
inline constexpr std::int64_t kInvalidRequest = -32600;  ///< valid JSON, not a valid message
inline constexpr std::int64_t kMethodNotFound = -32601;
inline constexpr std::int64_t kInvalidParams = -32602;
inline constexpr std::int64_t kInternalError = -32603;
inline constexpr std::int64_t kResourceNotFound = -32002;        ///< MCP resources/read
inline constexpr std::int64_t kUrlElicitationRequired = -32042;  ///< MCP 2025-11-25

/// Limits applied while parsing a body. The body size is not limited here: the HTTP layer
/// refuses large bodies (server.max_request_body_bytes) before they are read.
struct JsonRpcLimits {
    /// Most messages in one batch (JSON array body); a longer batch is refused as a whole
    /// (-32600) without reading the rest of it.
    std::size_t max_batch_size = 100;
    /// Most nested arrays and objects, counting the batch array and the message object: a
    /// message with params {"a": {"b": 1}} is 3 deep. Deeper text is refused (-32700) as soon as
    /// the parser reaches the level past the limit, so hostile nesting costs neither stack nor
    /// memory. Also bounds the stack use of code that walks params recursively later.
    std::size_t max_depth = 64;
};

/// What a message is, from its members.
enum class JsonRpcKind {
    request,         ///< "method" and "id": must be answered
    notification,    ///< "method" and no "id": must not be answered
    response,        ///< "result" and "id"
    error_response,  ///< "error", and "id" unless the sender could not read the request's id
};

/// "request", "notification", "response", "error_response".
std::string_view jsonRpcKindName(JsonRpcKind kind);

/// The "error" member of an error response.
struct JsonRpcErrorObject {
    std::int64_t code = 0;
    std::string message;
    std::string data_json;  ///< compact JSON text of "data"; empty when absent
};

/// One valid message. Which fields are set depends on `kind`; the others stay empty.
/// The members of a message's params as the body's scan recorded them (JsonRpcMessage).
struct ScannedParams {
    std::vector<json::scan::RawMember> members;
    bool meta_scanned = false;  ///< params._meta is an object, its members below
    std::vector<json::scan::RawMember> meta_members;
};

struct JsonRpcMessage {
    JsonRpcKind kind = JsonRpcKind::request;
    /// Set for requests and responses, and for error responses that carry an id. Absent for
    /// notifications and for error responses with "id": null or no "id".
    std::optional<RequestId> id;
    /// Requests and notifications: the method name, escapes decoded ("tools/call").
    std::string method;
    /// Requests and notifications: compact JSON text of "params", an object ("{...}") or, as
    /// plain JSON-RPC allows, an array ("[...]"); empty when absent. MCP defines only object
    /// params: a handler reads members with extractMember(), which refuses an array, and answers
    /// kInvalidParams. Numbers and string escapes are kept exactly as the sender wrote them.
    std::string params_json;
    /// Requests and notifications whose params is an object the sender wrote compactly (so that
    /// params_json is its text as sent): the members of params, and of params._meta when it is an
    /// object, as the body's one scan found them, spans relative to params_json. Their readers
    /// (tool_call_params.h, request_meta.h) then read nothing again. Absent otherwise.
    std::optional<ScannedParams> params_scan;
    /// Responses: compact JSON text of "result" (any JSON value; MCP results are objects).
    std::string result_json;
    /// Error responses.
    JsonRpcErrorObject error;
};

/// An entry that is not a valid message, or a body that cannot be read at all: what to answer
/// with makeError(rejection).
struct JsonRpcRejection {
    /// The entry's id when it could be read (a string or an integer, and "id" not duplicated);
    /// otherwise absent, and the answer carries "id": null as JSON-RPC requires.
    std::optional<RequestId> id;
    std::int64_t code = kInvalidRequest;
    /// What is wrong, naming the member: "\"jsonrpc\" must be \"2.0\", got \"1.0\"". The sender's
    /// values in it are cut at 40 bytes, and its strings quoted and escaped.
    std::string message;
};

/// One entry of a body: a valid message or the reason it is not one.
using JsonRpcEntry = std::variant<JsonRpcMessage, JsonRpcRejection>;

/// A request body, read.
struct ParsedBody {
    /// Set when the body as a whole is unusable: invalid JSON (kParseError, including invalid
    /// UTF-8, NUL bytes and nesting past the limit), or valid JSON that is neither an object nor a
    /// non-empty array of at most max_batch_size entries (kInvalidRequest). It has no id. The
    /// answer is this one error; `entries` is then empty.
    std::optional<JsonRpcRejection> fatal;
    /// True when the body is a JSON array (a batch), even one that was refused. Batches exist
    /// only in protocol 2025-03-26; whether to accept one is the caller's decision.
    bool batch = false;
    /// One entry per message, in body order: exactly one for an object body, one per array
    /// element for a batch (an element that is not an object, such as a nested array, is a
    /// rejection without id).
    std::vector<JsonRpcEntry> entries;
};

/// Reads a request body (one JSON-RPC message, or a batch of them) and validates every message
/// against JSON-RPC 2.0 and MCP:
///  - "jsonrpc" must be exactly "2.0";
///  - "id" must be a string or an integer within 64 bits: null (which MCP forbids for requests),
///    fractions ("1.0" too), exponents and larger integers are refused;
///  - "method" must be a string; "params", when present, an object or an array (null is refused);
///  - a message has "method", or exactly one of "result" and "error" (and then no "params");
///  - a response needs an id; an error response may have "id": null or none;
///  - "error" must be an object with an integer "code" and a string "message";
///  - no object anywhere in a message may have the same member twice (RFC 8259 leaves it
///    undefined which one counts; readers downstream would disagree), so a message with a
///    duplicate member is refused, with its id unless the duplicate is "id" itself.
/// Members other than jsonrpc, id, method, params, result and error are ignored.
/// A bad entry in a batch is rejected alone: the other entries are still read.
/// Strict JSON (RFC 8259): no comments, no trailing commas, no byte order mark, no NaN; numbers
/// too large for a double (1e400) make the body invalid JSON.
ParsedBody parseJsonRpcBody(std::string_view body, const JsonRpcLimits& limits = {});

// Writers. Each returns one compact JSON-RPC message. Arguments named *Json are JSON text that
// Crank produced and trusts: they are inserted as they are, never validated, and must be valid
// JSON. `method` and `message` are UTF-8 text; they are escaped here.

/// {"jsonrpc":"2.0","id":ID,"result":RESULT}. An empty resultJson writes {} (ping's result).
std::string makeResult(const RequestId& id, std::string_view resultJson);
/// The same of a result given in parts, written once: RESULT is their concatenation.
std::string makeResult(const RequestId& id, std::initializer_list<std::string_view> resultParts);
/// {"jsonrpc":"2.0","id":ID,"error":{"code":CODE,"message":MESSAGE,"data":DATA}}; "id":null when
/// `id` is absent (the request's id could not be read), "data" only when dataJson is not empty.
std::string makeError(const std::optional<RequestId>& id, std::int64_t code,
                      std::string_view message, std::string_view dataJson = {});
/// The answer to a rejected entry or body.
std::string makeError(const JsonRpcRejection& rejection);
/// {"jsonrpc":"2.0","method":METHOD,"params":PARAMS}, "params" only when paramsJson is not empty.
std::string makeNotification(std::string_view method, std::string_view paramsJson = {});
/// {"jsonrpc":"2.0","id":ID,"method":METHOD,"params":PARAMS}, "params" only when not empty.
std::string makeRequest(const RequestId& id, std::string_view method,
                        std::string_view paramsJson = {});

// Readers of params for method handlers. Each call scans the whole text again (no tree is
// kept), which is cheap next to the HTTP body limit. Their errors (ErrorCode::invalid_argument) are
// meant for a kInvalidParams answer.

/// Compact JSON text of member `key` of the JSON object `objectJson`; "" when the member is
/// absent. Empty `objectJson` counts as an empty object, so that absent params
/// (JsonRpcMessage::params_json == "") read as {}. Numbers and escapes are kept as written.
/// Errors: objectJson is not a JSON object ("expected an object, got an array"), is not valid
/// JSON, or has a duplicate member anywhere.
Result<std::string> extractMember(std::string_view objectJson, std::string_view key);

}  // namespace crank::mcp
