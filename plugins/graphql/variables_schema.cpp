#include "variables_schema.h"

#include <algorithm>
#include <cstddef>
#include <deque>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <crank/sdk/json.hpp>

namespace crank::graphql {
namespace {

using Writer = rapidjson::Writer<rapidjson::StringBuffer>;

/// Input object types put in `$defs` per input schema; those past it are left unconstrained.
constexpr std::size_t kMaxDefs = 2000;
/// Type wrappers (lists and non-null) followed in one type reference.
constexpr std::size_t kMaxTypeDepth = 64;
/// Root fields named in a description before "...".
constexpr std::size_t kMaxDescribedFields = 16;

// RapidJSON's writer copies bytes unchecked: text that is not UTF-8 (a Schema built by hand; the
// readers already repair or refuse it) is repaired so that the input schema stays valid JSON.

void key(Writer& w, std::string_view k) {
    if (!detail::validUtf8(k)) {
        const std::string repaired = detail::repairUtf8(k);
        w.Key(repaired.data(), static_cast<rapidjson::SizeType>(repaired.size()));
        return;
    }
    w.Key(k.data(), static_cast<rapidjson::SizeType>(k.size()));
}

void string(Writer& w, std::string_view s) {
    if (!detail::validUtf8(s)) {
        const std::string repaired = detail::repairUtf8(s);
        w.String(repaired.data(), static_cast<rapidjson::SizeType>(repaired.size()));
        return;
    }
    w.String(s.data(), static_cast<rapidjson::SizeType>(s.size()));
}

/// `#/$defs/NAME` with NAME escaped as a JSON Pointer token (RFC 6901: `~` → `~0`, `/` → `~1`),
/// as crankd's JSON Schema compiler resolves it.
std::string defsReference(std::string_view name) {
    std::string out = "#/$defs/";
    for (const char c : name) {
        if (c == '~') {
            out += "~0";
        } else if (c == '/') {
            out += "~1";
        } else {
            out.push_back(c);
        }
    }
    return out;
}

/// A name as an error message repeats it.
std::string shown(std::string_view name) {
    return detail::excerpt(name);
}

bool isBuiltInScalar(std::string_view name) {
    return name == "Int" || name == "Float" || name == "String" || name == "Boolean" ||
           name == "ID";
}

/// Writes the members of a built-in scalar's schema (no braces).
void builtInScalarMembers(Writer& w, std::string_view name) {
    key(w, "type");
    if (name == "Int") {
        string(w, "integer");
        key(w, "minimum");
        w.Int64(-2147483648LL);
        key(w, "maximum");
        w.Int64(2147483647LL);
    } else if (name == "Float") {
        string(w, "number");
    } else if (name == "String") {
        string(w, "string");
    } else if (name == "Boolean") {
        string(w, "boolean");
    } else {  // ID
        w.StartArray();
        string(w, "string");
        string(w, "integer");
        w.EndArray();
    }
}

std::string_view kindText(NamedType::Kind kind) {
    switch (kind) {
        case NamedType::Kind::object:
            return "an object type";
        case NamedType::Kind::interface:
            return "an interface type";
        case NamedType::Kind::union_type:
            return "a union type";
        case NamedType::Kind::scalar:
            return "a scalar type";
        case NamedType::Kind::enum_type:
            return "an enum type";
        case NamedType::Kind::input_object:
            return "an input object type";
    }
    return "a type";
}

/// Whether JSON text nests arrays and objects at most `max` deep (checked before parsing: RapidJSON
/// values are destroyed recursively).
bool shallowJson(std::string_view json, std::size_t max) {
    return sdk::jsonNestingDepth(json) <= max;
}

/// Writes a default value given as JSON text; false (nothing written) when it does not parse.
bool writeDefault(Writer& w, const std::string& json) {
    if (!shallowJson(json, kMaxTypeDepth)) {
        return false;
    }
    rapidjson::Document doc;
    doc.Parse<rapidjson::kParseIterativeFlag>(json.data(), json.size());
    if (doc.HasParseError()) {
        return false;
    }
    key(w, "default");
    doc.Accept(w);  // parsed within the schema reader's bounds
    return true;
}

/// The schema of one input schema being written: properties as they come, input objects queued
/// for `$defs`.
class SchemaWriter {
public:
    SchemaWriter(const Schema* schema, Writer& w, std::vector<std::string>& warnings)
        : schema_(schema), w_(w), warnings_(warnings) {}

    /// Writes one property's schema (with braces) for `type`; `where` names it in errors
    /// ("variable $filter"). `description` and `default_json` belong to the property.
    bool property(const TypeRef& type, const std::string& where, const std::string& description,
                  const std::optional<std::string>& default_json) {
        return typeSchema(type, where, description, default_json, 0);
    }

    /// Writes "$defs" (the key too) when any input object was reached. False on error.
    bool defs() {
        if (queue_.empty()) {
            return true;
        }
        key(w_, "$defs");
        w_.StartObject();
        while (!queue_.empty()) {
            const NamedType* type = queue_.front();
            queue_.pop_front();
            if (!inputObject(*type)) {
                return false;
            }
        }
        w_.EndObject();
        return true;
    }

