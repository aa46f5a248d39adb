#include "graphql_syntax.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <crank/sdk/json.hpp>

namespace crank::graphql {

namespace detail {
namespace {

bool isNameStart(char c) {
    return c == '_' || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z');
}

bool isDigit(char c) {
    return c >= '0' && c <= '9';
}

bool isNameContinue(char c) {
    return isNameStart(c) || isDigit(c);
}

/// Length of the UTF-8 sequence at `i`, 0 when it is not valid UTF-8.
std::size_t utf8Length(std::string_view s, std::size_t i) {
    const auto b0 = static_cast<unsigned char>(s[i]);
    if (b0 < 0x80) {
        return 1;
    }
    std::size_t n = 0;
    std::uint32_t cp = 0;
    if ((b0 & 0xE0) == 0xC0) {
        n = 2;
        cp = b0 & 0x1FU;
    } else if ((b0 & 0xF0) == 0xE0) {
        n = 3;
        cp = b0 & 0x0FU;
    } else if ((b0 & 0xF8) == 0xF0) {
        n = 4;
        cp = b0 & 0x07U;
    } else {
        return 0;
    }
    if (i + n > s.size()) {
        return 0;
    }
    for (std::size_t k = 1; k < n; ++k) {
        const auto b = static_cast<unsigned char>(s[i + k]);
        if ((b & 0xC0) != 0x80) {
            return 0;
        }
        cp = (cp << 6U) | (b & 0x3FU);
    }
    const bool overlong =
        (n == 2 && cp < 0x80) || (n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000);
    if (overlong || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) {
        return 0;
    }
    return n;
}

/// Offset of the first byte that is not valid UTF-8, or npos.
std::size_t invalidUtf8(std::string_view s) {
    std::size_t i = 0;
    while (i < s.size()) {
        const std::size_t n = utf8Length(s, i);
        if (n == 0) {
            return i;
        }
        i += n;
    }
    return std::string_view::npos;
}

void appendUtf8(std::string& out, std::uint32_t cp) {
    if (cp < 0x80) {
        out += static_cast<char>(cp);
    } else if (cp < 0x800) {
        out += static_cast<char>(0xC0U | (cp >> 6U));
        out += static_cast<char>(0x80U | (cp & 0x3FU));
    } else if (cp < 0x10000) {
        out += static_cast<char>(0xE0U | (cp >> 12U));
        out += static_cast<char>(0x80U | ((cp >> 6U) & 0x3FU));
        out += static_cast<char>(0x80U | (cp & 0x3FU));
    } else {
        out += static_cast<char>(0xF0U | (cp >> 18U));
        out += static_cast<char>(0x80U | ((cp >> 12U) & 0x3FU));
        out += static_cast<char>(0x80U | ((cp >> 6U) & 0x3FU));
        out += static_cast<char>(0x80U | (cp & 0x3FU));
    }
}

std::string hex4(unsigned value) {
    static constexpr std::string_view kHex = "0123456789ABCDEF";
    std::string out(4, '0');
    for (int k = 3; k >= 0; --k) {
        out[static_cast<std::size_t>(k)] = kHex[value & 0xFU];
        value >>= 4U;
    }
    return out;
}

/// How a character is named in a message: `"~"`, or U+0001 for an invisible one.
std::string describeChar(std::string_view text, std::size_t pos) {
    const auto c = static_cast<unsigned char>(text[pos]);
    if (c >= 0x21 && c < 0x7F) {
        return "\"" + std::string(1, static_cast<char>(c)) + "\"";
    }
    if (c < 0x80) {
        return "U+" + hex4(c);
    }
    const std::size_t n = utf8Length(text, pos);
    return "\"" + std::string(text.substr(pos, n == 0 ? 1 : n)) + "\"";
}

int hexValue(char c) {
    if (c >= '0' && c <= '9') {
        return c - '0';
    }
    if (c >= 'a' && c <= 'f') {
        return c - 'a' + 10;
    }
    if (c >= 'A' && c <= 'F') {
        return c - 'A' + 10;
    }
    return -1;
}

/// U+FFFD, in place of an invalid UTF-8 sequence.
constexpr std::string_view kReplacementCharacter = "\xEF\xBF\xBD";

bool isBlank(char c) {
    return c == ' ' || c == '\t';
}

/// The spec's BlockStringValue(): common indentation removed, blank first/last lines dropped.
std::string blockStringValue(std::string_view raw) {
    std::vector<std::string_view> lines;
    std::size_t start = 0;
    for (std::size_t i = 0; i <= raw.size(); ++i) {
        if (i == raw.size() || raw[i] == '\n' || raw[i] == '\r') {
            lines.push_back(raw.substr(start, i - start));
            if (i + 1 < raw.size() && raw[i] == '\r' && raw[i + 1] == '\n') {
                ++i;
            }
            start = i + 1;
        }
    }
    std::size_t common = std::string_view::npos;
    for (std::size_t k = 1; k < lines.size(); ++k) {
        std::size_t indent = 0;
        while (indent < lines[k].size() && isBlank(lines[k][indent])) {
            ++indent;
        }
        if (indent < lines[k].size() && indent < common) {
            common = indent;
        }
    }
    if (common != std::string_view::npos) {
        for (std::size_t k = 1; k < lines.size(); ++k) {
            lines[k].remove_prefix(std::min(common, lines[k].size()));
        }
    }
    auto blankLine = [](std::string_view l) {
        return l.find_first_not_of(" \t") == std::string_view::npos;
    };
    std::size_t first = 0;
    std::size_t last = lines.size();
    while (first < last && blankLine(lines[first])) {
        ++first;
    }
    while (last > first && blankLine(lines[last - 1])) {
        --last;
    }
    std::string out;
    for (std::size_t k = first; k < last; ++k) {
        if (k > first) {
            out += '\n';
        }
        out += lines[k];
    }
    return out;
}

}  // namespace

std::string jsonString(std::string_view text) {
    return sdk::jsonQuote(text);
}

bool isName(std::string_view text) {
    return !text.empty() && text.size() <= kMaxNameBytes && isNameStart(text[0]) &&
           std::all_of(text.begin() + 1, text.end(), isNameContinue);
}

bool validUtf8(std::string_view text) {
    return invalidUtf8(text) == std::string_view::npos;
}

std::string repairUtf8(std::string_view text) {
    std::size_t i = invalidUtf8(text);
    if (i == std::string_view::npos) {
        return std::string(text);
    }
    std::string out(text.substr(0, i));
    while (i < text.size()) {
        const std::size_t n = utf8Length(text, i);
        if (n == 0) {
            out += kReplacementCharacter;
            ++i;
        } else {
            out += text.substr(i, n);
            i += n;
        }
    }
    return out;
}

std::string excerpt(std::string_view text, std::size_t max) {
    static constexpr std::string_view kCut = "...";
    max = std::max<std::size_t>(max, 8);
    std::string out;
    std::size_t cut_at =
        0;  // the longest prefix of `out`, in whole pieces, that leaves room for kCut
    std::size_t i = 0;
    while (i < text.size() && out.size() <= max) {
        const auto c = static_cast<unsigned char>(text[i]);
        std::size_t n = utf8Length(text, i);
        if (n == 0) {
            out += kReplacementCharacter;
            n = 1;
        } else if (c == '\n') {
            out += "\\n";
        } else if (c == '\r') {
            out += "\\r";
        } else if (c == '\t') {
            out += "\\t";
        } else if (c < 0x20 || c == 0x7F) {
            out += "\\u" + hex4(c);
        } else {
            out += text.substr(i, n);
        }
        i += n;
        if (out.size() + kCut.size() <= max) {
            cut_at = out.size();
        }
    }
    if (i == text.size() && out.size() <= max) {
        return out;
    }
    out.resize(cut_at);
    out += kCut;
    return out;
}

Lexer::Lexer(std::string_view text, const ParseLimits& limits) : text_(text), limits_(limits) {
    if (text.size() > limits.max_bytes) {
        throw SyntaxError("the document is " + std::to_string(text.size()) +
                          " bytes, more than the limit of " + std::to_string(limits.max_bytes));
    }
    const std::size_t bad = invalidUtf8(text);
    if (bad != std::string_view::npos) {
        failHere(bad, "invalid UTF-8");
    }
    advance();
}

Token Lexer::take() {
    Token t = std::move(current_);
    advance();
    return t;
}

bool Lexer::atPunctuator(std::string_view p) const {
    return current_.kind == Token::Kind::punctuator && current_.value == p;
}

bool Lexer::atName(std::string_view keyword) const {
    return current_.kind == Token::Kind::name && current_.value == keyword;
}

bool Lexer::atString() const {
    return current_.kind == Token::Kind::string || current_.kind == Token::Kind::block_string;
}

bool Lexer::takePunctuator(std::string_view p) {
    if (!atPunctuator(p)) {
        return false;
    }
    advance();
    return true;
}

void Lexer::expectPunctuator(std::string_view p) {
    if (!takePunctuator(p)) {
        unexpected("\"" + std::string(p) + "\"");
    }
}

std::string Lexer::expectName() {
    if (current_.kind != Token::Kind::name) {
        unexpected("a name");
    }
    return take().value;
}

void Lexer::enter(Nesting n) {
    auto& d = depth_[static_cast<std::size_t>(n)];
    if (d >= limits_.max_depth) {
        fail(current_, "nesting deeper than " + std::to_string(limits_.max_depth) + " levels");
    }
    ++d;
}

void Lexer::fail(const Token& at, const std::string& message) {
    throw SyntaxError("line " + std::to_string(at.line) + ", column " + std::to_string(at.column) +
                      ": " + message);
}

void Lexer::unexpected(std::string_view what) const {
    fail(current_, "expected " + std::string(what) + ", found " + describe(current_));
}

std::string Lexer::describe(const Token& token) {
    switch (token.kind) {
        case Token::Kind::end:
            return "the end of the document";
        case Token::Kind::string:
            return "a string";
        case Token::Kind::block_string:
            return "a block string";
        default:
            return "\"" + excerpt(token.value) + "\"";
    }
}

void Lexer::syncTo(std::size_t pos) {
    for (; synced_ < pos; ++synced_) {
        const char c = text_[synced_];
        if (c == '\r' || (c == '\n' && (synced_ == 0 || text_[synced_ - 1] != '\r'))) {
            ++line_;
            column_ = 1;
        } else if (c != '\n' && (static_cast<unsigned char>(c) & 0xC0U) != 0x80U) {
            ++column_;
        }
    }
}

void Lexer::failHere(std::size_t pos, const std::string& message) {
    syncTo(pos);
    Token at;
    at.line = line_;
    at.column = column_;
    fail(at, message);
}

void Lexer::skipIgnored() {
    while (pos_ < text_.size()) {
        const char c = text_[pos_];
        if (c == ' ' || c == '\t' || c == ',' || c == '\n' || c == '\r') {
            ++pos_;
        } else if (c == '#') {
            while (pos_ < text_.size() && text_[pos_] != '\n' && text_[pos_] != '\r') {
                ++pos_;
            }
        } else if (text_.substr(pos_, 3) == "\xEF\xBB\xBF") {
            pos_ += 3;
        } else {
            return;
        }
    }
}

void Lexer::advance() {
    skipIgnored();
    syncTo(pos_);
    current_ = Token{};
    current_.line = line_;
    current_.column = column_;
    if (pos_ >= text_.size()) {
        return;
    }
    if (++tokens_ > limits_.max_tokens) {
        fail(current_,
             "the document has more than " + std::to_string(limits_.max_tokens) + " tokens");
    }
    const char c = text_[pos_];
    static constexpr std::string_view kPunctuators = "!$&():=@[]{|}";
    if (kPunctuators.find(c) != std::string_view::npos) {
        current_.kind = Token::Kind::punctuator;
        current_.value = std::string(1, c);
        ++pos_;
    } else if (c == '.') {
        if (text_.substr(pos_, 3) != "...") {
            fail(current_, "expected \"...\", found " + describeChar(text_, pos_));
        }
        current_.kind = Token::Kind::punctuator;
        current_.value = "...";
        pos_ += 3;
    } else if (isNameStart(c)) {
        lexName();
    } else if (c == '-' || isDigit(c)) {
        lexNumber();
    } else if (c == '"') {
        if (text_.substr(pos_, 3) == "\"\"\"") {
            lexBlockString();
        } else {
            lexString();
        }
    } else {
        fail(current_, "unexpected character " + describeChar(text_, pos_));
    }
}

void Lexer::lexName() {
    const std::size_t start = pos_;
    while (pos_ < text_.size() && isNameContinue(text_[pos_])) {
        ++pos_;
    }
    if (pos_ - start > kMaxNameBytes) {
        fail(current_, "a name longer than " + std::to_string(kMaxNameBytes) + " bytes: \"" +
                           excerpt(text_.substr(start, pos_ - start), kMaxNameExcerptBytes) + "\"");
    }
    current_.kind = Token::Kind::name;
    current_.value = std::string(text_.substr(start, pos_ - start));
}

void Lexer::lexNumber() {
    const std::size_t start = pos_;
    auto digits = [this](std::string_view after) {
        if (pos_ >= text_.size() || !isDigit(text_[pos_])) {
            failHere(pos_, "expected a digit after \"" + std::string(after) + "\", found " +
                               (pos_ >= text_.size() ? std::string("the end of the document")
                                                     : describeChar(text_, pos_)));
        }
        while (pos_ < text_.size() && isDigit(text_[pos_])) {
            ++pos_;
        }
    };
    if (text_[pos_] == '-') {
        ++pos_;
        digits("-");
    } else {
        digits("");
    }
    if (text_[start] == '0' || (text_[start] == '-' && text_[start + 1] == '0')) {
        const std::size_t zero = text_[start] == '-' ? start + 1 : start;
        if (pos_ > zero + 1) {
            failHere(zero + 1, "a number must not have leading zeros");
        }
    }
    bool is_float = false;
    if (pos_ < text_.size() && text_[pos_] == '.') {
        ++pos_;
        digits(".");
        is_float = true;
    }
    if (pos_ < text_.size() && (text_[pos_] == 'e' || text_[pos_] == 'E')) {
        const std::string e(1, text_[pos_]);
        ++pos_;
        if (pos_ < text_.size() && (text_[pos_] == '+' || text_[pos_] == '-')) {
            ++pos_;
        }
        digits(e);
        is_float = true;
    }
    if (pos_ < text_.size() && (text_[pos_] == '.' || isNameStart(text_[pos_]))) {
        failHere(pos_, "invalid number: unexpected " + describeChar(text_, pos_));
    }
    current_.kind = is_float ? Token::Kind::float_value : Token::Kind::int_value;
    current_.value = std::string(text_.substr(start, pos_ - start));
}

std::uint32_t Lexer::escapeCodeUnit(std::size_t at) {
    std::uint32_t unit = 0;
    for (std::size_t k = 0; k < 4; ++k) {
        const int h = at + k < text_.size() ? hexValue(text_[at + k]) : -1;
        if (h < 0) {
            failHere(at - 2, "invalid Unicode escape sequence");
        }
        unit = (unit << 4U) | static_cast<std::uint32_t>(h);
    }
    return unit;
}

void Lexer::lexString() {
    std::string value;
    ++pos_;
    while (true) {
        if (pos_ >= text_.size() || text_[pos_] == '\n' || text_[pos_] == '\r') {
            fail(current_, "unterminated string");
        }
        const char c = text_[pos_];
        if (c == '"') {
            ++pos_;
            break;
        }
        if (static_cast<unsigned char>(c) < 0x20 && c != '\t') {
            failHere(pos_, "invalid character " + describeChar(text_, pos_) + " in a string");
        }
        if (c != '\\') {
            value += c;
            ++pos_;
            continue;
        }
        const char e = pos_ + 1 < text_.size() ? text_[pos_ + 1] : '\0';
        static constexpr std::string_view kFrom = "\"\\/bfnrt";
        static constexpr std::string_view kTo = "\"\\/\b\f\n\r\t";
        const std::size_t simple = e == '\0' ? std::string_view::npos : kFrom.find(e);
        if (simple != std::string_view::npos) {
            value += kTo[simple];
            pos_ += 2;
            continue;
        }
        if (e != 'u') {
            failHere(pos_, "invalid escape sequence in a string");
        }
        const std::size_t escape_at = pos_;
        std::uint32_t cp = escapeCodeUnit(pos_ + 2);
        pos_ += 6;
        if (cp >= 0xD800 && cp <= 0xDBFF) {
            if (text_.substr(pos_, 2) != "\\u") {
                failHere(escape_at, "invalid Unicode escape sequence: a lone surrogate");
            }
            const std::uint32_t low = escapeCodeUnit(pos_ + 2);
            if (low < 0xDC00 || low > 0xDFFF) {
                failHere(escape_at, "invalid Unicode escape sequence: a lone surrogate");
            }
            cp = 0x10000 + ((cp - 0xD800) << 10U) + (low - 0xDC00);
            pos_ += 6;
        } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
            failHere(escape_at, "invalid Unicode escape sequence: a lone surrogate");
        }
        appendUtf8(value, cp);
    }
    current_.kind = Token::Kind::string;
    current_.value = std::move(value);
}

void Lexer::lexBlockString() {
    std::string raw;
    pos_ += 3;
    while (true) {
        if (pos_ >= text_.size()) {
            fail(current_, "unterminated block string");
        }
        if (text_.substr(pos_, 3) == "\"\"\"") {
            pos_ += 3;
            break;
        }
        if (text_.substr(pos_, 4) == "\\\"\"\"") {
            raw += "\"\"\"";
            pos_ += 4;
            continue;
        }
        const char c = text_[pos_];
        if (static_cast<unsigned char>(c) < 0x20 && c != '\t' && c != '\n' && c != '\r') {
            failHere(pos_, "invalid character " + describeChar(text_, pos_) + " in a string");
        }
        raw += c;
        ++pos_;
    }
    current_.kind = Token::Kind::block_string;
    current_.value = blockStringValue(raw);
}

namespace {

void parseList(Lexer& lexer, bool constant, std::string& json) {
    const DepthGuard guard(lexer, Nesting::value);
    lexer.take();
    json += '[';
    bool first = true;
    while (!lexer.takePunctuator("]")) {
        if (!first) {
            json += ',';
        }
        first = false;
        parseValue(lexer, constant, json, nullptr);
    }
    json += ']';
}

void parseObject(Lexer& lexer, bool constant, std::string& json) {
    const DepthGuard guard(lexer, Nesting::value);
    lexer.take();
    json += '{';
    bool first = true;
    std::set<std::string, std::less<>> names;
    while (!lexer.atPunctuator("}")) {
        const Token at = lexer.peek();
        std::string name = lexer.expectName();
        if (!names.insert(name).second) {
            Lexer::fail(at, "the object has field \"" + excerpt(name) + "\" twice");
        }
        lexer.expectPunctuator(":");
        if (!first) {
            json += ',';
        }
        first = false;
        json += jsonString(name);
        json += ':';
        parseValue(lexer, constant, json, nullptr);
    }
    lexer.take();
    json += '}';
}

}  // namespace

void parseValue(Lexer& lexer, bool constant, std::string& json, std::string* variable) {
    const Token& t = lexer.peek();
    switch (t.kind) {
        case Token::Kind::int_value:
        case Token::Kind::float_value:
            json += lexer.take().value;
            return;
        case Token::Kind::string:
        case Token::Kind::block_string:
            json += jsonString(lexer.take().value);
            return;
        case Token::Kind::name: {
            std::string name = lexer.take().value;
            json += (name == "true" || name == "false" || name == "null") ? name : jsonString(name);
            return;
        }
        case Token::Kind::punctuator:
            if (t.value == "[") {
                parseList(lexer, constant, json);
                return;
            }
            if (t.value == "{") {
                parseObject(lexer, constant, json);
                return;
            }
            if (t.value == "$") {
                if (constant) {
                    Lexer::fail(t, "expected a constant value, found a variable");
                }
                lexer.take();
                std::string name = lexer.expectName();
                if (variable != nullptr) {
                    *variable = std::move(name);
                }
                json += "null";
                return;
            }
            break;
        case Token::Kind::end:
            break;
    }
    lexer.unexpected("a value");
}

TypeRef parseType(Lexer& lexer) {
    TypeRef type;
    if (lexer.atPunctuator("[")) {
        const DepthGuard guard(lexer, Nesting::type);
        lexer.take();
        type = TypeRef::listOf(parseType(lexer));
        lexer.expectPunctuator("]");
    } else if (lexer.peek().kind == Token::Kind::name) {
        type = TypeRef::named(lexer.take().value);
    } else {
        lexer.unexpected("a type");
    }
    if (lexer.takePunctuator("!")) {
        type = TypeRef::nonNull(std::move(type));
    }
    return type;
}

namespace {

/// `(name: value ...)`; `uses` (may be nullptr) gets the arguments whose value is a variable.
void parseArguments(Lexer& lexer, bool constant,
                    std::vector<std::pair<std::string, std::string>>* uses) {
    if (!lexer.takePunctuator("(")) {
        return;
    }
    if (lexer.atPunctuator(")")) {
        lexer.unexpected("an argument");
    }
    std::string scratch;
    while (!lexer.takePunctuator(")")) {
        std::string name = lexer.expectName();
        lexer.expectPunctuator(":");
        std::string variable;
        scratch.clear();
        parseValue(lexer, constant, scratch, &variable);
        if (uses != nullptr && !variable.empty()) {
            uses->emplace_back(std::move(name), std::move(variable));
        }
    }
}

}  // namespace

std::vector<std::string> parseDirectives(Lexer& lexer, bool constant) {
    std::vector<std::string> names;
    while (lexer.takePunctuator("@")) {
        names.push_back(lexer.expectName());
        parseArguments(lexer, constant, nullptr);
    }
    return names;
}

}  // namespace detail

