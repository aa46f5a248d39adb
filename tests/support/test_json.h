#pragma once

// Small helpers the integration suites share: JSON text of a value, a parse that fails the test
// (not the process) on bad JSON, substring assertions that show the text, milliseconds between two
// instants, and a bounded wait for a condition.

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <thread>

#include <gtest/gtest.h>
#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

namespace crank::testing {

/// `v` as compact JSON text.
inline std::string jsonText(const rapidjson::Value& v) {
    rapidjson::StringBuffer out;
    rapidjson::Writer<rapidjson::StringBuffer> w(out);
    v.Accept(w);
    return {out.GetString(), out.GetSize()};
}

/// `body` parsed; a parse error fails the current test and yields an empty object.
inline rapidjson::Document parseJsonOrFail(std::string_view body) {
    rapidjson::Document doc;
    doc.Parse(body.data(), body.size());
    EXPECT_FALSE(doc.HasParseError()) << body;
    if (doc.HasParseError()) {
        doc.SetObject();
    }
    return doc;
}

/// `needle` is in `haystack`; the failure shows both.
inline ::testing::AssertionResult contains(const std::string& haystack, const std::string& needle) {
    if (haystack.find(needle) != std::string::npos) {
        return ::testing::AssertionSuccess();
    }
    return ::testing::AssertionFailure() << "\"" << needle << "\" not in: " << haystack;
}

/// `needle` is not in `haystack` (a secret, an error that must not show).
inline ::testing::AssertionResult lacks(const std::string& haystack, const std::string& needle) {
    if (haystack.find(needle) == std::string::npos) {
        return ::testing::AssertionSuccess();
    }
    return ::testing::AssertionFailure() << "\"" << needle << "\" unexpectedly in: " << haystack;
}

inline std::int64_t msBetween(std::chrono::steady_clock::time_point a,
                              std::chrono::steady_clock::time_point b) {
    return std::chrono::duration_cast<std::chrono::milliseconds>(b - a).count();
}

/// Polls `condition` every 25 ms until it holds (true) or `timeout` passes (false): bounded, and
/// no fixed sleep longer than needed.
inline bool eventually(const std::function<bool()>& condition, std::chrono::milliseconds timeout) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (true) {
        if (condition()) {
            return true;
        }
        if (std::chrono::steady_clock::now() >= deadline) {
            return false;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(25));
    }
}

}  // namespace crank::testing
