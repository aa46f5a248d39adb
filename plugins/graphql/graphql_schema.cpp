#include "graphql_schema.h"

#include <algorithm>
#include <cstddef>
#include <exception>
#include <initializer_list>
#include <set>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <rapidjson/document.h>
#include <rapidjson/error/en.h>

#include <crank/sdk/json.hpp>

namespace crank::graphql {

const Field* NamedType::field(std::string_view field_name) const {
    for (const auto& f : fields) {
        if (f.name == field_name) {
            return &f;
        }
    }
    return nullptr;
}

const NamedType* Schema::type(std::string_view name) const {
    const auto it = types.find(name);
    return it == types.end() ? nullptr : &it->second;
}

const NamedType* Schema::rootType(OperationDefinition::Kind kind) const {
    const std::string& name = kind == OperationDefinition::Kind::query      ? query_type
                              : kind == OperationDefinition::Kind::mutation ? mutation_type
                                                                            : subscription_type;
    return name.empty() ? nullptr : type(name);
}

const std::string_view kIntrospectionQuery = R"(query IntrospectionQuery {
  __schema {
    queryType { name }
    mutationType { name }
    subscriptionType { name }
    types { ...FullType }
  }
}

fragment FullType on __Type {
  kind
  name
  description
  fields(includeDeprecated: true) {
    name
    description
    args { ...InputValue }
    type { ...TypeRef }
    isDeprecated
    deprecationReason
  }
  inputFields { ...InputValue }
  interfaces { ...TypeRef }
  enumValues(includeDeprecated: true) {
    name
    description
    isDeprecated
    deprecationReason
  }
  possibleTypes { ...TypeRef }
}

fragment InputValue on __InputValue {
  name
  description
  type { ...TypeRef }
  defaultValue
}

fragment TypeRef on __Type {
  kind
  name
  ofType {
    kind
    name
    ofType {
      kind
      name
      ofType {
        kind
        name
        ofType {
          kind
          name
          ofType {
            kind
            name
            ofType {
              kind
              name
              ofType {
                kind
                name
                ofType {
                  kind
                  name
                }
              }
            }
          }
        }
      }
    }
  }
}
)";

std::string introspectionQuery(bool with_one_of) {
    std::string query(kIntrospectionQuery);
    if (with_one_of) {
        const std::string_view anchor = "  possibleTypes { ...TypeRef }\n";
        const std::size_t at = query.find(anchor);
        if (at != std::string::npos) {
            query.insert(at + anchor.size(), "  isOneOf\n");
        }
    }
    return query;
}

namespace {

/// Thrown inside the readers; the public functions turn it into `error`.
class SchemaError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

using Kind = NamedType::Kind;

void addBuiltInScalars(Schema& schema) {
    for (const char* name : {"Int", "Float", "String", "Boolean", "ID"}) {
        if (schema.types.count(name) == 0) {
            NamedType t;
            t.kind = Kind::scalar;
            t.name = name;
            schema.types.emplace(name, std::move(t));
        }
    }
}

/// How a definition of this kind starts in SDL: "type", "interface", "input" ...
std::string_view keyword(Kind kind) {
    switch (kind) {
        case Kind::scalar:
            return "scalar";
        case Kind::object:
            return "type";
        case Kind::interface:
            return "interface";
        case Kind::union_type:
            return "union";
        case Kind::enum_type:
            return "enum";
        case Kind::input_object:
            return "input";
    }
    return "type";
}

std::string_view kindText(Kind kind) {
    switch (kind) {
        case Kind::scalar:
            return "a scalar";
        case Kind::object:
            return "an object type";
        case Kind::interface:
            return "an interface";
        case Kind::union_type:
            return "a union";
        case Kind::enum_type:
            return "an enum";
        case Kind::input_object:
            return "an input object type";
    }
    return "a type";
}

/// A name (or other piece of input) as a message repeats it: an excerpt.
std::string shown(std::string_view text) {
    return detail::excerpt(text);
}

std::string concat(std::initializer_list<std::string_view> parts) {
    std::string out;
    for (const auto part : parts) {
        out += part;
    }
    return out;
}

// ---- Checks shared by both readers ----

class SchemaChecker {
public:
    explicit SchemaChecker(Schema& schema) : schema_(schema) {}

