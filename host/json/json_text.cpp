#include "json/json_text.h"

#include <fmt/core.h>
#include <rapidjson/document.h>
#include <rapidjson/writer.h>

// Their string scans write and read the control characters 0x1A-0x1F wrongly (CMakeLists.txt).
#if defined(RAPIDJSON_SSE2) || defined(RAPIDJSON_SSE42)
#error "RapidJSON 1.1.0's SIMD string scans mishandle control characters: leave them off"
#endif

namespace crank::json {
namespace {

// NOLINTBEGIN(readability-identifier-naming): RapidJSON's stream concept
/// A RapidJSON output stream appending to a std::string.
class StringOutput {
public:
    using Ch = char;
    explicit StringOutput(std::string& out) : out_(out) {}
    void Put(char c) { out_.push_back(c); }
    void Flush() {}

private:
    std::string& out_;
};
// NOLINTEND(readability-identifier-naming)

constexpr std::size_t describe_max_bytes = 40;

}  // namespace

void appendJsonText(std::string& out, const Value& value) {
    StringOutput stream(out);
    rapidjson::Writer<StringOutput> writer(stream);
    value.Accept(writer);
}

std::string toJsonText(const Value& value) {
    std::string out;
    appendJsonText(out, value);
    return out;
}

std::string describeText(std::string_view text) {
    std::string out = "\"";
    std::size_t end = text.size();
    bool cut = false;
    if (end > describe_max_bytes) {
        end = describe_max_bytes;
        // back off to the start of a UTF-8 character
        while (end > 0 && (static_cast<unsigned char>(text[end]) & 0xC0U) == 0x80U) {
            --end;
        }
        cut = true;
    }
    for (char c : text.substr(0, end)) {
        if (c == '"' || c == '\\') {
            out.push_back('\\');
            out.push_back(c);
        } else if (static_cast<unsigned char>(c) < 0x20) {
            out += fmt::format("\\u{:04x}", static_cast<unsigned>(c));
        } else {
            out.push_back(c);
        }
    }
    out.push_back('"');
    if (cut) {
        out += "...";
    }
    return out;
}

std::string describeValue(const Value& value) {
    if (value.IsString()) {
        return describeText({value.GetString(), value.GetStringLength()});
    }
    if (value.IsNumber()) {
        return toJsonText(value);
    }
    return std::string(describeType(value));
}

std::string_view describeType(const Value& value) {
    switch (value.GetType()) {
        case rapidjson::kNullType:
            return "null";
        case rapidjson::kFalseType:
            return "false";
        case rapidjson::kTrueType:
            return "true";
        case rapidjson::kObjectType:
            return "an object";
        case rapidjson::kArrayType:
            return "an array";
        case rapidjson::kStringType:
            return "a string";
        case rapidjson::kNumberType:
            return "a number";
    }
    return "?";
}

void appendPlainText(std::string& out, const Value& value) {
    if (value.IsString()) {
        out.append(value.GetString(), value.GetStringLength());
    } else if (!value.IsNull()) {
        appendJsonText(out, value);
    }
}

}  // namespace crank::json
