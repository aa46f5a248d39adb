// Upstreams managed through the admin API (issue 29): created, edited (a new version), published,
// rolled back and deleted as operations are, kept in the store, and run by every node that shares
// it. A stdio and an HTTP upstream are added through the API and their tools called from an MCP
// client; a delete drains, tells a listening client (list_changed) and leaves no process behind
// (checked in /proc); a broken one's test connection names the problem; the config file's
// upstreams stay read-only and keep their names; a reload leaves the API's upstreams alone; a
// second crankd on the same store runs what the first publishes and drops what it deletes.
//
// crankd with the real mcp plugin; the fixture server (tests/e2e/reference-server.mjs) over stdio
// (marked by an argument that finds its process) and over Streamable HTTP.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "crankd_suite.h"
#include "mcp_http_client.h"
#include "proc_stats.h"
#include "test_json.h"

namespace crank::testing {
namespace {

/// How long a process or a tool list is given to settle after a change.
constexpr std::chrono::seconds kSettle{15};
constexpr const char* kAdminToken = "upstream-admin-token-4Rk8";

std::string marker(const std::string& name) {
    return "crank-admin-up-" + name + "-" + std::to_string(::getpid());
}

/// An upstream object running the fixture over stdio, marked; `extra` adds members.
std::string stdioUpstream(const std::string& name, const std::string& extra = "") {
    return R"({"name": ")" + name +
           R"(", "config": {"command": ")" CRANK_NODE_PATH R"(", "args": [")" CRANK_FIXTURE_SERVER
           R"(", "--stdio", ")" +
           marker(name) + R"("], "close_wait_ms": 500, "term_wait_ms": 500})" + extra + "}";
}

class UpstreamAdminSuite : public CrankdSuite<UpstreamAdminSuite> {
protected:
    static void SetUpTestSuite() {
        httpFixture_ = new ChildProcess(std::vector<std::string>{
            "/bin/sh", "-c", "exec \"$0\" \"$1\" 0 1>&2", CRANK_NODE_PATH, CRANK_FIXTURE_SERVER});
        const auto line =
            httpFixture_->waitForStderrLine("listening http://", std::chrono::seconds(20));
        ASSERT_TRUE(line) << httpFixture_->stderrText();
        httpUrl_ = line->substr(line->find("http://"));
        startCrankd(R"("admin": {"token": {"env": "CRANK_UPADMIN_TOKEN"}, "sync_interval_ms": 200,
                "upstream_commands": [")" CRANK_NODE_PATH R"(", "/nonexistent/*"]},
            "server": {"node_id": "node-a"}, "upstreams": [)" +
                        stdioUpstream("fixed") + "]",
                    {{"CRANK_UPADMIN_TOKEN", kAdminToken}});
        ASSERT_TRUE(
            eventually([] { return exchange(port_, "GET", "/readyz", {}).status == 200; }, kSettle))
            << process_->stderrText();
    }

    static void TearDownTestSuite() {
        CrankdSuite::TearDownTestSuite();
        if (httpFixture_ != nullptr) {
            httpFixture_->signal(SIGTERM);
            httpFixture_->waitForExit(std::chrono::seconds(10));
            delete httpFixture_;
            httpFixture_ = nullptr;
        }
    }

    static Reply admin(const std::string& method, const std::string& path,
                       const std::string& body = "", std::uint16_t port = 0) {
        return exchange(port == 0 ? port_ : port, method, "/admin/api/" + path,
                        {{"Authorization", std::string("Bearer ") + kAdminToken},
                         {"Content-Type", "application/json"}},
                        body);
    }

    static bool listed(const McpClient& client, const std::string& name) {
        return client.lists(name);
    }

    static std::string echoed(McpClient& client, const std::string& tool, const std::string& text) {
        const rapidjson::Document result = client.callTool(tool, R"({"text":")" + text + R"("})");
        if (!result.IsObject() || !result.HasMember("content")) {
            return "";
        }
        return result["content"][0]["text"].GetString();
    }

    /// Creates and publishes `upstream`; its summary after the publish.
    static void createAndPublish(const std::string& name, const std::string& upstream) {
        const Reply created = admin("POST", "upstreams", R"({"config": )" + upstream + "}");
        ASSERT_EQ(created.status, 201) << created.body;
        const Reply published =
            admin("POST", "upstreams/" + name + "/publish", R"({"version": 1})");
        ASSERT_EQ(published.status, 200) << published.body;
        EXPECT_STREQ(published.json()["upstream"]["status"].GetString(), "published")
            << published.body;
    }

    static inline ChildProcess* httpFixture_ = nullptr;
    static inline std::string httpUrl_;
};