    void run() {
        for (const auto& [name, type] : schema_.types) {
            checkType(type);
        }
        for (auto& [name, type] : schema_.types) {
            if (type.kind == Kind::interface) {
                type.possible_types.clear();
            }
        }
        for (const auto& [name, type] : schema_.types) {
            if (type.kind != Kind::object) {
                continue;
            }
            for (const auto& i : type.interfaces) {
                schema_.types.find(i)->second.possible_types.push_back(name);
            }
        }
        checkRoot("query", schema_.query_type);
        checkRoot("mutation", schema_.mutation_type);
        checkRoot("subscription", schema_.subscription_type);
    }

private:
    void checkRoot(std::string_view what, const std::string& name) {
        if (name.empty()) {
            return;
        }
        const NamedType* t = schema_.type(name);
        if (t == nullptr) {
            throw SchemaError("the " + std::string(what) + " type " + shown(name) +
                              " is not in the schema");
        }
        if (t->kind != Kind::object) {
            throw SchemaError("the " + std::string(what) + " type " + shown(name) + " is " +
                              std::string(kindText(t->kind)) + ", not an object type");
        }
    }

    const NamedType& resolve(const std::string& where, const std::string& name) const {
        const NamedType* t = schema_.type(name);
        if (t == nullptr) {
            throw SchemaError(where + ": unknown type " + shown(name));
        }
        return *t;
    }

    void checkInput(const std::string& where, const TypeRef& type) const {
        const NamedType& t = resolve(where, type.namedType());
        if (!t.isInputType()) {
            throw SchemaError(where + ": type " + shown(t.name) + " is " +
                              std::string(kindText(t.kind)) + ", not an input type");
        }
    }

    static void unique(std::set<std::string, std::less<>>& seen, const std::string& where,
                       const std::string& what, const std::string& name) {
        if (!seen.insert(name).second) {
            throw SchemaError(where + ": " + what + " " + shown(name) + " is defined twice");
        }
    }

    void checkFields(const NamedType& type, const std::string& where) const {
        std::set<std::string, std::less<>> seen;
        for (const auto& f : type.fields) {
            unique(seen, where, "field", f.name);
            const std::string at = where + ", field " + shown(f.name);
            const NamedType& t = resolve(at, f.type.namedType());
            if (t.kind == Kind::input_object) {
                throw SchemaError(at + ": type " + shown(t.name) +
                                  " is an input object type, not an output type");
            }
            std::set<std::string, std::less<>> args;
            for (const auto& a : f.args) {
                unique(args, at, "argument", a.name);
                checkInput(at + ", argument " + shown(a.name), a.type);
            }
        }
    }

    void checkType(const NamedType& type) const {
        const std::string where = std::string(keyword(type.kind)) + " " + shown(type.name);
        checkFields(type, where);
        for (const auto& i : type.interfaces) {
            const NamedType* t = schema_.type(i);
            if (t == nullptr || t->kind != Kind::interface) {
                const std::string name = shown(i);
                throw SchemaError(concat({where, " implements ", name, ": ", name, " is ",
                                          t == nullptr ? "not defined" : kindText(t->kind),
                                          t == nullptr ? "" : ", not an interface"}));
            }
        }
        if (type.kind == Kind::union_type) {
            for (const auto& m : type.possible_types) {
                const NamedType* t = schema_.type(m);
                if (t == nullptr || t->kind != Kind::object) {
                    throw SchemaError(concat({where, ": member ", shown(m), " is ",
                                              t == nullptr ? "not defined" : kindText(t->kind),
                                              t == nullptr ? "" : ", not an object type"}));
                }
            }
        }
        std::set<std::string, std::less<>> seen;
        for (const auto& f : type.input_fields) {
            unique(seen, where, "field", f.name);
            checkInput(where + ", field " + shown(f.name), f.type);
        }
        std::set<std::string, std::less<>> values;
        for (const auto& v : type.enum_values) {
            unique(values, where, "value", v.name);
        }
    }

