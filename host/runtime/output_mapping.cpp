#include "runtime/output_mapping.h"

#include <fmt/core.h>
#include <rapidjson/document.h>

#include "json/json_path.h"
#include "json/json_text.h"

namespace crank::runtime {
namespace {

constexpr std::string_view response_name = "response";

Error responseError(std::string_view key, std::string_view path_text, std::string_view problem) {
    return Error{ErrorCode::invalid_argument, fmt::format("{}: {} {} {}", response_name, key,
                                                          json::describeText(path_text), problem)};
}

/// A string as it is, a number as its JSON text; nullopt for null; an error for anything else.
Result<std::optional<std::string>> scalarText(const json::Value* v, std::string_view key,
                                              std::string_view path_text) {
    if (v == nullptr || v->IsNull()) {
        return std::optional<std::string>();
    }
    if (v->IsString()) {
        return std::optional<std::string>(std::string(v->GetString(), v->GetStringLength()));
    }
    if (v->IsNumber()) {
        return std::optional<std::string>(json::toJsonText(*v));
    }
    return responseError(
        key, path_text,
        fmt::format("must be a string or a number, got {}", json::describeType(*v)));
}

bool truthy(const json::Value& v) {
    switch (v.GetType()) {
        case rapidjson::kNullType:
        case rapidjson::kFalseType:
            return false;
        case rapidjson::kTrueType:
        case rapidjson::kObjectType:
        case rapidjson::kArrayType:
            return true;
        case rapidjson::kStringType:
            return v.GetStringLength() > 0;
        case rapidjson::kNumberType:
            return v.GetDouble() != 0.0;  // NaN cannot occur in parsed JSON
    }
    return false;
}

}  // namespace

Result<OutputMapping> OutputMapping::create(const config::ExecutionConfig& config,
                                            std::string_view where) {
    OutputMapping mapping;
    auto compile = [&](const std::optional<std::string>& text, std::string_view key,
                       std::optional<CompiledPath>& into) -> Result<void> {
        if (!text) {
            return {};
        }
        const std::string at = where.empty() ? std::string(key) : fmt::format("{}.{}", where, key);
        Result<sdk::Path> path = json::compilePath(*text, at);
        if (!path) {
            return path.error();
        }
        into = CompiledPath{*text, std::move(*path)};
        return {};
    };
    try {
        struct Entry {
            const std::optional<std::string>* text;
            std::string_view key;
            std::optional<CompiledPath>* into;
        };
        const Entry entries[] = {{&config.items_path, "items_path", &mapping.items_},
                                 {&config.summary_path, "summary_path", &mapping.summary_},
                                 {&config.cursor_path, "cursor_path", &mapping.cursor_},
                                 {&config.status_path, "status_path", &mapping.status_},
                                 {&config.done_path, "done_path", &mapping.done_}};
        for (const Entry& entry : entries) {
            Result<void> ok = compile(*entry.text, entry.key, *entry.into);
            if (!ok) {
                return ok.error();
            }
        }
    } catch (const std::exception& e) {
        return Error{ErrorCode::internal, fmt::format("{}: {}", where, e.what())};
    }
    return mapping;
}

Result<MappedResponse> OutputMapping::map(std::string_view response_json, std::size_t max_items,
                                          const json::ParseLimits& limits) const {
    try {
        json::Document doc;
        Result<void> parsed = json::parseJson(response_json, doc, response_name, limits);
        if (!parsed) {
            return parsed.error();
        }
        return map(doc, max_items);
    } catch (const std::exception& e) {
        return Error{ErrorCode::internal, fmt::format("{}: {}", response_name, e.what())};
    }
}

// NOLINTNEXTLINE(readability-function-cognitive-complexity)
Result<MappedResponse> OutputMapping::map(const json::Value& response,
                                          std::size_t max_items) const {
    try {
        MappedResponse mapped;
        auto addItem = [&](const json::Value& item) {
            ++mapped.items_total;
            if (mapped.items.size() < max_items) {
                mapped.items.push_back(json::toJsonText(item));
            } else {
                mapped.items_truncated = true;
            }
        };
        if (!items_) {
            addItem(response);
        } else if (items_->path.hasWildcard()) {
            json::forEach(response, items_->path, addItem);
        } else {
            const json::Value* array = json::find(response, items_->path);
            if (array == nullptr) {
                return responseError("items_path", items_->text, "matched nothing");
            }
            if (array->IsArray()) {
                for (auto it = array->Begin(); it != array->End(); ++it) {
                    addItem(*it);
                }
            } else if (!array->IsNull()) {
                return responseError(
                    "items_path", items_->text,
                    fmt::format("must be an array, got {}", json::describeType(*array)));
            }
        }
        if (summary_) {
            if (const json::Value* v = json::find(response, summary_->path)) {
                mapped.summary_json = json::toJsonText(*v);
            }
        }
        if (cursor_) {
            Result<std::optional<std::string>> text =
                scalarText(json::find(response, cursor_->path), "cursor_path", cursor_->text);
            if (!text) {
                return text.error();
            }
            mapped.cursor = std::move(*text);
        }
        if (status_) {
            Result<std::optional<std::string>> text =
                scalarText(json::find(response, status_->path), "status_path", status_->text);
            if (!text) {
                return text.error();
            }
            mapped.status = std::move(*text);
        }
        if (done_) {
            if (const json::Value* v = json::find(response, done_->path)) {
                mapped.done = truthy(*v);
            }
        }
        return mapped;
    } catch (const std::exception& e) {
        return Error{ErrorCode::internal, fmt::format("{}: {}", response_name, e.what())};
    }
}

}  // namespace crank::runtime