TEST_F(UpstreamAdminSuite, StdioAndHttpUpstreamsAddedThroughTheApiServeAndADeleteDrainsThem) {
    McpClient client(port_);
    ASSERT_TRUE(client.open());
    SseReader listener(port_, "GET",
                       {{"Accept", "text/event-stream"},
                        {"Mcp-Session-Id", client.session()},
                        {"MCP-Protocol-Version", "2025-11-25"}});
    ASSERT_NE(listener.head().find(" 200 "), std::string::npos) << listener.head();

    // Created: a draft, which runs nothing.
    const Reply created = admin(
        "POST", "upstreams",
        R"({"config": )" + stdioUpstream("local") + R"(, "comment": "the fixture, over stdio"})");
    ASSERT_EQ(created.status, 201) << created.body;
    const rapidjson::Document draft = created.json();
    EXPECT_STREQ(draft["upstream"]["status"].GetString(), "draft") << created.body;
    EXPECT_EQ(draft["upstream"]["latest_version"].GetInt(), 1);
    EXPECT_EQ(std::string(draft["upstream"]["id"].GetString()).rfind("up_", 0), 0U);
    EXPECT_STREQ(draft["version"]["comment"].GetString(), "the fixture, over stdio");
    std::this_thread::sleep_for(std::chrono::milliseconds(400));  // two syncs
    EXPECT_EQ(processesWith(marker("local")), 0) << "a draft runs nothing";
    EXPECT_FALSE(listed(client, "local_echo"));

    // Published: it runs, its tools are listed and callable.
    const Reply published = admin("POST", "upstreams/local/publish", R"({"version": 1})");
    ASSERT_EQ(published.status, 200) << published.body;
    EXPECT_EQ(published.json()["upstream"]["served_version"].GetInt(), 1) << published.body;
    ASSERT_TRUE(eventually([&] { return listed(client, "local_echo"); }, kSettle));
    EXPECT_EQ(echoed(client, "local_echo", "over stdio"), "over stdio");
    EXPECT_EQ(processesWith(marker("local")), 1);
    const Reply status = admin("GET", "upstreams/local");
    ASSERT_EQ(status.status, 200) << status.body;
    EXPECT_STREQ(status.json()["upstream"]["source"].GetString(), "admin") << status.body;
    EXPECT_FALSE(status.json()["upstream"]["read_only"].GetBool()) << status.body;

    // An HTTP one beside it.
    createAndPublish("web", R"({"name": "web", "config": {"url": ")" + httpUrl_ + R"("}})");
    ASSERT_TRUE(eventually([&] { return listed(client, "web_echo"); }, kSettle));
    EXPECT_EQ(echoed(client, "web_echo", "over http"), "over http");
    const Reply all = admin("GET", "upstreams");
    ASSERT_EQ(all.status, 200) << all.body;
    EXPECT_EQ(all.json()["definitions"].Size(), 2U) << all.body;

    // Deleted: drained, unpublished (the listener is told), no process left.
    const Reply deleted = admin("DELETE", "upstreams/local?grace_ms=300");
    ASSERT_EQ(deleted.status, 200) << deleted.body;
    EXPECT_STREQ(deleted.json()["upstream"]["status"].GetString(), "deleted") << deleted.body;
    EXPECT_TRUE(eventually([] { return processesWith(marker("local")) == 0; }, kSettle));
    EXPECT_FALSE(listed(client, "local_echo"));
    EXPECT_EQ(echoed(client, "web_echo", "still"), "still");
    EXPECT_EQ(processesWith(marker("fixed")), 1) << "the config file's upstream is untouched";
    listener.setReceiveTimeout(std::chrono::milliseconds(5000));
    EXPECT_TRUE(listener.waitFor("notifications/tools/list_changed"))
        << "no notifications/tools/list_changed on the listening stream";
    EXPECT_EQ(admin("GET", "upstreams/local").status, 404);
    EXPECT_EQ(admin("DELETE", "upstreams/local").status, 404);

    // Every change audited, by the admin.
    for (const char* action : {"upstream.create", "upstream.publish", "upstream.delete"}) {
        const Reply audit = admin("GET", std::string("audit?action=") + action);
        EXPECT_NE(audit.body.find(R"("operation_id":"local")"), std::string::npos)
            << action << ": " << audit.body;
    }
    EXPECT_EQ(admin("DELETE", "upstreams/web?grace_ms=0").status, 200);
    EXPECT_TRUE(eventually([&] { return !listed(client, "web_echo"); }, kSettle));
}

