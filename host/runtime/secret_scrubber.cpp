#include "runtime/secret_scrubber.h"

#include <algorithm>

#include <rapidjson/memorystream.h>
#include <rapidjson/reader.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "runtime/secret_wire_forms.h"
#include "util/json_string.h"
#include <crank/sdk/json.hpp>

namespace crank::runtime {
namespace {

/// The forms `text` takes inside a JSON string literal (without the quotes), as written by each
/// writer whose output can reach a client; they differ on control characters: crankd's own
/// jsonString() writes \u0008, the SDK's \b and lower-case hex, RapidJSON \b and upper-case hex.
std::vector<std::string> escapedForms(std::string_view text) {
    std::string own;
    crank::appendJsonString(own, text);
    std::string plugin;
    sdk::appendJsonString(plugin, text);
    rapidjson::StringBuffer buffer;
    rapidjson::Writer<rapidjson::StringBuffer> writer(buffer);
    writer.String(text.data(), static_cast<rapidjson::SizeType>(text.size()));
    return {own.substr(1, own.size() - 2), plugin.substr(1, plugin.size() - 2),
            std::string(buffer.GetString() + 1, buffer.GetSize() - 2)};
}

// RapidJSON's handler concept names these methods.
// NOLINTBEGIN(readability-identifier-naming)
/// Copies SAX events to a writer, scrubbing strings, keys and numbers on the way.
class ScrubbingHandler {
public:
    using Writer = rapidjson::Writer<rapidjson::StringBuffer>;

    ScrubbingHandler(const SecretScrubber& scrubber, Writer& writer)
        : scrubber_(scrubber), writer_(writer) {}

