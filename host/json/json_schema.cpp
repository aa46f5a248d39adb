#include "json/json_schema.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <optional>
#include <regex>
#include <unordered_map>
#include <utility>

#include <fmt/core.h>
#include <rapidjson/document.h>

#include "json/instance_path.h"
#include "json/json_parse.h"
#include "json/json_text.h"
#include "util/suggest.h"

namespace crank::json {
namespace {

// Type bits of the "type" keyword.
enum TypeBit : std::uint8_t {
    type_null = 1U << 0U,
    type_boolean = 1U << 1U,
    type_object = 1U << 2U,
    type_array = 1U << 3U,
    type_number = 1U << 4U,
    type_string = 1U << 5U,
    type_integer = 1U << 6U,
};

constexpr std::array<std::pair<std::string_view, std::uint8_t>, 7> type_names{{
    {"null", type_null},
    {"boolean", type_boolean},
    {"object", type_object},
    {"array", type_array},
    {"number", type_number},
    {"string", type_string},
    {"integer", type_integer},
}};

constexpr std::array<std::string_view, 44> known_keywords{
    "type",
    "enum",
    "const",
    "properties",
    "required",
    "additionalProperties",
    "patternProperties",
    "items",
    "prefixItems",
    "minItems",
    "maxItems",
    "uniqueItems",
    "minLength",
    "maxLength",
    "pattern",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
    "minProperties",
    "maxProperties",
    "allOf",
    "anyOf",
    "oneOf",
    "not",
    "$ref",
    "$defs",
    "$schema",
    "$id",
    "$comment",
    "title",
    "description",
    "default",
    "examples",
    "format",
    "deprecated",
    "readOnly",
    "writeOnly",
    "contentMediaType",
    "contentEncoding",
    "$anchor",
    "unevaluatedProperties",
    "dependentRequired",
};

/// Keywords accepted as annotations and ignored.
bool isAnnotation(std::string_view keyword) {
    return keyword == "$schema" || keyword == "$id" || keyword == "$comment" ||
           keyword == "title" || keyword == "description" || keyword == "default" ||
           keyword == "examples" || keyword == "format" || keyword == "deprecated" ||
           keyword == "readOnly" || keyword == "writeOnly" || keyword == "contentMediaType" ||
           keyword == "contentEncoding";
}

struct Node;

struct PatternRule {
    std::string source;
    std::regex regex;
    const Node* schema = nullptr;
};

struct Bound {
    double value = 0;
    std::string text;  ///< as written in the schema, for messages
};

struct Node {
    enum class Kind { always, never, schema };
    Kind kind = Kind::schema;

    std::uint8_t types = 0;  ///< 0: any type
    const Value* enum_values = nullptr;
    const Value* const_value = nullptr;

    std::vector<std::pair<std::string, const Node*>> properties;
    std::vector<std::string> required;
    const Node* additional = nullptr;  ///< nullptr: any additional property is fine
    std::vector<PatternRule> pattern_properties;
    std::optional<std::size_t> min_properties;
    std::optional<std::size_t> max_properties;

    const Node* items = nullptr;
    std::vector<const Node*> prefix_items;
    std::optional<std::size_t> min_items;
    std::optional<std::size_t> max_items;
    bool unique_items = false;

    std::optional<std::size_t> min_length;
    std::optional<std::size_t> max_length;
    std::optional<PatternRule> pattern;

    std::optional<Bound> minimum;
    std::optional<Bound> maximum;
    std::optional<Bound> exclusive_minimum;
    std::optional<Bound> exclusive_maximum;
    std::optional<Bound> multiple_of;