TEST_F(UpstreamAdminSuite, AnEditIsANewVersionAndARollbackRunsTheOneBefore) {
    McpClient client(port_);
    ASSERT_TRUE(client.open());
    createAndPublish("ver", stdioUpstream("ver", R"(, "prefix": "one")"));
    ASSERT_TRUE(eventually([&] { return listed(client, "one_echo"); }, kSettle));

    const Reply stale = admin(
        "PUT", "upstreams/ver",
        R"({"base_version": 7, "config": )" + stdioUpstream("ver", R"(, "prefix": "two")") + "}");
    EXPECT_EQ(stale.status, 409) << stale.body;
    EXPECT_EQ(stale.json()["error"]["latest_version"].GetInt(), 1) << stale.body;
    const Reply edited = admin(
        "PUT", "upstreams/ver",
        R"({"base_version": 1, "config": )" + stdioUpstream("ver", R"(, "prefix": "two")") + "}");
    ASSERT_EQ(edited.status, 201) << edited.body;
    EXPECT_EQ(edited.json()["version"]["version"].GetInt(), 2) << edited.body;
    EXPECT_TRUE(listed(client, "one_echo")) << "a saved version runs nothing until published";

    const Reply diff = admin("GET", "upstreams/ver/diff?from=1&to=2");
    ASSERT_EQ(diff.status, 200) << diff.body;
    EXPECT_NE(diff.body.find(R"("path":"prefix")"), std::string::npos) << diff.body;
    EXPECT_EQ(admin("GET", "upstreams/ver/versions").json()["versions"].Size(), 2U);

    const Reply second =
        admin("POST", "upstreams/ver/publish", R"({"version": 2, "expected_published": 1})");
    ASSERT_EQ(second.status, 200) << second.body;
    ASSERT_TRUE(eventually([&] { return listed(client, "two_echo"); }, kSettle));
    EXPECT_FALSE(listed(client, "one_echo"));
    EXPECT_EQ(echoed(client, "two_echo", "v2"), "v2");
    const Reply raced =
        admin("POST", "upstreams/ver/publish", R"({"version": 1, "expected_published": 1})");
    EXPECT_EQ(raced.status, 409) << raced.body;

    const Reply back = admin("POST", "upstreams/ver/rollback", "{}");
    ASSERT_EQ(back.status, 200) << back.body;
    EXPECT_EQ(back.json()["upstream"]["published_version"].GetInt(), 1) << back.body;
    ASSERT_TRUE(eventually([&] { return listed(client, "one_echo"); }, kSettle));
    EXPECT_FALSE(listed(client, "two_echo"));
    // The hand-over leaves one process of it.
    EXPECT_TRUE(eventually([] { return processesWith(marker("ver")) == 1; }, kSettle));
    const Reply definition = admin("GET", "upstreams/ver/definition");
    ASSERT_EQ(definition.status, 200) << definition.body;
    EXPECT_EQ(definition.json()["latest"]["version"].GetInt(), 2) << definition.body;
    EXPECT_EQ(definition.json()["published"]["version"].GetInt(), 1) << definition.body;
    EXPECT_EQ(admin("DELETE", "upstreams/ver?grace_ms=0").status, 200);
    EXPECT_TRUE(eventually([] { return processesWith(marker("ver")) == 0; }, kSettle));
}

