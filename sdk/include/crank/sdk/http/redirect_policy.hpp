#pragma once

// Where a redirect may lead. An upstream's 30x is followed (follow_redirects) only to the origin
// of the configured URL, or to an origin the operator listed in `redirect_origins`; and never to
// an address in a local range (loopback, link-local, private, unspecified) unless the configured
// URL's own host is in that range too. So an upstream cannot send crankd to crankd itself, to a
// cloud metadata address, or into the operator's network, and hand the answer to the model.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <crank/sdk/http/connection.hpp>
#include <crank/sdk/http/url.hpp>

namespace crank::sdk::http {

/// The range an IP address is in, for the redirect rule.
enum class AddressScope {
    global,       ///< anything else
    loopback,     ///< 127.0.0.0/8, ::1, and 0.0.0.0/8 and :: (which reach this host)
    link_local,   ///< 169.254.0.0/16 (cloud metadata among them), fe80::/10
    private_use,  ///< 10/8, 172.16/12, 192.168/16, 100.64/10 (shared), fc00::/7 (unique local)
};

/// The scope of an IPv4 or IPv6 address in text (IPv4-mapped IPv6 as its IPv4; a zone such as
/// "%eth0" ignored); nullopt when `address` is not an IP address.
std::optional<AddressScope> addressScope(std::string_view address);

/// "loopback", "link-local", "private", "global".
std::string_view describeScope(AddressScope scope);

/// Checks one redirect hop: from the configured origin `configured` (Url::origin() text) to
/// `next`. `allowed_origins` are the operator's `redirect_origins` (Url::origin() text each).
/// Resolves the hosts whose scope matters, bounded by `deadline` (throws TransportFailure as
/// Connection::open does). Returns why the hop is refused ("another origin, not in
/// redirect_origins"), or nullopt when it may be followed. Then `pin`, when given, is set to the
/// rule the hop's connection must apply to the addresses it connects to (HttpRequest::
/// address_check): the name was checked here, but it is looked up again to connect, and an
/// upstream that controls its DNS could answer a global address first and a local one next.
/// Empty when the hop goes back to the configured origin.
std::optional<std::string> refuseRedirect(std::string_view configured, const Url& next,
                                          const std::vector<std::string>& allowed_origins,
                                          Clock::time_point deadline, const CancelCheck& cancel,
                                          AddressCheck* pin = nullptr);

/// Reads one `redirect_origins` entry: an absolute http(s) URL with nothing after its
/// authority but an optional "/". Returns its origin (Url::origin() text), or nullopt with
/// `error` set.
std::optional<std::string> parseOrigin(std::string_view text, std::string& error);

}  // namespace crank::sdk::http
