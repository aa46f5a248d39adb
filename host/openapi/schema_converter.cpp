#include "openapi/schema_converter.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <unordered_set>
#include <utility>

#include <fmt/core.h>
#include <rapidjson/document.h>

#include "json/json_schema.h"
#include "json/json_text.h"
#include "util/json_string.h"

namespace crank::openapi::detail {
namespace {

using json::Value;

/// Dropped without a word: OpenAPI or JSON Schema annotations that mean nothing once `$ref`s
/// are inlined, and extensions.
constexpr std::array<std::string_view, 10> kDroppedSilently{
    "discriminator", "xml",         "externalDocs", "$id",         "$schema",
    "$defs",         "definitions", "$anchor",      "$vocabulary", "$dynamicAnchor"};

/// Annotations the validator accepts and ignores: copied as they are.
constexpr std::array<std::string_view, 10> kAnnotations{
    "title",     "description", "default",          "deprecated",      "readOnly",
    "writeOnly", "format",      "contentMediaType", "contentEncoding", "$comment"};

/// JSON Schema keywords crankd's validator does not support.
constexpr std::array<std::string_view, 17> kUnsupported{"if",
                                                        "then",
                                                        "else",
                                                        "dependentSchemas",
                                                        "dependentRequired",
                                                        "unevaluatedProperties",
                                                        "unevaluatedItems",
                                                        "contains",
                                                        "minContains",
                                                        "maxContains",
                                                        "propertyNames",
                                                        "additionalItems",
                                                        "$dynamicRef",
                                                        "contentSchema",
                                                        "$recursiveRef",
                                                        "$recursiveAnchor",
                                                        "dependencies"};

constexpr std::array<std::string_view, 6> kCounts{"minItems",  "maxItems",      "minLength",
                                                  "maxLength", "minProperties", "maxProperties"};

constexpr std::array<std::string_view, 7> kTypeNames{"null",   "boolean", "object", "array",
                                                     "number", "string",  "integer"};

template <std::size_t N>
bool contains(const std::array<std::string_view, N>& list, std::string_view word) {
    return std::find(list.begin(), list.end(), word) != list.end();
}

std::string_view view(const Value& v) {
    return {v.GetString(), v.GetStringLength()};
}

bool isCount(const Value& v) {
    if (v.IsUint64()) {
        return true;
    }
    if (!v.IsNumber()) {
        return false;
    }
    const double d = v.GetDouble();
    return d >= 0 && std::floor(d) == d;
}

/// Nesting of containers in `v` (0 for a scalar) and its cost in the budget: one per value,
/// plus one per Budget::bytes_per_value bytes of string.
std::pair<std::size_t, std::size_t> measure(const Value& v) {
    std::size_t depth = 0;
    std::size_t count = 1;
    if (v.IsObject()) {
        for (const auto& member : v.GetObject()) {
            const auto [d, n] = measure(member.value);
            depth = std::max(depth, d);
            count += n;
        }
        return {depth + 1, count};
    }
    if (v.IsArray()) {
        for (const Value& element : v.GetArray()) {
            const auto [d, n] = measure(element);
            depth = std::max(depth, d);
            count += n;
        }
        return {depth + 1, count};
    }
    if (v.IsString()) {
        return {0, 1 + v.GetStringLength() / Budget::bytes_per_value};
    }
    return {0, 1};
}

bool hasMember(const Value& v, std::string_view key) {
    return findMember(v, key) != nullptr;
}

const Value* member(const Value& v, std::string_view key) {
    return findMember(v, key);
}

bool isTrue(const Value* v) {
    return v != nullptr && v->IsBool() && v->GetBool();
}

}  // namespace

void addNullToType(Value& schema, json::Allocator& allocator) {
    if (!schema.IsObject()) {
        return;
    }
    if (Value* type = findMember(schema, "type")) {
        if (type->IsString() && view(*type) != "null") {
            Value types(rapidjson::kArrayType);
            types.PushBack(*type, allocator);
            types.PushBack(Value("null"), allocator);
            *type = types;
        } else if (type->IsArray()) {
            bool has_null = false;
            for (const Value& t : type->GetArray()) {
                has_null = has_null || (t.IsString() && view(t) == "null");
            }
            if (!has_null) {
                type->PushBack(Value("null"), allocator);
            }
        }
    }
    Value* values = findMember(schema, "enum");
    if (values != nullptr && values->IsArray()) {
        bool has_null = false;
        for (const Value& v : values->GetArray()) {
            has_null = has_null || v.IsNull();
        }
        if (!has_null) {
            values->PushBack(Value(), allocator);
        }
    }
}

Result<void> SchemaConverter::spend(std::size_t n) {
    if (!budget_.spend(n)) {
        return documentTooLarge();
    }
    return {};
}

void SchemaConverter::addMember(Value& out, std::string_view key, Value& value) {
    if (Value* existing = findMember(out, key)) {
        *existing = value;
        return;
    }
    out.AddMember(Value(key.data(), static_cast<rapidjson::SizeType>(key.size()), allocator_),
                  value, allocator_);
}

Result<void> SchemaConverter::convert(const Value& in, const std::string& pointer, Value& out,
                                      std::size_t depth) {
    if (depth > max_depth) {
        warnings_.add(pointer, fmt::format("schema nested deeper than {} levels; replaced by {{}} "
                                           "(any value)",
                                           max_depth));
        out.SetObject();
        return spend(1);
    }
    if (in.IsBool()) {
        out.SetBool(in.GetBool());
        return spend(1);
    }
    if (!in.IsObject()) {
        return documentError(pointer, fmt::format("a schema must be an object (or true or false), "
                                                  "got {}",
                                                  json::describeValue(in)));
    }
    return convertObject(in, pointer, out, depth);
}

Result<void> SchemaConverter::convertObject(const Value& in, const std::string& pointer, Value& out,
                                            std::size_t depth) {
    if (auto spent = spend(1); !spent) {
        return spent;
    }
    const Value* nullable = member(in, "nullable");
    if (nullable != nullptr && !nullable->IsBool()) {
        warnings_.add(
            childPointer(pointer, "nullable"),
            fmt::format("must be true or false, got {}; dropped", json::describeValue(*nullable)));
    }
    const bool is_nullable = isTrue(nullable);
    const bool has_ref = hasMember(in, "$ref");
    const bool combines = has_ref || hasMember(in, "allOf") || hasMember(in, "anyOf") ||
                          hasMember(in, "oneOf") || hasMember(in, "not") || hasMember(in, "const");
    if (is_nullable && combines) {
        // null must pass the combined schemas too: {"anyOf": [schema, {"type": "null"}]}.
        Value inner;
        Result<void> done = has_ref ? convertRef(in, pointer, inner, depth + 2)
                                    : convertKeywords(in, pointer, inner, depth + 2, false);
        if (!done) {
            return done;
        }
        Value null_type(rapidjson::kObjectType);
        null_type.AddMember("type", "null", allocator_);
        Value any_of(rapidjson::kArrayType);
        any_of.PushBack(inner, allocator_);
        any_of.PushBack(null_type, allocator_);
        out.SetObject();
        out.AddMember("anyOf", any_of, allocator_);
        return spend(3);
    }
    Result<void> done = has_ref ? convertRef(in, pointer, out, depth)
                                : convertKeywords(in, pointer, out, depth, false);
    if (done && is_nullable) {
        addNullToType(out, allocator_);
    }
    return done;
}

Result<void> SchemaConverter::convertRef(const Value& in, const std::string& pointer, Value& out,
                                         std::size_t depth) {
    const std::string ref_pointer = childPointer(pointer, "$ref");
    Result<RefTarget> target = resolveRef(root_, in["$ref"], ref_pointer);
    if (!target) {
        return target.error();
    }
    // Siblings of $ref: annotations are laid over the referenced schema; anything else
    // constrains too, and the result becomes {"allOf": [referenced], siblings...}.
    bool annotations = false;
    bool constraints = false;
    for (const auto& m : in.GetObject()) {
        const std::string_view key = view(m.name);
        if (key == "$ref" || key == "nullable" || key.starts_with("x-") ||
            contains(kDroppedSilently, key)) {
            continue;
        }
        if (contains(kAnnotations, key) || key == "examples" || key == "example") {
            annotations = true;
        } else {
            constraints = true;
        }
    }
    const std::size_t target_depth = constraints ? depth + 2 : depth;
    Value resolved;
    const std::string shown = "#" + target->pointer;
    if (std::find(active_refs_.begin(), active_refs_.end(), target->pointer) !=
        active_refs_.end()) {
        warnings_.add(
            ref_pointer,
            fmt::format("$ref cycle through \"{}\"; replaced by {{}} (any value)", shown));
        resolved.SetObject();
    } else if (active_refs_.size() >= kMaxRefChain) {
        warnings_.add(ref_pointer, fmt::format("more than {} nested $refs; \"{}\" is replaced by "
                                               "{{}} (any value)",
                                               kMaxRefChain, shown));
        resolved.SetObject();
    } else if (budget_.operation_left == 0) {
        if (!budget_.operation_warned) {
            budget_.operation_warned = true;
            warnings_.add(ref_pointer,
                          fmt::format("the operation's input schema passed {} values; this and "
                                      "further $refs are replaced by {{}} (any value)",
                                      Budget::operation_values));
        }
        resolved.SetObject();
    } else {
        active_refs_.push_back(target->pointer);
        Result<void> done = convert(*target->value, target->pointer, resolved, target_depth);
        active_refs_.pop_back();
        if (!done) {
            return done;
        }
    }
    if (constraints) {
        Value all_of(rapidjson::kArrayType);
        all_of.PushBack(resolved, allocator_);
        out.SetObject();
        out.AddMember("allOf", all_of, allocator_);
        return convertKeywords(in, pointer, out, depth, true);
    }
    out = resolved;
    if (!annotations) {
        return {};
    }
    if (out.IsBool()) {
        if (!out.GetBool()) {
            return {};  // nothing passes: annotations would change nothing
        }
        out.SetObject();
    }
    return convertKeywords(in, pointer, out, depth, true);
}

Result<void> SchemaConverter::convertKeywords(const Value& in, const std::string& pointer,
                                              Value& out, std::size_t depth, bool skip_ref) {
    if (!out.IsObject()) {
        out.SetObject();
    }
    for (const auto& m : in.GetObject()) {
        const std::string_view key = view(m.name);
        if ((key == "$ref" && skip_ref) || key == "nullable") {
            continue;
        }
        Result<void> done =
            convertKeyword(in, key, m.value, childPointer(pointer, key), out, depth);
        if (!done) {
            return done;
        }
    }
    return {};
}

// NOLINTNEXTLINE(readability-function-cognitive-complexity): one branch per keyword.
Result<void> SchemaConverter::convertKeyword(const Value& in, std::string_view keyword,
                                             const Value& value, const std::string& pointer,
                                             Value& out, std::size_t depth) {
    const auto dropped = [&](std::string_view why) {
        warnings_.add(pointer, fmt::format("{}; dropped", why));
        return Result<void>{};
    };
    const auto literal = [&](std::string_view key, const Value& v) -> Result<void> {
        Result<bool> copied = copyLiteral(key, v, pointer, out, depth, false);
        if (!copied) {
            return copied.error();
        }
        return {};
    };
    if (keyword.starts_with("x-") || contains(kDroppedSilently, keyword)) {
        return {};
    }
    if (contains(kAnnotations, keyword)) {
        return literal(keyword, value);
    }
    if (keyword == "examples") {
        return value.IsArray() ? literal(keyword, value) : dropped("must be an array");
    }
    if (keyword == "example") {
        if (hasMember(in, "examples")) {
            return {};
        }
        Result<bool> copied = copyLiteral("examples", value, pointer, out, depth, true);
        if (!copied) {
            return copied.error();
        }
        return {};
    }
    if (keyword == "type") {
        convertType(value, pointer, out);
        return spend(1);
    }
    if (keyword == "enum") {
        return value.IsArray() ? literal(keyword, value) : dropped("must be an array");
    }
    if (keyword == "const") {
        return literal(keyword, value);
    }
    if (keyword == "required") {
        convertRequired(value, pointer, out);
        return spend(1);
    }
    if (keyword == "properties" || keyword == "patternProperties") {
        if (!value.IsObject()) {
            return documentError(
                pointer, fmt::format("must be an object, got {}", json::describeValue(value)));
        }
        return convertSchemaMap(value, pointer, out, depth, keyword == "patternProperties");
    }
    if (keyword == "additionalProperties" || keyword == "not" ||
        (keyword == "items" && !value.IsArray())) {
        Value child;
        Result<void> done = convert(value, pointer, child, depth + 1);
        if (done) {
            addMember(out, keyword, child);
        }
        return done;
    }
    if (keyword == "items" || keyword == "prefixItems") {
        // `items` as an array is the tuple form of older drafts: prefixItems in 2020-12.
        if (!value.IsArray()) {
            return documentError(pointer, fmt::format("must be an array of schemas, got {}",
                                                      json::describeValue(value)));
        }
        return convertSchemaArray("prefixItems", value, pointer, out, depth);
    }
    if (keyword == "allOf" || keyword == "anyOf" || keyword == "oneOf") {
        if (!value.IsArray()) {
            return documentError(pointer, fmt::format("must be an array of schemas, got {}",
                                                      json::describeValue(value)));
        }
        return convertSchemaArray(keyword, value, pointer, out, depth);
    }
    if (contains(kCounts, keyword)) {
        return isCount(value) ? literal(keyword, value)
                              : dropped(fmt::format("must be a non-negative integer, got {}",
                                                    json::describeValue(value)));
    }
    if (keyword == "uniqueItems") {
        return value.IsBool() ? literal(keyword, value)
                              : dropped(fmt::format("must be true or false, got {}",
                                                    json::describeValue(value)));
    }
    if (keyword == "pattern") {
        return patternAccepted(value, pointer) ? literal(keyword, value) : Result<void>{};
    }
    if (keyword == "minimum" || keyword == "maximum") {
        const std::string_view exclusive =
            keyword == "minimum" ? "exclusiveMinimum" : "exclusiveMaximum";
        if (isTrue(member(in, exclusive))) {
            return {};  // written as exclusiveMinimum / exclusiveMaximum (OpenAPI 3.0 style)
        }
        return value.IsNumber()
                   ? literal(keyword, value)
                   : dropped(fmt::format("must be a number, got {}", json::describeValue(value)));
    }
    if (keyword == "exclusiveMinimum" || keyword == "exclusiveMaximum") {
        convertExclusive(in, keyword, value, pointer, out);
        return spend(1);
    }
    if (keyword == "multipleOf") {
        return value.IsNumber() && value.GetDouble() > 0
                   ? literal(keyword, value)
                   : dropped(
                         fmt::format("must be a number > 0, got {}", json::describeValue(value)));
    }
    if (contains(kUnsupported, keyword)) {
        return dropped("not supported by crankd's validator (the input is checked less strictly)");
    }
    return dropped("unknown keyword");
}

Result<void> SchemaConverter::convertSchemaMap(const Value& value, const std::string& pointer,
                                               Value& out, std::size_t depth, bool patterns) {
    Value map(rapidjson::kObjectType);
    std::unordered_set<std::string_view> seen;
    for (const auto& m : value.GetObject()) {
        const std::string_view name = view(m.name);
        const std::string child_pointer = childPointer(pointer, name);
        if (!seen.insert(name).second) {
            warnings_.add(child_pointer, "given twice; the first one is kept");
            continue;
        }
        if (patterns && !patternAccepted(m.name, child_pointer)) {
            continue;
        }
        Value child;
        Result<void> done = convert(m.value, child_pointer, child, depth + 2);
        if (!done) {
            return done;
        }
        map.AddMember(Value(m.name, allocator_), child, allocator_);
        if (auto spent = spend(1 + name.size() / Budget::bytes_per_value); !spent) {
            return spent;
        }
    }
    addMember(out, patterns ? "patternProperties" : "properties", map);
    return spend(1);
}

Result<void> SchemaConverter::convertSchemaArray(std::string_view keyword, const Value& value,
                                                 const std::string& pointer, Value& out,
                                                 std::size_t depth) {
    if (value.Empty()) {
        warnings_.add(pointer, "an empty array; dropped");
        return {};
    }
    Value list(rapidjson::kArrayType);
    for (rapidjson::SizeType i = 0; i < value.Size(); ++i) {
        Value child;
        Result<void> done = convert(value[i], childPointer(pointer, i), child, depth + 2);
        if (!done) {
            return done;
        }
        list.PushBack(child, allocator_);
    }
    Value* existing = findMember(out, keyword);
    if (existing != nullptr && existing->IsArray()) {
        // allOf beside a $ref, which is allOf[0] already.
        for (Value& child : list.GetArray()) {
            existing->PushBack(child, allocator_);
        }
    } else {
        addMember(out, keyword, list);
    }
    return spend(1);
}

void SchemaConverter::convertType(const Value& value, const std::string& pointer, Value& out) {
    std::vector<const Value*> names;
    if (value.IsString()) {
        names.push_back(&value);
    } else if (value.IsArray()) {
        for (const Value& v : value.GetArray()) {
            names.push_back(&v);
        }
    } else {
        warnings_.add(pointer, fmt::format("must be a type name or an array of them, got {}; "
                                           "dropped",
                                           json::describeValue(value)));
        return;
    }
    Value kept(rapidjson::kArrayType);
    std::vector<std::string_view> seen;
    for (const Value* name : names) {
        std::string_view type = name->IsString() ? view(*name) : std::string_view();
        if (type == "file") {
            warnings_.add(pointer, "type \"file\" (Swagger 2.0) is read as \"string\"");
            type = "string";
        }
        if (!contains(kTypeNames, type)) {
            warnings_.add(pointer,
                          fmt::format("unknown type {}; dropped", json::describeValue(*name)));
            continue;
        }
        if (std::find(seen.begin(), seen.end(), type) != seen.end()) {
            continue;
        }
        seen.push_back(type);
        kept.PushBack(Value(type.data(), static_cast<rapidjson::SizeType>(type.size()), allocator_),
                      allocator_);
    }
    if (kept.Empty()) {
        return;
    }
    if (value.IsString()) {
        Value one(kept[0], allocator_);
        addMember(out, "type", one);
    } else {
        addMember(out, "type", kept);
    }
}

void SchemaConverter::convertRequired(const Value& value, const std::string& pointer, Value& out) {
    if (!value.IsArray()) {
        warnings_.add(pointer, fmt::format("must be an array of property names (OpenAPI puts "
                                           "\"required\" on the object), got {}; dropped",
                                           json::describeValue(value)));
        return;
    }
    Value names(rapidjson::kArrayType);
    std::unordered_set<std::string_view> seen;
    for (rapidjson::SizeType i = 0; i < value.Size(); ++i) {
        const Value& name = value[i];
        if (!name.IsString()) {
            warnings_.add(
                childPointer(pointer, i),
                fmt::format("must be a property name, got {}; dropped", json::describeValue(name)));
            continue;
        }
        if (seen.insert(view(name)).second) {
            names.PushBack(Value(name, allocator_), allocator_);
        }
    }
    addMember(out, "required", names);
}

void SchemaConverter::convertExclusive(const Value& in, std::string_view keyword,
                                       const Value& value, const std::string& pointer, Value& out) {
    if (value.IsNumber()) {
        Value copy(value, allocator_);
        addMember(out, keyword, copy);
        return;
    }
    if (!value.IsBool()) {
        warnings_.add(pointer,
                      fmt::format("must be a number, got {}; dropped", json::describeValue(value)));
        return;
    }
    if (!value.GetBool()) {
        return;
    }
    // OpenAPI 3.0: a boolean that makes `minimum` / `maximum` exclusive.
    const std::string_view bound = keyword == "exclusiveMinimum" ? "minimum" : "maximum";
    const Value* limit = member(in, bound);
    if (limit == nullptr || !limit->IsNumber()) {
        warnings_.add(pointer, fmt::format("true without a number in \"{}\"; dropped", bound));
        return;
    }
    Value copy(*limit, allocator_);
    addMember(out, keyword, copy);
}

bool SchemaConverter::patternAccepted(const Value& pattern, const std::string& pointer) {
    if (!pattern.IsString()) {
        warnings_.add(pointer, fmt::format("must be a regular expression (a string), got {}; "
                                           "dropped",
                                           json::describeValue(pattern)));
        return false;
    }
    // Exactly what the validator does with it: compile a schema holding only this pattern (once
    // per distinct pattern: inlining repeats them).
    const std::string text(view(pattern));
    auto cached = pattern_errors_.find(text);
    if (cached == pattern_errors_.end()) {
        const std::string schema = "{\"pattern\":" + jsonString(text) + "}";
        Result<json::CompiledSchema> compiled = json::compileSchema(schema, "");
        std::string why;
        if (!compiled) {
            why = compiled.error().message;
            if (why.starts_with("pattern: ")) {
                why.erase(0, 9);
            }
        }
        cached = pattern_errors_.emplace(text, std::move(why)).first;
    }
    if (cached->second.empty()) {
        return true;
    }
    warnings_.add(pointer,
                  fmt::format("not accepted by crankd's validator ({}); dropped", cached->second));
    return false;
}

Result<bool> SchemaConverter::copyLiteral(std::string_view key, const Value& value,
                                          const std::string& pointer, Value& out, std::size_t depth,
                                          bool as_array) {
    const auto [nesting, cost] = measure(value);
    if (depth + nesting + (as_array ? 1 : 0) > max_literal_depth) {
        warnings_.add(pointer, "nested too deeply to fit in an operation; dropped");
        return false;
    }
    if (!budget_.spend(cost)) {
        return documentTooLarge();
    }
    Value copy(value, allocator_);
    if (as_array) {
        Value one(rapidjson::kArrayType);
        one.PushBack(copy, allocator_);
        addMember(out, key, one);
    } else {
        addMember(out, key, copy);
    }
    return true;
}

}  // namespace crank::openapi::detail
