#include "config/listen_address.h"

#include <charconv>

#include <arpa/inet.h>

namespace crank::config {

std::string ListenAddress::toString() const {
    const bool v6 = host.find(':') != std::string::npos;
    return (v6 ? "[" + host + "]" : host) + ":" + std::to_string(port);
}

bool ListenAddress::isLoopback() const {
    if (host == "localhost" || host == "::1") {
        return true;
    }
    in_addr v4{};
    if (inet_pton(AF_INET, host.c_str(), &v4) == 1) {
        return (ntohl(v4.s_addr) >> 24U) == 127U;
    }
    return false;
}

Result<ListenAddress> parseListenAddress(std::string_view text) {
    const auto fail = [&](std::string_view why) {
        return Error{ErrorCode::invalid_argument,
                     "expected HOST:PORT (e.g. 127.0.0.1:8080 or [::1]:8080), got \"" +
                         std::string(text) + "\": " + std::string(why)};
    };
    std::string_view host;
    std::string_view port;
    if (!text.empty() && text.front() == '[') {
        const auto close = text.find(']');
        if (close == std::string_view::npos || close + 1 >= text.size() || text[close + 1] != ':') {
            return fail("an IPv6 address is written [ADDRESS]:PORT");
        }
        host = text.substr(1, close - 1);
        port = text.substr(close + 2);
        in6_addr v6{};
        if (inet_pton(AF_INET6, std::string(host).c_str(), &v6) != 1) {
            return fail("not an IPv6 address");
        }
    } else {
        const auto colon = text.rfind(':');
        if (colon == std::string_view::npos) {
            return fail("the port is missing");
        }
        host = text.substr(0, colon);
        port = text.substr(colon + 1);
        if (host.find(':') != std::string_view::npos) {
            return fail("an IPv6 address is written [ADDRESS]:PORT");
        }
        in_addr v4{};
        if (host != "localhost" && inet_pton(AF_INET, std::string(host).c_str(), &v4) != 1) {
            return fail("the host must be an IP address or localhost");
        }
    }
    unsigned value = 0;
    const auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), value);
    if (port.empty() || ec != std::errc() || end != port.data() + port.size() || value > 65535) {
        return fail("the port must be a number from 0 to 65535");
    }
    return ListenAddress{std::string(host), static_cast<std::uint16_t>(value)};
}

}  // namespace crank::config
