#include "http/responses.h"

#include <string>

#include <Poco/Net/HTTPServerRequest.h>
#include <Poco/Net/HTTPServerResponse.h>

#include "util/json_string.h"

namespace crank::http {

void sendBody(Poco::Net::HTTPServerResponse& response, int status, std::string_view contentType,
              std::string_view body) {
    response.setStatusAndReason(static_cast<Poco::Net::HTTPResponse::HTTPStatus>(status));
    if (!contentType.empty()) {
        response.setContentType(std::string(contentType));
    }
    response.setContentLength(static_cast<std::streamsize>(body.size()));
    response.sendBuffer(body.data(), body.size());
}

void sendJson(Poco::Net::HTTPServerResponse& response, int status, std::string_view body) {
    response.set("Cache-Control", "no-store");
    sendBody(response, status, "application/json", body);
}

void sendError(Poco::Net::HTTPServerResponse& response, int status, std::string_view code,
               std::string_view message) {
    std::string body = R"({"error":{"code":)";
    appendJsonString(body, code);
    body += R"(,"message":)";
    appendJsonString(body, message);
    body += "}}";
    sendJson(response, status, body);
}

bool allowMethods(Poco::Net::HTTPServerRequest& request, Poco::Net::HTTPServerResponse& response,
                  std::string_view allowed) {
    const std::string& method = request.getMethod();
    std::string_view rest = allowed;
    while (!rest.empty()) {
        const auto comma = rest.find(',');
        if (rest.substr(0, comma) == method) {
            return true;
        }
        rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
    }
    response.set("Allow", std::string(allowed));
    sendError(response, 405, "method_not_allowed",
              "method " + method + " is not allowed here; use " + std::string(allowed));
    return false;
}

}  // namespace crank::http
