#pragma once

#include <string_view>

namespace Poco::Net {
class HTTPServerResponse;
class HTTPServerRequest;
}  // namespace Poco::Net

namespace crank::http {

/// Sends `body` with the given status and Content-Length; `contentType` empty: no Content-Type.
void sendBody(Poco::Net::HTTPServerResponse& response, int status, std::string_view contentType,
              std::string_view body);

/// Sends `body` (JSON text) with the given status, Content-Type application/json and
/// Cache-Control no-store.
void sendJson(Poco::Net::HTTPServerResponse& response, int status, std::string_view body);

/// Sends {"error": {"code": CODE, "message": MESSAGE}} with the given status.
void sendError(Poco::Net::HTTPServerResponse& response, int status, std::string_view code,
               std::string_view message);

/// True when the request's method is one of `allowed` (e.g. "GET,HEAD"); otherwise answers 405 with
/// an Allow header and returns false.
bool allowMethods(Poco::Net::HTTPServerRequest& request, Poco::Net::HTTPServerResponse& response,
                  std::string_view allowed);

}  // namespace crank::http