TypeRef TypeRef::named(std::string name) {
    TypeRef t;
    t.kind = Kind::named;
    t.name = std::move(name);
    return t;
}

TypeRef TypeRef::listOf(TypeRef inner) {
    TypeRef t;
    t.kind = Kind::list;
    t.of = std::make_shared<TypeRef>(std::move(inner));
    return t;
}

TypeRef TypeRef::nonNull(TypeRef inner) {
    TypeRef t;
    t.kind = Kind::non_null;
    t.of = std::make_shared<TypeRef>(std::move(inner));
    return t;
}

const std::string& TypeRef::namedType() const {
    const TypeRef* t = this;
    while (t->kind != Kind::named && t->of) {
        t = t->of.get();
    }
    return t->name;
}

std::string TypeRef::text() const {
    std::string prefix;
    std::string suffix;
    const TypeRef* t = this;
    while (t->kind != Kind::named && t->of) {
        if (t->kind == Kind::list) {
            prefix += '[';
            suffix.insert(0, "]");
        } else {
            suffix.insert(0, "!");
        }
        t = t->of.get();
    }
    return prefix + t->name + suffix;
}

std::string_view kindName(OperationDefinition::Kind kind) {
    switch (kind) {
        case OperationDefinition::Kind::query:
            return "query";
        case OperationDefinition::Kind::mutation:
            return "mutation";
        case OperationDefinition::Kind::subscription:
            return "subscription";
    }
    return "query";
}

