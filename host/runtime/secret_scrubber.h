#pragma once

// The secret scrubber: removes an operation's secret values (its auth profile's token, password,
// key...) from text that a plugin produced before the text reaches an MCP client or the log.
// Defence in depth: plugins are told never to repeat a secret, and crankd does not rely on it.
//
// Each secret is looked for as it is (a message, a log line), as it appears inside a JSON string
// literal (the auth JSON text, an item), and escaped twice (JSON text quoted in a JSON string): in
// the escapes of the JSON writers a plugin likely uses (RapidJSON's, the SDK's, crankd's own).
// It is also looked for in the forms it takes on the wire (runtime/secret_wire_forms.h), which an
// upstream that echoes its own URL puts into its answer: percent-encoded (any bytes, either hex
// case, '+' for a space) and base64 (standard and URL-safe, padded or not), each of those also
// percent-encoded. Every occurrence becomes "[redacted]"; occurrences that overlap (of one secret
// or of several) become one "[redacted]". Secrets shorter than kMinSecretLength are ignored:
// replacing every "abc" would garble text and protect nothing.
//
// Not found: a secret written with other escapes (\u0041 for "A", "\/" for "/"), cut in pieces,
// encoded twice over (%2541), or encoded another way unless it was given as a secret of its own.

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace crank::runtime {

/// Immutable; copies share the patterns (a copy per call costs a reference count, nothing when
/// empty), and every method may be called from any thread.
class SecretScrubber {
public:
    /// What every secret becomes.
    static constexpr std::string_view kMarker = "[redacted]";
    /// Shorter secrets are not looked for.
    static constexpr std::size_t kMinSecretLength = 4;

    /// No secrets: scrub() returns its input.
    SecretScrubber() = default;
    explicit SecretScrubber(std::vector<std::string> secrets);

    /// True when there is nothing to scrub (no secret, or only short ones): the common case,
    /// which the callers test before doing any work.
    bool empty() const { return patterns_ == nullptr; }

    /// `text` with every secret (raw, JSON-escaped, or in a wire form) replaced by kMarker.
    std::string scrub(std::string_view text) const;
    /// scrub() in place; true when something was replaced.
    bool scrubInPlace(std::string& text) const;

    /// For JSON text (a result, an aggregate): the same, keeping the text valid JSON. When no
    /// secret occurs, the text is returned as it is. Otherwise the text is rewritten compactly with
    /// every string, key and number that holds a secret scrubbed (a number that holds one becomes
    /// the string "[redacted]"); text that does not parse as JSON is scrubbed as plain text.
    std::string scrubJson(std::string_view json) const;

private:
    /// Intervals [begin, end) of `text` covered by a pattern, sorted and merged.
    std::vector<std::pair<std::size_t, std::size_t>> find(std::string_view text) const;

    struct Patterns {
        /// Every literal form a secret is looked for in, longest first, without duplicates.
        std::vector<std::string> literal;
        /// The secrets and their base64 forms, also looked for percent-encoded.
        std::vector<std::string> encodable;
    };
    std::shared_ptr<const Patterns> patterns_;
};

}  // namespace crank::runtime
