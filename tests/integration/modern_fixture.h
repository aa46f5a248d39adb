#pragma once

// The fixture of the integration tests that speak MCP 2026-07-28 over raw HTTP to a real
// crankd-test-tools: the era's _meta and headers, a crankd started on a free loopback port with
// a config of the test's, and the shape of an error answer.

#include <signal.h>

#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include "child_process.h"
#include "mcp_http_client.h"
#include "temp_dir.h"

namespace crank::testing {

using Headers = std::vector<std::pair<std::string, std::string>>;

inline constexpr const char* kVersion = "2026-07-28";
inline constexpr const char* kServerInfo = "io.modelcontextprotocol/serverInfo";
inline constexpr const char* kKey = "modern-test-key-0123456789";

/// The _meta members of a 2026-07-28 request (without braces).
inline std::string meta(const std::string& version = kVersion,
                        const std::string& capabilities = "{}") {
    return R"("_meta":{"io.modelcontextprotocol/protocolVersion":")" + version +
           R"(","io.modelcontextprotocol/clientCapabilities":)" + capabilities +
           R"(,"io.modelcontextprotocol/clientInfo":{"name":"modern-test","version":"1"}})";
}

/// A request of `method` with `params` members (without braces) and the 2026 _meta.
inline std::string request(int id, const std::string& method, const std::string& params = "",
                           const std::string& metaMembers = meta()) {
    return R"({"jsonrpc":"2.0","id":)" + std::to_string(id) + R"(,"method":")" + method +
           R"(","params":{)" + params + (params.empty() ? "" : ",") + metaMembers + "}}";
}

class ModernCrankdTest : public ::testing::Test {
protected:
    void startCrankd(const std::string& extraConfig = "",
                     std::map<std::string, std::string> env = {}) {
        const std::string config =
            dir_.write("crank.json", R"({"store": {"path": ")" + dir_.file("crank.db") + R"("})" +
                                         extraConfig + "}");
        process_.emplace(std::vector<std::string>{CRANKD_TEST_TOOLS_PATH, "--config", config,
                                                  "--listen", "127.0.0.1:0"},
                         std::move(env));
        const auto port = process_->waitForListeningPort(std::chrono::seconds(20));
        ASSERT_TRUE(port) << process_->stderrText();
        port_ = *port;
    }

    void TearDown() override {
        if (process_) {
            process_->signal(SIGTERM);
            EXPECT_EQ(process_->waitForExit(std::chrono::seconds(20)), 0) << process_->stderrText();
        }
    }

    /// A POST with the 2026 headers: MCP-Protocol-Version, Mcp-Method `method` (none when
    /// empty), and `extra`.
    Reply post(const std::string& body, const std::string& method, const Headers& extra = {},
               const std::string& version = kVersion) {
        Headers headers{{"Content-Type", "application/json"}, {"Accept", kAccept}};
        if (!version.empty()) {
            headers.emplace_back("MCP-Protocol-Version", version);
        }
        if (!method.empty()) {
            headers.emplace_back("Mcp-Method", method);
        }
        headers.insert(headers.end(), extra.begin(), extra.end());
        return exchange(port_, "POST", "/mcp", headers, body);
    }

    /// The headers of a 2026 request of `method` with Mcp-Name `name`.
    static Headers modernHeaders(const std::string& method, const std::string& name) {
        return {{"Content-Type", "application/json"},
                {"Accept", kAccept},
                {"MCP-Protocol-Version", kVersion},
                {"Mcp-Method", method},
                {"Mcp-Name", name}};
    }

    /// Expects an error answer: `status`, `code`, the request's id echoed.
    static void expectError(const Reply& reply, int status, int code, int id) {
        EXPECT_EQ(reply.status, status) << reply.body;
        const auto doc = reply.json();
        ASSERT_TRUE(doc.IsObject() && doc.HasMember("error")) << reply.body;
        EXPECT_EQ(doc["error"]["code"].GetInt(), code) << reply.body;
        ASSERT_TRUE(doc.HasMember("id") && doc["id"].IsInt()) << reply.body;
        EXPECT_EQ(doc["id"].GetInt(), id);
    }

    TempDir dir_;
    std::optional<ChildProcess> process_;
    std::uint16_t port_ = 0;
};

}  // namespace crank::testing
