#include <algorithm>
#include <array>

#include <arpa/inet.h>
#include <crank/sdk/http/redirect_policy.hpp>
#include <sys/socket.h>

namespace crank::sdk::http {
namespace {

AddressScope ipv4Scope(const std::array<unsigned, 4>& b) {
    if (b[0] == 127 || b[0] == 0) {
        return AddressScope::loopback;
    }
    if (b[0] == 169 && b[1] == 254) {
        return AddressScope::link_local;
    }
    if (b[0] == 10 || (b[0] == 172 && (b[1] & 0xF0U) == 16) || (b[0] == 192 && b[1] == 168) ||
        (b[0] == 100 && (b[1] & 0xC0U) == 64)) {
        return AddressScope::private_use;
    }
    return AddressScope::global;
}

/// The scopes of the addresses `host` resolves to (an IP literal is itself).
std::vector<std::pair<std::string, AddressScope>> scopes(const std::string& host,
                                                         Clock::time_point deadline,
                                                         const CancelCheck& cancel) {
    std::vector<std::pair<std::string, AddressScope>> out;
    for (std::string& address : resolveHost(host, deadline, cancel)) {
        const std::optional<AddressScope> scope = addressScope(address);
        out.emplace_back(std::move(address), scope.value_or(AddressScope::global));
    }
    return out;
}

}  // namespace

std::optional<AddressScope> addressScope(std::string_view address) {
    // A zone ("fe80::1%eth0") does not change the range.
    const std::string text(address.substr(0, address.find('%')));
    std::array<unsigned char, 16> b{};
    if (::inet_pton(AF_INET, text.c_str(), b.data()) == 1) {
        return ipv4Scope({b[0], b[1], b[2], b[3]});
    }
    if (::inet_pton(AF_INET6, text.c_str(), b.data()) != 1) {
        return std::nullopt;
    }
    const bool zeros10 =
        std::all_of(b.begin(), b.begin() + 10, [](unsigned char c) { return c == 0; });
    if (zeros10 && b[10] == 0xFF && b[11] == 0xFF) {
        return ipv4Scope({b[12], b[13], b[14], b[15]});  // ::ffff:a.b.c.d reaches a.b.c.d
    }
    if (zeros10 && b[10] == 0 && b[11] == 0 && b[12] == 0 && b[13] == 0 && b[14] == 0 &&
        b[15] <= 1) {
        return AddressScope::loopback;  // :: and ::1
    }
    if (b[0] == 0xFE && (b[1] & 0xC0U) == 0x80) {
        return AddressScope::link_local;
    }
    if ((b[0] & 0xFEU) == 0xFC) {
        return AddressScope::private_use;
    }
    return AddressScope::global;
}

std::string_view describeScope(AddressScope scope) {
    switch (scope) {
        case AddressScope::loopback:
            return "loopback";
        case AddressScope::link_local:
            return "link-local";
        case AddressScope::private_use:
            return "private";
        case AddressScope::global:
            break;
    }
    return "global";
}

std::optional<std::string> refuseRedirect(std::string_view configured, const Url& next,
                                          const std::vector<std::string>& allowed_origins,
                                          Clock::time_point deadline, const CancelCheck& cancel,
                                          AddressCheck* pin) {
    if (pin != nullptr) {
        *pin = nullptr;
    }
    const std::string origin = next.origin();
    if (origin == configured) {
        return std::nullopt;  // the configured host itself, whatever its range
    }
    if (std::find(allowed_origins.begin(), allowed_origins.end(), origin) ==
        allowed_origins.end()) {
        return "it leads to another origin, " + origin +
               ", which is not listed in redirect_origins";
    }
    // The local ranges the configured host is in: the next hop may reach those, and global
    // addresses. Resolved once, here; the rule then judges each address as it is connected to.
    std::string error;
    const std::optional<Url> home = parseUrl(std::string(configured) + "/", error);
    std::vector<AddressScope> homeRanges;
    if (home) {
        for (const auto& [address, scope] : scopes(home->host, deadline, cancel)) {
            if (scope != AddressScope::global) {
                homeRanges.push_back(scope);
            }
        }
    }
    AddressCheck rule = [origin,
                         homeRanges](const std::string& address) -> std::optional<std::string> {
        const AddressScope scope = addressScope(address).value_or(AddressScope::global);
        if (scope == AddressScope::global ||
            std::find(homeRanges.begin(), homeRanges.end(), scope) != homeRanges.end()) {
            return std::nullopt;
        }
        std::string why = origin;
        why.append(" resolves to ").append(address).append(", a ");
        why.append(describeScope(scope))
            .append(" address, and the configured URL's host is not in that range");
        return why;
    };
    for (const auto& [address, scope] : scopes(next.host, deadline, cancel)) {
        if (std::optional<std::string> refused = rule(address)) {
            return refused;
        }
    }
    if (pin != nullptr) {
        *pin = std::move(rule);
    }
    return std::nullopt;
}

std::optional<std::string> parseOrigin(std::string_view text, std::string& error) {
    const std::optional<Url> url = parseUrl(text, error);
    if (!url) {
        return std::nullopt;
    }
    if (url->path != "/" || !url->query.empty() || text.back() == '?') {
        error = "expected an origin (scheme://host[:port]), without a path or query";
        return std::nullopt;
    }
    return url->origin();
}

}  // namespace crank::sdk::http