    std::vector<const Node*> all_of;
    std::vector<const Node*> any_of;
    std::vector<const Node*> one_of;
    const Node* not_schema = nullptr;
    const Node* ref = nullptr;
    std::string ref_text;
    std::string location;  ///< the schema path, for errors found after compilation
};

std::regex::flag_type regexFlags() {
#if defined(__GLIBCXX__)
    // libstdc++ extension: the breadth-first (Thompson) executor, polynomial time, and a
    // recursion depth bounded by the pattern rather than the subject.
    return std::regex::ECMAScript | std::regex_constants::__polynomial;
#else
    return std::regex::ECMAScript;
#endif
}

std::string typePhrase(std::uint8_t types) {
    std::vector<std::string_view> names;
    if ((types & type_object) != 0) {
        names.emplace_back("an object");
    }
    if ((types & type_array) != 0) {
        names.emplace_back("an array");
    }
    if ((types & type_string) != 0) {
        names.emplace_back("a string");
    }
    if ((types & type_number) != 0) {
        names.emplace_back("a number");
    } else if ((types & type_integer) != 0) {
        names.emplace_back("an integer");
    }
    if ((types & type_boolean) != 0) {
        names.emplace_back("a boolean");
    }
    if ((types & type_null) != 0) {
        names.emplace_back("null");
    }
    std::string out;
    for (std::size_t i = 0; i < names.size(); ++i) {
        if (i > 0) {
            out += (i + 1 == names.size()) ? " or " : ", ";
        }
        out += names[i];
    }
    return out;
}

bool isInteger(const Value& v) {
    if (!v.IsNumber()) {
        return false;
    }
    if (v.IsInt64() || v.IsUint64()) {
        return true;
    }
    const double d = v.GetDouble();
    return std::isfinite(d) && d == std::floor(d);
}

std::uint8_t typeBitOf(const Value& v) {
    switch (v.GetType()) {
        case rapidjson::kNullType:
            return type_null;
        case rapidjson::kFalseType:
        case rapidjson::kTrueType:
            return type_boolean;
        case rapidjson::kObjectType:
            return type_object;
        case rapidjson::kArrayType:
            return type_array;
        case rapidjson::kStringType:
            return type_string;
        case rapidjson::kNumberType:
            return isInteger(v) ? static_cast<std::uint8_t>(type_number | type_integer)
                                : static_cast<std::uint8_t>(type_number);
    }
    return 0;
}

std::size_t codePoints(const Value& v) {
    const char* s = v.GetString();
    const std::size_t n = v.GetStringLength();
    std::size_t count = 0;
    for (std::size_t i = 0; i < n; ++i) {
        if ((static_cast<unsigned char>(s[i]) & 0xC0U) != 0x80U) {
            ++count;
        }
    }
    return count;
}

std::string plural(std::size_t n, std::string_view one, std::string_view many) {
    return fmt::format("{} {}", n, n == 1 ? one : many);
}

/// Order-independent structural hash for uniqueItems: equal values (by RapidJSON's ==, numbers
/// compared by value, object members unordered) hash equal.
std::uint64_t structuralHash(const Value& v) {
    auto mix = [](std::uint64_t h) {
        h ^= h >> 33U;
        h *= 0xff51afd7ed558ccdULL;
        h ^= h >> 33U;
        return h;
    };
    switch (v.GetType()) {
        case rapidjson::kNullType:
            return 0x1;
        case rapidjson::kFalseType:
            return 0x2;
        case rapidjson::kTrueType:
            return 0x3;
        case rapidjson::kNumberType: {
            double d = v.GetDouble();
            if (d == 0) {
                d = 0;  // -0 == 0
            }
            std::uint64_t bits = 0;
            std::memcpy(&bits, &d, sizeof bits);
            return mix(bits ^ 0x4ULL);
        }
        case rapidjson::kStringType:
            return mix(std::hash<std::string_view>{}({v.GetString(), v.GetStringLength()}) ^
                       0x5ULL);
        case rapidjson::kArrayType: {
            std::uint64_t h = 0x6;
            for (auto it = v.Begin(); it != v.End(); ++it) {
                h = mix(h * 31 + structuralHash(*it));
            }
            return h;
        }
        case rapidjson::kObjectType: {
            std::uint64_t h = 0x7;
            for (auto it = v.MemberBegin(); it != v.MemberEnd(); ++it) {
                h += mix(std::hash<std::string_view>{}(
                             {it->name.GetString(), it->name.GetStringLength()}) ^
                         structuralHash(it->value));
            }
            return mix(h);
        }
    }
    return 0;
}

}  // namespace

struct CompiledSchema::Impl {
    Document document;  ///< a copy of the schema: enum and const point into it
    std::vector<std::unique_ptr<Node>> nodes;
    const Node* root = nullptr;
    SchemaLimits limits;
};

namespace {

class Compiler {
public:
    Compiler(CompiledSchema::Impl& impl, std::vector<std::string>& errors)
        : impl_(impl), errors_(errors) {}

    const Node* compile(const Value& schema, const std::string& path, std::size_t depth) {
        auto owned = std::make_unique<Node>();
        Node* node = owned.get();
        impl_.nodes.push_back(std::move(owned));
        node->location = path;
        if (depth > impl_.limits.max_depth) {
            error(path, fmt::format("schema nested deeper than {} levels", impl_.limits.max_depth));
            return node;
        }
        if (schema.IsBool()) {
            node->kind = schema.GetBool() ? Node::Kind::always : Node::Kind::never;
            return node;
        }
        if (!schema.IsObject()) {
            error(path, fmt::format("a schema must be an object or a boolean, got {}",
                                    describeValue(schema)));
            return node;
        }
        for (auto it = schema.MemberBegin(); it != schema.MemberEnd(); ++it) {
            const std::string_view keyword(it->name.GetString(), it->name.GetStringLength());
            compileKeyword(node, keyword, it->value, memberPath(path, keyword), depth);
        }
        return node;
    }

