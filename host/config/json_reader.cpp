#include "config/json_reader.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <set>

#include <fmt/core.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "json/json_text.h"
#include "util/suggest.h"

namespace crank::config::detail {
namespace {

bool isIdentifier(std::string_view key) {
    if (key.empty() || (std::isdigit(static_cast<unsigned char>(key.front())) != 0)) {
        return false;
    }
    return std::all_of(key.begin(), key.end(), [](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_' || c == '-';
    });
}

std::string quote(std::string_view text) {
    std::string out = "\"";
    for (char c : text) {
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
    return out;
}

std::string_view keyOf(const Json& name) {
    return {name.GetString(), name.GetStringLength()};
}

}  // namespace

std::string memberPath(const std::string& parent, std::string_view key) {
    if (isIdentifier(key)) {
        return parent.empty() ? std::string(key) : parent + "." + std::string(key);
    }
    return parent + "[" + quote(key) + "]";
}

std::string indexPath(const std::string& parent, std::size_t index) {
    return parent + "[" + std::to_string(index) + "]";
}

std::string describe(const Json& value) {
    switch (value.GetType()) {
        case rapidjson::kNullType:
        case rapidjson::kFalseType:
        case rapidjson::kTrueType:
        case rapidjson::kObjectType:
        case rapidjson::kArrayType:
            return std::string(json::describeType(value));
        case rapidjson::kStringType:
            return describeString({value.GetString(), value.GetStringLength()});
        case rapidjson::kNumberType: {
            if (value.IsInt64()) {
                return std::to_string(value.GetInt64());
            }
            if (value.IsUint64()) {
                return std::to_string(value.GetUint64());
            }
            // fmt prints 5.0 as "5": keep the decimal point, or "expected an integer, got 5"
            // contradicts itself.
            std::string text = fmt::format("{}", value.GetDouble());
            if (text.find_first_of(".e") == std::string::npos) {
                text += ".0";
            }
            return text;
        }
    }
    return "a value";
}

std::string describeString(std::string_view text) {
    constexpr std::size_t kMax = 40;
    if (text.size() <= kMax) {
        return quote(text);
    }
    std::size_t cut = kMax;
    while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0U) == 0x80U) {
        --cut;  // do not split a UTF-8 sequence
    }
    return quote(text.substr(0, cut)) + "...";
}

std::string toJsonText(const Json& value) {
    rapidjson::StringBuffer buffer;
    rapidjson::Writer<rapidjson::StringBuffer> writer(buffer);
    value.Accept(writer);
    return {buffer.GetString(), buffer.GetSize()};
}

ObjectReader::ObjectReader(const Json* value, std::string path, ConfigErrors& errors)
    : path_(std::move(path)), errors_(errors) {
    if (value == nullptr) {
        return;
    }
    if (!value->IsObject()) {
        errors_.add(path_.empty() ? "(root)" : path_,
                    "expected an object, got " + describe(*value));
        return;
    }
    object_ = value;
    // RapidJSON keeps duplicate keys; a config with two values for one key is ambiguous.
    std::set<std::string_view> seen;
    for (const auto& member : value->GetObject()) {
        if (!seen.insert(keyOf(member.name)).second) {
            errors_.add(pathOf(keyOf(member.name)), "duplicate key");
        }
    }
}

const Json* ObjectReader::get(std::string_view key) {
    known_.push_back(key);
    if (object_ == nullptr) {
        return nullptr;
    }
    const auto it =
        object_->FindMember(rapidjson::Value(rapidjson::StringRef(key.data(), key.size())));
    return it == object_->MemberEnd() ? nullptr : &it->value;
}

void ObjectReader::allow(std::initializer_list<std::string_view> keys) {
    known_.insert(known_.end(), keys.begin(), keys.end());
}

std::optional<std::string> ObjectReader::optionalString(std::string_view key,
                                                        std::size_t maxLength) {
    const Json* v = get(key);
    if (v == nullptr) {
        return std::nullopt;
    }
    if (!v->IsString()) {
        errors_.add(pathOf(key), "expected a string, got " + describe(*v));
        return std::nullopt;
    }
    if (v->GetStringLength() > maxLength) {
        errors_.add(pathOf(key), fmt::format("must be at most {} characters long, got {}",
                                             maxLength, v->GetStringLength()));
        return std::nullopt;
    }
    return std::string(v->GetString(), v->GetStringLength());
}