    Schema& schema_;
};

void finishSchema(Schema& schema, std::size_t max_types) {
    addBuiltInScalars(schema);
    if (schema.types.size() > max_types) {
        throw SchemaError("the schema has " + std::to_string(schema.types.size()) +
                          " types, more than the limit of " + std::to_string(max_types));
    }
    SchemaChecker(schema).run();
}

// ---- Introspection ----

using Value = rapidjson::Value;

/// Refuses JSON nested deeper than `max_depth`, without recursion.
void checkJsonDepth(std::string_view json, std::size_t max_depth) {
    if (sdk::jsonNestingDepth(json) > max_depth) {
        throw SchemaError("the introspection result nests deeper than " +
                          std::to_string(max_depth) + " levels");
    }
}

const Value* member(const Value& object, const char* name) {
    const auto it = object.FindMember(name);
    if (it == object.MemberEnd() || it->value.IsNull()) {
        return nullptr;
    }
    return &it->value;
}

std::string stringMember(const Value& object, const char* name, const std::string& path,
                         bool required) {
    const Value* v = member(object, name);
    if (v == nullptr) {
        if (required) {
            throw SchemaError(path + ": " + name + " is missing");
        }
        return {};
    }
    if (!v->IsString()) {
        throw SchemaError(path + "." + name + ": expected a string");
    }
    return {v->GetString(), v->GetStringLength()};
}

/// A name member: a GraphQL name, else an error quoting the start of what is there.
std::string nameMember(const Value& object, const char* name, const std::string& path) {
    std::string value = stringMember(object, name, path, true);
    if (!detail::isName(value)) {
        const auto name_char = [](char c) {
            return c == '_' || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
                   (c >= '0' && c <= '9');
        };
        const bool too_long = value.size() > kMaxNameBytes && (value[0] < '0' || value[0] > '9') &&
                              std::all_of(value.begin(), value.end(), name_char);
        throw SchemaError(path + "." + name + ": \"" +
                          detail::excerpt(value, detail::kMaxNameExcerptBytes) + "\" is " +
                          (too_long ? "longer than the " + std::to_string(kMaxNameBytes) +
                                          " bytes a GraphQL name may have"
                                    : std::string("not a GraphQL name")));
    }
    return value;
}

/// A description: invalid UTF-8 (a sloppy upstream) is repaired, not refused, so that what is
/// derived from it (input schemas, tool descriptions) stays valid JSON text.
std::string descriptionMember(const Value& object, const std::string& path) {
    return detail::repairUtf8(stringMember(object, "description", path, false));
}

bool boolMember(const Value& object, const char* name, const std::string& path) {
    const Value* v = member(object, name);
    if (v == nullptr) {
        return false;
    }
    if (!v->IsBool()) {
        throw SchemaError(path + "." + name + ": expected a boolean");
    }
    return v->GetBool();
}

/// The elements of an array member (none when it is missing or null), each with its path.
template <typename Fn>
void forEach(const Value& object, const char* name, const std::string& path, Fn&& fn) {
    const Value* v = member(object, name);
    if (v == nullptr) {
        return;
    }
    if (!v->IsArray()) {
        throw SchemaError(path + "." + name + ": expected an array");
    }
    std::size_t i = 0;
    for (const auto& element : v->GetArray()) {
        const std::string at = path + "." + name + "[" + std::to_string(i++) + "]";
        if (!element.IsObject()) {
            throw SchemaError(at + ": expected an object");
        }
        fn(element, at);
    }
}

bool namedKind(std::string_view kind, Kind& out) {
    static constexpr std::pair<std::string_view, Kind> kKinds[] = {
        {"SCALAR", Kind::scalar},       {"OBJECT", Kind::object},
        {"INTERFACE", Kind::interface}, {"UNION", Kind::union_type},
        {"ENUM", Kind::enum_type},      {"INPUT_OBJECT", Kind::input_object},
    };
    for (const auto& [text, kind_value] : kKinds) {
        if (text == kind) {
            out = kind_value;
            return true;
        }
    }
    return false;
}

TypeRef readTypeRef(const Value& v, const std::string& path) {
    if (!v.IsObject()) {
        throw SchemaError(path + ": expected an object");
    }
    const std::string kind = stringMember(v, "kind", path, true);
    if (kind == "NON_NULL" || kind == "LIST") {
        const Value* of = member(v, "ofType");
        if (of == nullptr) {
            throw SchemaError(path + ": ofType is missing");
        }
        TypeRef inner = readTypeRef(*of, path + ".ofType");
        if (kind == "LIST") {
            return TypeRef::listOf(std::move(inner));
        }
        if (inner.kind == TypeRef::Kind::non_null) {
            throw SchemaError(path + ": NON_NULL wraps NON_NULL");
        }
        return TypeRef::nonNull(std::move(inner));
    }
    Kind ignored{};
    if (!namedKind(kind, ignored)) {
        throw SchemaError(path + ".kind: unknown kind \"" + shown(kind) + "\"");
    }
    return TypeRef::named(nameMember(v, "name", path));
}

std::string readNamedRef(const Value& v, const std::string& path) {
    const TypeRef t = readTypeRef(v, path);
    if (t.kind != TypeRef::Kind::named) {
        throw SchemaError(path + ": expected a named type, found " + shown(t.text()));
    }
    return t.name;
}

InputValue readInputValue(const Value& v, const std::string& path) {
    InputValue iv;
    iv.name = nameMember(v, "name", path);
    iv.description = descriptionMember(v, path);
    const Value* type = member(v, "type");
    if (type == nullptr) {
        throw SchemaError(path + ": type is missing");
    }
    iv.type = readTypeRef(*type, path + ".type");
    if (member(v, "defaultValue") != nullptr) {
        const std::string literal = stringMember(v, "defaultValue", path, false);
        std::string ignored;
        iv.default_json = valueToJson(literal, ignored);
    }
    iv.deprecated = boolMember(v, "isDeprecated", path);
    return iv;
}

Field readField(const Value& v, const std::string& path) {
    Field f;
    f.name = nameMember(v, "name", path);
    f.description = descriptionMember(v, path);
    forEach(v, "args", path, [&f](const Value& a, const std::string& at) {
        f.args.push_back(readInputValue(a, at));
    });
    const Value* type = member(v, "type");
    if (type == nullptr) {
        throw SchemaError(path + ": type is missing");
    }
    f.type = readTypeRef(*type, path + ".type");
    f.deprecated = boolMember(v, "isDeprecated", path);
    return f;
}

NamedType readType(const Value& v, const std::string& path) {
    NamedType t;
    const std::string kind = stringMember(v, "kind", path, true);
    if (!namedKind(kind, t.kind)) {
        throw SchemaError(path + ".kind: " + shown(kind) + " is not the kind of a named type");
    }
    t.name = nameMember(v, "name", path);
    t.description = descriptionMember(v, path);
    forEach(v, "fields", path,
            [&t](const Value& f, const std::string& at) { t.fields.push_back(readField(f, at)); });
    forEach(v, "inputFields", path, [&t](const Value& f, const std::string& at) {
        t.input_fields.push_back(readInputValue(f, at));
    });
    forEach(v, "interfaces", path, [&t](const Value& i, const std::string& at) {
        t.interfaces.push_back(readNamedRef(i, at));
    });
    forEach(v, "enumValues", path, [&t](const Value& e, const std::string& at) {
        EnumValue ev;
        ev.name = nameMember(e, "name", at);
        if (ev.name == "true" || ev.name == "false" || ev.name == "null") {
            throw SchemaError(at + ".name: an enum value cannot be named " + ev.name);
        }
        ev.description = descriptionMember(e, at);
        ev.deprecated = boolMember(e, "isDeprecated", at);
        t.enum_values.push_back(std::move(ev));
    });
    forEach(v, "possibleTypes", path, [&t](const Value& p, const std::string& at) {
        t.possible_types.push_back(readNamedRef(p, at));
    });
    t.one_of = boolMember(v, "isOneOf", path);
    return t;
}

std::string rootName(const Value& schema, const char* name) {
    const Value* root = member(schema, name);
    if (root == nullptr) {
        return {};
    }
    if (!root->IsObject()) {
        throw SchemaError(std::string("__schema.") + name + ": expected an object");
    }
    return nameMember(*root, "name", std::string("__schema.") + name);
}

Schema readSchema(const Value& v, const SchemaLimits& limits) {
    if (!v.IsObject()) {
        throw SchemaError("__schema: expected an object");
    }
    Schema schema;
    schema.query_type = rootName(v, "queryType");
    schema.mutation_type = rootName(v, "mutationType");
    schema.subscription_type = rootName(v, "subscriptionType");
    if (member(v, "types") == nullptr) {
        throw SchemaError("__schema: types is missing");
    }
    std::size_t count = 0;
    forEach(v, "types", "__schema", [&](const Value& t, const std::string& at) {
        if (++count > limits.max_types) {
            throw SchemaError("the schema has more than " + std::to_string(limits.max_types) +
                              " types");
        }
        NamedType type = readType(t, at);
        if (type.name.rfind("__", 0) == 0) {
            return;  // introspection's own types
        }
        std::string name = type.name;
        if (!schema.types.emplace(std::move(name), std::move(type)).second) {
            throw SchemaError(at + ": type " + shown(t["name"].GetString()) + " appears twice");
        }
    });
    return schema;
}

/// The `__schema` object of a response, or the errors' first message.
const Value& findSchema(const rapidjson::Document& doc) {
    if (!doc.IsObject()) {
        throw SchemaError("the introspection result is not a JSON object");
    }
    const Value* data = member(doc, "data");
    if (data != nullptr && data->IsObject()) {
        if (const Value* s = member(*data, "__schema"); s != nullptr) {
            return *s;
        }
    }
    if (const Value* s = member(doc, "__schema"); s != nullptr) {
        return *s;
    }
    const Value* errors = member(doc, "errors");
    if (errors != nullptr && errors->IsArray() && !errors->Empty()) {
        const Value& first = (*errors)[0];
        std::string message = "(no message)";
        if (first.IsObject() && first.HasMember("message") && first["message"].IsString()) {
            const Value& text = first["message"];
            message = shown(std::string_view(text.GetString(), text.GetStringLength()));
        }
        throw SchemaError("the introspection query failed: " + message);
    }
    throw SchemaError("the introspection result has no __schema");
}

// ---- SDL ----

using detail::Lexer;
using detail::Token;

struct Definition {
    NamedType type;
    bool extension = false;
    Token at;
};

bool contains(const std::vector<std::string>& names, std::string_view name) {
    return std::find(names.begin(), names.end(), name) != names.end();
}

class SdlReader {
public:
    SdlReader(std::string_view text, const ParseLimits& limits) : lexer_(text, limits) {}