    void resolveRefs() {
        for (auto& [node, where] : pending_refs_) {
            const std::string& ref = node->ref_text;
            if (ref == "#") {
                node->ref = impl_.root;
                continue;
            }
            auto found = defs_.find(ref);
            if (found == defs_.end()) {
                if (ref.rfind("#/$defs/", 0) != 0) {
                    error(where, fmt::format("{}: only local references \"#\" and "
                                             "\"#/$defs/NAME\" are supported",
                                             describeText(ref)));
                } else {
                    error(where, fmt::format("{}: no such definition in $defs", describeText(ref)));
                }
                continue;
            }
            node->ref = found->second;
        }
    }

    /// A cycle of $ref / allOf / anyOf / oneOf / not that never descends into the instance
    /// would recurse forever: refuse it.
    void checkCycles() {
        std::unordered_map<const Node*, int> state;  // 1: on the stack, 2: done
        for (const auto& node : impl_.nodes) {
            if (visitCycles(node.get(), state, 0)) {
                return;
            }
        }
    }

    void addDef(const std::string& name, const Node* node) {
        std::string escaped;
        for (char c : name) {
            if (c == '~') {
                escaped += "~0";
            } else if (c == '/') {
                escaped += "~1";
            } else {
                escaped.push_back(c);
            }
        }
        defs_.emplace("#/$defs/" + escaped, node);
    }

private:
    bool visitCycles(const Node* node, std::unordered_map<const Node*, int>& state,
                     std::size_t depth) {
        int& s = state[node];
        if (s == 2) {
            return false;
        }
        if (s == 1 || depth > impl_.nodes.size()) {
            error(node->location,
                  "$ref cycle: the schema refers to itself without descending into the instance");
            return true;
        }
        s = 1;
        auto children = inPlaceChildren(*node);
        for (const Node* child : children) {
            if (child != nullptr && visitCycles(child, state, depth + 1)) {
                return true;
            }
        }
        state[node] = 2;
        return false;
    }

    static std::vector<const Node*> inPlaceChildren(const Node& node) {
        std::vector<const Node*> out;
        out.insert(out.end(), node.all_of.begin(), node.all_of.end());
        out.insert(out.end(), node.any_of.begin(), node.any_of.end());
        out.insert(out.end(), node.one_of.begin(), node.one_of.end());
        out.push_back(node.not_schema);
        out.push_back(node.ref);
        return out;
    }

    void error(const std::string& path, std::string message) {
        errors_.push_back(path.empty() ? std::move(message) : path + ": " + std::move(message));
    }

    std::optional<std::size_t> count(const Value& v, const std::string& path) {
        if (v.IsUint64() || (v.IsNumber() && isInteger(v) && v.GetDouble() >= 0)) {
            const double d = v.GetDouble();
            if (d > 1e15) {
                return std::numeric_limits<std::size_t>::max();
            }
            return static_cast<std::size_t>(d);
        }
        error(path, fmt::format("must be a non-negative integer, got {}", describeValue(v)));
        return std::nullopt;
    }

    std::optional<Bound> number(const Value& v, const std::string& path, bool positive) {
        if (!v.IsNumber() || (positive && v.GetDouble() <= 0)) {
            error(path, fmt::format("must be {}, got {}", positive ? "a number > 0" : "a number",
                                    describeValue(v)));
            return std::nullopt;
        }
        return Bound{v.GetDouble(), toJsonText(v)};
    }

    std::optional<std::regex> regex(const Value& v, const std::string& path) {
        if (!v.IsString()) {
            error(path,
                  fmt::format("must be a regular expression (a string), got {}", describeValue(v)));
            return std::nullopt;
        }
        if (v.GetStringLength() > impl_.limits.max_pattern_bytes) {
            error(path, fmt::format("regular expression longer than {} bytes",
                                    impl_.limits.max_pattern_bytes));
            return std::nullopt;
        }
        try {
            return std::regex(std::string(v.GetString(), v.GetStringLength()), regexFlags());
        } catch (const std::regex_error& e) {
            std::string what = e.what();
            error(path, fmt::format("{} is not a valid regular expression: {}",
                                    describeText({v.GetString(), v.GetStringLength()}), what));
        } catch (const std::exception& e) {
            error(path, fmt::format("{} is not a valid regular expression: {}",
                                    describeText({v.GetString(), v.GetStringLength()}), e.what()));
        }
        return std::nullopt;
    }

    std::vector<const Node*> schemaArray(const Value& v, const std::string& path,
                                         std::size_t depth) {
        std::vector<const Node*> out;
        if (!v.IsArray() || v.Empty()) {
            error(path,
                  fmt::format("must be a non-empty array of schemas, got {}", describeValue(v)));
            return out;
        }
        for (rapidjson::SizeType i = 0; i < v.Size(); ++i) {
            out.push_back(compile(v[i], indexPath(path, i), depth + 1));
        }
        return out;
    }

