// Malformed, truncated, huge and hostile configuration text: always an error with a position,
// never a crash, never unbounded time or memory.

#include <filesystem>
#include <regex>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "config_test_support.h"
#include "full_config.h"

namespace crank::config::test {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::SizeIs;
using ::testing::StartsWith;

using namespace std::string_literals;

/// The single error of a load that must fail.
ConfigError onlyError(const LoadResult& r) {
    EXPECT_FALSE(r.config.has_value());
    EXPECT_THAT(r.errors, SizeIs(1)) << ::testing::PrintToString(messages(r));
    return r.errors.empty() ? ConfigError{} : r.errors.front();
}

/// Line and column (1-based) of byte `offset` in `text`.
std::pair<std::size_t, std::size_t> positionOf(std::string_view text, std::size_t offset) {
    std::size_t line = 1;
    std::size_t column = 1;
    for (std::size_t i = 0; i < offset; ++i) {
        if (text[i] == '\n') {
            ++line;
            column = 1;
        } else {
            ++column;
        }
    }
    return {line, column};
}

// ---------------------------------------------------------------------------------------------
// Empty and not-an-object documents.

TEST(ConfigHostileInputTest, EmptyText) {
    EXPECT_THAT(messages(load("")),
                ElementsAre("crank.json:1:1: invalid JSON: The document is empty."));
    EXPECT_THAT(messages(load(" \n\t\n")),
                ElementsAre("crank.json:3:1: invalid JSON: The document is empty."));
}

TEST(ConfigHostileInputTest, OnlyAComment) {
    EXPECT_THAT(messages(load("// nothing but a comment\n")),
                ElementsAre("crank.json:2:1: invalid JSON: The document is empty."));
    EXPECT_THAT(messages(load("/* nothing */")),
                ElementsAre("crank.json:1:14: invalid JSON: The document is empty."));
}

TEST(ConfigHostileInputTest, UnterminatedComment) {
    const ConfigError e = onlyError(load("{} /* never closed"));
    EXPECT_THAT(e.path, StartsWith("crank.json:1:"));
    EXPECT_THAT(e.message, StartsWith("invalid JSON: "));
}

TEST(ConfigHostileInputTest, RootThatIsNotAnObject) {
    EXPECT_THAT(messages(load("[]")), ElementsAre("(root): expected an object, got an array"));
    EXPECT_THAT(messages(load(R"("crank.json")")),
                ElementsAre(R"((root): expected an object, got "crank.json")"));
    EXPECT_THAT(messages(load("null")), ElementsAre("(root): expected an object, got null"));
    EXPECT_THAT(messages(load("42")), ElementsAre("(root): expected an object, got 42"));
    EXPECT_THAT(messages(load("true")), ElementsAre("(root): expected an object, got true"));
}

TEST(ConfigHostileInputTest, TrailingGarbageAfterTheRoot) {
    EXPECT_THAT(messages(load("{}\n{}")),
                ElementsAre("crank.json:2:1: invalid JSON: The document root must not be followed "
                            "by other values."));
    EXPECT_THAT(messages(load("{} x")),
                ElementsAre("crank.json:1:4: invalid JSON: The document root must not be followed "
                            "by other values."));
}

// ---------------------------------------------------------------------------------------------
// Syntax errors point at the right place.

TEST(ConfigHostileInputTest, SyntaxErrorNamesLineAndColumn) {
    EXPECT_THAT(messages(load("{\n  \"server\": {\"threads\": }\n}")),
                ElementsAre("crank.json:2:25: invalid JSON: Invalid value."));
    EXPECT_THAT(messages(load("{\n  \"a\": 1\n  \"b\": 2\n}")),
                ElementsAre("crank.json:3:3: invalid JSON: Missing a comma or '}' after an object "
                            "member."));
    EXPECT_THAT(messages(load("{\"a\" 1}")),
                ElementsAre("crank.json:1:6: invalid JSON: Missing a colon after a name of object "
                            "member."));
    EXPECT_THAT(messages(load("{'a': 1}")),
                ElementsAre("crank.json:1:2: invalid JSON: Missing a name for object member."));
}

TEST(ConfigHostileInputTest, NumbersOutsideJson) {
    EXPECT_THAT(onlyError(load(R"({"server": {"threads": 1e999}})")).message,
                "invalid JSON: Number too big to be stored in double.");
    EXPECT_THAT(onlyError(load(R"({"server": {"threads": NaN}})")).message,
                StartsWith("invalid JSON: "));
    EXPECT_THAT(onlyError(load(R"({"server": {"threads": 0x10}})")).message,
                StartsWith("invalid JSON: "));
}

TEST(ConfigHostileInputTest, TruncatedAtEveryOffset) {
    // Every proper prefix of a valid config is an error at a position inside that prefix.
    ASSERT_EQ(kFullConfig.back(), '}');
    const std::regex position(R"(crank\.json:([0-9]+):([0-9]+))");
    const EnvMap env = fullConfigEnv();
    for (std::size_t size = 0; size < kFullConfig.size(); ++size) {
        const std::string_view prefix = kFullConfig.substr(0, size);
        const LoadResult r = load(prefix, env);
        ASSERT_FALSE(r.config.has_value()) << "prefix of " << size << " bytes loaded";
        ASSERT_EQ(r.errors.size(), 1U) << size;
        const ConfigError& e = r.errors.front();
        std::smatch match;
        ASSERT_TRUE(std::regex_match(e.path, match, position)) << size << ": " << e.toString();
        ASSERT_THAT(e.message, StartsWith("invalid JSON: ")) << size;
        const auto [endLine, endColumn] = positionOf(prefix, prefix.size());
        const std::size_t line = std::stoul(match[1].str());
        const std::size_t column = std::stoul(match[2].str());
        ASSERT_GE(line, 1U);
        ASSERT_GE(column, 1U);
        ASSERT_TRUE(line < endLine || (line == endLine && column <= endColumn))
            << size << ": " << e.toString() << " is past the end " << endLine << ":" << endColumn;
    }
    // And the whole text loads.
    EXPECT_THAT(messages(load(kFullConfig, env)), IsEmpty());
}

// ---------------------------------------------------------------------------------------------
// Encoding.

TEST(ConfigHostileInputTest, InvalidUtf8InStrings) {
    for (const std::string& bad :
         {"\xff"s, "\xc0\xaf"s, "\xe2\x82"s, "\x80"s, "\xed\xa0\x80"s, "\xf4\x90\x80\x80"s}) {
        const std::string text = R"({"server": {"listen": "a)" + bad + R"("}})";
        const ConfigError e = onlyError(load(text));
        EXPECT_THAT(e.path, StartsWith("crank.json:1:")) << e.toString();
        EXPECT_EQ(e.message, "invalid JSON: Invalid encoding in string.");
    }
}

TEST(ConfigHostileInputTest, InvalidUtf8InAKey) {
    const ConfigError e = onlyError(load("{\"serv\xff\": {}}"));
    EXPECT_EQ(e.toString(), "crank.json:1:7: invalid JSON: Invalid encoding in string.");
}

TEST(ConfigHostileInputTest, LoneSurrogateEscape) {
    const ConfigError e = onlyError(load(R"({"server": {"listen": "\ud800"}})"));
    EXPECT_THAT(e.path, StartsWith("crank.json:1:"));
    EXPECT_THAT(e.message, StartsWith("invalid JSON: "));
}

TEST(ConfigHostileInputTest, ValidUtf8IsKept) {
    const LoadResult r =
        load(R"({"operations": [{"name": "météo", "description": "Prévisions 🌦",
                                  "protocol": "rest"}]})");
    EXPECT_THAT(
        messages(r),
        ElementsAre(
            R"(operations[0].name: a tool name has 1 to 128 letters, digits, '_', '-' or '.', got "météo")"));
    const LoadResult ok =
        load(R"({"operations": [{"name": "meteo", "description": "Prévisions 🌦",
                                   "protocol": "rest"}]})");
    ASSERT_TRUE(ok.config.has_value());
    EXPECT_EQ(ok.config->operations[0].description, "Prévisions 🌦");
}

