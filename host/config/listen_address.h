#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "util/error.h"

namespace crank::config {

/// A listen address: an IP literal (or "localhost") and a port. Port 0 asks the kernel for a
/// free port, which crankd then logs.
struct ListenAddress {
    std::string host;
    std::uint16_t port = 0;

    /// "127.0.0.1:8080", "[::1]:8080"
    std::string toString() const;
    /// True for 127.0.0.0/8, ::1 and "localhost".
    bool isLoopback() const;
};

/// Parses "HOST:PORT" or "[IPV6]:PORT". The host must be an IP literal or "localhost": crankd
/// binds exactly where it is told, so it does not resolve names.
Result<ListenAddress> parseListenAddress(std::string_view text);

}  // namespace crank::config
