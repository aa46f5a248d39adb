// A reload of the config file while crankd runs (issue 29): SIGHUP and POST /admin/api/reload.
// A valid change is applied under load from 16 clients with no failed request: an upstream whose
// args changed is handed over to a new process (the old one ends, found in /proc by a marker
// argument), a revoked agent's next request is refused; an invalid file changes nothing and its
// errors are logged and answered; what needs a restart is named.
//
// One crankd, the real mcp plugin, the fixture server (tests/e2e/reference-server.mjs --stdio).
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <csignal>
#include <fstream>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include "crankd_suite.h"
#include "mcp_http_client.h"
#include "proc_stats.h"
#include "test_json.h"

namespace crank::testing {
namespace {

/// How long a process or a tool list is given to settle after a change.
constexpr std::chrono::seconds kSettle{10};

constexpr const char* kAdminToken = "reload-admin-token-5Tq1";
constexpr const char* kAliceKey = "alice-key-0c9e7d2a";
constexpr const char* kBobKey = "bob-key-3f81aa90";

std::string marker(const std::string& name) {
    return "crank-reload-" + name + "-" + std::to_string(::getpid());
}

/// An operation of the file: the upstream's echo, its text prefixed.
constexpr const char* kSayOperation = R"(, "operations": [{"name": "say",
    "description": "alpha's echo, as an operation", "protocol": "mcp",
    "config": {"upstream": "alpha", "tool": "echo", "arguments": {"text": "op:{{text}}"}},
    "input_schema": {"type": "object", "properties": {"text": {"type": "string"}},
      "required": ["text"]},
    "execution": {"mode": "unary"}}])";

/// The config's members: the agents given, and the upstream "alpha" run with `version` in its
/// marker (a change of its args).
std::string members(
    const std::string& version, bool with_bob,
    const std::string& server = R"({"threads": 32, "max_calls_per_upstream": 24})") {
    std::string agents = R"({"id": "alice", "api_key": {"env": "CRANK_RELOAD_ALICE"},
        "limits": {"max_concurrent_calls": 32}})";
    if (with_bob) {
        agents += R"(, {"id": "bob", "api_key": {"env": "CRANK_RELOAD_BOB"}})";
    }
    return R"("server": )" + server + R"(, "admin": {"token": {"env": "CRANK_RELOAD_ADMIN_TOKEN"}},
        "auth": {"mode": "api_key", "agents": [)" +
           agents +
           R"(]},
        "upstreams": [{"name": "alpha", "config": {"command": ")" CRANK_NODE_PATH
           R"(", "args": [")" CRANK_FIXTURE_SERVER R"(", "--stdio", ")" +
           marker(version) + R"("], "close_wait_ms": 500, "term_wait_ms": 500}}])";
}

class ConfigReloadSuite : public CrankdSuite<ConfigReloadSuite> {
protected:
    static void SetUpTestSuite() {
        startCrankd(members("v1", true), {{"CRANK_RELOAD_ADMIN_TOKEN", kAdminToken},
                                          {"CRANK_RELOAD_ALICE", kAliceKey},
                                          {"CRANK_RELOAD_BOB", kBobKey}});
        bool ready = false;
        for (int i = 0; i < 300 && !ready; ++i) {
            ready = exchange(port_, "GET", "/readyz", {}).status == 200;
            std::this_thread::sleep_for(std::chrono::milliseconds(100));
        }
        ASSERT_TRUE(ready) << process_->stderrText();
    }

    static void rewrite(const std::string& config_members) { rewriteConfig(config_members); }

    static Reply reload() {
        return exchange(port_, "POST", "/admin/api/reload",
                        {{"Authorization", std::string("Bearer ") + kAdminToken}});
    }
};