namespace {

using detail::DepthGuard;
using detail::excerpt;
using detail::Lexer;
using detail::Nesting;
using detail::SyntaxError;
using detail::Token;

/// A selection kept for the root fields: fields, inline fragments (with their selections) and
/// fragment spreads.
struct Selection {
    enum class Kind { field, inline_fragment, spread };
    Kind kind = Kind::field;
    std::string name;                                       ///< field or fragment name
    std::vector<std::pair<std::string, std::string>> uses;  ///< field: argument → variable
    std::vector<Selection> children;                        ///< inline fragment
};

struct Spread {
    std::string name;
    Token at;
};

bool isTypeSystemKeyword(std::string_view name) {
    return name == "schema" || name == "scalar" || name == "type" || name == "interface" ||
           name == "union" || name == "enum" || name == "input" || name == "directive" ||
           name == "extend";
}

bool isExecutableKeyword(const Token& t) {
    return t.kind == Token::Kind::name && (t.value == "query" || t.value == "mutation" ||
                                           t.value == "subscription" || t.value == "fragment");
}

class ExecutableParser {
public:
    ExecutableParser(std::string_view text, const ParseLimits& limits) : lexer_(text, limits) {}

    ExecutableDocument parse() {
        if (lexer_.peek().kind == Token::Kind::end) {
            lexer_.unexpected("an operation or a fragment");
        }
        while (lexer_.peek().kind != Token::Kind::end) {
            parseDefinition();
        }
        check();
        for (std::size_t i = 0; i < document_.operations.size(); ++i) {
            collectRoot(roots_[i], document_.operations[i]);
        }
        return std::move(document_);
    }

private:
    void parseDefinition() {
        if (lexer_.atString()) {
            const Token description = lexer_.take();
            // Descriptions on operations and fragments (newer drafts) are ignored.
            if (lexer_.atPunctuator("{") || !isExecutableKeyword(lexer_.peek())) {
                Lexer::fail(description,
                            "a type system definition is not allowed in an "
                            "executable document");
            }
        }
        const Token& t = lexer_.peek();
        if (t.kind == Token::Kind::name && t.value == "fragment") {
            parseFragment();
        } else if (t.kind == Token::Kind::name &&
                   (t.value == "query" || t.value == "mutation" || t.value == "subscription")) {
            parseOperation();
        } else if (lexer_.atPunctuator("{")) {
            OperationDefinition op;
            op.line = t.line;
            starts_.push_back(t);
            roots_.push_back(parseSelectionSet(true));
            document_.operations.push_back(std::move(op));
        } else if (t.kind == Token::Kind::name && isTypeSystemKeyword(t.value)) {
            Lexer::fail(t, "a type system definition is not allowed in an executable document");
        } else {
            lexer_.unexpected("an operation or a fragment");
        }
    }