    const std::string& error() const { return error_; }

    /// The named types left unconstrained because there was no schema, in order.
    const std::vector<std::string>& unknown() const { return unknown_; }

private:
    bool fail(std::string message) {
        error_ = std::move(message);
        return false;
    }

    bool typeSchema(const TypeRef& type, const std::string& where, const std::string& description,
                    const std::optional<std::string>& default_json, std::size_t depth) {
        if (depth > kMaxTypeDepth) {
            return fail(where + ": the type is nested more than " + std::to_string(kMaxTypeDepth) +
                        " levels deep");
        }
        if (type.kind == TypeRef::Kind::non_null) {
            if (!type.of) {
                return fail(where + ": a non-null type without its inner type");
            }
            return typeSchema(*type.of, where, description, default_json, depth + 1);
        }
        if (type.kind == TypeRef::Kind::list) {
            if (!type.of) {
                return fail(where + ": a list type without its item type");
            }
            w_.StartObject();
            key(w_, "type");
            string(w_, "array");
            if (!description.empty()) {
                key(w_, "description");
                string(w_, description);
            }
            if (default_json) {
                writeDefault(w_, *default_json);
            }
            key(w_, "items");
            // A nullable item type lets a list hold null: [[1, null], [2]] is a valid [[Int]].
            const bool nullableItems = type.of->kind != TypeRef::Kind::non_null;
            if (nullableItems) {
                w_.StartObject();
                key(w_, "anyOf");
                w_.StartArray();
            }
            if (!typeSchema(*type.of, where, "", std::nullopt, depth + 1)) {
                return false;
            }
            if (nullableItems) {
                w_.StartObject();
                key(w_, "type");
                string(w_, "null");
                w_.EndObject();
                w_.EndArray();
                w_.EndObject();
            }
            w_.EndObject();
            return true;
        }
        return named(type.name, where, description, default_json);
    }

    bool named(const std::string& name, const std::string& where, const std::string& description,
               const std::optional<std::string>& default_json) {
        const NamedType* type = schema_ != nullptr ? schema_->type(name) : nullptr;
        const auto describe = [&](const std::string& own) {
            const std::string& text = description.empty() ? own : description;
            if (!text.empty()) {
                key(w_, "description");
                string(w_, text);
            }
        };
        const auto finish = [&] {
            if (default_json) {
                writeDefault(w_, *default_json);
            }
            w_.EndObject();
            return true;
        };
        if (schema_ == nullptr || isBuiltInScalar(name)) {
            w_.StartObject();
            if (isBuiltInScalar(name)) {
                builtInScalarMembers(w_, name);
                describe("");
            } else {
                if (std::find(unknown_.begin(), unknown_.end(), name) == unknown_.end()) {
                    unknown_.push_back(name);
                }
                const std::string note = "GraphQL type " + name + " (the schema was not available)";
                key(w_, "description");
                string(w_, description.empty() ? note : description + " (" + note + ")");
            }
            return finish();
        }
        if (type == nullptr) {
            return fail(where + ": type " + shown(name) + " is not in the schema");
        }
        switch (type->kind) {
            case NamedType::Kind::scalar: {
                w_.StartObject();
                key(w_, "type");
                string(w_, "string");
                std::string note = "GraphQL scalar " + name;
                if (!type->description.empty()) {
                    note += ": " + type->description;
                }
                key(w_, "description");
                string(w_, description.empty() ? note : description + " (" + note + ")");
                return finish();
            }
            case NamedType::Kind::enum_type: {
                w_.StartObject();
                key(w_, "type");
                string(w_, "string");
                key(w_, "enum");
                w_.StartArray();
                for (const EnumValue& value : type->enum_values) {
                    string(w_, value.name);
                }
                w_.EndArray();
                describe(type->description);
                return finish();
            }
            case NamedType::Kind::input_object: {
                w_.StartObject();
                if (reference(*type)) {
                    key(w_, "$ref");
                    string(w_, defsReference(name));
                    describe("");
                } else {
                    describe("GraphQL input " + name + " (not described: more than " +
                             std::to_string(kMaxDefs) + " input types)");
                }
                return finish();
            }
            case NamedType::Kind::object:
            case NamedType::Kind::interface:
            case NamedType::Kind::union_type:
                break;
        }
        return fail(where + ": type " + shown(name) + " is " + std::string(kindText(type->kind)) +
                    ", not an input type");
    }

    /// Queues an input object for `$defs`; false when the bound is reached (with a warning).
    bool reference(const NamedType& type) {
        if (queued_.contains(type.name)) {
            return true;
        }
        if (queued_.size() >= kMaxDefs) {
            if (!warned_bound_) {
                warned_bound_ = true;
                warnings_.push_back("the variables reach more than " + std::to_string(kMaxDefs) +
                                    " input types: " + type.name +
                                    " and those after it are not checked");
            }
            return false;
        }
        queued_.insert(type.name);
        queue_.push_back(&type);
        return true;
    }

