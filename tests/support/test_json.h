#pragma once

// Small helpers the integration suites share: JSON text of a value, a parse that fails the test
// (not the process) on bad JSON, and a bounded wait for a condition.

#include <chrono>
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
