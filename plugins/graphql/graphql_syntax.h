#pragma once

// GraphQL documents (the October 2021 spec, plus descriptions on variables' neighbours ignored):
// a lexer and two parsers, one for executable documents (the operations an operator writes in
// config) and one for the type system definition language (SDL schema files). Both are bounded:
// bytes, tokens and nesting depth (the parsers recurse, so depth is checked on every descent).
//
// Errors name the place: `line 3, column 7: expected a name, found "}"`.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace crank::graphql {

/// The longest name a document or a schema may use (the spec sets none): longer ones are refused
/// by the lexer and by the introspection reader.
inline constexpr std::size_t kMaxNameBytes = 1024;

/// Bounds of one parse. Documented defaults (README.md).
struct ParseLimits {
    std::size_t max_bytes = std::size_t{1024} * 1024;  ///< a document (SDL files: 32 MiB, below)
    std::size_t max_tokens = 200'000;
    std::size_t max_depth = 64;  ///< selection sets, values and type wrappers, each
};

/// SDL schema files are larger than operations (the same byte bound as SchemaLimits and the
/// plugin's schema reads).
inline ParseLimits sdlLimits() {
    ParseLimits l;
    l.max_bytes = std::size_t{32} * 1024 * 1024;
    l.max_tokens = 8'000'000;
    return l;
}

/// A type reference: `Int`, `[Int!]`, `[[ID]]!` ...
struct TypeRef {
    enum class Kind { named, list, non_null };
    Kind kind = Kind::named;
    std::string name;             ///< kind named only
    std::shared_ptr<TypeRef> of;  ///< kind list and non_null: the wrapped type

    static TypeRef named(std::string name);
    static TypeRef listOf(TypeRef inner);
    static TypeRef nonNull(TypeRef inner);

    /// The innermost named type's name.
    const std::string& namedType() const;
    bool nonNullable() const { return kind == Kind::non_null; }
    /// As GraphQL writes it: "[Int!]!".
    std::string text() const;
};

/// One `$name: Type = default` of an operation.
struct VariableDefinition {
    std::string name;  ///< without '$'
    TypeRef type;
    std::optional<std::string> default_json;  ///< the default value as JSON text, if any
};

/// One argument of a root field whose value is exactly a variable: `item(id: $id)`. Lets the
/// input schema borrow the argument's description from the schema.
struct VariableUse {
    std::string field;     ///< the root field's name (not its alias)
    std::string argument;  ///< the argument's name
    std::string variable;  ///< the variable's name, without '$'
};

struct OperationDefinition {
    enum class Kind { query, mutation, subscription };
    Kind kind = Kind::query;
    std::string name;  ///< "" for an anonymous operation (and the `{ ... }` shorthand)
    std::vector<VariableDefinition> variables;
    std::vector<std::string> root_fields;  ///< field names selected at the root, in order
                                           ///< (through inline fragments and named fragments)
    std::vector<VariableUse> root_variable_uses;
    std::size_t line = 1;  ///< where the operation starts, for messages
};

struct ExecutableDocument {
    std::vector<OperationDefinition> operations;
    std::vector<std::string> fragments;  ///< fragment definition names
};

/// Parses an executable document (operations and fragments only: a type system definition in it
/// is an error). Checks syntax, unique operation names, one anonymous operation only when it is
/// the only one, unique variable names per operation, and that every fragment spread names a
/// fragment of the document. nullopt with `error` set on failure.
std::optional<ExecutableDocument> parseExecutable(std::string_view text, std::string& error,
                                                  const ParseLimits& limits = {});

/// The operation that `operation_name` picks ("" = the only one). nullptr with `error` naming
/// what is there ("the document has operations GetItem, ListItems: set operation_name").
const OperationDefinition* selectOperation(const ExecutableDocument& document,
                                           std::string_view operation_name, std::string& error);

/// "query", "mutation" or "subscription".
std::string_view kindName(OperationDefinition::Kind kind);

/// A constant GraphQL value literal (`{a: [1, RED], b: "x"}`) as JSON text, enums as JSON
/// strings: introspection's default values. nullopt with `error` set (variables are refused).
std::optional<std::string> valueToJson(std::string_view literal, std::string& error,
                                       const ParseLimits& limits = {});