    void parseOperation() {
        const Token start = lexer_.peek();
        OperationDefinition op;
        op.line = start.line;
        const std::string keyword = lexer_.take().value;
        op.kind = keyword == "query"      ? OperationDefinition::Kind::query
                  : keyword == "mutation" ? OperationDefinition::Kind::mutation
                                          : OperationDefinition::Kind::subscription;
        if (lexer_.peek().kind == Token::Kind::name) {
            const Token at = lexer_.peek();
            op.name = lexer_.take().value;
            for (const auto& other : document_.operations) {
                if (other.name == op.name) {
                    Lexer::fail(at,
                                "there is already an operation named \"" + excerpt(op.name) + "\"");
                }
            }
        }
        if (lexer_.atPunctuator("(")) {
            parseVariableDefinitions(op);
        }
        detail::parseDirectives(lexer_, false);
        starts_.push_back(start);
        roots_.push_back(parseSelectionSet(true));
        document_.operations.push_back(std::move(op));
    }

    void parseVariableDefinitions(OperationDefinition& op) {
        lexer_.take();
        if (lexer_.atPunctuator(")")) {
            lexer_.unexpected("a variable definition");
        }
        while (!lexer_.takePunctuator(")")) {
            if (lexer_.atString()) {
                lexer_.take();  // a description (newer drafts): ignored
            }
            const Token at = lexer_.peek();
            lexer_.expectPunctuator("$");
            VariableDefinition v;
            v.name = lexer_.expectName();
            for (const auto& other : op.variables) {
                if (other.name == v.name) {
                    Lexer::fail(at, "variable $" + excerpt(v.name) + " is defined twice");
                }
            }
            lexer_.expectPunctuator(":");
            v.type = detail::parseType(lexer_);
            if (lexer_.takePunctuator("=")) {
                std::string json;
                detail::parseValue(lexer_, true, json, nullptr);
                v.default_json = std::move(json);
            }
            detail::parseDirectives(lexer_, true);
            op.variables.push_back(std::move(v));
        }
    }