    Schema read(std::size_t max_types) {
        while (lexer_.peek().kind != Token::Kind::end) {
            parseDefinition();
        }
        Schema schema;
        for (auto& d : definitions_) {
            if (!d.extension) {
                define(schema, d, max_types);
            }
        }
        addBuiltInScalars(schema);
        for (auto& d : definitions_) {
            if (d.extension) {
                extend(schema, d);
            }
        }
        applyRoots(schema);
        return schema;
    }

private:
    static void define(Schema& schema, Definition& d, std::size_t max_types) {
        if (schema.types.size() >= max_types) {
            Lexer::fail(d.at, "the schema has more than " + std::to_string(max_types) + " types");
        }
        std::string name = d.type.name;
        if (schema.types.count(name) != 0) {
            Lexer::fail(d.at, "type " + shown(name) + " is defined twice");
        }
        schema.types.emplace(std::move(name), std::move(d.type));
    }

    static void extend(Schema& schema, Definition& d) {
        auto it = schema.types.find(d.type.name);
        const std::string name = shown(d.type.name);
        const std::string where = "extend " + std::string(keyword(d.type.kind)) + " " + name;
        if (it == schema.types.end()) {
            Lexer::fail(d.at, where + ": type " + name + " is not defined");
        }
        NamedType& base = it->second;
        if (base.kind != d.type.kind) {
            Lexer::fail(d.at, where + ": " + name + " is " + std::string(kindText(base.kind)));
        }
        auto append = [](auto& to, auto& from) {
            to.insert(to.end(), std::make_move_iterator(from.begin()),
                      std::make_move_iterator(from.end()));
        };
        append(base.fields, d.type.fields);
        append(base.input_fields, d.type.input_fields);
        append(base.enum_values, d.type.enum_values);
        append(base.possible_types, d.type.possible_types);
        for (auto& i : d.type.interfaces) {
            if (!contains(base.interfaces, i)) {
                base.interfaces.push_back(std::move(i));
            }
        }
        base.one_of = base.one_of || d.type.one_of;
    }

