#pragma once

// Shared by the aggregators tests: the plugin under the SDK's fake host, and JSON helpers.

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <gtest/gtest.h>
#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "crank/testing/fake_host.hpp"

extern "C" const crank_plugin_descriptor* crank_plugin_entry(void);

namespace crank::aggregators::test {

/// The aggregators plugin loaded in a fake host, for one test.
class PluginTest : public ::testing::Test {
protected:
    void SetUp() override {
        host_ = std::make_unique<crank::testing::FakeHost>(&crank_plugin_entry);
        ASSERT_TRUE(host_->loaded()) << host_->initError();
    }

    crank::testing::FakeHost& host() { return *host_; }

    /// Runs `name` over `items` and returns the snapshot; fails the test on any error.
    std::string run(std::string_view name, std::string_view config,
                    const std::vector<std::string>& items) {
        crank::testing::AggregateResult result = host_->aggregate(name, config, items);
        EXPECT_EQ(result.status, sdk::Status::ok)
            << (result.error ? result.error->message : std::string("no error"));
        EXPECT_TRUE(result.violations.empty())
            << (result.violations.empty() ? "" : result.violations.front());
        return result.snapshot;
    }

    /// The diagnostics of validate(), as "path: message" lines.
    std::vector<crank::testing::Diagnostic> problems(std::string_view name,
                                                     std::string_view config) {
        crank::testing::ValidateResult result = host_->validate(name, config);
        EXPECT_TRUE(result.violations.empty());
        EXPECT_EQ(result.status == sdk::Status::ok, result.diagnostics.empty());
        return result.diagnostics;
    }

private:
    std::unique_ptr<crank::testing::FakeHost> host_;
};

/// Parses `text` (a failed parse fails the test and yields null).
inline rapidjson::Document parse(std::string_view text) {
    rapidjson::Document document;
    document.Parse(text.data(), text.size());
    EXPECT_FALSE(document.HasParseError()) << text;
    return document;
}

/// Compact JSON text of `value`.
inline std::string compact(const rapidjson::Value& value) {
    rapidjson::StringBuffer buffer;
    rapidjson::Writer<rapidjson::StringBuffer> writer(buffer);
    value.Accept(writer);
    return {buffer.GetString(), buffer.GetSize()};
}

/// `text` reformatted compactly, so that tests can compare JSON written by hand.
inline std::string normalized(std::string_view text) {
    return compact(parse(text));
}

}  // namespace crank::aggregators::test
