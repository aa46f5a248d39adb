#include "schema_import.h"

#include <algorithm>
#include <cctype>
#include <cstddef>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <rapidjson/document.h>
#include <rapidjson/prettywriter.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "graphql_syntax.h"
#include <crank/sdk/json.hpp>

namespace crank::graphql {
namespace {

/// Fields selected in one document, all levels together: max_fields ** max_depth could be huge.
constexpr std::size_t kMaxSelectedFields = 2000;
/// A tool name's length (crankd's config: 1 to 128 characters).
constexpr std::size_t kMaxToolName = 128;
/// A description's length (crankd's config: at most 8192 bytes).
constexpr std::size_t kMaxDescription = 8192;
/// Nesting of a default value turned into a GraphQL literal.
constexpr std::size_t kMaxLiteralDepth = 64;

bool isUpper(char c) {
    return c >= 'A' && c <= 'Z';
}
bool isLower(char c) {
    return c >= 'a' && c <= 'z';
}
bool isDigit(char c) {
    return c >= '0' && c <= '9';
}
char lower(char c) {
    return isUpper(c) ? static_cast<char>(c - 'A' + 'a') : c;
}
char upper(char c) {
    return isLower(c) ? static_cast<char>(c - 'a' + 'A') : c;
}

bool isName(std::string_view s) {
    if (s.empty() || isDigit(s[0])) {
        return false;
    }
    return std::all_of(s.begin(), s.end(),
                       [](char c) { return isUpper(c) || isLower(c) || isDigit(c) || c == '_'; });
}

/// `itemsByOwner` → `items_by_owner`, `getURLForItem` → `get_url_for_item`.
std::string snakeCase(std::string_view name) {
    std::string out;
    for (std::size_t i = 0; i < name.size(); ++i) {
        const char c = name[i];
        if (isUpper(c) && i > 0 && !out.empty() && out.back() != '_') {
            const char prev = name[i - 1];
            const bool next_lower = i + 1 < name.size() && isLower(name[i + 1]);
            if (isLower(prev) || isDigit(prev) || (isUpper(prev) && next_lower)) {
                out.push_back('_');
            }
        }
        out.push_back(lower(c));
    }
    return out;
}

/// `itemsByOwner` → `ItemsByOwner`, `items_by_owner` → `ItemsByOwner`.
std::string pascalCase(std::string_view name) {
    std::string out;
    bool up = true;
    for (const char c : name) {
        if (c == '_') {
            up = true;
            continue;
        }
        out.push_back(up ? upper(c) : c);
        up = false;
    }
    if (out.empty() || isDigit(out[0])) {
        out.insert(0, "Field");
    }
    return out;
}

/// Cuts `text` to at most `max` bytes, not inside a UTF-8 sequence.
std::string cut(std::string text, std::size_t max) {
    if (text.size() <= max) {
        return text;
    }
    std::size_t end = max;
    while (end > 0 && (static_cast<unsigned char>(text[end]) & 0xC0U) == 0x80U) {
        --end;
    }
    text.resize(end);
    return text;
}

const TypeRef* unwrapNonNull(const TypeRef* type) {
    return type != nullptr && type->kind == TypeRef::Kind::non_null ? type->of.get() : type;
}

/// A GraphQL string literal: JSON's escapes are GraphQL's.
void quoteGraphqlString(std::string_view s, std::string& out) {
    sdk::appendJsonString(out, s);
}

/// A default value (JSON) as a GraphQL literal of type `type` (nullptr: unknown, e.g. inside a
/// custom scalar): enum values unquoted, input objects as `{a: 1}`. False when it cannot be.
bool graphqlLiteral(const rapidjson::Value& v, const TypeRef* type, const Schema& schema,
                    std::size_t depth, std::string& out) {
    if (depth > kMaxLiteralDepth) {
        return false;
    }
    type = unwrapNonNull(type);
    const bool is_list = type != nullptr && type->kind == TypeRef::Kind::list;
    const NamedType* named =
        type != nullptr && type->kind == TypeRef::Kind::named ? schema.type(type->name) : nullptr;
    if (v.IsNull()) {
        out += "null";
    } else if (v.IsBool()) {
        out += v.GetBool() ? "true" : "false";
    } else if (v.IsNumber()) {
        rapidjson::StringBuffer buffer;
        rapidjson::Writer<rapidjson::StringBuffer> w(buffer);
        v.Accept(w);
        out.append(buffer.GetString(), buffer.GetSize());
    } else if (v.IsString()) {
        const std::string_view s(v.GetString(), v.GetStringLength());
        if (named != nullptr && named->kind == NamedType::Kind::enum_type && isName(s) &&
            s != "true" && s != "false" && s != "null") {
            out += s;
        } else {
            quoteGraphqlString(s, out);
        }
    } else if (v.IsArray()) {
        out.push_back('[');
        bool first = true;
        for (const auto& item : v.GetArray()) {
            out += first ? "" : ", ";
            first = false;
            if (!graphqlLiteral(item, is_list ? type->of.get() : nullptr, schema, depth + 1, out)) {
                return false;
            }
        }
        out.push_back(']');
    } else {
        // A list type given one object stands for a one-item list (input coercion).
        if (is_list) {
            return graphqlLiteral(v, type->of.get(), schema, depth + 1, out);
        }
        out.push_back('{');
        bool first = true;
        for (auto it = v.MemberBegin(); it != v.MemberEnd(); ++it) {
            const std::string_view name(it->name.GetString(), it->name.GetStringLength());
            if (!isName(name)) {
                return false;
            }
            const TypeRef* field_type = nullptr;
            if (named != nullptr && named->kind == NamedType::Kind::input_object) {
                for (const InputValue& field : named->input_fields) {
                    if (field.name == name) {
                        field_type = &field.type;
                    }
                }
            }
            out += first ? "" : ", ";
            first = false;
            out += name;
            out += ": ";
            if (!graphqlLiteral(it->value, field_type, schema, depth + 1, out)) {
                return false;
            }
        }
        out.push_back('}');
    }
    return true;
}

/// Whether JSON text nests arrays and objects at most `max` deep (checked before parsing: RapidJSON
/// values are destroyed recursively).
bool shallowJson(std::string_view json, std::size_t max) {
    return sdk::jsonNestingDepth(json) <= max;
}

/// " = <literal>" for a default given as JSON text, "" when there is none or it cannot be
/// written (the argument's own default then applies anyway).
std::string defaultLiteral(const InputValue& arg, const Schema& schema) {
    if (!arg.default_json || !shallowJson(*arg.default_json, kMaxLiteralDepth)) {
        return "";
    }
    rapidjson::Document doc;
    doc.Parse<rapidjson::kParseIterativeFlag>(arg.default_json->data(), arg.default_json->size());
    if (doc.HasParseError()) {
        return "";
    }
    std::string literal;
    if (!graphqlLiteral(doc, &arg.type, schema, 0, literal)) {
        return "";
    }
    return " = " + literal;
}

bool requiredArgument(const InputValue& arg) {
    return arg.type.nonNullable() && !arg.default_json;
}

bool hasRequiredArguments(const Field& field) {
    return std::any_of(field.args.begin(), field.args.end(), requiredArgument);
}

/// Builds selection sets within the options' bounds and a budget of fields per document.
class Selector {
public:
    Selector(const Schema& schema, const ImportOptions& options)
        : schema_(schema),
          max_depth_(std::clamp<std::size_t>(options.max_depth, 1, 8)),
          max_fields_(std::max<std::size_t>(options.max_fields, 1)) {}