    void applyRoots(Schema& schema) const {
        if (schema_defined_) {
            schema.query_type = roots_[0];
            schema.mutation_type = roots_[1];
            schema.subscription_type = roots_[2];
            return;
        }
        const char* defaults[] = {"Query", "Mutation", "Subscription"};
        std::string* targets[] = {&schema.query_type, &schema.mutation_type,
                                  &schema.subscription_type};
        for (std::size_t i = 0; i < 3; ++i) {
            *targets[i] = roots_[i].empty() && schema.type(defaults[i]) != nullptr
                              ? std::string(defaults[i])
                              : roots_[i];
        }
    }

    std::string parseDescription() {
        return lexer_.atString() ? lexer_.take().value : std::string();
    }

    void parseDefinition() {
        const std::string description = parseDescription();
        const Token& t = lexer_.peek();
        if (t.kind != Token::Kind::name) {
            lexer_.unexpected("a type system definition");
        }
        if (t.value == "extend") {
            if (!description.empty()) {
                Lexer::fail(t, "an extension cannot have a description");
            }
            lexer_.take();
            if (lexer_.atName("schema")) {
                parseSchema(true);
            } else if (!parseType(std::string(), true)) {
                lexer_.unexpected("schema, scalar, type, interface, union, enum or input");
            }
        } else if (t.value == "schema") {
            parseSchema(false);
        } else if (t.value == "directive") {
            parseDirectiveDefinition();
        } else if (!parseType(description, false)) {
            lexer_.unexpected("a type system definition");
        }
    }