TEST_F(UpstreamAdminSuite, BadUpstreamsAreRefusedByPathAndTheConfigFilesStayReadOnly) {
    const Reply bad = admin("POST", "upstreams",
                            R"({"config": {"name": "bad name", "separator": "+",
                                "tools": {"allow": "x"}, "config": {"command": 5}}})");
    ASSERT_EQ(bad.status, 422) << bad.body;
    for (const char* path : {"name", "separator", "tools.allow"}) {
        EXPECT_NE(bad.body.find(std::string(R"("path":")") + path + "\""), std::string::npos)
            << path << ": " << bad.body;
    }
    const Reply adapter = admin("POST", "upstreams", R"({"config": {"name": "nocmd",
                                "config": {"command": 5}}})");
    ASSERT_EQ(adapter.status, 422) << adapter.body;
    EXPECT_NE(adapter.body.find(R"("path":"config.command")"), std::string::npos) << adapter.body;
    // Only the commands admin.upstream_commands allows.
    const Reply command = admin("POST", "upstreams", R"({"config": {"name": "sh",
                                "config": {"command": "/bin/sh", "args": ["-c", "id"]}}})");
    ASSERT_EQ(command.status, 422) << command.body;
    EXPECT_NE(command.body.find(R"("path":"config.command")"), std::string::npos) << command.body;
    EXPECT_NE(command.body.find("admin.upstream_commands"), std::string::npos) << command.body;
    // A stop and a delete stay bounded: the adapter bounds its waits.
    const Reply slowStop = admin("POST", "upstreams", R"({"config": {"name": "slowstop",
                                 "config": {"command": "/bin/true", "term_wait_ms": 3600000}}})");
    ASSERT_EQ(slowStop.status, 422) << slowStop.body;
    EXPECT_NE(slowStop.body.find(R"("path":"config.term_wait_ms")"), std::string::npos)
        << slowStop.body;
    const Reply workspace =
        admin("POST", "upstreams",
              R"({"config": )" + stdioUpstream("ws", R"(, "workspace": "nope")") + "}");
    ASSERT_EQ(workspace.status, 422) << workspace.body;
    EXPECT_NE(workspace.body.find(R"("path":"workspace")"), std::string::npos) << workspace.body;
    EXPECT_EQ(admin("POST", "upstreams", R"({"name": "x"})").status, 422);
    EXPECT_EQ(admin("POST", "upstreams", "not json").status, 400);
    const Reply valid =
        admin("POST", "upstreams/validate", R"({"config": )" + stdioUpstream("checked") + "}");
    EXPECT_EQ(valid.status, 200) << valid.body;
    EXPECT_EQ(admin("GET", "upstreams/checked/definition").status, 404) << "validate saves nothing";

    // The config file's names are taken; its upstreams are read-only here.
    const Reply taken = admin("POST", "upstreams", R"({"config": )" + stdioUpstream("fixed") + "}");
    EXPECT_EQ(taken.status, 409) << taken.body;
    EXPECT_NE(taken.body.find("config file"), std::string::npos) << taken.body;
    for (const auto& [method, path] :
         std::vector<std::pair<std::string, std::string>>{{"PUT", "upstreams/fixed"},
                                                          {"DELETE", "upstreams/fixed"},
                                                          {"POST", "upstreams/fixed/publish"},
                                                          {"GET", "upstreams/fixed/versions"}}) {
        const Reply r = admin(method, path, R"({"version": 1})");
        EXPECT_EQ(r.status, 409) << method << " " << path << ": " << r.body;
        EXPECT_NE(r.body.find("read_only"), std::string::npos) << r.body;
    }
    createAndPublish("twice", stdioUpstream("twice"));
    const Reply again = admin("POST", "upstreams", R"({"config": )" + stdioUpstream("twice") + "}");
    EXPECT_EQ(again.status, 409) << again.body;
    const Reply renamed = admin("PUT", "upstreams/twice",
                                R"({"base_version": 1, "config": )" + stdioUpstream("other") + "}");
    EXPECT_EQ(renamed.status, 422) << renamed.body;

    // A reload of the unchanged file, twice, leaves the API's upstream running.
    for (int i = 0; i < 2; ++i) {
        const Reply reloaded = admin("POST", "reload");
        ASSERT_EQ(reloaded.status, 200) << reloaded.body;
    }
    McpClient client(port_);
    ASSERT_TRUE(client.open());
    EXPECT_TRUE(eventually([&] { return listed(client, "twice_echo"); }, kSettle));
    EXPECT_EQ(processesWith(marker("twice")), 1);
    EXPECT_EQ(admin("DELETE", "upstreams/twice?grace_ms=0").status, 200);
}

