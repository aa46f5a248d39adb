// Agents managed through the admin API (issue 29): an agent is created with a key shown once
// (only its SHA-256 digest reaches the store, checked in the database files), a second key is
// added and the first revoked (a rotation: its next request is refused), its limits are set
// while crankd runs (a rate), a delete refuses every key it held, the config file's agents stay
// read-only and keep their ids, every change is audited without the key, and a second crankd on
// the same store admits and refuses the same keys within admin.sync_interval_ms.
//
// crankd with the real mcp plugin and the fixture server (tests/e2e/reference-server.mjs) over
// stdio, whose echo tool the agents call.
#include <chrono>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include "crankd_suite.h"
#include "mcp_http_client.h"
#include "test_json.h"

namespace crank::testing {
namespace {

constexpr std::chrono::seconds kSettle{10};
constexpr const char* kAdminToken = "agent-admin-token-7Yp2";
constexpr const char* kFileKey = "file-agent-key-1b4c";

/// The status an initialize gets with `key` as its bearer.
int admitted(std::uint16_t port, const std::string& key) {
    return exchange(port, "POST", "/mcp",
                    {{"Content-Type", "application/json"},
                     {"Accept", "application/json, text/event-stream"},
                     {"Authorization", "Bearer " + key}},
                    R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{)"
                    R"("protocolVersion":"2025-11-25","capabilities":{},)"
                    R"("clientInfo":{"name":"t","version":"1"}}})")
        .status;
}

std::string fileText(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream out;
    out << in.rdbuf();
    return out.str();
}

class AgentAdminSuite : public CrankdSuite<AgentAdminSuite> {
protected:
    static void SetUpTestSuite() {
        startCrankd(R"("admin": {"token": {"env": "CRANK_AGADMIN_TOKEN"}, "sync_interval_ms": 200},
            "server": {"node_id": "node-a"},
            "auth": {"mode": "api_key", "workspaces": [{"id": "default"}, {"id": "team"}],
              "agents": [{"id": "filebot", "api_key": {"env": "CRANK_AGADMIN_FILE_KEY"}}]},
            "operations": [{"name": "feed", "description": "a synthetic session",
              "protocol": "synthetic", "config": {"items": -1, "rate_per_sec": 5},
              "execution": {"mode": "session", "transport_behavior": "server_stream"}}],
            "upstreams": [{"name": "fx", "config": {"command": ")" CRANK_NODE_PATH
                    R"(", "args": [")" CRANK_FIXTURE_SERVER R"(", "--stdio"]}}])",
                    {{"CRANK_AGADMIN_TOKEN", kAdminToken}, {"CRANK_AGADMIN_FILE_KEY", kFileKey}});
        ASSERT_TRUE(
            eventually([] { return exchange(port_, "GET", "/readyz", {}).status == 200; }, kSettle))
            << process_->stderrText();
    }

    static Reply admin(const std::string& method, const std::string& path,
                       const std::string& body = "") {
        return exchange(port_, method, "/admin/api/" + path,
                        {{"Authorization", std::string("Bearer ") + kAdminToken},
                         {"Content-Type", "application/json"}},
                        body);
    }

    /// Creates agent `id`; its first key.
    static std::string create(const std::string& id, const std::string& extra = "") {
        const Reply created = admin("POST", "agents", R"({"id": ")" + id + "\"" + extra + "}");
        EXPECT_EQ(created.status, 201) << created.body;
        const rapidjson::Document doc = created.json();
        if (!doc.IsObject() || !doc.HasMember("key")) {
            return "";
        }
        return doc["key"]["secret"].GetString();
    }
};

