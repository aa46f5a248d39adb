#include "mcp/endpoint_http.h"

#include <Poco/Net/HTTPServerRequest.h>
#include <Poco/Net/HTTPServerResponse.h>
#include <Poco/Net/NameValueCollection.h>
#include <fmt/core.h>

#include "http/request_head.h"
#include "http/responses.h"
#include "mcp/wire/json_rpc.h"

namespace crank::mcp {

namespace {

/// How much of an oversized body is read and thrown away before answering 413.
constexpr std::int64_t kMaxDiscardBytes = 16LL * 1024 * 1024;

}  // namespace

HeaderLookup findHeader(const Poco::Net::NameValueCollection& headers, std::string_view name) {
    HeaderLookup found;
    for (const auto& [key, value] : headers) {
        if (http::equalsIgnoreCase(key, name)) {
            if (found.count++ == 0) {
                found.first = &value;
            }
        }
    }
    return found;
}

bool accepts(std::string_view accept, std::string_view type) {
    std::string_view rest = accept;
    const std::string_view major = type.substr(0, type.find('/'));
    while (!rest.empty()) {
        const auto comma = rest.find(',');
        std::string_view item = rest.substr(0, comma);
        rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
        item = item.substr(0, item.find(';'));
        while (!item.empty() && item.front() == ' ') {
            item.remove_prefix(1);
        }
        while (!item.empty() && item.back() == ' ') {
            item.remove_suffix(1);
        }
        if (item == type || item == "*/*" ||
            (item.size() == major.size() + 2 && item.substr(0, major.size()) == major &&
             item.substr(major.size()) == "/*")) {
            return true;
        }
    }
    return false;
}

void discardRest(std::istream& in) {
    char buffer[8192];
    std::int64_t discarded = 0;
    while (in && discarded < kMaxDiscardBytes) {
        in.read(buffer, sizeof buffer);
        discarded += in.gcount();
    }
}

void sendHttpError(Poco::Net::HTTPServerResponse& response, int status, std::int64_t code,
                   std::string_view message) {
    http::sendBody(response, status, "application/json", makeError(std::nullopt, code, message));
}

std::optional<std::string> readBody(Poco::Net::HTTPServerRequest& request,
                                    Poco::Net::HTTPServerResponse& response,
                                    std::int64_t max_bytes) {
    std::string body;
    std::istream& in = request.stream();
    char buffer[8192];
    while (in && static_cast<std::int64_t>(body.size()) <= max_bytes) {
        in.read(buffer, sizeof buffer);
        body.append(buffer, static_cast<std::size_t>(in.gcount()));
    }
    if (static_cast<std::int64_t>(body.size()) > max_bytes) {
        discardRest(in);
        response.setKeepAlive(false);
        sendHttpError(response, 413, kInvalidRequest,
                      fmt::format("the request body is larger than {} bytes "
                                  "(server.max_request_body_bytes)",
                                  max_bytes));
        return std::nullopt;
    }
    return body;
}

bool postHeadersOk(Poco::Net::HTTPServerRequest& request, Poco::Net::HTTPServerResponse& response) {
    // One protocol version per request: a proxy reading the first and crankd another would
    // disagree on the era (a second Mcp-Method is refused alike, routing_headers.h).
    const std::size_t versions = findHeader(request, "MCP-Protocol-Version").count;
    if (versions > 1) {
        sendHttpError(
            response, 400, kInvalidRequest,
            "MCP-Protocol-Version is sent " + std::to_string(versions) + " times; send it once");
        return false;
    }
    const std::string accept = request.get("Accept", "");
    if (!accepts(accept, "application/json") || !accepts(accept, "text/event-stream")) {
        sendHttpError(response, 406, kInvalidRequest,
                      "Accept must list both application/json and text/event-stream");
        return false;
    }
    const std::string& contentType = request.getContentType();
    if (contentType.substr(0, contentType.find(';')) != "application/json") {
        sendHttpError(response, 415, kInvalidRequest, "Content-Type must be application/json");
        return false;
    }
    return true;
}

}  // namespace crank::mcp
