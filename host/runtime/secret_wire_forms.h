#pragma once

// The forms a secret takes on the wire, beyond the text itself, for the secret scrubber
// (runtime/secret_scrubber.h): what an HTTP client makes of it before an upstream can echo it.
//
//  - Percent-encoded (a query parameter, a path segment, a form body): any subset of its bytes
//    written as %XX, in either hex case, and a space as '+' (application/x-www-form-urlencoded).
//    Every encoder's choice of bytes is covered at once, so this is a match, not a list of forms.
//  - Base64 (RFC 4648): standard and URL-safe alphabets, with and without padding; a plugin
//    that base64-encodes a secret (Basic credentials, a token carried as bytes) sends one of them.

#include <cstddef>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace crank::runtime {

/// The base64 forms of `secret` (standard, URL-safe; each padded and unpadded), without
/// duplicates and without `secret` itself.
std::vector<std::string> base64Forms(std::string_view secret);

/// Appends to `spans` every [begin, end) of `text` that spells `secret` with at least one byte
/// percent-encoded (%XX, hex in either case) or a space written as '+'; occurrences may overlap.
/// Occurrences written entirely as they are are the caller's (a plain search finds them).
void findPercentEncoded(std::string_view text, std::string_view secret,
                        std::vector<std::pair<std::size_t, std::size_t>>& spans);

}  // namespace crank::runtime