TEST_F(ConfigReloadSuite, ASighupAppliesAValidChangeUnderLoadWithNoFailedRequest) {
    ASSERT_TRUE(eventually([] { return processesWith(marker("v1")) == 1; }, kSettle));
    McpClient bob(port_, kBobKey);
    ASSERT_TRUE(bob.open());

    // 16 clients call the upstream's tool all along.
    std::atomic<bool> stop{false};
    std::atomic<int> calls{0};
    std::atomic<int> failed{0};
    std::string firstFailure;
    std::mutex failureMutex;
    std::vector<std::thread> clients;
    for (int c = 0; c < 16; ++c) {
        clients.emplace_back([&, c] {
            McpClient alice(port_, kAliceKey);
            if (!alice.open()) {
                ++failed;
                return;
            }
            for (int i = 0; i < 10'000 && !stop.load(); ++i) {
                const std::string text = "c" + std::to_string(c) + "-" + std::to_string(i);
                const Reply reply = alice.post(
                    R"({"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"alpha_echo",)"
                    R"("arguments":{"text":")" +
                    text + R"("}}})");
                ++calls;
                if (reply.status != 200 ||
                    reply.body.find(R"("text":")" + text + R"(")") == std::string::npos) {
                    ++failed;
                    const std::lock_guard lock(failureMutex);
                    if (firstFailure.empty()) {
                        firstFailure = std::to_string(reply.status) + " " + reply.body;
                    }
                }
            }
        });
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(500));

    // The upstream's args change, bob is revoked and an operation is added.
    rewrite(members("v2", false) + kSayOperation);
    process_->signal(SIGHUP);
    EXPECT_TRUE(eventually([] { return processesWith(marker("v2")) == 1; }, kSettle));
    EXPECT_TRUE(eventually([] { return processesWith(marker("v1")) == 0; }, kSettle))
        << "the old process of alpha was left behind";
    std::this_thread::sleep_for(std::chrono::milliseconds(500));  // load on the new process
    stop = true;
    for (std::thread& t : clients) {
        t.join();
    }
    EXPECT_GT(calls.load(), 16);
    EXPECT_EQ(failed.load(), 0) << "of " << calls.load() << "; the first: " << firstFailure;

    const Reply refused = bob.post(R"({"jsonrpc":"2.0","id":5,"method":"tools/list","params":{}})");
    EXPECT_EQ(refused.status, 401) << refused.body;
    const std::string log = process_->stderrSoFar(std::chrono::milliseconds(300));
    EXPECT_NE(log.find("reload: upstreams[alpha]: reconnected with its new config"),
              std::string::npos)
        << log;
    EXPECT_NE(log.find("reload: auth.agents[bob]: removed"), std::string::npos) << log;
    McpClient alice(port_, kAliceKey);
    ASSERT_TRUE(alice.open());
    // The operation runs the upstream's echo (its result is the upstream's, as text).
    const std::string said =
        alice.callTool("say", R"({"text":"hi"})")["content"][0]["text"].GetString();
    EXPECT_NE(said.find("op:hi"), std::string::npos) << said;
    EXPECT_EQ(exchange(port_, "GET", "/healthz", {}).status, 200);  // SIGHUP did not end it
}

TEST_F(ConfigReloadSuite, AnInvalidFileChangesNothingAndItsErrorsAreToldEveryOne) {
    rewrite(members("v3", true, R"({"threads": -1})") + R"(, "operations": [{"name": 7}])");
    const Reply answer = reload();
    ASSERT_EQ(answer.status, 422) << answer.body;
    const rapidjson::Document doc = answer.json();
    EXPECT_FALSE(doc["reload"]["applied"].GetBool());
    ASSERT_GE(doc["reload"]["errors"].Size(), 2U) << answer.body;
    EXPECT_NE(answer.body.find("server.threads"), std::string::npos) << answer.body;
    EXPECT_NE(answer.body.find("operations[0].name"), std::string::npos) << answer.body;
    // Nothing changed: the running upstream kept its process, no v3 was started.
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    EXPECT_EQ(processesWith(marker("v3")), 0);
    EXPECT_TRUE(eventually([] { return processesWith(marker("v2")) == 1; }, kSettle));
    // The same by SIGHUP: logged, crankd serving on.
    process_->signal(SIGHUP);
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
    const std::string log = process_->stderrSoFar(std::chrono::milliseconds(300));
    EXPECT_NE(log.find("refused, nothing changed"), std::string::npos) << log;
    McpClient alice(port_, kAliceKey);
    ASSERT_TRUE(alice.open());
    EXPECT_STREQ(alice.callTool("alpha_echo", R"({"text":"on"})")["content"][0]["text"].GetString(),
                 "on");
    // Audited, with its outcome.
    const Reply audit = exchange(port_, "GET", "/admin/api/audit?action=config.reload",
                                 {{"Authorization", std::string("Bearer ") + kAdminToken}});
    EXPECT_NE(audit.body.find(R"("outcome":"refused")"), std::string::npos) << audit.body;
}