    bool inputObject(const NamedType& type) {
        key(w_, type.name);
        w_.StartObject();
        key(w_, "type");
        string(w_, "object");
        if (!type.description.empty()) {
            key(w_, "description");
            string(w_, type.description);
        }
        key(w_, "properties");
        w_.StartObject();
        std::vector<const std::string*> required;
        for (const InputValue& field : type.input_fields) {
            key(w_, field.name);
            const std::string where = "input " + shown(type.name) + "." + shown(field.name);
            std::string description = field.description;
            if (field.deprecated) {
                description += description.empty() ? "Deprecated." : " (deprecated)";
            }
            if (!typeSchema(field.type, where, description, field.default_json, 0)) {
                return false;
            }
            if (!type.one_of && field.type.nonNullable() && !field.default_json) {
                required.push_back(&field.name);
            }
        }
        w_.EndObject();
        if (!required.empty()) {
            key(w_, "required");
            w_.StartArray();
            for (const std::string* name : required) {
                string(w_, *name);
            }
            w_.EndArray();
        }
        key(w_, "additionalProperties");
        w_.Bool(false);
        if (type.one_of) {
            key(w_, "minProperties");
            w_.Uint(1);
            key(w_, "maxProperties");
            w_.Uint(1);
        }
        w_.EndObject();
        return true;
    }

    const Schema* schema_;
    Writer& w_;
    std::vector<std::string>& warnings_;
    std::deque<const NamedType*> queue_;
    std::set<std::string, std::less<>> queued_;
    std::vector<std::string> unknown_;
    std::string error_;
    bool warned_bound_ = false;
};

/// The description of the root field argument that `variable` is passed to, if any.
std::string argumentDescription(const OperationDefinition& operation, const Schema* schema,
                                const std::string& variable) {
    if (schema == nullptr) {
        return "";
    }
    const NamedType* root = schema->rootType(operation.kind);
    if (root == nullptr) {
        return "";
    }
    for (const VariableUse& use : operation.root_variable_uses) {
        if (use.variable != variable) {
            continue;
        }
        const Field* field = root->field(use.field);
        if (field == nullptr) {
            continue;
        }
        for (const InputValue& arg : field->args) {
            if (arg.name == use.argument && !arg.description.empty()) {
                return arg.description;
            }
        }
    }
    return "";
}

}  // namespace

std::string variablesInputSchema(const OperationDefinition& operation, const Schema* schema,
                                 std::vector<std::string>& warnings, std::string& error) {
    rapidjson::StringBuffer buffer;
    Writer w(buffer);
    SchemaWriter writer(schema, w, warnings);
    w.StartObject();
    key(w, "type");
    string(w, "object");
    key(w, "properties");
    w.StartObject();
    std::vector<const std::string*> required;
    for (const VariableDefinition& variable : operation.variables) {
        key(w, variable.name);
        if (!writer.property(variable.type, "variable $" + shown(variable.name),
                             argumentDescription(operation, schema, variable.name),
                             variable.default_json)) {
            error = writer.error();
            return "";
        }
        if (variable.type.nonNullable() && !variable.default_json) {
            required.push_back(&variable.name);
        }
    }
    w.EndObject();
    if (!required.empty()) {
        key(w, "required");
        w.StartArray();
        for (const std::string* name : required) {
            string(w, *name);
        }
        w.EndArray();
    }
    key(w, "additionalProperties");
    w.Bool(false);
    if (!writer.defs()) {
        error = writer.error();
        return "";
    }
    w.EndObject();
    if (!writer.unknown().empty()) {
        std::string names;
        for (const std::string& name : writer.unknown()) {
            names += (names.empty() ? "" : ", ") + name;
        }
        warnings.push_back("the schema was not available: variables of type" +
                           std::string(writer.unknown().size() == 1 ? " " : "s ") + names +
                           " are not checked");
    }
    error.clear();
    return {buffer.GetString(), buffer.GetSize()};
}

std::string operationDescription(const OperationDefinition& operation, const Schema* schema) {
    const std::string kind(kindName(operation.kind));
    std::vector<std::string_view> fields;
    for (const std::string& name : operation.root_fields) {
        if (name != "__typename" && std::find(fields.begin(), fields.end(), name) == fields.end()) {
            fields.emplace_back(name);
        }
    }
    if (fields.size() == 1 && schema != nullptr) {
        if (const NamedType* root = schema->rootType(operation.kind)) {
            if (const Field* field = root->field(fields[0]);
                field != nullptr && !field->description.empty()) {
                return field->description;
            }
        }
    }
    if (!fields.empty()) {
        std::string out = "GraphQL " + kind + ":";
        for (std::size_t i = 0; i < fields.size(); ++i) {
            if (i == kMaxDescribedFields) {
                out += ", ...";
                break;
            }
            out += (i == 0 ? " " : ", ") + std::string(fields[i]);
        }
        return out;
    }
    if (!operation.name.empty()) {
        return "GraphQL " + kind + " " + operation.name;
    }
    return schema != nullptr ? "GraphQL " + kind : "";
}

}  // namespace crank::graphql