TEST(ConfigHostileInputTest, NulBytes) {
    // A NUL byte is never valid JSON text, wherever it is, including after the root object.
    EXPECT_THAT(messages(load("\0{}"s)),
                ElementsAre("crank.json:1:1: invalid JSON: a NUL byte is not allowed"));
    EXPECT_THAT(messages(load("{\"server\": {\"listen\": \"127.0.0.1\0:80\"}}"s)),
                ElementsAre("crank.json:1:33: invalid JSON: a NUL byte is not allowed"));
    EXPECT_THAT(messages(load("{}\n\0{\"server\": 5}"s)),
                ElementsAre("crank.json:2:1: invalid JSON: a NUL byte is not allowed"));
    EXPECT_THAT(messages(load("{} // comment\0 {\"x\"}"s)),
                ElementsAre("crank.json:1:14: invalid JSON: a NUL byte is not allowed"));
}

TEST(ConfigHostileInputTest, EscapedNulInAStringIsText) {
    // "\u0000" is an escape, not a NUL byte in the file: it reaches validation and is refused
    // there.
    EXPECT_THAT(
        messages(load(R"({"operations": [{"name": "a\u0000b", "description": "d",
                                  "protocol": "rest"}]})")),
        ElementsAre(
            R"(operations[0].name: a tool name has 1 to 128 letters, digits, '_', '-' or '.', got "a\u0000b")"));
}

