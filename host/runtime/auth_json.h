#pragma once

// The auth profile of an operation as its plugin receives it (`crank_request.auth_json`), and the
// secret values crankd scrubs from what the plugin says (runtime/secret_scrubber.h).

#include <string>
#include <string_view>
#include <vector>

#include "config/config.h"

namespace crank::runtime {

/// The profile as compact JSON, secrets in clear (never log it):
///   {"type":"bearer","token":"...","headers":{...}}
///   {"type":"basic","username":"u","password":"...","headers":{...}}
///   {"type":"api_key","in":"header"|"query","name":"X-Api-Key","key":"...","headers":{...}}
///   {"type":"none","headers":{...}}
/// `headers` is always present (an empty object without static headers); a secret the profile
/// lacks is written as "".
std::string authJson(const config::AuthProfile& profile);

/// The values to keep out of anything a plugin sends back: the token, the password, the key, and
/// for basic also base64("username:password") (the Authorization header's value). Empty ones are
/// left out.
std::vector<std::string> authSecrets(const config::AuthProfile& profile);

/// Standard base64 (RFC 4648, with padding).
std::string base64(std::string_view bytes);

}  // namespace crank::runtime