    // NOLINTNEXTLINE(readability-function-cognitive-complexity): one branch per keyword.
    void compileKeyword(Node* node, std::string_view keyword, const Value& v,
                        const std::string& path, std::size_t depth) {
        if (keyword.substr(0, 2) == "x-" || isAnnotation(keyword)) {
            return;
        }
        if (keyword == "type") {
            typeKeyword(node, v, path);
        } else if (keyword == "enum") {
            if (!v.IsArray()) {
                error(path, fmt::format("must be an array, got {}", describeValue(v)));
            } else {
                node->enum_values = &v;
            }
        } else if (keyword == "const") {
            node->const_value = &v;
        } else if (keyword == "properties") {
            if (!v.IsObject()) {
                error(path, fmt::format("must be an object, got {}", describeValue(v)));
                return;
            }
            for (auto it = v.MemberBegin(); it != v.MemberEnd(); ++it) {
                std::string name(it->name.GetString(), it->name.GetStringLength());
                const Node* child = compile(it->value, memberPath(path, name), depth + 1);
                node->properties.emplace_back(std::move(name), child);
            }
        } else if (keyword == "required") {
            if (!v.IsArray()) {
                error(path, fmt::format("must be an array of strings, got {}", describeValue(v)));
                return;
            }
            for (rapidjson::SizeType i = 0; i < v.Size(); ++i) {
                if (!v[i].IsString()) {
                    error(indexPath(path, i),
                          fmt::format("must be a string, got {}", describeValue(v[i])));
                    continue;
                }
                node->required.emplace_back(v[i].GetString(), v[i].GetStringLength());
            }
        } else if (keyword == "additionalProperties") {
            node->additional = compile(v, path, depth + 1);
        } else if (keyword == "patternProperties") {
            if (!v.IsObject()) {
                error(path, fmt::format("must be an object, got {}", describeValue(v)));
                return;
            }
            for (auto it = v.MemberBegin(); it != v.MemberEnd(); ++it) {
                std::string source(it->name.GetString(), it->name.GetStringLength());
                const std::string child_path = memberPath(path, source);
                std::optional<std::regex> compiled = regex(it->name, child_path);
                const Node* child = compile(it->value, child_path, depth + 1);
                if (compiled) {
                    node->pattern_properties.push_back(
                        {std::move(source), std::move(*compiled), child});
                }
            }
        } else if (keyword == "items") {
            node->items = compile(v, path, depth + 1);
        } else if (keyword == "prefixItems") {
            node->prefix_items = schemaArray(v, path, depth);
        } else if (keyword == "minItems") {
            node->min_items = count(v, path);
        } else if (keyword == "maxItems") {
            node->max_items = count(v, path);
        } else if (keyword == "uniqueItems") {
            if (!v.IsBool()) {
                error(path, fmt::format("must be true or false, got {}", describeValue(v)));
                return;
            }
            node->unique_items = v.GetBool();
        } else if (keyword == "minLength") {
            node->min_length = count(v, path);
        } else if (keyword == "maxLength") {
            node->max_length = count(v, path);
        } else if (keyword == "pattern") {
            std::optional<std::regex> compiled = regex(v, path);
            if (compiled) {
                node->pattern = PatternRule{std::string(v.GetString(), v.GetStringLength()),
                                            std::move(*compiled), nullptr};
            }
        } else if (keyword == "minimum") {
            node->minimum = number(v, path, false);
        } else if (keyword == "maximum") {
            node->maximum = number(v, path, false);
        } else if (keyword == "exclusiveMinimum") {
            node->exclusive_minimum = number(v, path, false);
        } else if (keyword == "exclusiveMaximum") {
            node->exclusive_maximum = number(v, path, false);
        } else if (keyword == "multipleOf") {
            node->multiple_of = number(v, path, true);
        } else if (keyword == "minProperties") {
            node->min_properties = count(v, path);
        } else if (keyword == "maxProperties") {
            node->max_properties = count(v, path);
        } else if (keyword == "allOf") {
            node->all_of = schemaArray(v, path, depth);
        } else if (keyword == "anyOf") {
            node->any_of = schemaArray(v, path, depth);
        } else if (keyword == "oneOf") {
            node->one_of = schemaArray(v, path, depth);
        } else if (keyword == "not") {
            node->not_schema = compile(v, path, depth + 1);
        } else if (keyword == "$ref") {
            if (!v.IsString()) {
                error(path, fmt::format("must be a string, got {}", describeValue(v)));
                return;
            }
            node->ref_text.assign(v.GetString(), v.GetStringLength());
            pending_refs_.emplace_back(node, path);
        } else if (keyword == "$defs") {
            if (!v.IsObject()) {
                error(path, fmt::format("must be an object, got {}", describeValue(v)));
                return;
            }
            for (auto it = v.MemberBegin(); it != v.MemberEnd(); ++it) {
                std::string name(it->name.GetString(), it->name.GetStringLength());
                const Node* child = compile(it->value, memberPath(path, name), depth + 1);
                if (depth == 0) {
                    addDef(name, child);
                }
            }
        } else {
            std::vector<std::string_view> candidates;
            for (std::string_view k : known_keywords) {
                if (k != "$anchor" && k != "unevaluatedProperties" && k != "dependentRequired" &&
                    k != "contentMediaType" && k != "contentEncoding") {
                    candidates.push_back(k);
                }
            }
            std::optional<std::string> hint = closestMatch(keyword, candidates);
            if (keyword == "$anchor" || keyword == "unevaluatedProperties" ||
                keyword == "dependentRequired" || keyword == "definitions") {
                error(path, "keyword not supported by Crank's validator");
            } else if (hint) {
                error(path, fmt::format("unknown keyword; did you mean \"{}\"?", *hint));
            } else {
                error(path, "unknown keyword");
            }
        }
    }