// ---------------------------------------------------------------------------------------------
// Nesting.

TEST(ConfigHostileInputTest, HundredThousandOpenBrackets) {
    const std::string text(100'000, '[');
    const ConfigError e = onlyError(load(text));
    EXPECT_EQ(e.toString(), "crank.json:1:65: nesting deeper than 64 levels");
}

TEST(ConfigHostileInputTest, HundredThousandBalancedBrackets) {
    const std::string text = std::string(100'000, '[') + std::string(100'000, ']');
    EXPECT_EQ(onlyError(load(text)).toString(), "crank.json:1:65: nesting deeper than 64 levels");
}

TEST(ConfigHostileInputTest, DeepObjectsInsideAnOperation) {
    std::string deep;
    for (int i = 0; i < 100'000; ++i) {
        deep += R"({"a":)";
    }
    const std::string text = R"({"operations": [{"name": "o", "config": )" + deep;
    const ConfigError e = onlyError(load(text));
    // Root, operations, the operation, then 61 nested objects: the 65th level opens at column
    // 40 + 5 * 61 + 1.
    EXPECT_EQ(e.toString(), "crank.json:1:346: nesting deeper than 64 levels");
}

TEST(ConfigHostileInputTest, NestingLimitIsExactly64Levels) {
    // Root (1), operations (2), the operation (3), config (4), then arrays.
    const auto withArrays = [](int count) {
        return R"({"operations": [{"name": "o", "description": "d", "protocol": "rest", "config": {"x": )" +
               std::string(static_cast<std::size_t>(count), '[') +
               std::string(static_cast<std::size_t>(count), ']') + "}}]}";
    };
    const LoadResult ok = load(withArrays(60));
    EXPECT_THAT(messages(ok), IsEmpty());
    const ConfigError e = onlyError(load(withArrays(61)));
    EXPECT_THAT(e.path, StartsWith("crank.json:1:"));
    EXPECT_EQ(e.message, "nesting deeper than 64 levels");
}

TEST(ConfigHostileInputTest, DeepInputSchemaIsBounded) {
    std::string schema = R"({"type": "object", "properties": )";
    std::string close = "}";
    for (int i = 0; i < 200; ++i) {
        schema += R"({"p": {"type": "object", "properties": )";
        close += "}}";
    }
    const std::string text =
        R"({"operations": [{"name": "o", "description": "d", "protocol": "rest",
        "input_schema": )" +
        schema + "{}" + close + "}]}";
    EXPECT_EQ(onlyError(load(text)).message, "nesting deeper than 64 levels");
}

// ---------------------------------------------------------------------------------------------
// Size.

TEST(ConfigHostileInputTest, HugeStringIsCutInMessages) {
    const std::string huge(10 * 1024 * 1024, 'd');
    EXPECT_THAT(messages(load(withOperations(
                    {R"({"name": "o", "description": ")" + huge + R"(", "protocol": "rest"})"}))),
                ElementsAre("operations[0].description: must be at most 8192 characters long, got "
                            "10485760"));
    // A huge value echoed in a message is cut to a short prefix.
    const std::string big(1024 * 1024, 'd');
    const std::vector<std::string> errors = errorsOf(
        R"({"plugins": {"enabled": [")" + big + R"("]}, "store": {"backend": ")" + big + R"("}})");
    ASSERT_THAT(errors, SizeIs(2));
    EXPECT_EQ(errors[0],
              R"(store.backend: expected "sqlite", got ")" + std::string(40, 'd') + R"("...)");
    EXPECT_EQ(
        errors[1],
        R"(plugins.enabled[0]: expected a plugin name (letters, digits, '_', '-', '.'), got ")" +
            std::string(40, 'd') + R"("...)");
}

TEST(ConfigHostileInputTest, CutStringsStayValidUtf8) {
    // 39 ASCII bytes then "é" (2 bytes): cutting at byte 40 would split the "é".
    const std::string value = std::string(39, 'a') + "\xc3\xa9" + std::string(20, 'b');
    EXPECT_THAT(errorsOf(R"({"store": {"backend": ")" + value + R"("}})"),
                ElementsAre(R"(store.backend: expected "sqlite", got ")" + std::string(39, 'a') +
                            R"("...)"));
    const std::string fits = std::string(38, 'a') + "\xc3\xa9" + std::string(20, 'b');
    EXPECT_THAT(errorsOf(R"({"store": {"backend": ")" + fits + R"("}})"),
                ElementsAre(R"(store.backend: expected "sqlite", got ")" + std::string(38, 'a') +
                            "\xc3\xa9\"..."));
}