    void parseSchema(bool extension) {
        const Token at = lexer_.take();
        if (!extension && schema_defined_) {
            Lexer::fail(at, "the schema is defined twice");
        }
        schema_defined_ = schema_defined_ || !extension;
        detail::parseDirectives(lexer_, true);
        if (extension && !lexer_.atPunctuator("{")) {
            return;
        }
        lexer_.expectPunctuator("{");
        do {
            const Token op = lexer_.peek();
            const std::string name = lexer_.expectName();
            const std::size_t index = name == "query" ? 0 : name == "mutation" ? 1 : 2;
            if (index == 2 && name != "subscription") {
                Lexer::fail(
                    op, "expected query, mutation or subscription, found \"" + shown(name) + "\"");
            }
            lexer_.expectPunctuator(":");
            roots_[index] = lexer_.expectName();
        } while (!lexer_.takePunctuator("}"));
    }

    void parseDirectiveDefinition() {
        lexer_.take();
        lexer_.expectPunctuator("@");
        lexer_.expectName();
        if (lexer_.atPunctuator("(")) {
            parseInputValues("(", ")");
        }
        if (lexer_.atName("repeatable")) {
            lexer_.take();
        }
        if (!lexer_.atName("on")) {
            lexer_.unexpected("\"on\"");
        }
        lexer_.take();
        lexer_.takePunctuator("|");
        do {
            lexer_.expectName();
        } while (lexer_.takePunctuator("|"));
    }

    /// A type definition (or extension, the keyword already taken); false when the current
    /// token is not one.
    bool parseType(const std::string& description, bool extension) {
        static constexpr std::string_view kKeywords[] = {"scalar", "type", "interface",
                                                         "union",  "enum", "input"};
        static constexpr Kind kKinds[] = {Kind::scalar,     Kind::object,    Kind::interface,
                                          Kind::union_type, Kind::enum_type, Kind::input_object};
        std::size_t k = 0;
        while (k < 6 && !lexer_.atName(kKeywords[k])) {
            ++k;
        }
        if (k == 6) {
            return false;
        }
        Definition d;
        d.extension = extension;
        d.at = lexer_.take();
        d.type.kind = kKinds[k];
        d.type.description = description;
        d.type.name = lexer_.expectName();
        parseTypeBody(d.type);
        definitions_.push_back(std::move(d));
        return true;
    }

