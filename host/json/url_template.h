#pragma once

// Input templates inside a URL (json/json_template.h): how a value is written where it lands. A
// config member that its plugin's JSON Schema marks as a URL ("format": "uri") is rendered so that
// the tool's input fills values in and never changes the URL's shape:
//   - in the authority (before the path): every byte but A-Z a-z 0-9 - . _ ~ : [ ] is
//     percent-encoded, so a value may give a host and port, never a path, query or user info;
//   - in the path, the query and the fragment: every byte but A-Z a-z 0-9 - . _ ~ is
//     percent-encoded ('/', '?', '&', '=', '#', '%' included), and a value that would be a whole
//     "." or ".." path segment is refused (percent-encoding does not help: servers and URL
//     parsers treat %2E as a dot);
//   - a value already encoded with `| url` is not encoded again (the dot rule still applies).

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "json/json_value.h"

namespace crank::json {

/// Where in a URL a template's value lands.
enum class UrlPart { authority, path, query, fragment };

/// The part that text appended to `before` (the URL's text up to the template) is in. A URL with
/// no "://" yet is in its authority, unless it is relative ("/x", "?x").
UrlPart urlPartAfter(std::string_view before);

/// Appends `text` percent-encoded as a URL component: every byte but A-Z a-z 0-9 - . _ ~ as %XX
/// (upper-case hex). What the `| url` filter does.
void percentEncode(std::string& out, std::string_view text);

/// Appends to `url` (the URL rendered so far) `value` encoded for `part` (see above), or as it
/// is when `encoded` (the `url` filter's output). `next` is the byte after the value (nullopt at
/// the end of the URL or before another template). False, with nothing appended, when the value
/// would be a whole "." or ".." segment of the path.
bool appendUrlValue(std::string& url, UrlPart part, std::string_view value, bool encoded,
                    std::optional<char> next);

/// The members of a config that `schema` (a plugin's config schema) marks as URLs: string
/// properties with "format": "uri", found through nested "properties"; each as its member names
/// from the root ({"url"}, {"job", "status_url"}).
std::vector<std::vector<std::string>> uriMembers(const Value& schema);

}  // namespace crank::json