    /// The selection set of a field of named type `type` at `level` (the root field's own
    /// selection is level 1); "" when nothing can be selected.
    ///
    /// An empty result is remembered per (type, level): the budget only goes down (an empty
    /// subtree gives back what it took), and with less budget a selection that was empty stays
    /// empty, so the answer holds for every later call. Without it, a type whose object fields
    /// all lead to nothing (type T { f0: T ... f39: T }) is explored fields ** depth times.
    std::string selection(const NamedType& type, std::size_t level) {
        if (type.kind == NamedType::Kind::union_type) {
            return unionSelection(type);
        }
        if (empty_.contains({&type, level})) {
            return "";
        }
        std::string out = fieldsSelection(type, level);
        if (out.empty()) {
            empty_.emplace(&type, level);
            return "";
        }
        return "{" + out + " }";
    }

private:
    /// The fields selected in `type` at `level`, each with a leading space.
    std::string fieldsSelection(const NamedType& type, std::size_t level) {
        std::string out;
        std::size_t count = 0;
        for (const Field& field : type.fields) {
            if (count >= max_fields_ || budget_ == 0) {
                break;
            }
            if (!selectable(field)) {
                continue;
            }
            const NamedType* field_type = schema_.type(field.type.namedType());
            if (field_type == nullptr) {
                continue;
            }
            if (field_type->isLeaf()) {
                out += " " + field.name;
                --budget_;
                ++count;
                continue;
            }
            if (level >= max_depth_ || field_type->kind == NamedType::Kind::input_object) {
                continue;
            }
            --budget_;  // the field itself, before what it selects
            const std::string sub = selection(*field_type, level + 1);
            if (sub.empty()) {
                ++budget_;
                continue;
            }
            out += " " + field.name + " " + sub;
            ++count;
        }
        return out;
    }