    void parseFragment() {
        lexer_.take();
        const Token at = lexer_.peek();
        if (lexer_.atName("on")) {
            lexer_.unexpected("a fragment name");
        }
        std::string name = lexer_.expectName();
        if (fragments_.count(name) != 0) {
            Lexer::fail(at, "there is already a fragment named \"" + excerpt(name) + "\"");
        }
        if (!lexer_.atName("on")) {
            lexer_.unexpected("\"on\"");
        }
        lexer_.take();
        lexer_.expectName();
        detail::parseDirectives(lexer_, false);
        auto selections = parseSelectionSet(true);
        document_.fragments.push_back(name);
        fragments_.emplace(std::move(name), std::move(selections));
    }

    /// `keep`: the selections are at the root (of an operation or a fragment) and are kept.
    std::vector<Selection> parseSelectionSet(bool keep) {
        const DepthGuard guard(lexer_, Nesting::selection);
        lexer_.expectPunctuator("{");
        if (lexer_.atPunctuator("}")) {
            lexer_.unexpected("a selection");
        }
        std::vector<Selection> selections;
        while (!lexer_.takePunctuator("}")) {
            Selection s = parseSelection(keep);
            if (keep) {
                selections.push_back(std::move(s));
            }
        }
        return selections;
    }

    Selection parseSelection(bool keep) {
        Selection s;
        if (lexer_.takePunctuator("...")) {
            if (lexer_.atName("on")) {
                lexer_.take();
                lexer_.expectName();
            }
            if (lexer_.peek().kind == Token::Kind::name) {
                s.kind = Selection::Kind::spread;
                spreads_.push_back(Spread{lexer_.peek().value, lexer_.peek()});
                s.name = lexer_.take().value;
                detail::parseDirectives(lexer_, false);
                return s;
            }
            s.kind = Selection::Kind::inline_fragment;
            detail::parseDirectives(lexer_, false);
            s.children = parseSelectionSet(keep);
            return s;
        }
        s.name = lexer_.expectName();
        if (lexer_.takePunctuator(":")) {
            s.name = lexer_.expectName();
        }
        detail::parseArguments(lexer_, false, keep ? &s.uses : nullptr);
        detail::parseDirectives(lexer_, false);
        if (lexer_.atPunctuator("{")) {
            parseSelectionSet(false);
        }
        return s;
    }

