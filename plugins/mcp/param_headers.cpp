#include "param_headers.h"

#include <algorithm>
#include <cstdint>
#include <utility>

#include "http_wire.h"
#include <crank/sdk/base64.hpp>
#include <crank/sdk/json.hpp>

namespace crank::mcpc {
namespace {

constexpr std::string_view kBase64Prefix = "=?base64?";
constexpr std::string_view kBase64Suffix = "?=";
constexpr std::int64_t kMaxSafeInteger = (std::int64_t{1} << 53) - 1;
/// Schema nesting followed at most (a server's schema is parsed at most 256 deep anyway).
constexpr int kMaxDepth = 64;
/// A tool's annotations at most, a header name's length, and a property name's on the path of
/// one: a hostile schema cannot make the headers (or their index) large.
constexpr std::size_t kMaxAnnotations = 64;
constexpr std::size_t kMaxHeaderName = 64;
constexpr std::size_t kMaxPathSegment = 256;
/// The most of a schema location a message quotes.
constexpr std::size_t kMaxWhere = 200;

/// The JSON pointer of `at`, at most about kMaxWhere bytes (then "...").
std::string pointer(const std::vector<std::string>& at) {
    std::string out;
    for (const std::string& part : at) {
        out += '/';
        out.append(part, 0, kMaxWhere);
        if (out.size() > kMaxWhere) {
            out.resize(kMaxWhere);
            while (!out.empty() && (static_cast<unsigned char>(out.back()) & 0xC0U) == 0x80U) {
                out.pop_back();  // not in the middle of a character
            }
            if (!out.empty() && static_cast<unsigned char>(out.back()) >= 0xC0U) {
                out.pop_back();
            }
            return out + "...";
        }
    }
    return out.empty() ? "/" : out;
}

bool primitiveType(const rapidjson::Value& type) {
    const auto one = [](const rapidjson::Value& t) {
        if (!t.IsString()) {
            return false;
        }
        const std::string_view name(t.GetString(), t.GetStringLength());
        return name == "string" || name == "integer" || name == "boolean";
    };
    if (one(type)) {
        return true;
    }
    if (!type.IsArray() || type.Empty()) {
        return false;
    }
    bool any = false;
    for (const rapidjson::Value& t : type.GetArray()) {
        if (t.IsString() && std::string_view(t.GetString(), t.GetStringLength()) == "null") {
            continue;
        }
        if (!one(t)) {
            return false;
        }
        any = true;
    }
    return any;
}

class Reader {
public:
    explicit Reader(std::string& why) : why_(why) {}

    /// Walks `schema` at `at`; `path` holds the property names when every step so far was
    /// `properties/NAME` (else it is empty and `reachable` false).
    bool walk(const rapidjson::Value& schema, std::vector<std::string>& at,
              std::vector<std::string>& path, bool reachable, int depth) {
        if (depth > kMaxDepth) {
            return true;  // deeper than any annotation a client follows: ignored
        }
        if (schema.IsArray()) {
            for (rapidjson::SizeType i = 0; i < schema.Size(); ++i) {
                at.push_back(std::to_string(i));
                const bool ok = walk(schema[i], at, path, false, depth + 1);
                at.pop_back();
                if (!ok) {
                    return false;
                }
            }
            return true;
        }
        if (!schema.IsObject()) {
            return true;
        }
        if (schema.HasMember("x-mcp-header") && !annotation(schema, at, path, reachable)) {
            return false;
        }
        for (auto m = schema.MemberBegin(); m != schema.MemberEnd(); ++m) {
            const std::string key(m->name.GetString(), m->name.GetStringLength());
            at.push_back(key);
            bool ok = true;
            if (key == "properties" && m->value.IsObject()) {
                for (auto p = m->value.MemberBegin(); p != m->value.MemberEnd() && ok; ++p) {
                    const std::string name(p->name.GetString(), p->name.GetStringLength());
                    at.push_back(name);
                    path.push_back(name);
                    ok = walk(p->value, at, path, reachable, depth + 1);
                    path.pop_back();
                    at.pop_back();
                }
            } else if (key != "x-mcp-header" && (m->value.IsObject() || m->value.IsArray())) {
                std::vector<std::string> none;
                ok = walk(m->value, at, none, false, depth + 1);
            }
            at.pop_back();
            if (!ok) {
                return false;
            }
        }
        return true;
    }

