#pragma once

// The text helpers the REST plugin uses: the SDK HTTP client's (UTF-8 repair, excerpts, JSON
// checks) and base64.

#include <crank/sdk/base64.hpp>
#include <crank/sdk/http/text.hpp>

namespace crank::rest {

using sdk::base64;
using sdk::http::excerpt;
using sdk::http::isValidJson;
using sdk::http::jsonError;
using sdk::http::jsonNestingDepth;
using sdk::http::validUtf8;

}  // namespace crank::rest