TEST_F(UpstreamAdminSuite, TheConfigFileWinsANameAndTheApisUpstreamComesBackWhenItIsFree) {
    McpClient client(port_);
    ASSERT_TRUE(client.open());
    createAndPublish("clash", stdioUpstream("clash"));
    ASSERT_TRUE(eventually([&] { return listed(client, "clash_echo"); }, kSettle));

    // A reload gives the file an upstream of that name: the file's runs in its place.
    const std::string path = dir_->file("crank.json");
    std::ifstream in(path);
    std::ostringstream text;
    text << in.rdbuf();
    const std::string original = text.str();
    const std::string marker = R"("upstreams": [)";
    const std::size_t at = original.find(marker);
    ASSERT_NE(at, std::string::npos) << original;
    std::string clashing = original;
    clashing.insert(at + marker.size(),
                    stdioUpstream("clash", R"(, "prefix": "fileclash")") + ", ");
    dir_->write("crank.json", clashing);
    const Reply reloaded = admin("POST", "reload");
    ASSERT_EQ(reloaded.status, 200) << reloaded.body;
    EXPECT_NE(reloaded.body.find("replaces the admin API's upstream of this name"),
              std::string::npos)
        << reloaded.body;
    EXPECT_TRUE(eventually([&] { return listed(client, "fileclash_echo"); }, kSettle));
    EXPECT_FALSE(listed(client, "clash_echo"));
    EXPECT_TRUE(eventually(
        [] {
            const Reply d = admin("GET", "upstreams/clash/definition");
            return d.status == 200 && d.body.find("config file defines") != std::string::npos;
        },
        kSettle))
        << admin("GET", "upstreams/clash/definition").body;

    // The file gives the name up: the API's upstream runs again.
    dir_->write("crank.json", original);
    ASSERT_EQ(admin("POST", "reload").status, 200);
    EXPECT_TRUE(eventually([&] { return listed(client, "clash_echo"); }, kSettle));
    EXPECT_FALSE(listed(client, "fileclash_echo"));
    EXPECT_EQ(admin("DELETE", "upstreams/clash?grace_ms=0").status, 200);
}