// The lexer and the pieces both parsers share (graphql_schema.cpp reads SDL with them). Not an
// API for other code: they throw SyntaxError, which the public functions turn into `error`.
namespace detail {

class SyntaxError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

struct Token {
    enum class Kind { end, punctuator, name, int_value, float_value, string, block_string };
    Kind kind = Kind::end;
    std::string value;  ///< punctuator, name, number as written; strings decoded
    std::size_t line = 1;
    std::size_t column = 1;
};

/// What a depth limit counts: each has its own budget of ParseLimits::max_depth.
enum class Nesting { selection, value, type };

class Lexer {
public:
    /// Throws SyntaxError when the text is over max_bytes or not UTF-8.
    Lexer(std::string_view text, const ParseLimits& limits);

    const Token& peek() const { return current_; }
    Token take();
    bool atPunctuator(std::string_view p) const;
    bool atName(std::string_view keyword) const;
    bool atString() const;
    bool takePunctuator(std::string_view p);
    void expectPunctuator(std::string_view p);
    std::string expectName();
    std::size_t depth(Nesting n) const { return depth_[static_cast<std::size_t>(n)]; }
    void enter(Nesting n);
    void leave(Nesting n) { --depth_[static_cast<std::size_t>(n)]; }

    /// `line L, column C: message` at `at`.
    [[noreturn]] static void fail(const Token& at, const std::string& message);
    /// `expected WHAT, found <the current token>`.
    [[noreturn]] void unexpected(std::string_view what) const;
    static std::string describe(const Token& token);

private:
    void advance();
    void skipIgnored();
    void lexNumber();
    void lexString();
    void lexBlockString();
    void lexName();
    void syncTo(std::size_t pos);
    [[noreturn]] void failHere(std::size_t pos, const std::string& message);
    std::uint32_t escapeCodeUnit(std::size_t at);

    std::string_view text_;
    ParseLimits limits_;
    std::size_t pos_ = 0;
    std::size_t synced_ = 0;
    std::size_t line_ = 1;
    std::size_t column_ = 1;
    std::size_t tokens_ = 0;
    std::size_t depth_[3] = {0, 0, 0};
    Token current_;
};

/// Counts a level of `n` for its lifetime.
class DepthGuard {
public:
    DepthGuard(Lexer& lexer, Nesting n) : lexer_(lexer), n_(n) { lexer_.enter(n_); }
    ~DepthGuard() { lexer_.leave(n_); }
    DepthGuard(const DepthGuard&) = delete;
    DepthGuard& operator=(const DepthGuard&) = delete;

private:
    Lexer& lexer_;
    Nesting n_;
};

/// A value; appends its JSON to `json` (variables, allowed when !constant, as null).
/// `variable` (may be nullptr) receives the name when the value is exactly `$name`.
void parseValue(Lexer& lexer, bool constant, std::string& json, std::string* variable);
TypeRef parseType(Lexer& lexer);
/// `@name(args) ...`: the directives' names.
std::vector<std::string> parseDirectives(Lexer& lexer, bool constant);
/// A JSON string literal of `text` (UTF-8), quotes included.
std::string jsonString(std::string_view text);

/// Whether `text` is a GraphQL Name, /[_A-Za-z][_0-9A-Za-z]*/, of at most kMaxNameBytes.
bool isName(std::string_view text);

/// Whether `text` is valid UTF-8 (no overlong forms, surrogates or code points past U+10FFFF).
bool validUtf8(std::string_view text);

/// `text` with every invalid UTF-8 sequence replaced by U+FFFD (a copy; unchanged when valid).
std::string repairUtf8(std::string_view text);

/// The most bytes of input an error message repeats in one place; a name that is refused is
/// repeated shorter.
inline constexpr std::size_t kMaxExcerptBytes = 200;
inline constexpr std::size_t kMaxNameExcerptBytes = 64;

/// A piece of input as an error message repeats it: at most `max` bytes (>= 8) of valid UTF-8,
/// invalid sequences as U+FFFD, control characters escaped (\n, \u0001), and "..." at the end
/// (within `max`) when cut. Reads only as much of `text` as it shows.
std::string excerpt(std::string_view text, std::size_t max = kMaxExcerptBytes);

}  // namespace detail

}  // namespace crank::graphql