    void check() {
        const auto& ops = document_.operations;
        for (std::size_t i = 0; i < ops.size() && ops.size() > 1; ++i) {
            if (ops[i].name.empty()) {
                Lexer::fail(starts_[i],
                            "an anonymous operation must be the only operation of the document");
            }
        }
        for (const auto& spread : spreads_) {
            if (fragments_.count(spread.name) == 0) {
                Lexer::fail(spread.at, "unknown fragment \"" + excerpt(spread.name) + "\"");
            }
        }
    }

    /// Root fields through inline fragments and named fragments (each expanded once).
    void collectRoot(const std::vector<Selection>& root, OperationDefinition& op) const {
        std::vector<std::pair<const std::vector<Selection>*, std::size_t>> stack{{&root, 0}};
        std::set<std::string, std::less<>> expanded;
        std::set<std::string, std::less<>> fields;
        std::set<std::pair<std::string, std::string>> uses;
        while (!stack.empty()) {
            auto& top = stack.back();
            if (top.second == top.first->size()) {
                stack.pop_back();
                continue;
            }
            const Selection& s = (*top.first)[top.second++];
            if (s.kind == Selection::Kind::inline_fragment) {
                stack.emplace_back(&s.children, 0);
            } else if (s.kind == Selection::Kind::spread) {
                const auto it = fragments_.find(s.name);
                if (it != fragments_.end() && expanded.insert(s.name).second) {
                    stack.emplace_back(&it->second, 0);
                }
            } else {
                if (fields.insert(s.name).second) {
                    op.root_fields.push_back(s.name);
                }
                for (const auto& [argument, variable] : s.uses) {
                    if (uses.emplace(s.name + '\n' + argument, variable).second) {
                        op.root_variable_uses.push_back(VariableUse{s.name, argument, variable});
                    }
                }
            }
        }
    }