TEST_F(UpstreamAdminSuite, SecretsAreNotShownBackAndAnEditThatSendsThemAsShownKeepsThem) {
    const std::string upstream = R"({"name": "secretive", "config": {"url": ")" + httpUrl_ +
                                 R"(", "headers": {"X-Api-Key": "sekret-4711"}}})";
    const Reply created = admin("POST", "upstreams", R"({"config": )" + upstream + "}");
    ASSERT_EQ(created.status, 201) << created.body;
    EXPECT_EQ(created.body.find("sekret-4711"), std::string::npos) << created.body;
    const Reply definition = admin("GET", "upstreams/secretive/definition");
    ASSERT_EQ(definition.status, 200) << definition.body;
    EXPECT_EQ(definition.body.find("sekret-4711"), std::string::npos) << definition.body;
    EXPECT_NE(definition.body.find(R"("X-Api-Key":"[redacted]")"), std::string::npos)
        << definition.body;

    // The shown config sent back with another prefix: the secret is kept, not "[redacted]".
    const rapidjson::Document shown = definition.json();
    rapidjson::StringBuffer text;
    rapidjson::Writer<rapidjson::StringBuffer> writer(text);
    shown["latest"]["config"].Accept(writer);
    std::string edited = text.GetString();
    edited.insert(1, R"("prefix": "sec",)");
    ASSERT_EQ(
        admin("PUT", "upstreams/secretive", R"({"base_version": 1, "config": )" + edited + "}")
            .status,
        201);
    const Reply same = admin("GET", "upstreams/secretive/diff?from=1&to=2");
    ASSERT_EQ(same.status, 200) << same.body;
    EXPECT_EQ(same.body.find("X-Api-Key"), std::string::npos) << "the secret did not change";
    EXPECT_EQ(same.body.find("redacted"), std::string::npos) << same.body;

    // A new value: the diff says it changed, without either value.
    std::string rotated = upstream;
    rotated.replace(rotated.find("sekret-4711"), 11, "sekret-0815");
    ASSERT_EQ(
        admin("PUT", "upstreams/secretive", R"({"base_version": 2, "config": )" + rotated + "}")
            .status,
        201);
    const Reply changed = admin("GET", "upstreams/secretive/diff?from=2&to=3");
    EXPECT_NE(changed.body.find("[redacted: changed]"), std::string::npos) << changed.body;
    EXPECT_EQ(changed.body.find("sekret"), std::string::npos) << changed.body;
    const Reply versions = admin("GET", "upstreams/secretive/versions");
    EXPECT_EQ(versions.body.find("sekret"), std::string::npos) << versions.body;
    EXPECT_EQ(admin("DELETE", "upstreams/secretive").status, 200);
}

TEST_F(UpstreamAdminSuite, ATestConnectionOfABrokenUpstreamNamesTheProblem) {
    const Reply created = admin("POST", "upstreams", R"({"config": {"name": "broken",
        "config": {"command": "/nonexistent/mcp-server"}}})");
    ASSERT_EQ(created.status, 201) << created.body;
    const Reply tested = admin("POST", "upstreams/broken/test");
    ASSERT_EQ(tested.status, 200) << tested.body;
    const rapidjson::Document doc = tested.json();
    EXPECT_FALSE(doc["test"]["ok"].GetBool()) << tested.body;
    EXPECT_NE(std::string(doc["test"]["detail"].GetString()).find("/nonexistent/mcp-server"),
              std::string::npos)
        << tested.body;
    EXPECT_NE(admin("GET", "audit?action=upstream.test").body.find(R"("operation_id":"broken")"),
              std::string::npos);
    EXPECT_EQ(admin("DELETE", "upstreams/broken").status, 200);
}

TEST_F(UpstreamAdminSuite, ASecondNodeOnTheSameStoreRunsWhatTheFirstPublishes) {
    auto nodeB = std::make_unique<ChildProcess>(
        std::vector<std::string>{CRANKD_PATH, "--config", dir_->file("crank.json"), "--listen",
                                 "127.0.0.1:0"},
        std::map<std::string, std::string>{{"CRANK_UPADMIN_TOKEN", kAdminToken}});
    const auto portB = nodeB->waitForListeningPort(std::chrono::seconds(20));
    ASSERT_TRUE(portB) << nodeB->stderrText();

    createAndPublish("shared", R"({"name": "shared", "config": {"url": ")" + httpUrl_ + R"("}})");
    McpClient onB(*portB);
    ASSERT_TRUE(onB.open());
    ASSERT_TRUE(eventually([&] { return listed(onB, "shared_echo"); }, kSettle))
        << nodeB->stderrText();
    EXPECT_EQ(echoed(onB, "shared_echo", "on b"), "on b");
    const Reply seen = admin("GET", "upstreams/shared", "", *portB);
    ASSERT_EQ(seen.status, 200) << seen.body;
    EXPECT_STREQ(seen.json()["upstream"]["source"].GetString(), "admin");

    ASSERT_EQ(admin("DELETE", "upstreams/shared?grace_ms=0").status, 200);
    EXPECT_TRUE(eventually([&] { return !listed(onB, "shared_echo"); }, kSettle))
        << "node B still runs a deleted upstream";
    nodeB->signal(SIGTERM);
    EXPECT_EQ(nodeB->waitForExit(std::chrono::seconds(20)), 0) << nodeB->stderrText();
}

}  // namespace
}  // namespace crank::testing
