#pragma once

// The HTTP side of the MCP endpoint that both protocol eras share: content negotiation, reading a
// bounded request body, and HTTP errors whose body is a JSON-RPC error.

#include <cstdint>
#include <istream>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace Poco::Net {
class NameValueCollection;
class HTTPServerRequest;
class HTTPServerResponse;
}  // namespace Poco::Net

namespace crank::mcp {

/// Header `name` as `headers` hold it (names compare case-insensitively): how many times it is
/// sent (a header sent twice is two), and its first value (null when it is not sent).
struct HeaderLookup {
    std::size_t count = 0;
    const std::string* first = nullptr;
};
HeaderLookup findHeader(const Poco::Net::NameValueCollection& headers, std::string_view name);

/// True when an Accept header lists `type` (or a wildcard covering it).
bool accepts(std::string_view accept, std::string_view type);

/// Reads and drops at most 16 MiB of what is left of a request body. Used when a request is
/// refused before (or without) reading its body: closing with unread bytes would reset the
/// connection before the client reads the answer, and on a keep-alive connection the leftover
/// would be read as the next request.
void discardRest(std::istream& in);

/// An HTTP error whose body is a JSON-RPC error without id.
void sendHttpError(Poco::Net::HTTPServerResponse& response, int status, std::int64_t code,
                   std::string_view message);

/// The request's body, read up to `max_bytes` whatever Content-Length (or chunking) claims;
/// nullopt after answering 413 (and closing) when it is longer.
std::optional<std::string> readBody(Poco::Net::HTTPServerRequest& request,
                                    Poco::Net::HTTPServerResponse& response,
                                    std::int64_t max_bytes);

/// Checks what every POST must carry (Accept listing application/json and text/event-stream,
/// Content-Type application/json); false after answering 406 or 415.
bool postHeadersOk(Poco::Net::HTTPServerRequest& request, Poco::Net::HTTPServerResponse& response);

}  // namespace crank::mcp