TEST_F(ConfigReloadSuite, WhatNeedsARestartIsNamedAndTheRestApplied) {
    // The listener's threads change (a restart), and bob comes back (applied).
    // The operation goes.
    rewrite(members("v2", true, R"({"threads": 33, "max_calls_per_upstream": 24})"));
    const Reply answer = reload();
    ASSERT_EQ(answer.status, 200) << answer.body;
    const rapidjson::Document doc = answer.json();
    EXPECT_TRUE(doc["reload"]["applied"].GetBool());
    std::string restart;
    for (const auto& what : doc["reload"]["restart_required"].GetArray()) {
        restart += std::string(what.GetString()) + "\n";
    }
    EXPECT_NE(restart.find("server:"), std::string::npos) << answer.body;
    EXPECT_EQ(restart.find("upstreams"), std::string::npos) << answer.body;
    McpClient bob(port_, kBobKey);
    EXPECT_TRUE(bob.open());
    // The upstream did not change: its process is the same one.
    EXPECT_EQ(processesWith(marker("v2")), 1);
    EXPECT_EQ(answer.body.find("upstreams[alpha]"), std::string::npos) << answer.body;
    EXPECT_NE(answer.body.find("operations[say] in workspace default: removed"), std::string::npos)
        << answer.body;
    const Reply gone =
        bob.post(R"({"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"say",)"
                 R"("arguments":{"text":"x"}}})");
    EXPECT_EQ(gone.body.find("op:x"), std::string::npos) << gone.body;
}

TEST_F(ConfigReloadSuite, AnOperationWhoseToolAnUpstreamPublishesRefusesTheReload) {
    std::string taken = kSayOperation;
    taken.replace(taken.find(R"("name": "say")"), 13, R"("name": "alpha_echo")");
    rewrite(members("v4", true, R"({"threads": 33, "max_calls_per_upstream": 24})") + taken);
    const Reply answer = reload();
    ASSERT_EQ(answer.status, 422) << answer.body;
    EXPECT_NE(answer.body.find(R"(tool \"alpha_echo\" is published already)"), std::string::npos)
        << answer.body;
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    EXPECT_EQ(processesWith(marker("v4")), 0);  // nothing applied: the upstream not replaced
    McpClient alice(port_, kAliceKey);
    ASSERT_TRUE(alice.open());
    EXPECT_STREQ(
        alice.callTool("alpha_echo", R"({"text":"mine"})")["content"][0]["text"].GetString(),
        "mine");  // still the upstream's
}

TEST_F(ConfigReloadSuite, ARemovedUpstreamEndsAndAStoppedOneStaysStoppedAcrossAReload) {
    const std::string server = R"({"threads": 33, "max_calls_per_upstream": 24})";
    const auto withoutUpstreams = [&] {
        std::string text = members("v2", true, server);
        return text.substr(0, text.find(R"("upstreams": [)")) + R"("upstreams": [])";
    };
    const auto admin = [](const std::string& method, const std::string& path) {
        return exchange(port_, method, "/admin/api/" + path,
                        {{"Authorization", std::string("Bearer ") + kAdminToken}});
    };
    // Removed: its process ends (the drainer closes it), its tools go.
    ASSERT_TRUE(eventually([] { return processesWith(marker("v2")) == 1; }, kSettle));
    rewrite(withoutUpstreams());
    ASSERT_EQ(reload().status, 200);
    EXPECT_TRUE(eventually([] { return processesWith(marker("v2")) == 0; }, kSettle))
        << "a removed upstream's process was left running";
    EXPECT_EQ(admin("GET", "upstreams/alpha").status, 404);
    // Added again, then stopped by the operator: a reload that changes it keeps it stopped.
    rewrite(members("v5", true, server));
    ASSERT_EQ(reload().status, 200);
    ASSERT_TRUE(eventually([] { return processesWith(marker("v5")) == 1; }, kSettle));
    ASSERT_EQ(admin("POST", "upstreams/alpha/stop?grace_ms=0").status, 200);
    EXPECT_TRUE(eventually([] { return processesWith(marker("v5")) == 0; }, kSettle));
    rewrite(members("v6", true, server));
    const Reply changed = reload();
    ASSERT_EQ(changed.status, 200) << changed.body;
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    EXPECT_EQ(processesWith(marker("v6")), 0);
    const Reply status = admin("GET", "upstreams/alpha");
    ASSERT_EQ(status.status, 200) << status.body;
    EXPECT_STREQ(status.json()["upstream"]["state"].GetString(), "stopped") << status.body;
    // Started, it runs its new config.
    ASSERT_EQ(admin("POST", "upstreams/alpha/start").status, 200);
    EXPECT_TRUE(eventually([] { return processesWith(marker("v6")) == 1; }, kSettle));
}