TEST_F(AgentAdminSuite, AKeyIsShownOnceRotatedRevokedAndOnlyItsDigestIsStored) {
    const Reply created = admin("POST", "agents", R"({"id": "api1", "workspace": "team"})");
    ASSERT_EQ(created.status, 201) << created.body;
    const rapidjson::Document doc = created.json();
    const std::string first = doc["key"]["secret"].GetString();
    const std::string firstId = doc["key"]["id"].GetString();
    EXPECT_EQ(first.rfind("crank_ak_", 0), 0U) << first;
    EXPECT_EQ(first.size(), std::string("crank_ak_").size() + 64);
    EXPECT_STREQ(doc["agent"]["workspace"].GetString(), "team");
    EXPECT_EQ(admitted(port_, first), 200) << "admitted at once on the node that made it";

    // Shown once: the agent's page lists its keys by id and first characters only.
    const Reply page = admin("GET", "agents/api1");
    ASSERT_EQ(page.status, 200) << page.body;
    EXPECT_EQ(page.body.find(first), std::string::npos) << page.body;
    EXPECT_EQ(page.body.find(first.substr(0, 20)), std::string::npos) << page.body;
    EXPECT_EQ(page.json()["keys"].Size(), 1U);
    EXPECT_EQ(admin("GET", "agents").body.find(first), std::string::npos);

    // A rotation: a second key, both work; the first revoked, refused at its next request.
    const Reply added = admin("POST", "agents/api1/keys");
    ASSERT_EQ(added.status, 201) << added.body;
    const std::string second = added.json()["key"]["secret"].GetString();
    EXPECT_NE(second, first);
    EXPECT_EQ(admitted(port_, second), 200);
    EXPECT_EQ(admitted(port_, first), 200);
    const Reply revoked = admin("DELETE", "agents/api1/keys/" + firstId);
    ASSERT_EQ(revoked.status, 200) << revoked.body;
    EXPECT_TRUE(revoked.json()["key"]["revoked_at"].IsInt64()) << revoked.body;
    EXPECT_EQ(admitted(port_, first), 401);
    EXPECT_EQ(admitted(port_, second), 200);
    EXPECT_EQ(admitted(port_, kFileKey), 200) << "the file's agents are untouched";

    // The store holds digests only: neither key appears in the database files.
    const std::string stored = fileText(storePath()) + fileText(storePath() + "-wal");
    ASSERT_FALSE(stored.empty());
    EXPECT_EQ(stored.find(first), std::string::npos);
    EXPECT_EQ(stored.find(second), std::string::npos);
    EXPECT_EQ(stored.find(first.substr(9)), std::string::npos);

    // Audited, without the key.
    const Reply audit = admin("GET", "audit?action=agent.create");
    EXPECT_NE(audit.body.find(R"("agent":"api1")"), std::string::npos) << audit.body;
    EXPECT_EQ(audit.body.find(first), std::string::npos);
    EXPECT_NE(admin("GET", "audit?action=agent.key_revoke").body.find(firstId), std::string::npos);

    // Deleted: every key it held is refused.
    const Reply deleted = admin("DELETE", "agents/api1");
    ASSERT_EQ(deleted.status, 200) << deleted.body;
    EXPECT_TRUE(deleted.json()["agent"]["deleted_at"].IsInt64()) << deleted.body;
    EXPECT_EQ(admitted(port_, second), 401);
    EXPECT_EQ(admin("POST", "agents", R"({"id": "api1"})").status, 409)
        << "an agent id is never reused";
}

TEST_F(AgentAdminSuite, LimitsSetWhileCrankdRunsBoundTheAgentsCalls) {
    const std::string key = create("limited");
    ASSERT_FALSE(key.empty());
    const Reply set = admin("PUT", "agents/limited/limits",
                            R"({"limits": {"rate": {"calls_per_second": 0.2, "burst": 2}}})");
    ASSERT_EQ(set.status, 200) << set.body;
    EXPECT_EQ(set.json()["agent"]["limits"]["rate"]["burst"].GetInt(), 2) << set.body;
    McpClient client(port_, key);
    ASSERT_TRUE(client.open());
    std::vector<std::string> bodies(3);
    for (std::string& body : bodies) {
        client.callTool("fx_echo", R"({"text":"x"})", &body);
    }
    EXPECT_EQ(bodies[0].find("\"isError\":true"), std::string::npos) << bodies[0];
    EXPECT_EQ(bodies[1].find("\"isError\":true"), std::string::npos) << bodies[1];
    EXPECT_NE(bodies[2].find("\"isError\":true"), std::string::npos) << bodies[2];
    EXPECT_NE(bodies[2].find("0.2 calls a second, 2 at once"), std::string::npos) << bodies[2];

    // It calls as api:limited, an identity no file agent can have.
    EXPECT_TRUE(eventually(
        [] {
            return admin("GET", "audit?agent=api:limited")
                       .body.find(R"("action":"upstream.call")") != std::string::npos;
        },
        kSettle))
        << admin("GET", "audit?limit=5&order=newest_first").body;

    // max_sessions, changed while a session runs: the next one is counted against it.
    const Reply one = admin("PUT", "agents/limited/limits", R"({"limits": {"max_sessions": 1}})");
    ASSERT_EQ(one.status, 200) << one.body;
    const rapidjson::Document first = client.callTool("feed_start", "{}");
    ASSERT_TRUE(first.HasMember("structuredContent"));
    std::string refused;
    client.callTool("feed_start", "{}", &refused);
    EXPECT_NE(refused.find("max_sessions"), std::string::npos) << refused;
    ASSERT_EQ(admin("PUT", "agents/limited/limits", R"({"limits": {"max_sessions": 2}})").status,
              200);
    const rapidjson::Document second = client.callTool("feed_start", "{}");
    EXPECT_TRUE(second.HasMember("structuredContent"));

    const Reply bad = admin("PUT", "agents/limited/limits",
                            R"({"limits": {"rate": {"calls_per_second": -1}, "max_jobs": "x"}})");
    ASSERT_EQ(bad.status, 422) << bad.body;
    EXPECT_NE(bad.body.find(R"("path":"limits.rate.calls_per_second")"), std::string::npos)
        << bad.body;
    EXPECT_NE(bad.body.find(R"("path":"limits.max_jobs")"), std::string::npos) << bad.body;
}