    static bool selectable(const Field& field) {
        return !field.deprecated && !field.name.starts_with("__") && !hasRequiredArguments(field);
    }

    /// `{ __typename ... on A { id } ... on B { name } }`: the members' leaf fields.
    std::string unionSelection(const NamedType& type) {
        std::string out = "{ __typename";
        for (const std::string& member_name : type.possible_types) {
            const NamedType* member = schema_.type(member_name);
            if (member == nullptr || budget_ == 0) {
                continue;
            }
            std::string leaves;
            std::size_t count = 0;
            for (const Field& field : member->fields) {
                if (count >= max_fields_ || budget_ == 0) {
                    break;
                }
                const NamedType* field_type = schema_.type(field.type.namedType());
                if (selectable(field) && field_type != nullptr && field_type->isLeaf()) {
                    leaves += " " + field.name;
                    --budget_;
                    ++count;
                }
            }
            if (!leaves.empty()) {
                out.append(" ... on ").append(member_name).append(" {").append(leaves).append(" }");
            }
        }
        return out + " }";
    }

    const Schema& schema_;
    std::size_t max_depth_;
    std::size_t max_fields_;
    std::size_t budget_ = kMaxSelectedFields;
    std::set<std::pair<const NamedType*, std::size_t>> empty_;  ///< (type, level) selecting nothing
};

void key(rapidjson::PrettyWriter<rapidjson::StringBuffer>& w, std::string_view k) {
    w.Key(k.data(), static_cast<rapidjson::SizeType>(k.size()));
}

void string(rapidjson::PrettyWriter<rapidjson::StringBuffer>& w, std::string_view s) {
    if (!detail::validUtf8(s)) {  // RapidJSON's writer copies bytes unchecked
        const std::string repaired = detail::repairUtf8(s);
        w.String(repaired.data(), static_cast<rapidjson::SizeType>(repaired.size()));
        return;
    }
    w.String(s.data(), static_cast<rapidjson::SizeType>(s.size()));
}

struct Imported {
    std::string name;
    std::string description;
    std::string document;
    std::string operation_name;
};

/// The operation for one root field, or a reason it cannot be made (`why`).
bool importField(const Schema& schema, const ImportOptions& options, OperationDefinition::Kind kind,
                 const Field& field, Imported& out, std::string& why) {
    const NamedType* result = schema.type(field.type.namedType());
    if (result == nullptr) {
        why = "its type " + field.type.namedType() + " is not in the schema";
        return false;
    }
    for (const InputValue& arg : field.args) {
        const NamedType* arg_type = schema.type(arg.type.namedType());
        if (arg_type == nullptr) {
            why =
                "argument " + arg.name + ": type " + arg.type.namedType() + " is not in the schema";
            return false;
        }
        if (!arg_type->isInputType()) {
            why =
                "argument " + arg.name + ": type " + arg.type.namedType() + " is not an input type";
            return false;
        }
    }
    std::string selection;
    if (!result->isLeaf()) {
        if (result->kind == NamedType::Kind::input_object) {
            why = "its type " + result->name + " is an input type";
            return false;
        }
        Selector selector(schema, options);
        selection = selector.selection(*result, 1);
        if (selection.empty()) {
            selection = "{ __typename }";
        }
    }
    const std::string kind_text(kindName(kind));
    out.operation_name = pascalCase(field.name);
    std::string& doc = out.document;
    doc = kind_text + " " + out.operation_name;
    if (!field.args.empty()) {
        doc += "(";
        for (std::size_t i = 0; i < field.args.size(); ++i) {
            const InputValue& arg = field.args[i];
            doc += (i == 0 ? "$" : ", $") + arg.name + ": " + arg.type.text() +
                   defaultLiteral(arg, schema);
        }
        doc += ")";
    }
    doc += " { " + field.name;
    if (!field.args.empty()) {
        doc += "(";
        for (std::size_t i = 0; i < field.args.size(); ++i) {
            const InputValue& arg = field.args[i];
            doc += (i == 0 ? "" : ", ") + arg.name + ": $" + arg.name;
        }
        doc += ")";
    }
    if (!selection.empty()) {
        doc += " " + selection;
    }
    doc += " }";
    out.description =
        cut(field.description.empty() ? "GraphQL " + kind_text + " field " + field.name
                                      : field.description,
            kMaxDescription);
    return true;
}

}  // namespace

std::string defaultSelection(const Schema& schema, const TypeRef& type,
                             const ImportOptions& options) {
    const NamedType* named = schema.type(type.namedType());
    if (named == nullptr || named->isLeaf() || named->kind == NamedType::Kind::input_object) {
        return "";
    }
    Selector selector(schema, options);
    std::string out = selector.selection(*named, 1);
    return out.empty() ? "{ __typename }" : out;
}

std::string importOperations(const Schema& schema, const ImportOptions& options,
                             std::vector<std::string>& warnings) {
    std::vector<Imported> operations;
    std::set<std::string, std::less<>> used;
    const auto importRoot = [&](OperationDefinition::Kind kind) {
        const NamedType* root = schema.rootType(kind);
        if (root == nullptr) {
            return;
        }
        const std::string kind_text(kindName(kind));
        for (const Field& field : root->fields) {
            if (field.name.starts_with("__")) {
                continue;
            }
            const std::string where = root->name + "." + field.name;
            if (field.deprecated) {
                warnings.push_back(where + " is deprecated: not imported");
                continue;
            }
            Imported op;
            std::string why;
            if (!importField(schema, options, kind, field, op, why)) {
                warnings.push_back(where);
                warnings.back().append(": ").append(why).append(": not imported");
                continue;
            }
            std::string name = cut(options.prefix + snakeCase(field.name), kMaxToolName);
            if (used.contains(name) && kind == OperationDefinition::Kind::mutation) {
                name = cut(name, kMaxToolName - 9) + "_mutation";
            }
            if (used.contains(name)) {
                std::string base = name;
                for (std::size_t n = 2;; ++n) {
                    const std::string suffix = "_" + std::to_string(n);
                    name = cut(base, kMaxToolName - suffix.size()) + suffix;
                    if (!used.contains(name)) {
                        break;
                    }
                }
                warnings.push_back(where);
                warnings.back()
                    .append(": the tool name ")
                    .append(base)
                    .append(" is taken: named ")
                    .append(name);
            }
            used.insert(name);
            op.name = std::move(name);
            operations.push_back(std::move(op));
        }
    };
    importRoot(OperationDefinition::Kind::query);
    if (options.mutations) {
        importRoot(OperationDefinition::Kind::mutation);
    }
    if (!schema.subscription_type.empty()) {
        warnings.push_back("subscriptions (" + schema.subscription_type +
                           ") are not imported: the graphql plugin runs queries and mutations");
    }
    rapidjson::StringBuffer buffer;
    rapidjson::PrettyWriter<rapidjson::StringBuffer> w(buffer);
    w.SetIndent(' ', 2);
    w.StartArray();
    for (const Imported& op : operations) {
        w.StartObject();
        key(w, "name");
        string(w, op.name);
        key(w, "description");
        string(w, op.description);
        key(w, "protocol");
        string(w, "graphql");
        key(w, "config");
        w.StartObject();
        key(w, "endpoint");
        string(w, options.endpoint);
        key(w, "document");
        string(w, op.document);
        key(w, "operation_name");
        string(w, op.operation_name);
        w.EndObject();
        w.EndObject();
    }
    w.EndArray();
    return {buffer.GetString(), buffer.GetSize()};
}

}  // namespace crank::graphql