    std::vector<MirroredParam> take() { return std::move(params_); }

private:
    bool annotation(const rapidjson::Value& schema, const std::vector<std::string>& at,
                    const std::vector<std::string>& path, bool reachable) {
        // The location is written only into a refusal's message.
        const auto where = [&at] { return "the x-mcp-header of " + pointer(at); };
        const rapidjson::Value& declared = schema["x-mcp-header"];
        if (!reachable || path.empty()) {
            why_ = where() + " is not on a property reached through `properties` only";
            return false;
        }
        if (!declared.IsString() || declared.GetStringLength() == 0) {
            why_ = where() + " must be a non-empty string";
            return false;
        }
        const std::string_view name(declared.GetString(), declared.GetStringLength());
        if (name.size() > kMaxHeaderName) {
            why_ = where() + " is longer than " + std::to_string(kMaxHeaderName) + " bytes";
            return false;
        }
        if (!isHttpToken(name)) {
            why_ = where() + " (" + sdk::jsonQuote(name) +
                   ") must be an HTTP token: no space, colon, control or non-ASCII character";
            return false;
        }
        if (!schema.HasMember("type") || !primitiveType(schema["type"])) {
            why_ = where() + " is on a property whose type is not string, integer or boolean";
            return false;
        }
        if (std::any_of(path.begin(), path.end(), [](const std::string& segment) {
                return segment.size() > kMaxPathSegment;
            })) {
            why_ = where() + " is on a property whose name (or a parent's) is longer than " +
                   std::to_string(kMaxPathSegment) + " bytes";
            return false;
        }
        if (params_.size() == kMaxAnnotations) {
            why_ = where() + ": the tool declares more than " + std::to_string(kMaxAnnotations) +
                   " x-mcp-header annotations";
            return false;
        }
        const std::string folded = asciiLower(name);
        if (std::find(seen_.begin(), seen_.end(), folded) != seen_.end()) {
            why_ =
                where() + " (" + sdk::jsonQuote(name) + ") is declared twice (case-insensitively)";
            return false;
        }
        seen_.push_back(folded);
        params_.push_back(MirroredParam{path, "Mcp-Param-" + std::string(name)});
        return true;
    }

    std::string& why_;
    std::vector<std::string> seen_;
    std::vector<MirroredParam> params_;
};

}  // namespace

std::optional<std::vector<MirroredParam>> readMirroredParams(const rapidjson::Value& input_schema,
                                                             std::string& why) {
    Reader reader(why);
    std::vector<std::string> at;
    std::vector<std::string> path;
    if (!reader.walk(input_schema, at, path, true, 0)) {
        return std::nullopt;
    }
    return reader.take();
}

std::string headerText(std::string_view text) {
    bool encode = !text.empty() && (text.front() == ' ' || text.back() == ' ');
    for (const char c : text) {
        const auto b = static_cast<unsigned char>(c);
        encode = encode || b < 0x20 || b > 0x7E;
    }
    encode = encode || (text.size() >= kBase64Prefix.size() + kBase64Suffix.size() &&
                        text.substr(0, kBase64Prefix.size()) == kBase64Prefix &&
                        text.substr(text.size() - kBase64Suffix.size()) == kBase64Suffix);
    if (!encode) {
        return std::string(text);
    }
    return std::string(kBase64Prefix) + sdk::base64(text) + std::string(kBase64Suffix);
}

std::optional<std::string> paramHeaderValue(const rapidjson::Value& value) {
    if (value.IsString()) {
        return headerText(std::string_view(value.GetString(), value.GetStringLength()));
    }
    if (value.IsBool()) {
        return std::string(value.GetBool() ? "true" : "false");
    }
    if (value.IsInt64() && value.GetInt64() <= kMaxSafeInteger &&
        value.GetInt64() >= -kMaxSafeInteger) {
        return std::to_string(value.GetInt64());
    }
    return std::nullopt;
}

void appendParamHeaders(const std::vector<MirroredParam>& params, const rapidjson::Value& arguments,
                        sdk::http::HeaderList& out) {
    for (const MirroredParam& param : params) {
        const rapidjson::Value* value = &arguments;
        for (const std::string& name : param.path) {
            if (!value->IsObject()) {
                value = nullptr;
                break;
            }
            const auto member = value->FindMember(
                rapidjson::StringRef(name.data(), static_cast<rapidjson::SizeType>(name.size())));
            if (member == value->MemberEnd()) {
                value = nullptr;
                break;
            }
            value = &member->value;
        }
        if (value == nullptr) {
            continue;
        }
        if (std::optional<std::string> text = paramHeaderValue(*value)) {
            out.emplace_back(param.header, std::move(*text));
        }
    }
}

}  // namespace crank::mcpc
