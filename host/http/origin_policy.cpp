#include "http/origin_policy.h"

#include <algorithm>
#include <cctype>

#include <arpa/inet.h>

namespace crank::http {
namespace {

std::string lower(std::string_view text) {
    std::string out(text);
    std::transform(out.begin(), out.end(), out.begin(), [](char c) {
        return static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    });
    return out;
}

}  // namespace

std::string hostName(std::string_view hostAndPort) {
    if (!hostAndPort.empty() && hostAndPort.front() == '[') {
        const auto close = hostAndPort.find(']');
        return close == std::string_view::npos ? std::string()
                                               : lower(hostAndPort.substr(1, close - 1));
    }
    const auto colon = hostAndPort.find(':');
    return lower(hostAndPort.substr(0, colon));
}

bool isLoopbackName(std::string_view host) {
    if (host == "localhost" || host == "::1") {
        return true;
    }
    in_addr v4{};
    const std::string text(host);
    return inet_pton(AF_INET, text.c_str(), &v4) == 1 && (ntohl(v4.s_addr) >> 24U) == 127U;
}

OriginPolicy::OriginPolicy(const std::vector<std::string>& allowedHosts,
                           const std::vector<std::string>& allowedOrigins) {
    for (const std::string& h : allowedHosts) {
        hosts_.push_back(lower(h));
    }
    for (const std::string& o : allowedOrigins) {
        origins_.push_back(lower(o));
    }
}

bool OriginPolicy::hostAllowed(std::string_view host) const {
    if (host.empty()) {
        return false;
    }
    if (isLoopbackName(hostName(host))) {
        return true;
    }
    const std::string value = lower(host);
    const std::string name = hostName(host);
    return std::any_of(hosts_.begin(), hosts_.end(), [&](const std::string& allowed) {
        return allowed == value || allowed == name;
    });
}

bool OriginPolicy::originAllowed(std::string_view origin) const {
    if (origin.empty()) {
        return true;
    }
    const std::string value = lower(origin);
    if (std::find(origins_.begin(), origins_.end(), value) != origins_.end()) {
        return true;
    }
    const auto scheme = value.find("://");
    if (scheme == std::string::npos) {
        return false;  // includes "null" (opaque origins)
    }
    const std::string_view s(value.data(), scheme);
    if (s != "http" && s != "https") {
        return false;
    }
    std::string_view rest = std::string_view(value).substr(scheme + 3);
    if (rest.find('/') != std::string_view::npos) {
        return false;
    }
    return isLoopbackName(hostName(rest));
}

}  // namespace crank::http