    void typeKeyword(Node* node, const Value& v, const std::string& path) {
        auto one = [&](const Value& name, const std::string& at) {
            if (name.IsString()) {
                const std::string_view s(name.GetString(), name.GetStringLength());
                for (const auto& [type_name, bit] : type_names) {
                    if (type_name == s) {
                        node->types |= bit;
                        return;
                    }
                }
            }
            std::vector<std::string_view> names;
            names.reserve(type_names.size());
            for (const auto& entry : type_names) {
                names.push_back(entry.first);
            }
            std::string message = fmt::format(
                "must be one of \"null\", \"boolean\", \"object\", \"array\", \"number\", "
                "\"string\", \"integer\", got {}",
                describeValue(name));
            if (name.IsString()) {
                if (auto hint = closestMatch({name.GetString(), name.GetStringLength()}, names)) {
                    message += fmt::format("; did you mean \"{}\"?", *hint);
                }
            }
            error(at, std::move(message));
        };
        if (v.IsArray()) {
            if (v.Empty()) {
                error(path, "must not be an empty array");
            }
            for (rapidjson::SizeType i = 0; i < v.Size(); ++i) {
                one(v[i], indexPath(path, i));
            }
        } else {
            one(v, path);
        }
    }

    CompiledSchema::Impl& impl_;
    std::vector<std::string>& errors_;
    std::unordered_map<std::string, const Node*> defs_;
    std::vector<std::pair<Node*, std::string>> pending_refs_;
};

class Validator {
public:
    Validator(const CompiledSchema::Impl& impl, ValidationResult& result, std::string root)
        : impl_(impl), result_(result), path_(std::move(root)) {}

    void run(const Value& instance) { check(*impl_.root, instance, 0, true); }

private:
    /// Adds a failure at the current path (plus `suffix`); false when collecting stopped.
    void fail(std::string message) {
        if (result_.failures.size() >= impl_.limits.max_failures) {
            result_.truncated = true;
            return;
        }
        result_.failures.push_back({path_, std::move(message)});
    }

