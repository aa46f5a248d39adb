#pragma once

// Internal to host/config: typed, path-aware reading of a RapidJSON tree that reports every
// problem into ConfigErrors instead of stopping at the first one. Not part of the config API.

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <rapidjson/document.h>

#include "config/config_error.h"

namespace crank::config::detail {

using Json = rapidjson::Value;

/// `parent.key`, or `parent["odd key"]` when the key is not a plain identifier.
std::string memberPath(const std::string& parent, std::string_view key);
/// `parent[index]`
std::string indexPath(const std::string& parent, std::size_t index);
/// A short human description of a value for "got ..." (strings quoted and cut at 40 characters).
std::string describe(const Json& value);
/// A string for "got ...": quoted, control characters escaped, cut at 40 bytes (on a UTF-8
/// character boundary), so that hostile text never reaches a message raw or whole.
std::string describeString(std::string_view text);
/// Compact JSON text of a value.
std::string toJsonText(const Json& value);

/// Reads one JSON object. Every getter marks its key as known; finish() reports the keys that no
/// getter asked for, with "did you mean" when one is close to a known key.
class ObjectReader {
public:
    /// `value` may be null (the object was absent): getters then return their defaults.
    /// A value that is not an object is reported once, here.
    ObjectReader(const Json* value, std::string path, ConfigErrors& errors);
    ObjectReader(const ObjectReader&) = delete;
    ObjectReader& operator=(const ObjectReader&) = delete;

    bool present() const { return object_ != nullptr; }
    const std::string& path() const { return path_; }
    std::string pathOf(std::string_view key) const { return memberPath(path_, key); }
    ConfigErrors& errors() { return errors_; }

    /// The raw member, or null when absent. Marks the key as known.
    const Json* get(std::string_view key);
    /// Marks keys as known without reading them (read elsewhere, or accepted and ignored).
    void allow(std::initializer_list<std::string_view> keys);

    std::optional<std::string> optionalString(std::string_view key, std::size_t maxLength = 4096);
    std::string requiredString(std::string_view key, std::size_t maxLength = 4096);
    bool boolean(std::string_view key, bool fallback);
    /// An integer within [min, max].
    std::int64_t integer(std::string_view key, std::int64_t fallback, std::int64_t min,
                         std::int64_t max);
    /// An integer within [1, max]: "expected a positive integer, got -5".
    std::int64_t positiveInteger(std::string_view key, std::int64_t fallback, std::int64_t max);
    double number(std::string_view key, double fallback, double min, double max);
    /// Checks one entry of a string array: nullopt when it is fine, else what was expected.
    using EntryCheck = std::function<std::optional<std::string>(const std::string&)>;
    /// Non-empty strings. `check` validates each one; errors name the entry's index in the file,
    /// and entries with errors are left out of the result.
    std::vector<std::string> stringArray(std::string_view key, std::size_t maxItems = 1024,
                                         const EntryCheck& check = {});

    /// One of a fixed set of names.
    template <typename E>
    E enumeration(std::string_view key, E fallback,
                  std::span<const std::pair<std::string_view, E>> choices) {
        const Json* v = get(key);
        if (v == nullptr) {
            return fallback;
        }
        if (v->IsString()) {
            const std::string_view s(v->GetString(), v->GetStringLength());
            for (const auto& [name, value] : choices) {
                if (name == s) {
                    return value;
                }
            }
        }
        std::vector<std::string_view> names;
        for (const auto& choice : choices) {
            names.push_back(choice.first);
        }
        reportChoice(key, *v, names);
        return fallback;
    }

    /// Reports unknown keys. Call once, after every getter.
    void finish();

private:
    void reportChoice(std::string_view key, const Json& got,
                      std::span<const std::string_view> names);

    const Json* object_ = nullptr;
    std::string path_;
    ConfigErrors& errors_;
    std::vector<std::string_view> known_;
};

}  // namespace crank::config::detail
