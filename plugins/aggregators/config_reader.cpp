#include "config_reader.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <utility>

#include <rapidjson/error/en.h>

#include "aggregate_error.h"
#include "crank/sdk/path.hpp"

namespace crank::aggregators {

namespace {

std::string quoted(std::string_view text) {
    std::string out = "\"";
    out.append(text.substr(0, 64));
    if (text.size() > 64) {
        out.append("...");
    }
    out.push_back('"');
    return out;
}

std::string describe(const rapidjson::Value& value) {
    switch (value.GetType()) {
        case rapidjson::kNullType:
            return "null";
        case rapidjson::kFalseType:
        case rapidjson::kTrueType:
            return "a boolean";
        case rapidjson::kObjectType:
            return "an object";
        case rapidjson::kArrayType:
            return "an array";
        case rapidjson::kStringType:
            return "the string " +
                   quoted(std::string_view(value.GetString(), value.GetStringLength()));
        case rapidjson::kNumberType:
            if (value.IsInt64()) {
                return std::to_string(value.GetInt64());
            }
            {
                char buffer[32];
                auto result = std::to_chars(buffer, buffer + sizeof buffer, value.GetDouble());
                return std::string(buffer, result.ptr);
            }
    }
    return "a value";
}

/// The integer a JSON number stands for (10 and 10.0 alike), if it is one.
std::optional<std::int64_t> asInteger(const rapidjson::Value& value) {
    if (value.IsInt64()) {
        return value.GetInt64();
    }
    if (value.IsDouble()) {
        const double number = value.GetDouble();
        if (std::trunc(number) == number && std::fabs(number) < 9.0e18) {
            return static_cast<std::int64_t>(number);
        }
    }
    return std::nullopt;
}

/// `name` as one segment of the path syntax ("." "*" "\\" escaped).
std::string pathSegment(std::string_view name) {
    std::string out;
    for (char c : name) {
        if (c == '.' || c == '*' || c == '\\') {
            out.push_back('\\');
        }
        out.push_back(c);
    }
    return out;
}

}  // namespace

ConfigReader::ConfigReader(std::string_view config_json) {
    if (config_json.find_first_not_of(" \t\r\n") == std::string_view::npos) {
        document_.SetObject();
        is_object_ = true;
        return;
    }
    document_.Parse(config_json.data(), config_json.size());
    if (document_.HasParseError()) {
        problems_.push_back({"", std::string("the config is not valid JSON: ") +
                                     rapidjson::GetParseError_En(document_.GetParseError())});
        return;
    }
    if (!document_.IsObject()) {
        problems_.push_back({"", "the config must be an object, got " + describe(document_)});
        return;
    }
    is_object_ = true;
}

const rapidjson::Value* ConfigReader::get(std::string_view key) {
    known_.emplace_back(key);
    if (!is_object_) {
        return nullptr;
    }
    const rapidjson::Value& root = document_;
    for (const auto& member : root.GetObject()) {
        if (std::string_view(member.name.GetString(), member.name.GetStringLength()) == key) {
            return &member.value;
        }
    }
    return nullptr;
}

void ConfigReader::problem(std::string path, std::string message) {
    problems_.push_back({std::move(path), std::move(message)});
}

std::int64_t ConfigReader::integer(std::string_view key, std::int64_t fallback, std::int64_t min,
                                   std::int64_t max) {
    const rapidjson::Value* value = get(key);
    if (value == nullptr) {
        return fallback;
    }
    auto integer = asInteger(*value);
    if (!integer || *integer < min || *integer > max) {
        problem(std::string(key), "must be an integer from " + std::to_string(min) + " to " +
                                      std::to_string(max) + ", got " + describe(*value));
        return fallback;
    }
    return *integer;
}

std::optional<std::int64_t> ConfigReader::optionalInteger(std::string_view key) {
    const rapidjson::Value* value = get(key);
    if (value == nullptr) {
        return std::nullopt;
    }
    auto integer = asInteger(*value);
    if (!integer) {
        problem(std::string(key), "must be an integer, got " + describe(*value));
    }
    return integer;
}

double ConfigReader::number(std::string_view key, double fallback, double min, double max) {
    const rapidjson::Value* value = get(key);
    if (value == nullptr) {
        return fallback;
    }
    if (!value->IsNumber() || value->GetDouble() < min || value->GetDouble() > max) {
        problem(std::string(key), "must be a number from " + std::to_string(min) + " to " +
                                      std::to_string(max) + ", got " + describe(*value));
        return fallback;
    }
    return value->GetDouble();
}

bool ConfigReader::boolean(std::string_view key, bool fallback) {
    const rapidjson::Value* value = get(key);
    if (value == nullptr) {
        return fallback;
    }
    if (!value->IsBool()) {
        problem(std::string(key), "must be true or false, got " + describe(*value));
        return fallback;
    }
    return value->GetBool();
}

std::string ConfigReader::enumeration(std::string_view key, std::string_view fallback,
                                      std::initializer_list<std::string_view> allowed) {
    const rapidjson::Value* value = get(key);
    if (value == nullptr) {
        return std::string(fallback);
    }
    if (value->IsString()) {
        const std::string_view text(value->GetString(), value->GetStringLength());
        if (std::find(allowed.begin(), allowed.end(), text) != allowed.end()) {
            return std::string(text);
        }
    }
    std::string list;
    for (std::string_view option : allowed) {
        list += list.empty() ? "" : ", ";
        list += quoted(option);
    }
    problem(std::string(key), "must be one of " + list + ", got " + describe(*value));
    return std::string(fallback);
}

std::optional<CompiledPath> ConfigReader::pathAt(const rapidjson::Value& value,
                                                 const std::string& where) {
    if (!value.IsString()) {
        problem(where, "must be a path string, got " + describe(value));
        return std::nullopt;
    }
    const std::string_view text(value.GetString(), value.GetStringLength());
    if (text.size() > 1024) {
        problem(where, "a path may be at most 1024 bytes long");
        return std::nullopt;
    }
    sdk::PathError error;
    auto path = sdk::parsePath(text, &error);
    if (!path) {
        problem(where, "invalid path " + quoted(text) + " at offset " +
                           std::to_string(error.offset) + ": " + error.message);
        return std::nullopt;
    }
    return CompiledPath(std::string(text), *path);
}

std::optional<CompiledPath> ConfigReader::optionalPath(std::string_view key) {
    const rapidjson::Value* value = get(key);
    if (value == nullptr) {
        return std::nullopt;
    }
    return pathAt(*value, std::string(key));
}

std::vector<CompiledPath> ConfigReader::paths(std::string_view key, std::size_t max_count) {
    std::vector<CompiledPath> out;
    const rapidjson::Value* value = get(key);
    if (value == nullptr) {
        return out;
    }
    if (!value->IsArray()) {
        problem(std::string(key), "must be an array of path strings, got " + describe(*value));
        return out;
    }
    if (value->Size() > max_count) {
        problem(std::string(key), "at most " + std::to_string(max_count) + " paths, got " +
                                      std::to_string(value->Size()));
        return out;
    }
    for (rapidjson::SizeType i = 0; i < value->Size(); ++i) {
        const std::string where = std::string(key) + "." + std::to_string(i);
        auto path = pathAt((*value)[i], where);
        if (!path) {
            continue;
        }
        const bool duplicate = std::any_of(out.begin(), out.end(), [&](const CompiledPath& p) {
            return p.text() == path->text();
        });
        if (duplicate) {
            problem(where, "the path " + quoted(path->text()) + " is listed twice");
            continue;
        }
        out.push_back(std::move(*path));
    }
    return out;
}

const std::vector<ConfigProblem>& ConfigReader::finish() {
    if (is_object_) {
        const rapidjson::Value& root = document_;
        for (const auto& member : root.GetObject()) {
            const std::string_view name(member.name.GetString(), member.name.GetStringLength());
            if (std::find(known_.begin(), known_.end(), name) == known_.end()) {
                std::string list;
                for (const std::string& known : known_) {
                    list += list.empty() ? "" : ", ";
                    list += known;
                }
                problem(pathSegment(name), "unknown member (known: " + list + ")");
            }
        }
        is_object_ = false;  // report once
    }
    return problems_;
}

void ConfigReader::throwIfInvalid() {
    const std::vector<ConfigProblem>& problems = finish();
    if (!problems.empty()) {
        const ConfigProblem& first = problems.front();
        throw AggregateError(AggregateError::Kind::invalid_config,
                             first.path.empty() ? first.message : first.path + ": " + first.message,
                             first.path);
    }
}

}  // namespace crank::aggregators