    // NOLINTNEXTLINE(readability-function-cognitive-complexity): one branch per keyword.
    bool check(const Node& node, const Value& v, std::size_t depth, bool collect) {
        if (budget_exceeded_) {
            return false;
        }
        if (++evaluations_ > impl_.limits.max_evaluations || depth > impl_.limits.max_depth * 4) {
            const bool too_deep = depth > impl_.limits.max_depth * 4;
            budget_exceeded_ = true;
            fail(too_deep ? fmt::format("nested too deeply to validate (more than {} levels)",
                                        impl_.limits.max_depth * 4)
                          : fmt::format("validation exceeded its budget of {} schema evaluations",
                                        impl_.limits.max_evaluations));
            return false;
        }
        if (node.kind == Node::Kind::always) {
            return true;
        }
        if (node.kind == Node::Kind::never) {
            if (collect) {
                fail("is not allowed");
            }
            return false;
        }
        const std::uint8_t bit = typeBitOf(v);
        if (node.types != 0 && (node.types & bit) == 0) {
            if (collect) {
                fail(fmt::format("must be {}, got {}", typePhrase(node.types), describeValue(v)));
            }
            return false;
        }
        bool ok = true;
        auto failed = [&](auto&& make) {
            ok = false;
            if (collect) {
                fail(make());
            }
            return collect;  // keep going only when collecting
        };

        if (node.const_value != nullptr && !(*node.const_value == v)) {
            if (!failed([&] {
                    return fmt::format("must be {}, got {}", constText(*node.const_value),
                                       describeValue(v));
                })) {
                return false;
            }
        }
        if (node.enum_values != nullptr) {
            bool found = false;
            for (auto it = node.enum_values->Begin(); it != node.enum_values->End(); ++it) {
                if (*it == v) {
                    found = true;
                    break;
                }
            }
            if (!found && !failed([&] {
                    return fmt::format("must be one of {}, got {}", enumText(*node.enum_values),
                                       describeValue(v));
                })) {
                return false;
            }
        }
        if (v.IsNumber() && !checkNumber(node, v, collect, ok)) {
            return false;
        }
        if (v.IsString() && !checkString(node, v, collect, ok)) {
            return false;
        }
        if (v.IsObject() && !checkObject(node, v, depth, collect, ok)) {
            return false;
        }
        if (v.IsArray() && !checkArray(node, v, depth, collect, ok)) {
            return false;
        }
        // In-place applicators.
        if (node.ref != nullptr && !check(*node.ref, v, depth + 1, collect)) {
            ok = false;
            if (!collect) {
                return false;
            }
        }
        for (const Node* sub : node.all_of) {
            if (!check(*sub, v, depth + 1, collect)) {
                ok = false;
                if (!collect) {
                    return false;
                }
            }
        }
        if (!node.any_of.empty()) {
            bool any = false;
            for (const Node* sub : node.any_of) {
                if (check(*sub, v, depth + 1, false)) {
                    any = true;
                    break;
                }
            }
            if (!any && !failed([&] {
                    return fmt::format("must match at least one of the {} schemas in anyOf, got {}",
                                       node.any_of.size(), describeValue(v));
                })) {
                return false;
            }
        }
        if (!node.one_of.empty()) {
            std::vector<std::size_t> matched;
            for (std::size_t i = 0; i < node.one_of.size() && matched.size() < 2; ++i) {
                if (check(*node.one_of[i], v, depth + 1, false)) {
                    matched.push_back(i);
                }
            }
            if (matched.size() != 1 && !failed([&] {
                    if (matched.empty()) {
                        return fmt::format(
                            "must match exactly one of the {} schemas in oneOf, matched none, "
                            "got {}",
                            node.one_of.size(), describeValue(v));
                    }
                    return fmt::format(
                        "must match exactly one of the {} schemas in oneOf, matched more than "
                        "one (oneOf[{}] and oneOf[{}])",
                        node.one_of.size(), matched[0], matched[1]);
                })) {
                return false;
            }
        }
        if (node.not_schema != nullptr && check(*node.not_schema, v, depth + 1, false) &&
            !failed([&] { return std::string("must not match the schema in \"not\""); })) {
            return false;
        }
        return ok && !budget_exceeded_;
    }

    static std::string constText(const Value& c) {
        if (c.IsObject() || c.IsArray()) {
            std::string text = toJsonText(c);
            if (text.size() > 60) {
                return "the value given by const";
            }
            return text;
        }
        return describeValue(c);
    }

    static std::string enumText(const Value& values) {
        std::string out;
        rapidjson::SizeType i = 0;
        for (; i < values.Size() && i < 10; ++i) {
            if (i > 0) {
                out += ", ";
            }
            out += describeValue(values[i]);
        }
        if (i < values.Size()) {
            out += fmt::format(", ... ({} values)", values.Size());
        }
        return out;
    }

    /// Bound checks. Returns false when validation of this node must stop (not collecting).
    bool checkNumber(const Node& node, const Value& v, bool collect, bool& ok) {
        const double d = v.GetDouble();
        const std::string prefix = node.types == type_integer ? "an integer " : "";
        auto bound = [&](const std::optional<Bound>& b, bool good, std::string_view op) {
            if (!b || good) {
                return true;
            }
            ok = false;
            if (collect) {
                fail(fmt::format("must be {}{} {}, got {}", prefix, op, b->text, describeValue(v)));
            }
            return collect;
        };
        if (!bound(node.minimum, !node.minimum || d >= node.minimum->value, "≥") ||
            !bound(node.maximum, !node.maximum || d <= node.maximum->value, "≤") ||
            !bound(node.exclusive_minimum,
                   !node.exclusive_minimum || d > node.exclusive_minimum->value, ">") ||
            !bound(node.exclusive_maximum,
                   !node.exclusive_maximum || d < node.exclusive_maximum->value, "<")) {
            return false;
        }
        if (node.multiple_of && !isMultiple(v, node.multiple_of->value)) {
            ok = false;
            if (!collect) {
                return false;
            }
            fail(fmt::format("must be a multiple of {}, got {}", node.multiple_of->text,
                             describeValue(v)));
        }
        return true;
    }

    static bool isMultiple(const Value& v, double divisor) {
        if (v.IsInt64() && divisor == std::floor(divisor) && std::fabs(divisor) < 9e15) {
            const auto m = static_cast<std::int64_t>(divisor);
            return m != 0 && v.GetInt64() % m == 0;
        }
        const double q = v.GetDouble() / divisor;
        if (!std::isfinite(q)) {
            return false;
        }
        return std::fabs(q - std::round(q)) <= 1e-9 * std::max(1.0, std::fabs(q));
    }

