#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace crank::http {

/// ASCII case-insensitive equality, as HTTP field names compare (RFC 9110 §5.1).
bool equalsIgnoreCase(std::string_view a, std::string_view b);

/// Where a scan of the bytes a connection has sent so far stands.
enum class HeadState {
    incomplete,  ///< the head has not ended yet (and is still within the size bound)
    complete,    ///< the head ended; the framing fields below are filled in
    too_large,   ///< no end of head within max_head_bytes: answer 431
    invalid,     ///< the head ended but its framing is unacceptable (see `status`, `error`)
};

/// What ConnectionGate needs to know of a request head before a worker sees it: where it ends and
/// how its body is framed. Poco parses the head again, in full, on the worker; this scan only
/// decides whether the request is ready and refuses framings that must never reach a parser.
struct RequestHead {
    HeadState state = HeadState::incomplete;
    /// complete: bytes from the start of the buffer through the blank line that ends the head
    /// (empty lines before the request line included).
    std::size_t head_bytes = 0;
    /// complete: the Content-Length, when one was given.
    std::optional<std::uint64_t> content_length;
    /// complete: Transfer-Encoding: ... chunked.
    bool chunked = false;
    /// complete: Expect: 100-continue (the client waits for 100 Continue before its body).
    bool expects_continue = false;
    /// invalid / too_large: the HTTP status to answer with (400, 431 or 501).
    int status = 0;
    /// invalid / too_large: what is wrong, for the client ("Content-Length and
    /// Transfer-Encoding together", ...).
    std::string error;
};

/// Scans `bytes`, the start of a request, for the end of its head and its body framing.
///
/// The head ends at the first empty line (CRLF CRLF, or bare LF as Poco also accepts), after any
/// empty lines that precede the request line (RFC 9112 §2.2). Framing, per RFC 9112 §6:
/// - Content-Length and Transfer-Encoding together: invalid (§6.1, a request smuggling vector);
/// - a Transfer-Encoding whose final coding is not `chunked`: invalid (§6.3);
/// - a Content-Length that is not a decimal number, overflows, or differs between two fields or
///   list members: invalid (§6.3);
/// - a header line folded onto the next (obs-fold, §5.2): invalid.
///
/// `scanned_hint` is the number of bytes an earlier scan of a prefix of `bytes` already found
/// incomplete: the search for the end resumes near there, so feeding a head a byte at a time
/// costs linear, not quadratic, time. Pure; safe on any bytes (outside input).
RequestHead scanRequestHead(std::string_view bytes, std::size_t max_head_bytes,
                            std::size_t scanned_hint = 0);

/// How many bytes of a complete head's body are read before a worker is given the request: all of
/// it when it is small (a Content-Length of at most `read_ahead_body_bytes` and `max_body_bytes`,
/// no chunking, no 100-continue), else none (the worker reads it, paced).
std::size_t readAheadBodyBytes(const RequestHead& head, std::size_t read_ahead_body_bytes,
                               std::uint64_t max_body_bytes);

}  // namespace crank::http