std::string ObjectReader::requiredString(std::string_view key, std::size_t maxLength) {
    if (present() && get(key) == nullptr) {
        errors_.add(pathOf(key), "is required (a non-empty string)");
        return {};
    }
    auto s = optionalString(key, maxLength);
    if (s && s->empty()) {
        errors_.add(pathOf(key), "must not be empty");
    }
    return s.value_or("");
}

bool ObjectReader::boolean(std::string_view key, bool fallback) {
    const Json* v = get(key);
    if (v == nullptr) {
        return fallback;
    }
    if (!v->IsBool()) {
        errors_.add(pathOf(key), "expected true or false, got " + describe(*v));
        return fallback;
    }
    return v->GetBool();
}

std::int64_t ObjectReader::integer(std::string_view key, std::int64_t fallback, std::int64_t min,
                                   std::int64_t max) {
    const Json* v = get(key);
    if (v == nullptr) {
        return fallback;
    }
    if (!v->IsInt64() || v->GetInt64() < min || v->GetInt64() > max) {
        errors_.add(pathOf(key), fmt::format("expected an integer from {} to {}, got {}", min, max,
                                             describe(*v)));
        return fallback;
    }
    return v->GetInt64();
}

std::int64_t ObjectReader::positiveInteger(std::string_view key, std::int64_t fallback,
                                           std::int64_t max) {
    const Json* v = get(key);
    if (v == nullptr) {
        return fallback;
    }
    if (!v->IsInt64() || v->GetInt64() < 1) {
        errors_.add(pathOf(key), "expected a positive integer, got " + describe(*v));
        return fallback;
    }
    if (v->GetInt64() > max) {
        errors_.add(pathOf(key), fmt::format("must be at most {}, got {}", max, v->GetInt64()));
        return fallback;
    }
    return v->GetInt64();
}

double ObjectReader::number(std::string_view key, double fallback, double min, double max) {
    const Json* v = get(key);
    if (v == nullptr) {
        return fallback;
    }
    if (!v->IsNumber() || !std::isfinite(v->GetDouble()) || v->GetDouble() < min ||
        v->GetDouble() > max) {
        errors_.add(pathOf(key),
                    fmt::format("expected a number from {} to {}, got {}", min, max, describe(*v)));
        return fallback;
    }
    return v->GetDouble();
}

std::vector<std::string> ObjectReader::stringArray(std::string_view key, std::size_t maxItems,
                                                   const EntryCheck& check) {
    std::vector<std::string> out;
    const Json* v = get(key);
    if (v == nullptr) {
        return out;
    }
    if (!v->IsArray()) {
        errors_.add(pathOf(key), "expected an array of strings, got " + describe(*v));
        return out;
    }
    if (v->Size() > maxItems) {
        errors_.add(pathOf(key),
                    fmt::format("must have at most {} entries, got {}", maxItems, v->Size()));
        return out;
    }
    for (rapidjson::SizeType i = 0; i < v->Size(); ++i) {
        const Json& item = (*v)[i];
        if (!item.IsString() || item.GetStringLength() == 0) {
            errors_.add(indexPath(pathOf(key), i),
                        "expected a non-empty string, got " + describe(item));
            continue;
        }
        std::string entry(item.GetString(), item.GetStringLength());
        if (check) {
            if (auto problem = check(entry)) {
                errors_.add(indexPath(pathOf(key), i), *problem);
                continue;
            }
        }
        out.push_back(std::move(entry));
    }
    return out;
}

void ObjectReader::reportChoice(std::string_view key, const Json& got,
                                std::span<const std::string_view> names) {
    std::string list;
    for (std::size_t i = 0; i < names.size(); ++i) {
        list += (i == 0 ? "" : (i + 1 == names.size() ? " or " : ", ")) + quote(names[i]);
    }
    std::string message = "expected " + list + ", got " + describe(got);
    if (got.IsString()) {
        if (auto close = closestMatch({got.GetString(), got.GetStringLength()}, names)) {
            message += " (did you mean " + quote(*close) + "?)";
        }
    }
    errors_.add(pathOf(key), message);
}

void ObjectReader::finish() {
    if (object_ == nullptr) {
        return;
    }
    for (const auto& member : object_->GetObject()) {
        const std::string_view key = keyOf(member.name);
        if (std::find(known_.begin(), known_.end(), key) != known_.end()) {
            continue;
        }
        std::string message = "unknown key";
        if (auto close = closestMatch(key, known_)) {
            message += " (did you mean " + quote(*close) + "?)";
        }
        errors_.add(pathOf(key), message);
    }
}

}  // namespace crank::config::detail