// A reload's auth profile reaches the admin API's operations: one published with profile "p"
// is compiled again and sends the new header at its next call (crank-rest-fixture echoes the
// headers it got); a profile taken out of the file leaves it serving as it was, named under
// `problems`.
class AuthProfileReloadSuite : public CrankdSuite<AuthProfileReloadSuite> {
protected:
    static std::string members(const std::string& tenant, bool with_profile = true) {
        return R"("admin": {"token": {"env": "CRANK_RELOAD_ADMIN_TOKEN"}},
            "auth_profiles": {)" +
               std::string(with_profile ? R"("p": {"type": "none", "headers": {"X-Tenant": ")" +
                                              tenant + R"("}})"
                                        : "") +
               "}";
    }

    static void SetUpTestSuite() {
        fixture_ = new ChildProcess(
            std::vector<std::string>{CRANK_REST_FIXTURE_PATH, "--listen", "127.0.0.1:0"});
        const auto port = fixture_->waitForListeningPort(std::chrono::seconds(20));
        ASSERT_TRUE(port) << fixture_->stderrText();
        fixturePort_ = *port;
        startCrankd(members("one"), {{"CRANK_RELOAD_ADMIN_TOKEN", kAdminToken}});
    }

    static void TearDownTestSuite() {
        CrankdSuite::TearDownTestSuite();
        if (fixture_ != nullptr) {
            fixture_->signal(SIGTERM);
            fixture_->waitForExit(std::chrono::seconds(10));
            delete fixture_;
            fixture_ = nullptr;
        }
    }

    static Reply admin(const std::string& method, const std::string& path,
                       const std::string& body = "") {
        return exchange(port_, method, "/admin/api/" + path,
                        {{"Authorization", std::string("Bearer ") + kAdminToken},
                         {"Content-Type", "application/json"}},
                        body);
    }

    /// The X-Tenant header the fixture got from one call of the admin operation.
    static std::string tenantSeen(const McpClient& client) {
        const rapidjson::Document result = client.callTool("hdr", "{}");
        if (!result.IsObject() || !result.HasMember("structuredContent")) {
            return "";
        }
        const auto& content = result["structuredContent"];
        if (!content.HasMember("headers") || !content["headers"].HasMember("x-tenant")) {
            return "";
        }
        return content["headers"]["x-tenant"].GetString();
    }

    static inline ChildProcess* fixture_ = nullptr;
    static inline std::uint16_t fixturePort_ = 0;
};

TEST_F(AuthProfileReloadSuite, AnAdminOperationTakesItsChangedProfileAtTheNextCall) {
    const std::string op = R"({"name": "hdr", "description": "the headers the fixture got",
        "protocol": "rest", "config": {"url": "http://127.0.0.1:)" +
                           std::to_string(fixturePort_) + R"(/headers"},
        "execution": {"mode": "unary"}, "auth_profile": "p"})";
    const Reply created = admin("POST", "operations", R"({"config": )" + op + "}");
    ASSERT_EQ(created.status, 201) << created.body;
    rapidjson::Document doc = created.json();
    const std::string id = doc["operation"]["id"].GetString();
    ASSERT_EQ(admin("POST", "operations/" + id + "/publish", R"({"version": 1})").status, 200);
    McpClient client(port_);
    ASSERT_TRUE(client.open());
    EXPECT_EQ(tenantSeen(client), "one");

    rewriteConfig(members("two"));
    const Reply reloaded = admin("POST", "reload");
    ASSERT_EQ(reloaded.status, 200) << reloaded.body;
    EXPECT_NE(reloaded.body.find(R"(admin operation hdr (default): auth profile \"p\" applied)"),
              std::string::npos)
        << reloaded.body;
    EXPECT_EQ(reloaded.body.find("auth_profiles:"), std::string::npos)
        << "no longer restart-required: " << reloaded.body;
    EXPECT_EQ(tenantSeen(client), "two");

    // The profile taken out: the operation serves on as it was, and the reload says why.
    rewriteConfig(members("", false));
    const Reply gone = admin("POST", "reload");
    ASSERT_EQ(gone.status, 200) << gone.body;
    EXPECT_NE(gone.body.find("keeps its old auth profile"), std::string::npos) << gone.body;
    EXPECT_EQ(tenantSeen(client), "two");
}

}  // namespace
}  // namespace crank::testing
