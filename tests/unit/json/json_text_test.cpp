// Control characters in long strings, written and read at every alignment. RapidJSON 1.1.0's SSE2
// string scans take 0x1A-0x1F for ordinary characters in 16-byte aligned blocks (found by the
// graphql_response fuzz target): these tests fail if RAPIDJSON_SSE2 is ever turned back on.
#include "json/json_text.h"

#include <cstdio>
#include <string>

#include <gtest/gtest.h>
#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "json/json_parse.h"

namespace crank::json {
namespace {

/// The first byte below 0x20 in `text`, or -1.
int firstRawControl(const std::string& text) {
    for (const char c : text) {
        if (static_cast<unsigned char>(c) < 0x20U) {
            return static_cast<unsigned char>(c);
        }
    }
    return -1;
}

/// k letters, then 48 copies of `c`: each of 16 values of k puts the run at another alignment.
std::string controlRun(std::size_t k, char c) {
    return std::string(k, 'a') + std::string(48, c);
}

TEST(JsonText, WritersEscapeEveryControlCharacterAtEveryAlignment) {
    for (int c = 0; c < 0x20; ++c) {
        for (std::size_t k = 0; k < 16; ++k) {
            Document doc;
            doc.SetObject();
            const std::string text = controlRun(k, static_cast<char>(c));
            doc.AddMember("s",
                          Value(text.data(), static_cast<rapidjson::SizeType>(text.size()),
                                doc.GetAllocator())
                              .Move(),
                          doc.GetAllocator());
            // The writer most of the code base uses, and the host's own.
            rapidjson::StringBuffer buffer;
            rapidjson::Writer<rapidjson::StringBuffer> writer(buffer);
            doc.Accept(writer);
            const std::string written(buffer.GetString(), buffer.GetSize());
            ASSERT_EQ(firstRawControl(written), -1) << "0x" << std::hex << c << " after " << k;
            ASSERT_EQ(firstRawControl(toJsonText(doc)), -1) << "0x" << std::hex << c;

            Document back;
            ASSERT_TRUE(parseJson(written, back, "written").ok()) << written;
            EXPECT_EQ(std::string(back["s"].GetString(), back["s"].GetStringLength()), text);
        }
    }
}

TEST(JsonText, ReaderRefusesRawControlCharactersAtEveryAlignment) {
    for (int c = 1; c < 0x20; ++c) {
        for (std::size_t k = 0; k < 16; ++k) {
            const std::string text = "{\"s\":\"" + controlRun(k, static_cast<char>(c)) + "\"}";
            Document doc;
            const Result<void> parsed = parseJson(text, doc, "input");
            ASSERT_FALSE(parsed.ok()) << "0x" << std::hex << c << " after " << std::dec << k;
            char expected[64];
            std::snprintf(expected, sizeof expected, "control character 0x%02X in a string", c);
            EXPECT_NE(parsed.error().message.find(expected), std::string::npos)
                << parsed.error().message;
        }
    }
}

}  // namespace
}  // namespace crank::json