TEST(ConfigHostileInputTest, HugeUnknownKeyIsQuick) {
    const std::string key(4 * 1024 * 1024, 'k');
    const std::vector<std::string> errors = errorsOf(R"({")" + key + R"(": 1})");
    ASSERT_THAT(errors, SizeIs(1));
    EXPECT_EQ(errors[0], key + ": unknown key");
}

TEST(ConfigHostileInputTest, HugeArray) {
    std::string paths;
    for (int i = 0; i < 200'000; ++i) {
        paths += (i == 0 ? "\"$.a\"" : ",\"$.a\"");
    }
    EXPECT_THAT(
        errorsOf(withOperations({operation("a", R"({"redacted_paths": [)" + paths + "]}")})),
        ElementsAre("operations[0].execution.redacted_paths: must have at most 1024 entries, "
                    "got 200000"));
}

TEST(ConfigHostileInputTest, ManyOperations) {
    std::string ops;
    for (int i = 0; i < 5'000; ++i) {
        ops += (i == 0 ? "" : ",") + operation("op" + std::to_string(i));
    }
    const LoadResult r = load(R"({"operations": [)" + ops + "]}");
    ASSERT_TRUE(r.config.has_value()) << ::testing::PrintToString(messages(r));
    EXPECT_EQ(r.config->operations.size(), 5'000U);
}

TEST(ConfigHostileInputTest, TextOverTheSizeLimit) {
    const std::string text = "{}" + std::string(kMaxConfigBytes - 1, ' ');
    EXPECT_THAT(messages(load(text)),
                ElementsAre("crank.json: the config is larger than 16777216 bytes"));
}

TEST(ConfigHostileInputTest, TextExactlyAtTheSizeLimit) {
    const std::string text = "{}" + std::string(kMaxConfigBytes - 2, ' ');
    EXPECT_THAT(messages(load(text)), IsEmpty());
}

// ---------------------------------------------------------------------------------------------
// Files.

TEST(ConfigHostileInputTest, FileThatLoads) {
    const TempDir dir;
    const std::string path = dir.write("crank.json", R"({"server": {"threads": 2}})");
    const LoadResult r = loadConfigFile(path, optionsWith({}));
    ASSERT_TRUE(r.config.has_value()) << ::testing::PrintToString(messages(r));
    EXPECT_EQ(r.config->source, path);
    EXPECT_EQ(r.config->server.threads, 2);
}

TEST(ConfigHostileInputTest, FileErrorsNameTheFile) {
    const TempDir dir;
    const std::string path = dir.write("bad.json", "{\n  \"server\": {\"threads\": 0},\n  oops\n}");
    EXPECT_THAT(messages(loadConfigFile(path, optionsWith({}))),
                ElementsAre(path + ":3:3: invalid JSON: Missing a name for object member."));
}

TEST(ConfigHostileInputTest, NonexistentFile) {
    const TempDir dir;
    const std::string path = dir.file("missing.json");
    EXPECT_THAT(messages(loadConfigFile(path)),
                ElementsAre(path + ": cannot open the config file"));
}

TEST(ConfigHostileInputTest, DirectoryAsTheFile) {
    const TempDir dir;
    const std::string path = dir.path();
    EXPECT_THAT(messages(loadConfigFile(path)),
                ElementsAre(path + ": cannot read the config file"));
}

TEST(ConfigHostileInputTest, EmptyFile) {
    const TempDir dir;
    const std::string path = dir.write("empty.json", "");
    EXPECT_THAT(messages(loadConfigFile(path)),
                ElementsAre(path + ":1:1: invalid JSON: The document is empty."));
}

TEST(ConfigHostileInputTest, FileOverTheSizeLimit) {
    const TempDir dir;
    const std::string path = dir.write("huge.json", "{}" + std::string(kMaxConfigBytes, ' '));
    EXPECT_THAT(messages(loadConfigFile(path)),
                ElementsAre(path + ": the config is larger than 16777216 bytes"));
}

}  // namespace
}  // namespace crank::config::test
