#include <algorithm>
#include <charconv>

#include <crank/sdk/http/text.hpp>
#include <crank/sdk/http/url.hpp>

namespace crank::sdk::http {
namespace {

constexpr char kHex[] = "0123456789ABCDEF";

bool isUnreserved(unsigned char c) {
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' ||
           c == '.' || c == '_' || c == '~';
}

/// Bytes allowed as they are in a path or query (RFC 3986 pchar, '/' and '?'; '%' is kept so
/// that an already encoded URL is not encoded twice).
bool isUrlByte(unsigned char c) {
    if (isUnreserved(c)) {
        return true;
    }
    switch (c) {
        case '!':
        case '$':
        case '&':
        case '\'':
        case '(':
        case ')':
        case '*':
        case '+':
        case ',':
        case ';':
        case '=':
        case ':':
        case '@':
        case '/':
        case '?':
        case '%':
            return true;
        default:
            return false;
    }
}

void appendEncoded(std::string& out, std::string_view text, bool (*keep)(unsigned char)) {
    for (const char ch : text) {
        const auto c = static_cast<unsigned char>(ch);
        if (keep(c)) {
            out.push_back(ch);
        } else {
            out.push_back('%');
            out.push_back(kHex[c >> 4U]);
            out.push_back(kHex[c & 0xFU]);
        }
    }
}

std::string lower(std::string_view s) {
    std::string out(s);
    std::transform(out.begin(), out.end(), out.begin(), [](char c) {
        return static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
    });
    return out;
}

bool isHostByte(unsigned char c) {
    return isUnreserved(c) || c == '!' || c == '$' || c == '&' || c == '\'' || c == '(' ||
           c == ')' || c == '*' || c == '+' || c == ',' || c == ';' || c == '=' || c == '%';
}

/// Splits "path?query#fragment" into encoded path and query; false on a fragment.
bool splitPathQuery(std::string_view rest, Url& url, std::string& error) {
    if (rest.find('#') != std::string_view::npos) {
        error = "a URL with a fragment (#...) cannot be sent";
        return false;
    }
    const std::size_t q = rest.find('?');
    const std::string_view path = rest.substr(0, q);
    url.path.clear();
    if (path.empty() || path.front() != '/') {
        url.path.push_back('/');
    }
    appendEncoded(url.path, path, isUrlByte);
    url.query.clear();
    if (q != std::string_view::npos) {
        appendEncoded(url.query, rest.substr(q + 1), isUrlByte);
    }
    return true;
}

/// Removes "." and ".." segments (RFC 3986 section 5.2.4), enough for redirect targets.
std::string removeDotSegments(std::string_view path) {
    std::string out;
    std::size_t i = 0;
    while (i < path.size()) {
        std::size_t next = path.find('/', i + 1);
        if (next == std::string_view::npos) {
            next = path.size();
        }
        const std::string_view segment = path.substr(i, next - i);  // "/name"
        if (segment == "/.") {
            if (next == path.size()) {
                out.push_back('/');
            }
        } else if (segment == "/..") {
            const std::size_t cut = out.rfind('/');
            out.erase(cut == std::string::npos ? 0 : cut);
            if (next == path.size()) {
                out.push_back('/');
            }
        } else {
            out.append(segment);
        }
        i = next;
    }
    return out.empty() ? "/" : out;
}

}  // namespace

std::string Url::authority() const {
    std::string out;
    if (host.find(':') != std::string::npos) {
        out.append("[").append(host).append("]");
    } else {
        out.append(host);
    }
    out.push_back(':');
    out.append(std::to_string(port));
    return out;
}

std::string Url::origin() const {
    return scheme + "://" + authority();
}

std::string Url::describe() const {
    // Messages quote it, and a path rendered from a caller's arguments can be any length: cut it
    // like a body excerpt.
    return origin() + excerpt(path, kMaxPathInMessages);
}

std::string Url::target() const {
    return query.empty() ? path : path + "?" + query;
}

std::optional<Url> parseUrl(std::string_view text, std::string& error) {
    Url url;
    const std::size_t colon = text.find("://");
    if (colon == std::string_view::npos) {
        error = "expected an absolute http:// or https:// URL";
        return std::nullopt;
    }
    url.scheme = lower(text.substr(0, colon));
    if (url.scheme != "http" && url.scheme != "https") {
        error = "the URL scheme must be http or https, got \"" + excerpt(url.scheme, 32) + "\"";
        return std::nullopt;
    }
    std::string_view rest = text.substr(colon + 3);
    const std::size_t end = std::min(rest.find_first_of("/?#"), rest.size());
    std::string_view authority = rest.substr(0, end);
    rest.remove_prefix(end);
    if (authority.find('@') != std::string_view::npos) {
        error = "a URL with user info (user:password@) is refused: use an auth profile";
        return std::nullopt;
    }
    std::string_view portText;
    if (!authority.empty() && authority.front() == '[') {
        const std::size_t close = authority.find(']');
        if (close == std::string_view::npos) {
            error = "an IPv6 address in the URL lacks its closing ']'";
            return std::nullopt;
        }
        url.host = std::string(authority.substr(1, close - 1));
        const std::string_view after = authority.substr(close + 1);
        if (!after.empty()) {
            if (after.front() != ':') {
                error = "unexpected characters after the IPv6 address in the URL";
                return std::nullopt;
            }
            portText = after.substr(1);
        }
        const bool ok =
            !url.host.empty() && std::all_of(url.host.begin(), url.host.end(), [](char c) {
                return std::isxdigit(static_cast<unsigned char>(c)) != 0 || c == ':' || c == '.';
            });
        if (!ok) {
            error = "not a valid IPv6 address in the URL";
            return std::nullopt;
        }
    } else {
        const std::size_t portColon = authority.rfind(':');
        if (portColon != std::string_view::npos) {
            portText = authority.substr(portColon + 1);
            authority = authority.substr(0, portColon);
        }
        url.host = lower(authority);
        const bool ok =
            !url.host.empty() && std::all_of(url.host.begin(), url.host.end(), [](char c) {
                return isHostByte(static_cast<unsigned char>(c));
            });
        if (!ok) {
            error = url.host.empty() ? "the URL has no host"
                                     : "the URL's host \"" + excerpt(url.host, 128) +
                                           "\" has characters a host name cannot have";
            return std::nullopt;
        }
    }
    if (portText.empty()) {
        url.port = url.tls() ? 443 : 80;
    } else {
        unsigned port = 0;
        const auto [ptr, ec] =
            std::from_chars(portText.data(), portText.data() + portText.size(), port);
        if (ec != std::errc() || ptr != portText.data() + portText.size() || port == 0 ||
            port > 65535) {
            error =
                "the URL's port \"" + excerpt(portText, 32) + "\" is not a number from 1 to 65535";
            return std::nullopt;
        }
        url.port = static_cast<std::uint16_t>(port);
    }
    if (!splitPathQuery(rest, url, error)) {
        return std::nullopt;
    }
    return url;
}

std::optional<Url> resolveUrl(const Url& base, std::string_view location, std::string& error) {
    if (location.find("://") != std::string_view::npos &&
        location.find("://") < location.find_first_of("/?#")) {
        return parseUrl(location, error);
    }
    if (location.substr(0, 2) == "//") {
        return parseUrl(base.scheme + ":" + std::string(location), error);
    }
    Url url = base;
    if (location.empty()) {
        return url;
    }
    if (location.front() == '?') {
        if (!splitPathQuery(std::string(base.path) + std::string(location), url, error)) {
            return std::nullopt;
        }
        return url;
    }
    std::string combined;
    if (location.front() == '/') {
        combined = std::string(location);
    } else {
        const std::size_t slash = base.path.rfind('/');
        combined = base.path.substr(0, slash + 1) + std::string(location);
    }
    const std::size_t cut = std::min(combined.find_first_of("?#"), combined.size());
    const std::string path = removeDotSegments(combined.substr(0, cut));
    if (!splitPathQuery(path + combined.substr(cut), url, error)) {
        return std::nullopt;
    }
    return url;
}

void appendQueryComponent(std::string& out, std::string_view text) {
    appendEncoded(out, text, isUnreserved);
}

void appendQueryParameter(std::string& query, std::string_view name, std::string_view value) {
    if (!query.empty()) {
        query.push_back('&');
    }
    appendQueryComponent(query, name);
    query.push_back('=');
    appendQueryComponent(query, value);
}

}  // namespace crank::sdk::http