    Lexer lexer_;
    ExecutableDocument document_;
    std::vector<std::vector<Selection>> roots_;  ///< per operation
    std::vector<Token> starts_;                  ///< per operation
    std::map<std::string, std::vector<Selection>, std::less<>> fragments_;
    std::vector<Spread> spreads_;
};

/// The operations' names for a message, cut to an excerpt.
std::string operationNames(const ExecutableDocument& document) {
    std::string names;
    for (const auto& op : document.operations) {
        if (names.size() > detail::kMaxExcerptBytes) {
            break;
        }
        if (!names.empty()) {
            names += ", ";
        }
        names += op.name.empty() ? std::string("(anonymous)") : op.name;
    }
    return detail::excerpt(names);
}

}  // namespace

std::optional<ExecutableDocument> parseExecutable(std::string_view text, std::string& error,
                                                  const ParseLimits& limits) {
    try {
        ExecutableParser parser(text, limits);
        return parser.parse();
    } catch (const SyntaxError& e) {
        error = e.what();
    } catch (const std::exception& e) {
        error = std::string("cannot parse the document: ") + e.what();
    }
    return std::nullopt;
}

std::optional<std::string> valueToJson(std::string_view literal, std::string& error,
                                       const ParseLimits& limits) {
    try {
        Lexer lexer(literal, limits);
        std::string json;
        detail::parseValue(lexer, true, json, nullptr);
        if (lexer.peek().kind != Token::Kind::end) {
            lexer.unexpected("the end of the value");
        }
        return json;
    } catch (const SyntaxError& e) {
        error = e.what();
    } catch (const std::exception& e) {
        error = std::string("cannot parse the value: ") + e.what();
    }
    return std::nullopt;
}

const OperationDefinition* selectOperation(const ExecutableDocument& document,
                                           std::string_view operation_name, std::string& error) {
    const auto& ops = document.operations;
    if (ops.empty()) {
        error = "the document has no operation";
        return nullptr;
    }
    if (operation_name.empty()) {
        if (ops.size() == 1) {
            return &ops.front();
        }
        error = "the document has " + std::to_string(ops.size()) + " operations (" +
                operationNames(document) + "): set operation_name";
        return nullptr;
    }
    for (const auto& op : ops) {
        if (op.name == operation_name) {
            return &op;
        }
    }
    error = "the document has no operation \"" + detail::excerpt(operation_name) + "\" (it has " +
            operationNames(document) + ")";
    return nullptr;
}

}  // namespace crank::graphql
