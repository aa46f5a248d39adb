#pragma once

// Absolute http(s) URLs as crank's HTTP client sends them: parsed, resolved against a redirect's
// Location, and described without their query (which may carry an API key).

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace crank::sdk::http {

struct Url {
    std::string scheme;  ///< "http" or "https"
    std::string host;    ///< a name, an IPv4 address, or an IPv6 address without brackets
    std::uint16_t port = 0;
    std::string path = "/";  ///< percent-encoded, always starting with '/'
    std::string query;       ///< percent-encoded, without '?' ("" when none)

    bool tls() const { return scheme == "https"; }
    /// "scheme://host:port" (IPv6 in brackets): what identifies a connection's peer.
    std::string origin() const;
    /// "host:port" (IPv6 in brackets), for messages and the Host header.
    std::string authority() const;
    /// "scheme://host:port/path": safe to log and to show (no query, no credentials), the path
    /// cut to kMaxPathInMessages bytes ("..." after the cut) as error messages quote it.
    std::string describe() const;
    static constexpr std::size_t kMaxPathInMessages = 256;
    /// path + "?" + query: the request target.
    std::string target() const;
};

/// Parses an absolute http:// or https:// URL. Bytes that may not appear in a URL (spaces,
/// controls, non-ASCII) in the path and query are percent-encoded; user info and a fragment are
/// refused (user info belongs in an auth profile). nullopt with `error` set on failure.
std::optional<Url> parseUrl(std::string_view text, std::string& error);

/// A redirect's Location resolved against `base` (RFC 3986 section 5.2 for the forms servers
/// send: absolute, scheme-relative "//host/...", absolute path, relative path, query only).
std::optional<Url> resolveUrl(const Url& base, std::string_view location, std::string& error);

/// Appends `text` percent-encoded as a query component (RFC 3986 unreserved bytes stay).
void appendQueryComponent(std::string& out, std::string_view text);

/// Appends "name=value" to a query string, with '&' when it is not empty.
void appendQueryParameter(std::string& query, std::string_view name, std::string_view value);

}  // namespace crank::sdk::http