    void parseTypeBody(NamedType& type) {
        if (type.kind == Kind::object || type.kind == Kind::interface) {
            parseImplements(type);
        }
        const auto directives = detail::parseDirectives(lexer_, true);
        type.one_of = type.kind == Kind::input_object && contains(directives, "oneOf");
        switch (type.kind) {
            case Kind::object:
            case Kind::interface:
                if (lexer_.atPunctuator("{")) {
                    parseFields(type);
                }
                break;
            case Kind::union_type:
                if (lexer_.takePunctuator("=")) {
                    lexer_.takePunctuator("|");
                    do {
                        type.possible_types.push_back(lexer_.expectName());
                    } while (lexer_.takePunctuator("|"));
                }
                break;
            case Kind::enum_type:
                if (lexer_.atPunctuator("{")) {
                    parseEnumValues(type);
                }
                break;
            case Kind::input_object:
                if (lexer_.atPunctuator("{")) {
                    type.input_fields = parseInputValues("{", "}");
                }
                break;
            case Kind::scalar:
                break;
        }
    }

    void parseImplements(NamedType& type) {
        if (!lexer_.atName("implements")) {
            return;
        }
        lexer_.take();
        lexer_.takePunctuator("&");
        do {
            type.interfaces.push_back(lexer_.expectName());
        } while (lexer_.takePunctuator("&"));
    }

    void parseFields(NamedType& type) {
        lexer_.take();
        do {
            Field f;
            f.description = parseDescription();
            f.name = lexer_.expectName();
            if (lexer_.atPunctuator("(")) {
                f.args = parseInputValues("(", ")");
            }
            lexer_.expectPunctuator(":");
            f.type = detail::parseType(lexer_);
            f.deprecated = contains(detail::parseDirectives(lexer_, true), "deprecated");
            type.fields.push_back(std::move(f));
        } while (!lexer_.takePunctuator("}"));
    }

    std::vector<InputValue> parseInputValues(std::string_view open, std::string_view close) {
        lexer_.expectPunctuator(open);
        std::vector<InputValue> values;
        do {
            InputValue v;
            v.description = parseDescription();
            v.name = lexer_.expectName();
            lexer_.expectPunctuator(":");
            v.type = detail::parseType(lexer_);
            if (lexer_.takePunctuator("=")) {
                std::string json;
                detail::parseValue(lexer_, true, json, nullptr);
                v.default_json = std::move(json);
            }
            v.deprecated = contains(detail::parseDirectives(lexer_, true), "deprecated");
            values.push_back(std::move(v));
        } while (!lexer_.takePunctuator(close));
        return values;
    }

    void parseEnumValues(NamedType& type) {
        lexer_.take();
        do {
            EnumValue v;
            v.description = parseDescription();
            const Token at = lexer_.peek();
            v.name = lexer_.expectName();
            if (v.name == "true" || v.name == "false" || v.name == "null") {
                Lexer::fail(at, "an enum value cannot be named " + v.name);
            }
            v.deprecated = contains(detail::parseDirectives(lexer_, true), "deprecated");
            type.enum_values.push_back(std::move(v));
        } while (!lexer_.takePunctuator("}"));
    }