    /// How a size bound reads: "must {verb} at least {n} {one|many}{suffix}, got {size}".
    struct BoundWords {
        std::string_view verb;
        std::string_view one;
        std::string_view many;
        std::string_view suffix;
    };

    /// minLength/maxLength, minItems/maxItems, minProperties/maxProperties. False when validation
    /// must stop (a bound failed and failures are not being collected).
    bool checkBounds(const std::optional<std::size_t>& min, const std::optional<std::size_t>& max,
                     std::size_t size, const BoundWords& words, bool collect, bool& ok) {
        const auto check = [&](bool failed, std::string_view which, std::size_t bound) {
            if (!failed) {
                return true;
            }
            ok = false;
            if (!collect) {
                return false;
            }
            fail(fmt::format("must {} {} {}{}, got {}", words.verb, which,
                             plural(bound, words.one, words.many), words.suffix, size));
            return true;
        };
        return check(min && size < *min, "at least", min.value_or(0)) &&
               check(max && size > *max, "at most", max.value_or(0));
    }

    bool checkString(const Node& node, const Value& v, bool collect, bool& ok) {
        if (node.min_length || node.max_length) {
            const std::size_t length = codePoints(v);
            if (!checkBounds(node.min_length, node.max_length, length,
                             {"be", "character", "characters", " long"}, collect, ok)) {
                return false;
            }
        }
        if (node.pattern) {
            const std::string_view text(v.GetString(), v.GetStringLength());
            std::string problem;
            if (text.size() > impl_.limits.max_pattern_subject_bytes) {
                problem = fmt::format(
                    "is longer than {} bytes, too long to match against the pattern {}",
                    impl_.limits.max_pattern_subject_bytes, describeText(node.pattern->source));
            } else if (!search(node.pattern->regex, text)) {
                problem = fmt::format("must match the pattern {}, got {}",
                                      describeText(node.pattern->source), describeValue(v));
            }
            if (!problem.empty()) {
                ok = false;
                if (!collect) {
                    return false;
                }
                fail(std::move(problem));
            }
        }
        return true;
    }

    static bool search(const std::regex& regex, std::string_view text) {
        try {
            return std::regex_search(text.begin(), text.end(), regex);
        } catch (const std::exception&) {
            return false;  // error_complexity / error_stack: treat as no match
        }
    }

    // NOLINTNEXTLINE(readability-function-cognitive-complexity)
    bool checkObject(const Node& node, const Value& v, std::size_t depth, bool collect, bool& ok) {
        const std::size_t size = v.MemberCount();
        if (!checkBounds(node.min_properties, node.max_properties, size,
                         {"have", "property", "properties", ""}, collect, ok)) {
            return false;
        }
        for (const std::string& name : node.required) {
            if (!v.HasMember(rapidjson::StringRef(name.data(), name.size()))) {
                ok = false;
                if (!collect) {
                    return false;
                }
                const std::size_t saved = path_.size();
                appendMemberPath(path_, name);
                fail("is required");
                path_.resize(saved);
            }
        }
        if (node.properties.empty() && node.pattern_properties.empty() &&
            node.additional == nullptr) {
            return true;
        }
        for (auto it = v.MemberBegin(); it != v.MemberEnd(); ++it) {
            const std::string_view key(it->name.GetString(), it->name.GetStringLength());
            const std::size_t saved = path_.size();
            if (collect) {
                appendMemberPath(path_, key);
            }
            bool matched = false;
            bool member_ok = true;
            for (const auto& [name, sub] : node.properties) {
                if (name == key) {
                    matched = true;
                    member_ok = check(*sub, it->value, depth + 1, collect) && member_ok;
                    break;
                }
            }
            for (const PatternRule& rule : node.pattern_properties) {
                if (member_ok || collect) {
                    if (search(rule.regex, key)) {
                        matched = true;
                        member_ok = check(*rule.schema, it->value, depth + 1, collect) && member_ok;
                    }
                }
            }
            if (!matched && node.additional != nullptr) {
                if (node.additional->kind == Node::Kind::never) {
                    member_ok = false;
                    if (collect) {
                        fail(notAllowed(node, key));
                    }
                } else {
                    member_ok = check(*node.additional, it->value, depth + 1, collect) && member_ok;
                }
            }
            path_.resize(saved);
            if (!member_ok) {
                ok = false;
                if (!collect) {
                    return false;
                }
            }
        }
        return true;
    }

    static std::string notAllowed(const Node& node, std::string_view key) {
        std::vector<std::string_view> names;
        for (const auto& property : node.properties) {
            names.push_back(property.first);
        }
        if (names.empty()) {
            return "is not allowed (no additional properties)";
        }
        if (auto hint = closestMatch(key, names)) {
            return fmt::format("is not allowed (unknown property; did you mean \"{}\"?)", *hint);
        }
        return "is not allowed (unknown property)";
    }

