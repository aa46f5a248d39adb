#pragma once

#include <string>
#include <string_view>

#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include "json/json_parse.h"

namespace crank::json::testing {

/// Parses JSON text for a test; fails the test on malformed text.
inline Document parse(std::string_view text) {
    Document doc;
    Result<void> ok = parseJson(text, doc, "test");
    EXPECT_TRUE(ok.ok()) << (ok.ok() ? "" : ok.error().message);
    return doc;
}

/// `depth` nested arrays around 0.
inline std::string nestedArrays(std::size_t depth) {
    return std::string(depth, '[') + "0" + std::string(depth, ']');
}

}  // namespace crank::json::testing