    Lexer lexer_;
    std::vector<Definition> definitions_;
    bool schema_defined_ = false;
    std::string roots_[3];
};

std::size_t editDistance(std::string_view a, std::string_view b) {
    std::vector<std::size_t> row(b.size() + 1);
    for (std::size_t j = 0; j <= b.size(); ++j) {
        row[j] = j;
    }
    for (std::size_t i = 1; i <= a.size(); ++i) {
        std::size_t diagonal = row[0];
        row[0] = i;
        for (std::size_t j = 1; j <= b.size(); ++j) {
            const std::size_t above = row[j];
            row[j] =
                std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
            diagonal = above;
        }
    }
    return row[b.size()];
}

/// ` (did you mean "item"?)` when a field is close to `name`, else "".
std::string didYouMean(const NamedType& type, std::string_view name) {
    constexpr std::size_t kMaxLength = 64;
    if (name.size() > kMaxLength) {
        return {};
    }
    const Field* best = nullptr;
    std::size_t best_distance = name.size() * 2 / 5 + 2;  // suggestions closer than this
    for (const auto& f : type.fields) {
        if (f.name.size() > kMaxLength) {
            continue;
        }
        const std::size_t d = editDistance(name, f.name);
        if (d < best_distance) {
            best = &f;
            best_distance = d;
        }
    }
    return best == nullptr ? std::string() : " (did you mean \"" + best->name + "\"?)";
}

}  // namespace

std::optional<Schema> schemaFromIntrospection(std::string_view json, std::string& error,
                                              const SchemaLimits& limits) {
    try {
        if (json.size() > limits.max_bytes) {
            throw SchemaError("the introspection result is " + std::to_string(json.size()) +
                              " bytes, more than the limit of " + std::to_string(limits.max_bytes));
        }
        checkJsonDepth(json, limits.max_json_depth);
        rapidjson::Document doc;
        doc.Parse<rapidjson::kParseIterativeFlag>(json.data(), json.size());
        if (doc.HasParseError()) {
            throw SchemaError(std::string("the introspection result is not valid JSON: ") +
                              rapidjson::GetParseError_En(doc.GetParseError()) + " (offset " +
                              std::to_string(doc.GetErrorOffset()) + ")");
        }
        Schema schema = readSchema(findSchema(doc), limits);
        finishSchema(schema, limits.max_types);
        return schema;
    } catch (const std::exception& e) {
        error = e.what();
    }
    return std::nullopt;
}

std::optional<Schema> schemaFromSdl(std::string_view sdl, std::string& error,
                                    const SchemaLimits& limits) {
    try {
        ParseLimits parse_limits = sdlLimits();
        parse_limits.max_bytes = limits.max_bytes;
        SdlReader reader(sdl, parse_limits);
        Schema schema = reader.read(limits.max_types);
        finishSchema(schema, limits.max_types);
        return schema;
    } catch (const std::exception& e) {
        error = e.what();
    }
    return std::nullopt;
}

std::optional<Schema> schemaFromText(std::string_view text, std::string& error,
                                     const SchemaLimits& limits) {
    const std::size_t first = text.find_first_not_of(" \t\r\n");
    if (first != std::string_view::npos && text[first] == '{') {
        return schemaFromIntrospection(text, error, limits);
    }
    if (text.substr(0, 3) == "\xEF\xBB\xBF") {
        const std::size_t after_bom = text.find_first_not_of(" \t\r\n", 3);
        if (after_bom != std::string_view::npos && text[after_bom] == '{') {
            return schemaFromIntrospection(text.substr(3), error, limits);
        }
    }
    return schemaFromSdl(text, error, limits);
}

std::string checkOperation(const OperationDefinition& operation, const Schema& schema) {
    const NamedType* root = schema.rootType(operation.kind);
    if (root == nullptr) {
        return "the schema has no " + std::string(kindName(operation.kind)) + " type";
    }
    for (const auto& v : operation.variables) {
        const std::string& name = v.type.namedType();
        const NamedType* t = schema.type(name);
        if (t == nullptr) {
            return "variable $" + shown(v.name) + ": type " + shown(name) + " is not in the schema";
        }
        if (!t->isInputType()) {
            return "variable $" + shown(v.name) + ": type " + shown(name) + " is " +
                   std::string(kindText(t->kind)) + ", not an input type";
        }
    }
    for (const auto& f : operation.root_fields) {
        if (f == "__typename" || (operation.kind == OperationDefinition::Kind::query &&
                                  (f == "__schema" || f == "__type"))) {
            continue;
        }
        if (root->field(f) == nullptr) {
            return shown(root->name) + " has no field \"" + shown(f) + "\"" + didYouMean(*root, f);
        }
    }
    return {};
}

}  // namespace crank::graphql