    // NOLINTNEXTLINE(readability-function-cognitive-complexity)
    bool checkArray(const Node& node, const Value& v, std::size_t depth, bool collect, bool& ok) {
        const std::size_t size = v.Size();
        if (!checkBounds(node.min_items, node.max_items, size, {"have", "item", "items", ""},
                         collect, ok)) {
            return false;
        }
        if (node.unique_items && size > 1) {
            std::optional<std::pair<std::size_t, std::size_t>> duplicate = findDuplicate(v);
            if (duplicate) {
                ok = false;
                if (!collect) {
                    return false;
                }
                fail(fmt::format("must have unique items, but items {} and {} are equal",
                                 duplicate->first, duplicate->second));
            }
        }
        if (node.items == nullptr && node.prefix_items.empty()) {
            return true;
        }
        for (rapidjson::SizeType i = 0; i < size; ++i) {
            const Node* sub = i < node.prefix_items.size() ? node.prefix_items[i] : node.items;
            if (sub == nullptr) {
                break;
            }
            const std::size_t saved = path_.size();
            if (collect) {
                appendIndexPath(path_, i);
            }
            const bool item_ok = check(*sub, v[i], depth + 1, collect);
            path_.resize(saved);
            if (!item_ok) {
                ok = false;
                if (!collect) {
                    return false;
                }
            }
            if (budget_exceeded_) {
                return false;
            }
        }
        return true;
    }

    static std::optional<std::pair<std::size_t, std::size_t>> findDuplicate(const Value& v) {
        std::unordered_multimap<std::uint64_t, std::size_t> seen;
        seen.reserve(v.Size());
        for (rapidjson::SizeType i = 0; i < v.Size(); ++i) {
            const std::uint64_t h = structuralHash(v[i]);
            auto [begin, end] = seen.equal_range(h);
            for (auto it = begin; it != end; ++it) {
                if (v[static_cast<rapidjson::SizeType>(it->second)] == v[i]) {
                    return std::make_pair(it->second, static_cast<std::size_t>(i));
                }
            }
            seen.emplace(h, i);
        }
        return std::nullopt;
    }

    const CompiledSchema::Impl& impl_;
    ValidationResult& result_;
    std::string path_;
    std::size_t evaluations_ = 0;
    bool budget_exceeded_ = false;
};

}  // namespace

ValidationResult CompiledSchema::validate(const Value& instance, std::string_view root) const {
    ValidationResult result;
    try {
        Validator validator(*impl_, result, std::string(root));
        validator.run(instance);
    } catch (const std::exception& e) {
        result.failures.push_back(
            {std::string(root), fmt::format("validation failed: {}", e.what())});
    }
    return result;
}

ValidationResult CompiledSchema::validate(std::string_view instance_json,
                                          std::string_view root) const {
    ValidationResult result;
    try {
        Document doc;
        Result<void> parsed =
            parseJson(instance_json, doc, "",
                      ParseLimits{impl_->limits.max_instance_bytes, impl_->limits.max_depth});
        if (!parsed) {
            result.failures.push_back({std::string(root), parsed.error().message});
            return result;
        }
        return validate(doc, root);
    } catch (const std::exception& e) {
        result.failures.push_back(
            {std::string(root), fmt::format("validation failed: {}", e.what())});
    }
    return result;
}

Result<CompiledSchema> compileSchema(const Value& schema, std::string_view where,
                                     const SchemaLimits& limits) {
    try {
        auto impl = std::make_shared<CompiledSchema::Impl>();
        impl->limits = limits;
        impl->document.CopyFrom(schema, impl->document.GetAllocator());
        std::vector<std::string> errors;
        Compiler compiler(*impl, errors);
        impl->root = compiler.compile(impl->document, std::string(where), 0);
        compiler.resolveRefs();
        if (errors.empty()) {
            compiler.checkCycles();
        }
        if (!errors.empty()) {
            std::string message;
            for (std::size_t i = 0; i < errors.size() && i < limits.max_failures; ++i) {
                if (i > 0) {
                    message += "; ";
                }
                message += errors[i];
            }
            if (errors.size() > limits.max_failures) {
                message += fmt::format("; and {} more", errors.size() - limits.max_failures);
            }
            return Error{ErrorCode::invalid_argument, std::move(message)};
        }
        return CompiledSchema(std::move(impl));
    } catch (const std::exception& e) {
        return Error{ErrorCode::internal,
                     fmt::format("{}: compiling the schema failed: {}", where, e.what())};
    }
}

Result<CompiledSchema> compileSchema(std::string_view schema_json, std::string_view where,
                                     const SchemaLimits& limits) {
    Document doc;
    Result<void> parsed = parseJson(schema_json, doc, where,
                                    ParseLimits{limits.max_schema_bytes, limits.max_depth * 3});
    if (!parsed) {
        return parsed.error();
    }
    return compileSchema(doc, where, limits);
}

}  // namespace crank::json