TEST_F(AgentAdminSuite, BadAgentsAreRefusedAndTheFilesAgentsAreReadOnly) {
    EXPECT_EQ(admin("POST", "agents", R"({"id": ".."})").status, 422);
    const Reply badId = admin("POST", "agents", R"({"id": "no spaces"})");
    EXPECT_EQ(badId.status, 422) << badId.body;
    EXPECT_NE(badId.body.find(R"("path":"id")"), std::string::npos) << badId.body;
    const Reply badWs = admin("POST", "agents", R"({"id": "w", "workspace": "nope"})");
    EXPECT_EQ(badWs.status, 422) << badWs.body;
    EXPECT_NE(badWs.body.find(R"("path":"workspace")"), std::string::npos) << badWs.body;
    const Reply taken = admin("POST", "agents", R"({"id": "filebot"})");
    EXPECT_EQ(taken.status, 409) << taken.body;
    EXPECT_EQ(admin("PUT", "agents/filebot/limits", R"({"limits": {}})").status, 409);
    EXPECT_EQ(admin("DELETE", "agents/filebot").status, 409);
    EXPECT_EQ(admin("POST", "agents/filebot/keys").status, 409);
    const Reply file = admin("GET", "agents/filebot");
    ASSERT_EQ(file.status, 200) << file.body;
    EXPECT_TRUE(file.json()["agent"]["read_only"].GetBool());
    EXPECT_EQ(file.body.find(kFileKey), std::string::npos);
    EXPECT_EQ(admin("GET", "agents/nobody").status, 404);
    EXPECT_EQ(admin("DELETE", "agents/nobody/keys/key_x").status, 404);
    EXPECT_EQ(admin("POST", "agents", "not json").status, 400);

    // At most 8 live keys.
    ASSERT_FALSE(create("many").empty());
    for (int i = 1; i < 8; ++i) {
        ASSERT_EQ(admin("POST", "agents/many/keys").status, 201);
    }
    const Reply ninth = admin("POST", "agents/many/keys");
    EXPECT_EQ(ninth.status, 409) << ninth.body;
    EXPECT_NE(ninth.body.find("revoke one first"), std::string::npos) << ninth.body;

    const Reply ws = admin("GET", "workspaces");
    ASSERT_EQ(ws.status, 200) << ws.body;
    EXPECT_EQ(ws.json()["workspaces"].Size(), 2U) << ws.body;
}

TEST_F(AgentAdminSuite, ASecondNodeAdmitsAndRefusesTheSameKeys) {
    auto nodeB = std::make_unique<ChildProcess>(
        std::vector<std::string>{CRANKD_PATH, "--config", dir_->file("crank.json"), "--listen",
                                 "127.0.0.1:0"},
        std::map<std::string, std::string>{{"CRANK_AGADMIN_TOKEN", kAdminToken},
                                           {"CRANK_AGADMIN_FILE_KEY", kFileKey}});
    const auto portB = nodeB->waitForListeningPort(std::chrono::seconds(20));
    ASSERT_TRUE(portB) << nodeB->stderrText();
    const Reply created = admin("POST", "agents", R"({"id": "roamer"})");
    ASSERT_EQ(created.status, 201) << created.body;
    const std::string key = created.json()["key"]["secret"].GetString();
    const std::string keyId = created.json()["key"]["id"].GetString();
    EXPECT_TRUE(eventually([&] { return admitted(*portB, key) == 200; }, kSettle))
        << nodeB->stderrText();
    ASSERT_EQ(admin("DELETE", "agents/roamer/keys/" + keyId).status, 200);
    EXPECT_TRUE(eventually([&] { return admitted(*portB, key) == 401; }, kSettle))
        << "node B still admits a revoked key";
    nodeB->signal(SIGTERM);
    EXPECT_EQ(nodeB->waitForExit(std::chrono::seconds(20)), 0) << nodeB->stderrText();
}

}  // namespace
}  // namespace crank::testing
