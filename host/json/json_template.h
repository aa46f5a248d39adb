#pragma once

// Input mapping templates: an operation's protocol config (a JSON value) with `{{ ... }}`
// templates in its string values, rendered over each call's tool input.
//
// Syntax, inside any JSON string value of the config (object keys are never templates):
//   {{ path }}                  the value at `path` (SDK path syntax, no wildcards) in the input
//   {{ path | url }}            its text, percent-encoded for a URL component (RFC 3986:
//                               everything but A-Z a-z 0-9 - . _ ~ is encoded, byte by byte)
//   {{ path | json }}           its compact JSON text, as a string (`"abc"` keeps its quotes)
//   {{ path | default: "x" }}   the JSON literal (string, number, true, false, null) when the
//                               value is missing or null
//   filters chain left to right: {{ q | default: "" | url }}. Spaces inside {{ }} are optional.
//   \{{                         a literal "{{" (in the config file's JSON: "\\{{")
// Rendering:
//   - a string that is exactly one template keeps the value's JSON type: "{{ limit }}" with
//     limit 5 renders 5, an object stays an object; after `url` or `json` it is a string.
//   - a template inside a longer string is replaced by the value's plain text: strings as they
//     are, numbers and booleans as JSON text, objects and arrays as compact JSON, null as "".
//   - a missing value (no default): a whole-string template REMOVES its object member or array
//     element from the rendered config (a whole-config template renders null); inside a longer
//     string it renders as "".
//   - in a config member that the plugin's schema marks as a URL ("format": "uri"), every value
//     is percent-encoded for where it lands (json/url_template.h), with or without `| url`, and
//     a value that would be a whole "." or ".." path segment fails the rendering.
// The rendered text is compact JSON. Subtrees without templates are pre-serialised at compile
// time, so rendering is concatenation plus path lookups.

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "json/json_value.h"
#include "util/error.h"

namespace crank::json {

/// A compiled config with its templates. Immutable; cheap to copy; render concurrently.
class CompiledTemplate {
public:
    /// True when the config contains at least one template (else render returns the config).
    bool hasTemplates() const;

    struct Impl;

private:
    friend Result<CompiledTemplate> compileTemplate(
        std::string_view config_json, std::string_view where,
        const std::vector<std::vector<std::string>>& url_members);
    friend Result<std::string> render(const CompiledTemplate& compiled, const Value& input,
                                      std::size_t max_bytes);
    explicit CompiledTemplate(std::shared_ptr<const Impl> impl) : impl_(std::move(impl)) {}
    std::shared_ptr<const Impl> impl_;
};

/// Compiles `config_json`. Errors name the config path of the bad template and the byte offset
/// inside the string (ErrorCode::invalid_argument), e.g.
/// `operations[0].config.url: unclosed "{{" at byte 5`,
/// `operations[0].config.headers.X: unknown filter "urll" at byte 12; did you mean "url"?`,
/// `operations[0].config.query: bad path "a..b" at byte 3: empty member name ...`.
/// `url_members` are the members that hold URLs (json::uriMembers() of the plugin's schema), each
/// as its member names from the config's root.
Result<CompiledTemplate> compileTemplate(
    std::string_view config_json, std::string_view where,
    const std::vector<std::vector<std::string>>& url_members = {});

/// Renders over the tool input (usually an object). Fails when the result would be longer than
/// `max_bytes` (`{where}: rendered config is larger than 65536 bytes`), or when a URL member would
/// get a dot segment (`{where}.url: the value of {{ id }} is "..", a dot segment, ...`).
Result<std::string> render(const CompiledTemplate& compiled, const Value& input,
                           std::size_t max_bytes);
/// The same over input JSON text (parsed with the default ParseLimits; malformed input is an
/// error `input: malformed JSON at byte 3: ...`).
Result<std::string> render(const CompiledTemplate& compiled, std::string_view input_json,
                           std::size_t max_bytes);

}  // namespace crank::json
