#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace crank::http {

/// DNS-rebinding protection: which Host and Origin header values a request may carry.
/// Loopback names (localhost, 127.0.0.0/8, [::1]) are always accepted, on any port; anything
/// else only when listed in server.allowed_hosts / server.allowed_origins.
class OriginPolicy {
public:
    OriginPolicy(const std::vector<std::string>& allowedHosts,
                 const std::vector<std::string>& allowedOrigins);

    /// `host` is the Host header ("127.0.0.1:8080", "[::1]:8080", "crank.example.com").
    /// An empty Host is refused (HTTP/1.1 requires it).
    bool hostAllowed(std::string_view host) const;
    /// `origin` is the Origin header ("http://localhost:3000"); an absent Origin (empty) is
    /// allowed, since only browsers send one. "null" is refused.
    bool originAllowed(std::string_view origin) const;

private:
    std::vector<std::string> hosts_;
    std::vector<std::string> origins_;
};

/// The host part of "host[:port]" or "[v6]:port", lower-cased, brackets removed.
std::string hostName(std::string_view hostAndPort);
/// True for "localhost", 127.x.y.z and ::1.
bool isLoopbackName(std::string_view host);

}  // namespace crank::http
