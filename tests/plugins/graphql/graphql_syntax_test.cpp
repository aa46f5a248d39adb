#include "graphql_syntax.h"

#include <cstddef>
#include <cstdint>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include <gtest/gtest.h>

namespace crank::graphql {
namespace {

ExecutableDocument parseOk(std::string_view text, const ParseLimits& limits = {}) {
    std::string error;
    auto doc = parseExecutable(text, error, limits);
    EXPECT_TRUE(doc.has_value()) << error;
    EXPECT_TRUE(!doc || error.empty()) << error;
    return doc ? *doc : ExecutableDocument{};
}

std::string parseError(std::string_view text, const ParseLimits& limits = {}) {
    std::string error;
    auto doc = parseExecutable(text, error, limits);
    EXPECT_FALSE(doc.has_value()) << "parsed: " << text.substr(0, 200);
    EXPECT_FALSE(error.empty());
    return error;
}

std::string defaultOf(std::string_view value_text) {
    const std::string text = "query Q($v: T = " + std::string(value_text) + ") { f }";
    auto doc = parseOk(text);
    if (doc.operations.empty() || doc.operations[0].variables.empty() ||
        !doc.operations[0].variables[0].default_json) {
        return "<none>";
    }
    return *doc.operations[0].variables[0].default_json;
}

std::string stringValue(std::string_view literal) {
    std::string error;
    auto json = valueToJson(literal, error);
    return json ? *json : "<error: " + error + ">";
}

TEST(GraphqlSyntaxTest, ParsesAComplexDocument) {
    const auto doc = parseOk(R"(
# A comment
query GetItem($id: ID!, $filter: ItemFilter = {tags: ["a", "b"], kind: BOOK}, $n: [Int!]! = [1, 2])
    @cached(ttl: 30) {
  item(id: $id, filter: $filter) @include(if: true) {
    id
    ... on Book { pages }
    ...ItemParts
  }
  second: items(first: $n, order: ASC) { id }
  ... on Query { extra(x: $id) }
  ...RootParts
}

fragment ItemParts on Item { name owner { id } }
fragment RootParts on Query { viaFragment(arg: $id) ...RootParts }

mutation AddItem($input: ItemInput!) { addItem(input: $input) { id } }
subscription OnItem { itemAdded { id } }
)");
    ASSERT_EQ(doc.operations.size(), 3U);
    const auto& q = doc.operations[0];
    EXPECT_EQ(q.kind, OperationDefinition::Kind::query);
    EXPECT_EQ(q.name, "GetItem");
    EXPECT_EQ(q.line, 3U);
    ASSERT_EQ(q.variables.size(), 3U);
    EXPECT_EQ(q.variables[0].name, "id");
    EXPECT_EQ(q.variables[0].type.text(), "ID!");
    EXPECT_FALSE(q.variables[0].default_json.has_value());
    EXPECT_EQ(q.variables[1].type.text(), "ItemFilter");
    EXPECT_EQ(*q.variables[1].default_json, R"({"tags":["a","b"],"kind":"BOOK"})");
    EXPECT_EQ(q.variables[2].type.text(), "[Int!]!");
    EXPECT_EQ(*q.variables[2].default_json, "[1,2]");
    EXPECT_EQ(q.root_fields, (std::vector<std::string>{"item", "items", "extra", "viaFragment"}));
    ASSERT_EQ(q.root_variable_uses.size(), 5U);
    EXPECT_EQ(q.root_variable_uses[0].field, "item");
    EXPECT_EQ(q.root_variable_uses[0].argument, "id");
    EXPECT_EQ(q.root_variable_uses[0].variable, "id");
    EXPECT_EQ(q.root_variable_uses[1].argument, "filter");
    EXPECT_EQ(q.root_variable_uses[2].field, "items");
    EXPECT_EQ(q.root_variable_uses[2].argument, "first");
    EXPECT_EQ(q.root_variable_uses[2].variable, "n");
    EXPECT_EQ(q.root_variable_uses[3].field, "extra");
    EXPECT_EQ(q.root_variable_uses[4].field, "viaFragment");
    EXPECT_EQ(doc.operations[1].kind, OperationDefinition::Kind::mutation);
    EXPECT_EQ(doc.operations[1].root_fields, std::vector<std::string>{"addItem"});
    EXPECT_EQ(doc.operations[2].kind, OperationDefinition::Kind::subscription);
    EXPECT_EQ(doc.operations[2].line, 19U);
    EXPECT_EQ(doc.fragments, (std::vector<std::string>{"ItemParts", "RootParts"}));
}

TEST(GraphqlSyntaxTest, ShorthandAndAnonymousOperations) {
    auto doc = parseOk("{ a b: c }");
    ASSERT_EQ(doc.operations.size(), 1U);
    EXPECT_EQ(doc.operations[0].kind, OperationDefinition::Kind::query);
    EXPECT_EQ(doc.operations[0].name, "");
    EXPECT_EQ(doc.operations[0].root_fields, (std::vector<std::string>{"a", "c"}));
    doc = parseOk("query { a }");
    EXPECT_EQ(doc.operations[0].name, "");
    doc = parseOk("\xEF\xBB\xBFquery,Q,{,a,},");  // BOM and commas are ignored
    EXPECT_EQ(doc.operations[0].name, "Q");
}

TEST(GraphqlSyntaxTest, DescriptionsOnOperationsAndVariablesAreIgnored) {
    const auto doc = parseOk(R"(
"""Gets an item."""
query Q("The id." $id: ID) { a(id: $id) }
"A fragment." fragment F on Query { b }
)");
    ASSERT_EQ(doc.operations.size(), 1U);
    EXPECT_EQ(doc.operations[0].variables.at(0).name, "id");
    EXPECT_EQ(parseError("\"d\" { a }"),
              "line 1, column 1: a type system definition is not allowed in an executable "
              "document");
    EXPECT_EQ(parseError("\"d\" type T { a: Int }"),
              "line 1, column 1: a type system definition is not allowed in an executable "
              "document");
}

TEST(GraphqlSyntaxTest, RootFieldsAreUniqueAndFragmentCyclesStop) {
    const auto doc = parseOk(R"(
query { a a ...A ... { b ...B } }
fragment A on Query { a ...B c }
fragment B on Query { ...A d }
)");
    EXPECT_EQ(doc.operations[0].root_fields, (std::vector<std::string>{"a", "d", "c", "b"}));
}

TEST(GraphqlSyntaxTest, ValueKindsAsJson) {
    EXPECT_EQ(defaultOf("1"), "1");
    EXPECT_EQ(defaultOf("-0"), "-0");
    EXPECT_EQ(defaultOf("-12.5e-3"), "-12.5e-3");
    EXPECT_EQ(defaultOf("1E5"), "1E5");
    EXPECT_EQ(defaultOf("true"), "true");
    EXPECT_EQ(defaultOf("false"), "false");
    EXPECT_EQ(defaultOf("null"), "null");
    EXPECT_EQ(defaultOf("RED"), "\"RED\"");
    EXPECT_EQ(defaultOf("[]"), "[]");
    EXPECT_EQ(defaultOf("{}"), "{}");
    EXPECT_EQ(defaultOf("[[1], {a: {b: [RED, null]}}]"), R"([[1],{"a":{"b":["RED",null]}}])");
    EXPECT_EQ(defaultOf(R"("q\"\\\/\b\f\n\r\t")"), R"("q\"\\/\b\f\n\r\t")");
    EXPECT_EQ(defaultOf(R"("\u00e9\u0001")"), "\"\xC3\xA9\\u0001\"");
    EXPECT_EQ(defaultOf(R"("\uD83D\uDE00")"), "\"\xF0\x9F\x98\x80\"");
    EXPECT_EQ(defaultOf("\"caf\xC3\xA9 \xF0\x9F\x98\x80\""), "\"caf\xC3\xA9 \xF0\x9F\x98\x80\"");
    EXPECT_EQ(stringValue("{a: 1, b: \"x\"}"), R"({"a":1,"b":"x"})");
    EXPECT_EQ(stringValue("ENUM"), "\"ENUM\"");
}

TEST(GraphqlSyntaxTest, BlockStrings) {
    EXPECT_EQ(stringValue("\"\"\"\n    Hello,\n      World!\n\n    Yours,\n      GraphQL.\n\"\"\""),
              "\"Hello,\\n  World!\\n\\nYours,\\n  GraphQL.\"");
    EXPECT_EQ(stringValue(R"("""  first line stays""")"), R"("  first line stays")");
    EXPECT_EQ(stringValue("\"\"\"\r\n  a\r\n   b\r  \n\"\"\""), R"("a\n b")");
    EXPECT_EQ(stringValue(R"("""escaped \""" quotes \n not an escape""")"),
              R"("escaped \"\"\" quotes \\n not an escape")");
    EXPECT_EQ(stringValue("\"\"\"\"\"\""), "\"\"");
    EXPECT_EQ(stringValue("\"\"\"\n\t\tx\n\t\t  y\n\"\"\""), R"("x\n  y")");
}

TEST(GraphqlSyntaxTest, TypeRefHelpers) {
    const TypeRef t =
        TypeRef::nonNull(TypeRef::listOf(TypeRef::listOf(TypeRef::nonNull(TypeRef::named("ID")))));
    EXPECT_EQ(t.text(), "[[ID!]]!");
    EXPECT_EQ(t.namedType(), "ID");
    EXPECT_TRUE(t.nonNullable());
    EXPECT_FALSE(t.of->nonNullable());
    EXPECT_EQ(t.of->kind, TypeRef::Kind::list);
    EXPECT_EQ(TypeRef::named("Int").text(), "Int");
}

TEST(GraphqlSyntaxTest, SelectOperation) {
    const auto doc = parseOk("query GetItem { a } query ListItems { b }");
    std::string error;
    EXPECT_EQ(selectOperation(doc, "ListItems", error), &doc.operations[1]);
    EXPECT_EQ(selectOperation(doc, "Nope", error), nullptr);
    EXPECT_EQ(error, "the document has no operation \"Nope\" (it has GetItem, ListItems)");
    EXPECT_EQ(selectOperation(doc, "", error), nullptr);
    EXPECT_EQ(error, "the document has 2 operations (GetItem, ListItems): set operation_name");
    const auto one = parseOk("{ a }");
    EXPECT_EQ(selectOperation(one, "", error), &one.operations[0]);
    const auto fragments_only = parseOk("fragment F on Query { a }");
    EXPECT_EQ(selectOperation(fragments_only, "", error), nullptr);
    EXPECT_EQ(error, "the document has no operation");
    EXPECT_EQ(kindName(OperationDefinition::Kind::mutation), "mutation");
}

TEST(GraphqlSyntaxTest, ErrorsNameLineColumnAndWhatWasFound) {
    EXPECT_EQ(parseError("query Q { a(x: ) }"), "line 1, column 16: expected a value, found \")\"");
    EXPECT_EQ(parseError("query { a { } }"),
              "line 1, column 13: expected a selection, found \"}\"");
    EXPECT_EQ(parseError("query Q($: Int) { a }"),
              "line 1, column 10: expected a name, found \":\"");
    EXPECT_EQ(parseError("query Q {\n  a(x: 1\n"),
              "line 3, column 1: expected a name, found the end of the document");
    EXPECT_EQ(parseError("{ a }\n{ b }"),
              "line 1, column 1: an anonymous operation must be the only operation of the "
              "document");
    EXPECT_EQ(parseError("query A { a }\nquery A { b }"),
              "line 2, column 7: there is already an operation named \"A\"");
    EXPECT_EQ(parseError("query ($a: Int, $a: Int) { a }"),
              "line 1, column 17: variable $a is defined twice");
    EXPECT_EQ(parseError("{ ...Missing }"), "line 1, column 6: unknown fragment \"Missing\"");
    EXPECT_EQ(parseError("fragment F on Q { a }\nfragment F on Q { b }"),
              "line 2, column 10: there is already a fragment named \"F\"");
    EXPECT_EQ(parseError("type Query { a: Int }"),
              "line 1, column 1: a type system definition is not allowed in an executable "
              "document");
    EXPECT_EQ(parseError("query Q($v: Int = $w) { a }"),
              "line 1, column 19: expected a constant value, found a variable");
    EXPECT_EQ(parseError("{ a(x: 01) }"), "line 1, column 9: a number must not have leading zeros");
    EXPECT_EQ(parseError("{ a(x: 1.) }"),
              "line 1, column 10: expected a digit after \".\", found \")\"");
    EXPECT_EQ(parseError("{ a(x: 12abc) }"), "line 1, column 10: invalid number: unexpected \"a\"");
    EXPECT_EQ(parseError("{ a(x: \"abc) }"), "line 1, column 8: unterminated string");
    EXPECT_EQ(parseError("{ a(x: \"\"\"abc) }"), "line 1, column 8: unterminated block string");
    EXPECT_EQ(parseError("{ a(x: \"\\q\") }"),
              "line 1, column 9: invalid escape sequence in a string");
    EXPECT_EQ(parseError("{ a(x: \"\\u12G4\") }"),
              "line 1, column 9: invalid Unicode escape sequence");
    EXPECT_EQ(parseError("{ a(x: \"\\uD800x\") }"),
              "line 1, column 9: invalid Unicode escape sequence: a lone surrogate");
    EXPECT_EQ(parseError("{ a(x: \"\\uDC00\") }"),
              "line 1, column 9: invalid Unicode escape sequence: a lone surrogate");
    EXPECT_EQ(parseError("{ a ~ }"), "line 1, column 5: unexpected character \"~\"");
    EXPECT_EQ(parseError("{ a \x01 }"), "line 1, column 5: unexpected character U+0001");
    EXPECT_EQ(parseError("{ a .. }"), "line 1, column 5: expected \"...\", found \".\"");
    EXPECT_EQ(parseError(""),
              "line 1, column 1: expected an operation or a fragment, found the "
              "end of the document");
    EXPECT_EQ(parseError("# only a comment\n"),
              "line 2, column 1: expected an operation or a "
              "fragment, found the end of the document");
    EXPECT_EQ(parseError("query Q($v: [Int) { a }"),
              "line 1, column 17: expected \"]\", found \")\"");
    EXPECT_EQ(parseError("fragment on on Q { a }"),
              "line 1, column 10: expected a fragment name, found \"on\"");
    EXPECT_EQ(parseError("{ a(x: {b: 1, b: 2}) }"),
              "line 1, column 15: the object has field \"b\" twice");
    // Columns count characters, not bytes; \r\n is one line break.
    EXPECT_EQ(parseError("{ \"\xC3\xA9\xC3\xA9\" ~ }"),
              "line 1, column 3: expected a name, found a string");
    EXPECT_EQ(parseError("{ a(s: \"\xC3\xA9\xC3\xA9\") ~ }"),
              "line 1, column 14: unexpected character \"~\"");
    EXPECT_EQ(parseError("{\r\n a\r\n ~ }"), "line 3, column 2: unexpected character \"~\"");
    EXPECT_EQ(parseError("{\r a\n\n ~ }"), "line 4, column 2: unexpected character \"~\"");
}

TEST(GraphqlSyntaxTest, RefusesInvalidUtf8) {
    EXPECT_EQ(parseError("{ a # \xFF\n }"), "line 1, column 7: invalid UTF-8");
    EXPECT_EQ(parseError("{ a(x: \"\xC3\") }"), "line 1, column 9: invalid UTF-8");
    EXPECT_EQ(parseError("{ a(x: \"\xC0\xAF\") }"), "line 1, column 9: invalid UTF-8");  // overlong
    EXPECT_EQ(parseError("{ a(x: \"\xED\xA0\x80\") }"), "line 1, column 9: invalid UTF-8");
    EXPECT_EQ(parseError("{ \xC3\xA9 }"), "line 1, column 3: unexpected character \"\xC3\xA9\"");
}

TEST(GraphqlSyntaxTest, DepthLimitsEveryNesting) {
    ParseLimits limits;
    limits.max_depth = 3;
    parseOk("{ a { b { c } } }", limits);
    EXPECT_EQ(parseError("{ a { b { c { d } } } }", limits),
              "line 1, column 13: nesting deeper than 3 levels");
    parseOk("query($v: [[[Int]]] = [[[1]]]) { a }", limits);
    EXPECT_EQ(parseError("query($v: [[[[Int]]]]) { a }", limits),
              "line 1, column 14: nesting deeper than 3 levels");
    EXPECT_EQ(parseError("{ a(x: [{a: [[1]]}]) }", limits),
              "line 1, column 14: nesting deeper than 3 levels");
    EXPECT_EQ(parseError("{ ... { ... { ... { a } } } }", limits),
              "line 1, column 19: nesting deeper than 3 levels");
}

TEST(GraphqlSyntaxTest, HostileNestingDoesNotOverflowTheStack) {
    constexpr std::size_t kDeep = 100'000;
    std::string selections;
    for (std::size_t i = 0; i < kDeep; ++i) {
        selections += "{a";
    }
    EXPECT_EQ(parseError(selections), "line 1, column 129: nesting deeper than 64 levels");
    EXPECT_NE(parseError("{ a(x: " + std::string(kDeep, '[') + ") }").find("nesting deeper"),
              std::string::npos);
    EXPECT_NE(parseError("query($v: " + std::string(kDeep, '[') + ") { a }").find("nesting deeper"),
              std::string::npos);
    std::string objects = "{ a(x: ";
    for (std::size_t i = 0; i < kDeep; ++i) {
        objects += "{a:";
    }
    EXPECT_NE(parseError(objects).find("nesting deeper"), std::string::npos);
    std::string error;
    EXPECT_FALSE(valueToJson(std::string(kDeep, '['), error).has_value());
    EXPECT_NE(error.find("nesting deeper"), std::string::npos);
}

TEST(GraphqlSyntaxTest, SizeAndTokenLimits) {
    ParseLimits limits;
    limits.max_bytes = 100;
    EXPECT_EQ(parseError("{ a }" + std::string(200, ' '), limits),
              "the document is 205 bytes, more than the limit of 100");
    EXPECT_NE(parseError(std::string(std::size_t{2} * 1024 * 1024, ' ') + "{ a }")
                  .find("more than the limit"),
              std::string::npos);
    limits = ParseLimits{};
    limits.max_tokens = 5;
    parseOk("{ a b c }", limits);
    EXPECT_EQ(parseError("{ a b c d }", limits),
              "line 1, column 11: the document has more than 5 tokens");
}

TEST(GraphqlSyntaxTest, HugeCommentIsFine) {
    const std::string text = "#" + std::string(std::size_t{1024} * 1024 - 20, '#') + "\n{ a }";
    const auto doc = parseOk(text);
    EXPECT_EQ(doc.operations.at(0).root_fields, std::vector<std::string>{"a"});
    EXPECT_EQ(doc.operations.at(0).line, 2U);
}

constexpr std::string_view kSample =
    R"(query Q($id: ID! = "x\u00e9", $l: [Int] = [1, 2.5e3]) @d(a: {b: ENUM}) {
  alias: item(id: $id) { ... on T { x } ...F }
  b(s: """block "string" """)
}
fragment F on T { y }
)";

TEST(GraphqlSyntaxTest, EveryTruncationErrorsWithoutCrashing) {
    parseOk(kSample);
    for (std::size_t n = 0; n + 1 < kSample.size(); ++n) {
        const std::string_view prefix = kSample.substr(0, n);
        // The only prefixes that parse: the whole query, before the fragment (then its spread
        // is unknown, so none).
        std::string error;
        const auto doc = parseExecutable(prefix, error);
        EXPECT_FALSE(doc.has_value()) << "prefix of " << n << " bytes parsed";
        EXPECT_EQ(error.rfind("line ", 0), 0U) << error;
    }
}

TEST(GraphqlSyntaxTest, RandomBytesNeverCrash) {
    std::mt19937 rng(12345);  // NOLINT(cert-msc51-cpp): reproducible on purpose
    const std::string alphabet = "{}[]()$!:=@|&.\"\\#,\n query fragment on a1_ 0-9eE.\xC3\xA9\xFF";
    std::size_t parsed = 0;
    for (int i = 0; i < 2000; ++i) {
        std::string text;
        const std::size_t length = rng() % 120;
        for (std::size_t k = 0; k < length; ++k) {
            text +=
                (i % 2 == 0) ? alphabet[rng() % alphabet.size()] : static_cast<char>(rng() % 256);
        }
        std::string error;
        const auto doc = parseExecutable(text, error);
        if (doc) {
            ++parsed;
        } else {
            EXPECT_FALSE(error.empty());
        }
        // Mutations of a valid document.
        std::string mutated(kSample);
        for (int m = 0; m < 3; ++m) {
            mutated[rng() % mutated.size()] = alphabet[rng() % alphabet.size()];
        }
        error.clear();
        if (!parseExecutable(mutated, error)) {
            EXPECT_FALSE(error.empty());
        }
    }
    EXPECT_LT(parsed, 2000U);
}

TEST(GraphqlSyntaxTest, ExcerptsAreShortValidUtf8) {
    using detail::excerpt;
    EXPECT_EQ(excerpt("short"), "short");
    EXPECT_EQ(excerpt(""), "");
    EXPECT_EQ(excerpt(std::string(200, 'a')), std::string(200, 'a'));
    EXPECT_EQ(excerpt(std::string(201, 'a')), std::string(197, 'a') + "...");
    EXPECT_EQ(excerpt("abcdefghijkl", 10), "abcdefg...");
    EXPECT_EQ(excerpt("abcdefghij", 10), "abcdefghij");
    // Never inside a UTF-8 sequence: "é" is two bytes.
    EXPECT_EQ(excerpt("abcdef\xC3\xA9xyz", 10), "abcdef...");
    EXPECT_EQ(excerpt("a\xE9"
                      "b\n\t\r\x01\x7F"),
              "a\xEF\xBF\xBD"
              "b\\n\\t\\r\\u0001\\u007F");
    EXPECT_EQ(excerpt("\xED\xA0\x80"), "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD");
    const std::string huge(std::size_t{5} * 1024 * 1024, '\xE9');
    const std::string cut = excerpt(huge);
    EXPECT_LE(cut.size(), detail::kMaxExcerptBytes);
    EXPECT_EQ(cut.substr(cut.size() - 3), "...");
    EXPECT_TRUE(detail::validUtf8(cut));
    EXPECT_EQ(detail::repairUtf8("caf\xE9 \xC3\xA9"), "caf\xEF\xBF\xBD \xC3\xA9");
    EXPECT_EQ(detail::repairUtf8("ok"), "ok");
    EXPECT_TRUE(detail::isName("_a1"));
    EXPECT_TRUE(detail::isName(std::string(kMaxNameBytes, 'a')));
    EXPECT_FALSE(detail::isName(std::string(kMaxNameBytes + 1, 'a')));
    EXPECT_FALSE(detail::isName(""));
    EXPECT_FALSE(detail::isName("1a"));
    EXPECT_FALSE(detail::isName("a-b"));
    EXPECT_FALSE(detail::isName("caf\xC3\xA9"));
}

TEST(GraphqlSyntaxTest, ErrorsQuoteExcerptsOfHugeTokens) {
    const std::size_t five_mb = std::size_t{5} * 1024 * 1024;
    ParseLimits limits;
    limits.max_bytes = 2 * five_mb;
    const auto check = [](const std::string& message, std::string_view expected_start) {
        EXPECT_LT(message.size(), 1024U) << message.substr(0, 300);
        EXPECT_EQ(message.substr(0, expected_start.size()), expected_start);
    };
    // A 5 MB number where an operation should start, in a value, and as a name.
    check(parseError("{ a }\n" + std::string(five_mb, '7'), limits),
          "line 2, column 1: expected an operation or a fragment, found \"777");
    check(parseError("{ a(x: 1 " + std::string(five_mb, '7') + ") }", limits),
          "line 1, column 10: expected a name, found \"777");
    check(parseError("{ a }\n" + std::string(five_mb, 'n'), limits),
          "line 2, column 1: a name longer than 1024 bytes: \"nnn");
    EXPECT_EQ(
        parseError("{ " + std::string(kMaxNameBytes + 1, 'n') + " }"),
        "line 1, column 3: a name longer than 1024 bytes: \"" + std::string(61, 'n') + "...\"");
    parseOk("{ " + std::string(kMaxNameBytes, 'n') + " }");
    std::string error;
    EXPECT_FALSE(valueToJson(std::string(five_mb, 'n'), error, limits).has_value());
    check(error, "line 1, column 1: a name longer than 1024 bytes");
    // Names of the longest kind in messages.
    const std::string n(kMaxNameBytes - 1, 'n');
    check(parseError("query Q" + n + " { a }\nquery Q" + n + " { b }"),
          "line 2, column 7: there is already an operation named \"Qnnn");
    check(parseError("fragment F" + n + " on Q { a }\nfragment F" + n + " on Q { b }"),
          "line 2, column 10: there is already a fragment named \"Fnnn");
    check(parseError("query ($v" + n + ": Int, $v" + n + ": Int) { a }"),
          "line 1, column 1040: variable $vnnn");
    check(parseError("{ ...F" + n + " }"), "line 1, column 6: unknown fragment \"Fnnn");
    check(parseError("{ a(x: {f" + n + ": 1, f" + n + ": 2}) }"),
          "line 1, column 1038: the object has field \"fnnn");
    // selectOperation: the name asked for and the names there are.
    const auto doc = parseOk("query A { a } query B { b }");
    EXPECT_EQ(selectOperation(doc, std::string(five_mb, 'x'), error), nullptr);
    check(error, "the document has no operation \"xxx");
    std::string many;
    for (int i = 0; i < 3000; ++i) {
        many += "query Q" + std::to_string(i) + " { a } ";
    }
    const auto many_doc = parseOk(many);
    EXPECT_EQ(selectOperation(many_doc, "", error), nullptr);
    check(error, "the document has 3000 operations (Q0, Q1, Q2, ");
    EXPECT_NE(error.find("...): set operation_name"), std::string::npos) << error;
}

}  // namespace
}  // namespace crank::graphql