    bool Null() { return writer_.Null(); }
    bool Bool(bool b) { return writer_.Bool(b); }
    bool Int(int i) { return writer_.Int(i); }
    bool Uint(unsigned u) { return writer_.Uint(u); }
    bool Int64(std::int64_t i) { return writer_.Int64(i); }
    bool Uint64(std::uint64_t u) { return writer_.Uint64(u); }
    bool Double(double d) { return writer_.Double(d); }
    bool RawNumber(const char* str, rapidjson::SizeType length, bool /*copy*/) {
        scratch_.assign(str, length);
        if (scrubber_.scrubInPlace(scratch_)) {
            return writer_.String(scratch_.data(),
                                  static_cast<rapidjson::SizeType>(scratch_.size()));
        }
        return writer_.RawValue(str, length, rapidjson::kNumberType);
    }
    bool String(const char* str, rapidjson::SizeType length, bool /*copy*/) {
        scratch_.assign(str, length);
        scrubber_.scrubInPlace(scratch_);
        return writer_.String(scratch_.data(), static_cast<rapidjson::SizeType>(scratch_.size()));
    }
    bool Key(const char* str, rapidjson::SizeType length, bool /*copy*/) {
        scratch_.assign(str, length);
        scrubber_.scrubInPlace(scratch_);
        return writer_.Key(scratch_.data(), static_cast<rapidjson::SizeType>(scratch_.size()));
    }
    bool StartObject() { return writer_.StartObject(); }
    bool EndObject(rapidjson::SizeType count) { return writer_.EndObject(count); }
    bool StartArray() { return writer_.StartArray(); }
    bool EndArray(rapidjson::SizeType count) { return writer_.EndArray(count); }

private:
    const SecretScrubber& scrubber_;
    Writer& writer_;
    std::string scratch_;
};
// NOLINTEND(readability-identifier-naming)

}  // namespace

SecretScrubber::SecretScrubber(std::vector<std::string> secrets) {
    std::vector<std::string> patterns;
    std::vector<std::string> encodable;
    for (std::string& secret : secrets) {
        if (secret.size() < kMinSecretLength) {
            continue;
        }
        std::vector<std::string> forms = base64Forms(secret);
        forms.push_back(std::move(secret));
        for (std::string& form : forms) {
            for (std::string& escaped : escapedForms(form)) {
                if (escaped == form) {
                    continue;
                }
                // Escaped twice: JSON text holding the secret, kept in a JSON string (an error
                // message quoting the auth JSON, inside a result).
                for (std::string& twice : escapedForms(escaped)) {
                    patterns.push_back(std::move(twice));
                }
                patterns.push_back(std::move(escaped));
            }
            patterns.push_back(form);
            encodable.push_back(std::move(form));
        }
    }
    if (patterns.empty()) {
        return;
    }
    std::sort(patterns.begin(), patterns.end(), [](const std::string& a, const std::string& b) {
        return a.size() != b.size() ? a.size() > b.size() : a < b;
    });
    patterns.erase(std::unique(patterns.begin(), patterns.end()), patterns.end());
    std::sort(encodable.begin(), encodable.end());
    encodable.erase(std::unique(encodable.begin(), encodable.end()), encodable.end());
    patterns_ =
        std::make_shared<const Patterns>(Patterns{std::move(patterns), std::move(encodable)});
}

std::vector<std::pair<std::size_t, std::size_t>> SecretScrubber::find(std::string_view text) const {
    std::vector<std::pair<std::size_t, std::size_t>> spans;
    for (const std::string& pattern : patterns_->literal) {
        // Step by one: occurrences of one pattern may overlap ("aaaa" in "aaaaa").
        for (std::size_t at = text.find(pattern); at != std::string_view::npos;
             at = text.find(pattern, at + 1)) {
            spans.emplace_back(at, at + pattern.size());
        }
    }
    for (const std::string& secret : patterns_->encodable) {
        findPercentEncoded(text, secret, spans);
    }
    if (spans.size() < 2) {
        return spans;
    }
    std::sort(spans.begin(), spans.end());
    std::size_t merged = 0;
    for (std::size_t i = 1; i < spans.size(); ++i) {
        if (spans[i].first < spans[merged].second) {
            spans[merged].second = std::max(spans[merged].second, spans[i].second);
        } else {
            spans[++merged] = spans[i];
        }
    }
    spans.resize(merged + 1);
    return spans;
}

bool SecretScrubber::scrubInPlace(std::string& text) const {
    if (empty()) {
        return false;
    }
    const std::vector<std::pair<std::size_t, std::size_t>> spans = find(text);
    if (spans.empty()) {
        return false;
    }
    std::string out;
    out.reserve(text.size() + spans.size() * kMarker.size());
    std::size_t pos = 0;
    for (const auto& [begin, end] : spans) {
        out.append(text, pos, begin - pos);
        out += kMarker;
        pos = end;
    }
    out.append(text, pos);
    text = std::move(out);
    return true;
}

std::string SecretScrubber::scrub(std::string_view text) const {
    std::string out(text);
    scrubInPlace(out);
    return out;
}

std::string SecretScrubber::scrubJson(std::string_view json) const {
    if (empty() || find(json).empty()) {
        return std::string(json);
    }
    // A secret occurs: rewrite the text value by value, so that a replacement can neither split
    // an escape sequence nor reach across the structure.
    rapidjson::StringBuffer buffer;
    ScrubbingHandler::Writer writer(buffer);
    ScrubbingHandler handler(*this, writer);
    rapidjson::MemoryStream stream(json.data(), json.size());
    rapidjson::Reader reader;
    constexpr unsigned kFlags = rapidjson::kParseIterativeFlag |
                                rapidjson::kParseNumbersAsStringsFlag |
                                rapidjson::kParseValidateEncodingFlag;
    const rapidjson::ParseResult parsed = reader.Parse<kFlags>(stream, handler);
    if (parsed.IsError() || stream.Tell() != json.size()) {
        return scrub(json);
    }
    return {buffer.GetString(), buffer.GetSize()};
}

}  // namespace crank::runtime
