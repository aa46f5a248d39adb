// Execution mode `session` through the real crankd with the synthetic-stream fixture plugin:
// the _start/_poll/_stop tools, paging with cursors, idempotent polls, both overflow policies,
// expiry, failures, and sessions that stay open when crankd stops.

#include <signal.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <map>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "child_process.h"
#include "crankd_suite.h"
#include "mcp_http_client.h"
#include "store/open_store.h"
#include "test_json.h"

namespace {

using crank::testing::ChildProcess;
using crank::testing::CrankdSuite;
using crank::testing::McpClient;
using namespace std::chrono_literals;

constexpr const char* kSyntheticConfig = R"({"items": "{{items}}", "rate_per_sec": "{{rate}}",
    "fail_after_items": "{{fail_after}}", "item_bytes": 40})";
constexpr const char* kInputSchema = R"({"type": "object", "additionalProperties": false,
    "properties": {"items": {"type": "integer", "minimum": -1}, "rate": {"type": "integer"},
                   "fail_after": {"type": "integer"}}})";

std::string sessionOperation(const std::string& name, const std::string& execution,
                             const std::string& workspace = "default") {
    return R"({"name": ")" + name + R"(", "workspace": ")" + workspace +
           R"(", "description": "a synthetic session",
        "protocol": "synthetic", "input_schema": )" +
           std::string(kInputSchema) + R"(, "config": )" + kSyntheticConfig +
           R"(, "execution": {"mode": "session", "transport_behavior": "server_stream", )" +
           execution + "}}";
}

/// The calls every session suite makes (one crankd per suite).
template <typename Suite>
class SessionSuite : public CrankdSuite<Suite> {
protected:
    void SetUp() override {
        ASSERT_NE(CrankdSuite<Suite>::port_, 0);
        client_.emplace(CrankdSuite<Suite>::port_);
        ASSERT_TRUE(client_->open());
    }

    /// structuredContent of a call that must succeed.
    rapidjson::Document ok(const std::string& tool, const std::string& arguments) {
        const rapidjson::Document result = client_->callTool(tool, arguments);
        rapidjson::Document out;
        if (result.HasMember("structuredContent") && result.HasMember("isError") &&
            !result["isError"].GetBool()) {
            out.CopyFrom(result["structuredContent"], out.GetAllocator());
        } else {
            ADD_FAILURE() << tool << " " << arguments << ": " << text(result);
            out.SetObject();
        }
        return out;
    }

    /// The error text of a call that must fail.
    std::string failure(const std::string& tool, const std::string& arguments) {
        const rapidjson::Document result = client_->callTool(tool, arguments);
        EXPECT_TRUE(result.HasMember("isError") && result["isError"].GetBool()) << text(result);
        return result.HasMember("content") ? result["content"][0]["text"].GetString() : "";
    }

    static std::string text(const rapidjson::Value& v) {
        rapidjson::StringBuffer b;
        rapidjson::Writer<rapidjson::StringBuffer> w(b);
        v.Accept(w);
        return b.GetString();
    }

    std::string start(const std::string& op, const std::string& input) {
        const auto r = ok(op + "_start", input);
        EXPECT_STREQ(r["status"].GetString(), "active");
        return r.HasMember("session_id") ? r["session_id"].GetString() : "";
    }

    rapidjson::Document poll(const std::string& op, const std::string& id,
                             const std::string& cursor = "", int max_items = 0) {
        std::string args = R"({"session_id": ")" + id + "\"";
        if (!cursor.empty()) {
            args += R"(, "cursor": ")" + cursor + "\"";
        }
        if (max_items > 0) {
            args += R"(, "max_items": )" + std::to_string(max_items);
        }
        return ok(op + "_poll", args + "}");
    }

    static std::vector<int> seqs(const rapidjson::Value& page, const char* member = "seq") {
        std::vector<int> out;
        for (const auto& item : page["items"].GetArray()) {
            out.push_back(item[member].GetInt());
        }
        return out;
    }

    /// Polls until `done` says so (bounded).
    template <typename Done>
    rapidjson::Document pollUntil(const std::string& op, const std::string& id, Done done) {
        for (int i = 0; i < 100; ++i) {
            rapidjson::Document page = poll(op, id, "0", 1);
            if (done(page)) {
                return page;
            }
            std::this_thread::sleep_for(50ms);
        }
        ADD_FAILURE() << "the session never reached the state";
        return poll(op, id, "0", 1);
    }

    /// Every item from the start until the session is no longer active, in order (bounded).
    std::vector<int> drain(const std::string& op, const std::string& id, std::string& status,
                           const char* member = "seq") {
        std::vector<int> all;
        std::string cursor = "0";
        for (int i = 0; i < 400; ++i) {
            const auto page = poll(op, id, cursor);
            for (int s : seqs(page, member)) {
                all.push_back(s);
            }
            cursor = page["cursor"].GetString();
            status = page["status"].GetString();
            if (status != "active" && !page["has_more"].GetBool()) {
                break;
            }
            if (page["items"].Empty()) {
                std::this_thread::sleep_for(20ms);
            }
        }
        return all;
    }

    std::optional<McpClient> client_;
};

class SessionTest : public SessionSuite<SessionTest> {
protected:
    static void SetUpTestSuite() {
        const std::string operations =
            sessionOperation("paused", R"("max_items": 10)") + "," +
            sessionOperation("dropping", R"("max_items": 10, "overflow_policy": "drop_oldest")") +
            "," +
            sessionOperation("short_lived",
                             R"("idle_timeout_ms": 300, "max_session_lifetime_ms": 60000)") +
            "," + sessionOperation("other", R"("max_items": 10)");
        startCrankd(R"("operations": [)" + operations + "]");
    }
};

TEST_F(SessionTest, ThreeToolsArePublishedPerSessionOperation) {
    const auto reply = client_->post(R"({"jsonrpc":"2.0","id":3,"method":"tools/list"})");
    for (const char* name : {"paused_start", "paused_poll", "paused_stop"}) {
        EXPECT_NE(reply.body.find(std::string("\"name\":\"") + name + "\""), std::string::npos)
            << name;
    }
    EXPECT_EQ(reply.body.find("\"name\":\"paused\""), std::string::npos);
}

TEST_F(SessionTest, PagesFollowTheCursorAndTheSameCursorGivesTheSameItems) {
    const std::string id = start("paused", R"({"items": 5})");
    const auto page1 =
        pollUntil("paused", id, [](const auto& p) { return p["item_count"].GetInt() == 5; });
    const auto a = poll("paused", id, "", 2);
    EXPECT_EQ(seqs(a), (std::vector<int>{1, 2}));
    EXPECT_STREQ(a["cursor"].GetString(), "2");
    EXPECT_TRUE(a["has_more"].GetBool());
    const auto b = poll("paused", id, "2", 2);
    const auto again = poll("paused", id, "2", 2);  // the answer was lost: ask again
    EXPECT_EQ(seqs(b), (std::vector<int>{3, 4}));
    EXPECT_EQ(seqs(again), seqs(b));
    const auto c = poll("paused", id, b["cursor"].GetString());
    EXPECT_EQ(seqs(c), (std::vector<int>{5}));
    EXPECT_FALSE(c["has_more"].GetBool());
    EXPECT_STREQ(c["status"].GetString(), "completed");  // the upstream ended; items remained
    (void)page1;
}

TEST_F(SessionTest, PausePolicyHoldsTheUpstreamAndLosesNothing) {
    const std::string id = start("paused", R"({"items": 100})");
    std::this_thread::sleep_for(300ms);
    // The buffer holds 10 items: the upstream waits instead of running ahead.
    const auto held = poll("paused", id, "0", 1);
    EXPECT_EQ(held["item_count"].GetInt(), 10);
    std::vector<int> all;
    std::string cursor = "0";
    for (int i = 0; i < 200 && all.size() < 100; ++i) {
        const auto page = poll("paused", id, cursor);
        for (int s : seqs(page)) {
            all.push_back(s);
        }
        cursor = page["cursor"].GetString();
        if (page["items"].Empty()) {
            std::this_thread::sleep_for(20ms);
        }
    }
    ASSERT_EQ(all.size(), 100U);
    for (int i = 0; i < 100; ++i) {
        ASSERT_EQ(all[static_cast<std::size_t>(i)], i + 1);
    }
    const auto last = poll("paused", id, cursor);
    EXPECT_EQ(last["dropped_count"].GetInt(), 0);
    EXPECT_STREQ(last["status"].GetString(), "completed");
}

TEST_F(SessionTest, DropOldestKeepsTheNewestAndCountsTheRest) {
    const std::string id = start("dropping", R"({"items": 50})");
    pollUntil("dropping", id,
              [](const auto& p) { return std::string(p["status"].GetString()) == "completed"; });
    const auto page = poll("dropping", id);
    std::vector<int> expected;
    for (int s = 41; s <= 50; ++s) {
        expected.push_back(s);
    }
    EXPECT_EQ(seqs(page), expected);
    EXPECT_EQ(page["dropped_count"].GetInt(), 40);
    EXPECT_EQ(page["item_count"].GetInt(), 50);
}

TEST_F(SessionTest, StopClosesTheUpstreamAndIsIdempotent) {
    const std::string id = start("paused", R"({"items": -1, "rate": 100})");
    std::this_thread::sleep_for(100ms);
    const auto stopped = ok("paused_stop", R"({"session_id": ")" + id + "\"}");
    EXPECT_STREQ(stopped["status"].GetString(), "stopped");
    EXPECT_GE(stopped["item_count"].GetInt(), 1);
    const auto again = ok("paused_stop", R"({"session_id": ")" + id + "\"}");
    EXPECT_STREQ(again["status"].GetString(), "stopped");
    const auto after = poll("paused", id);
    EXPECT_STREQ(after["status"].GetString(), "stopped");
    EXPECT_TRUE(after["items"].Empty());
}

TEST_F(SessionTest, AnIdleSessionExpires) {
    const std::string id = start("short_lived", R"({"items": -1, "rate": 50})");
    std::this_thread::sleep_for(900ms);  // idle_timeout_ms is 300
    const auto page = poll("short_lived", id);
    EXPECT_STREQ(page["status"].GetString(), "expired");
    EXPECT_TRUE(page["items"].Empty());
}

TEST_F(SessionTest, AFailedUpstreamKeepsItsItemsAndSaysWhy) {
    const std::string id = start("paused", R"({"items": 10, "fail_after": 3})");
    const auto page = pollUntil("paused", id, [](const auto& p) {
        return std::string(p["status"].GetString()) == "failed";
    });
    const auto all = poll("paused", id);
    EXPECT_EQ(seqs(all), (std::vector<int>{1, 2, 3}));
    ASSERT_TRUE(all.HasMember("error"));
    EXPECT_NE(std::string(all["error"]["message"].GetString()).find("failure after 3 items"),
              std::string::npos);
    (void)page;
}

TEST_F(SessionTest, RefusedCallsAreAuditedToo) {
    failure("paused_poll", R"({"session_id": "ses_audited_missing"})");
    crank::store::StoreOptions options;
    options.path = storePath();
    auto opened = crank::store::openStore(options);
    ASSERT_TRUE(static_cast<bool>(opened)) << opened.error().message;
    crank::store::AuditQuery q;
    q.action = "session.poll";
    q.limit = 1000;
    std::optional<crank::store::AuditEvent> seen;
    // Written behind the call: wait for it (bounded).
    EXPECT_TRUE(crank::testing::eventually(
        [&] {
            const auto found = (*opened)->queryAudit(q);
            for (const auto& e : found ? *found : std::vector<crank::store::AuditEvent>{}) {
                if (e.detail_json.find("ses_audited_missing") != std::string::npos) {
                    seen = e;
                }
            }
            return seen.has_value();
        },
        std::chrono::seconds(10)));
    ASSERT_TRUE(seen.has_value());
    EXPECT_EQ(seen->outcome, "not_found");
    EXPECT_NE(seen->detail_json.find("no session"), std::string::npos);
}

TEST_F(SessionTest, UnknownIdsBadCursorsAndOtherToolsSessionsAreErrors) {
    EXPECT_NE(failure("paused_poll", R"({"session_id": "ses_nope"})").find("no session"),
              std::string::npos);
    const std::string id = start("paused", R"({"items": 3})");
    // A session belongs to its operation's tools.
    EXPECT_NE(failure("other_poll", R"({"session_id": ")" + id + "\"}").find("no session"),
              std::string::npos);
    EXPECT_NE(
        failure("paused_poll", R"({"session_id": ")" + id + R"(", "cursor": "x"})").find("cursor"),
        std::string::npos);
    EXPECT_NE(failure("paused_poll", R"({"session_id": ")" + id + R"(", "cursor": "99"})")
                  .find("ahead of this session"),
              std::string::npos);
    EXPECT_NE(failure("paused_poll", "{}").find("session_id"), std::string::npos);
    EXPECT_NE(failure("paused_start", R"({"nope": 1})").find("invalid input"), std::string::npos);
}

TEST_F(SessionTest, EverySessionHasItsRowInTheStore) {
    const std::string stopped = start("paused", R"({"items": -1, "rate": 50})");
    poll("paused", stopped);
    ok("paused_stop", R"({"session_id": ")" + stopped + "\"}");
    const std::string failed = start("paused", R"({"items": 10, "fail_after": 2})");
    const std::string expired = start("short_lived", R"({"items": -1, "rate": 20})");
    const std::string live = start("dropping", R"({"items": -1, "rate": 20})");
    pollUntil("paused", failed,
              [](const auto& p) { return std::string(p["status"].GetString()) == "failed"; });
    std::this_thread::sleep_for(900ms);  // short_lived's idle_timeout_ms is 300
    poll("dropping", live);

    crank::store::StoreOptions options;
    options.path = storePath();
    auto opened = crank::store::openStore(options);
    ASSERT_TRUE(static_cast<bool>(opened)) << opened.error().message;
    crank::store::Store& store = **opened;
    const auto status = [&store](const std::string& id) {
        auto row = store.getSession(id);
        EXPECT_TRUE(static_cast<bool>(row)) << id;
        return row ? std::string(crank::store::sessionStatusName(row->status)) : std::string();
    };
    EXPECT_EQ(status(stopped), "closed");
    EXPECT_EQ(status(failed), "failed");
    EXPECT_EQ(status(expired), "expired");
    EXPECT_EQ(status(live), "active");
    const auto row = store.getSession(live);
    ASSERT_TRUE(static_cast<bool>(row));
    EXPECT_EQ(row->operation_id, "dropping");
    EXPECT_EQ(row->protocol, "synthetic");
    EXPECT_EQ(row->mode, "session");
    EXPECT_TRUE(row->last_poll_at.has_value());
    EXPECT_GT(row->expires_at, row->created_at);
    const auto closedRow = store.getSession(stopped);
    ASSERT_TRUE(static_cast<bool>(closedRow));
    EXPECT_TRUE(closedRow->closed_at.has_value());
    // Every start, poll, stop and expiry is in the audit log, with who and how it went.
    const auto events = [&store](const std::string& action, const std::string& session) {
        crank::store::AuditQuery q;
        q.action = action;
        q.limit = 1000;
        auto found = store.queryAudit(q);
        EXPECT_TRUE(static_cast<bool>(found));
        std::vector<crank::store::AuditEvent> out;
        for (const auto& e : found ? *found : std::vector<crank::store::AuditEvent>{}) {
            if (e.detail_json.find(session) != std::string::npos) {
                out.push_back(e);
            }
        }
        return out;
    };
    // Written behind the calls and the sweeper: wait for the expiry, which came last.
    EXPECT_TRUE(crank::testing::eventually(
        [&] { return !events("session.expire", expired).empty(); }, 10s));
    const auto starts = events("session.start", stopped);
    ASSERT_EQ(starts.size(), 1U);
    EXPECT_EQ(starts[0].outcome, "ok");
    EXPECT_EQ(starts[0].agent_id, "anonymous");
    EXPECT_EQ(starts[0].workspace_id, "default");
    EXPECT_EQ(starts[0].operation_id, "paused");
    ASSERT_EQ(events("session.poll", stopped).size(), 1U);
    EXPECT_NE(events("session.poll", stopped)[0].detail_json.find(R"("items":)"),
              std::string::npos);
    ASSERT_EQ(events("session.stop", stopped).size(), 1U);
    ASSERT_EQ(events("session.expire", expired).size(), 1U);
    EXPECT_TRUE(events("session.stop", expired).empty());
}

TEST_F(SessionTest, PollsRacingAStopNeverSeeABrokenSession) {
    const std::string id = start("paused", R"({"items": -1, "rate": 2000})");
    std::atomic<int> active{0};
    std::atomic<int> stopped{0};
    std::atomic<int> other{0};
    std::vector<std::thread> pollers;
    for (int t = 0; t < 4; ++t) {
        pollers.emplace_back([&] {
            McpClient client(port_);
            if (!client.open()) {
                ++other;
                return;
            }
            std::string cursor = "0";
            // Until this poller has seen the stop (bounded).
            for (int i = 0; i < 2000; ++i) {
                const auto result =
                    client.callTool("paused_poll", R"({"session_id": ")" + id +
                                                       R"(", "cursor": ")" + cursor + "\"}");
                if (!result.HasMember("structuredContent")) {
                    ++other;
                    return;
                }
                const auto& page = result["structuredContent"];
                const std::string status = page["status"].GetString();
                if (status == "active") {
                    ++active;
                    cursor = page["cursor"].GetString();
                } else if (status == "stopped") {
                    ++stopped;
                    return;
                } else {
                    ++other;
                    return;
                }
            }
        });
    }
    // Stop while the pollers are busy.
    for (int i = 0; i < 200 && active.load() < 20; ++i) {
        std::this_thread::sleep_for(10ms);
    }
    const auto result = ok("paused_stop", R"({"session_id": ")" + id + "\"}");
    EXPECT_STREQ(result["status"].GetString(), "stopped");
    for (std::thread& t : pollers) {
        t.join();
    }
    // Four pollers sharing one cursor space may ask with a cursor another acknowledged: that is
    // fine; what must never happen is an error or a status other than active or stopped.
    EXPECT_EQ(other.load(), 0);
    EXPECT_EQ(stopped.load(), 4);
    EXPECT_GE(active.load(), 20);
}

TEST_F(SessionTest, ZzOpenSessionsDoNotStopCrankd) {
    start("paused", R"({"items": -1, "rate": 10})");
    start("dropping", R"({"items": -1})");
    // TearDownTestSuite checks that SIGTERM still ends crankd with status 0.
}

/// Sessions belong to the agent that started them: with API keys, another agent (of the same
/// workspace or another) cannot poll or stop them, and learns nothing of them ("no session").
class SessionIsolationTest : public CrankdSuite<SessionIsolationTest> {
protected:
    static void SetUpTestSuite() {
        startCrankd(
            R"("auth": {"mode": "api_key",
                "workspaces": [{"id": "w2", "limits": {"max_sessions": 1}}], "agents": [
                    {"id": "alice", "api_key": {"env": "CRANK_TEST_ALICE_KEY"}},
                    {"id": "bob", "api_key": {"env": "CRANK_TEST_BOB_KEY"},
                     "limits": {"max_sessions": 2}},
                    {"id": "carol", "workspace": "w2", "api_key": {"env": "CRANK_TEST_CAROL_KEY"}}]},
                "operations": [)" +
                sessionOperation("feed", R"("max_items": 10)") + "," +
                // The same operation in w2: a workspace publishes only its own operations.
                sessionOperation("feed", R"("max_items": 10)", "w2") + "]",
            {{"CRANK_TEST_ALICE_KEY", "alice-key-0123456789"},
             {"CRANK_TEST_BOB_KEY", "bob-key-0123456789"},
             {"CRANK_TEST_CAROL_KEY", "carol-key-0123456789"}});
    }

    static std::string textOf(const rapidjson::Document& result) {
        return result.HasMember("content") ? result["content"][0]["text"].GetString() : "";
    }
};

TEST_F(SessionIsolationTest, AnotherAgentsSessionIsNotFound) {
    McpClient alice(port_, "alice-key-0123456789");
    McpClient bob(port_, "bob-key-0123456789");
    McpClient carol(port_, "carol-key-0123456789");
    ASSERT_TRUE(alice.open());
    ASSERT_TRUE(bob.open());
    ASSERT_TRUE(carol.open());
    const auto started = alice.callTool("feed_start", R"({"items": 3})");
    ASSERT_TRUE(started.HasMember("structuredContent")) << textOf(started);
    const std::string id = started["structuredContent"]["session_id"].GetString();
    const std::string args = R"({"session_id": ")" + id + "\"}";
    for (McpClient* other : {&bob, &carol}) {
        for (const char* tool : {"feed_poll", "feed_stop"}) {
            const auto refused = other->callTool(tool, args);
            EXPECT_TRUE(refused["isError"].GetBool());
            EXPECT_NE(textOf(refused).find("no session"), std::string::npos) << textOf(refused);
        }
    }
    // Alice's session went on untouched.
    const auto mine = alice.callTool("feed_poll", args);
    ASSERT_TRUE(mine.HasMember("structuredContent")) << textOf(mine);
    EXPECT_STRNE(mine["structuredContent"]["status"].GetString(), "stopped");

    crank::store::StoreOptions options;
    options.path = storePath();
    auto opened = crank::store::openStore(options);
    ASSERT_TRUE(static_cast<bool>(opened)) << opened.error().message;
    const auto row = (*opened)->getSession(id);
    ASSERT_TRUE(static_cast<bool>(row));
    EXPECT_EQ(row->agent_id, "alice");
    EXPECT_EQ(row->workspace_id, "default");
}

TEST_F(SessionIsolationTest, SessionLimitsPerAgentAndPerWorkspaceAreNamed) {
    McpClient bob(port_, "bob-key-0123456789");
    McpClient carol(port_, "carol-key-0123456789");
    ASSERT_TRUE(bob.open());
    ASSERT_TRUE(carol.open());
    std::vector<std::string> ids;
    for (int i = 0; i < 2; ++i) {
        const auto started = bob.callTool("feed_start", R"({"items": -1, "rate": 10})");
        ASSERT_TRUE(started.HasMember("structuredContent")) << textOf(started);
        ids.emplace_back(started["structuredContent"]["session_id"].GetString());
    }
    const auto third = bob.callTool("feed_start", R"({"items": -1, "rate": 10})");
    EXPECT_TRUE(third["isError"].GetBool());
    EXPECT_NE(textOf(third).find(R"(agent "bob" has 2 open sessions, its limit)"),
              std::string::npos)
        << textOf(third);
    // A stopped session frees its place.
    bob.callTool("feed_stop", R"({"session_id": ")" + ids[0] + "\"}");
    const auto again = bob.callTool("feed_start", R"({"items": -1, "rate": 10})");
    EXPECT_FALSE(again["isError"].GetBool()) << textOf(again);

    const auto first = carol.callTool("feed_start", R"({"items": -1, "rate": 10})");
    EXPECT_FALSE(first["isError"].GetBool()) << textOf(first);
    const auto second = carol.callTool("feed_start", R"({"items": -1, "rate": 10})");
    EXPECT_TRUE(second["isError"].GetBool());
    EXPECT_NE(textOf(second).find(R"(workspace "w2" has 1 open sessions, its limit)"),
              std::string::npos)
        << textOf(second);
}

// --- sessions over a request/response upstream: the host polls it ------------------------------

constexpr const char* kPolledConfig = R"({"items": "{{items}}", "delay_ms": "{{delay}}",
    "fail_after_items": "{{fail_after}}", "item_bytes": 40})";
constexpr const char* kPolledInputSchema = R"({"type": "object", "additionalProperties": false,
    "properties": {"items": {"type": "integer", "minimum": 0}, "delay": {"type": "integer"},
                   "fail_after": {"type": "integer"}}})";

/// A session over the synthetic plugin's unary call, whose response is
/// `{"items": [...], "next_cursor": "c<last>", "done": true, ...}`: all the items after the
/// request's cursor at once.
std::string polledOperation(const std::string& name, const std::string& execution) {
    return R"({"name": ")" + name + R"(", "description": "a polled synthetic session",
        "protocol": "synthetic", "input_schema": )" +
           std::string(kPolledInputSchema) + R"(, "config": )" + kPolledConfig +
           R"(, "execution": {"mode": "session", "transport_behavior": "request_response",
               "items_path": "items", "cursor_path": "next_cursor", )" +
           execution + "}}";
}

class PolledSessionTest : public SessionSuite<PolledSessionTest> {
protected:
    static void SetUpTestSuite() {
        std::string operations =
            // No done_path: the upstream is polled until the session is stopped or expires.
            polledOperation("feed", R"("max_items": 10, "poll_interval_ms": 50)") + "," +
            polledOperation("until_done",
                            R"("max_items": 10, "poll_interval_ms": 50, "done_path": "done")") +
            "," + polledOperation("dropping_polled", R"("max_items": 10, "poll_interval_ms": 50,
                "done_path": "done", "overflow_policy": "drop_oldest")") +
            "," +
            polledOperation("slow_feed",
                            R"("poll_interval_ms": 60000, "upstream_timeout_ms": 30000)") +
            "," +
            polledOperation("impatient", R"("poll_interval_ms": 50, "upstream_timeout_ms": 300)");
        {
            fixture_ = new ChildProcess(
                std::vector<std::string>{CRANK_REST_FIXTURE_PATH, "--listen", "127.0.0.1:0"});
            const auto fixturePort = fixture_->waitForListeningPort(20s);
            ASSERT_TRUE(fixturePort) << fixture_->stderrText();
            fixturePort_ = *fixturePort;
            operations += R"(, {"name": "long_poll", "description": "a long-poll session",
                "protocol": "rest", "config": {"url": "http://127.0.0.1:)" +
                          std::to_string(fixturePort_) +
                          R"(/long-poll", "cursor_param": "cursor"},
                "execution": {"mode": "session", "transport_behavior": "request_response",
                    "items_path": "events", "cursor_path": "next_cursor", "done_path": "done",
                    "poll_interval_ms": 20, "upstream_timeout_ms": 5000, "max_items": 100}})";
        }
        startCrankd(R"("operations": [)" + operations + "]");
    }

    static void TearDownTestSuite() {
        CrankdSuite<PolledSessionTest>::TearDownTestSuite();
        delete fixture_;  // stops it
        fixture_ = nullptr;
    }

    std::int64_t stopMs(const std::string& op, const std::string& id, std::string& status) {
        const auto before = std::chrono::steady_clock::now();
        const auto stopped = ok(op + "_stop", R"({"session_id": ")" + id + "\"}");
        status = stopped.HasMember("status") ? stopped["status"].GetString() : "";
        return std::chrono::duration_cast<std::chrono::milliseconds>(
                   std::chrono::steady_clock::now() - before)
            .count();
    }

    static inline ChildProcess* fixture_ = nullptr;
    static inline std::uint16_t fixturePort_ = 0;
};

TEST_F(PolledSessionTest, ItemsArriveOnceThePageCursorGoesIntoTheNextRequest) {
    const std::string id = start("feed", R"({"items": 5})");
    pollUntil("feed", id, [](const auto& p) { return p["item_count"].GetInt() == 5; });
    // Requests go on every 50 ms with cursor c5: without it each would bring items 1..5 again.
    std::this_thread::sleep_for(400ms);
    const auto a = poll("feed", id, "2");
    const auto again = poll("feed", id, "2");  // the answer was lost: ask again
    EXPECT_EQ(seqs(a), (std::vector<int>{3, 4, 5}));
    EXPECT_EQ(seqs(again), seqs(a));
    EXPECT_EQ(a["item_count"].GetInt(), 5);
    EXPECT_STREQ(a["status"].GetString(), "active");  // no done_path: it keeps polling
    ok("feed_stop", R"({"session_id": ")" + id + "\"}");
}

TEST_F(PolledSessionTest, DonePathCompletesTheSession) {
    const std::string id = start("until_done", R"({"items": 3})");
    std::string status;
    EXPECT_EQ(drain("until_done", id, status), (std::vector<int>{1, 2, 3}));
    EXPECT_EQ(status, "completed");
}

TEST_F(PolledSessionTest, AnUpstreamErrorFailsTheSessionWithItsMessage) {
    const std::string id = start("feed", R"({"items": 10, "fail_after": 2})");
    const auto failed = pollUntil(
        "feed", id, [](const auto& p) { return std::string(p["status"].GetString()) == "failed"; });
    ASSERT_TRUE(failed.HasMember("error")) << text(failed);
    EXPECT_STREQ(failed["error"]["code"].GetString(), "upstream");
    EXPECT_NE(std::string(failed["error"]["message"].GetString())
                  .find("synthetic upstream failure after 2 items"),
              std::string::npos)
        << text(failed);
    // An upstream that does not answer within upstream_timeout_ms fails it too.
    const std::string slow = start("impatient", R"({"items": 3, "delay": 5000})");
    const auto timedOut = pollUntil("impatient", slow, [](const auto& p) {
        return std::string(p["status"].GetString()) == "failed";
    });
    ASSERT_TRUE(timedOut.HasMember("error")) << text(timedOut);
    EXPECT_STREQ(timedOut["error"]["code"].GetString(), "timeout") << text(timedOut);
}

TEST_F(PolledSessionTest, StopIsPromptBetweenRequestsAndDuringOne) {
    // Between requests: the next one is a minute away.
    const std::string waiting = start("slow_feed", R"({"items": 3})");
    pollUntil("slow_feed", waiting, [](const auto& p) { return p["item_count"].GetInt() == 3; });
    std::string status;
    EXPECT_LT(stopMs("slow_feed", waiting, status), 1000);
    EXPECT_EQ(status, "stopped");
    // During one: the upstream takes 20 s to answer.
    const std::string inFlight = start("slow_feed", R"({"items": 3, "delay": 20000})");
    std::this_thread::sleep_for(100ms);
    EXPECT_LT(stopMs("slow_feed", inFlight, status), 1000);
    EXPECT_EQ(status, "stopped");
    EXPECT_STREQ(poll("slow_feed", inFlight)["status"].GetString(), "stopped");
}

TEST_F(PolledSessionTest, PausePolicyKeepsWhatDidNotFitAndLosesNothing) {
    // One response of 25 items into a 10-item buffer: 10 go in, the other 15 wait for room.
    const std::string id = start("until_done", R"({"items": 25})");
    std::this_thread::sleep_for(300ms);
    const auto held = poll("until_done", id, "0", 1);
    EXPECT_EQ(held["item_count"].GetInt(), 10);
    EXPECT_STREQ(held["status"].GetString(), "active");
    std::string status;
    const std::vector<int> all = drain("until_done", id, status);
    ASSERT_EQ(all.size(), 25U);
    for (int i = 0; i < 25; ++i) {
        ASSERT_EQ(all[static_cast<std::size_t>(i)], i + 1);
    }
    EXPECT_EQ(status, "completed");
    EXPECT_EQ(poll("until_done", id)["dropped_count"].GetInt(), 0);
}

TEST_F(PolledSessionTest, DropOldestKeepsTheNewestOfAPage) {
    const std::string id = start("dropping_polled", R"({"items": 25})");
    pollUntil("dropping_polled", id,
              [](const auto& p) { return std::string(p["status"].GetString()) == "completed"; });
    const auto page = poll("dropping_polled", id);
    std::vector<int> expected;
    for (int s = 16; s <= 25; ++s) {
        expected.push_back(s);
    }
    EXPECT_EQ(seqs(page), expected);
    EXPECT_EQ(page["dropped_count"].GetInt(), 15);
    EXPECT_EQ(page["item_count"].GetInt(), 25);
}

TEST_F(PolledSessionTest, ALongPollUpstreamPagesIntoTheSessionUntilDone) {
    ASSERT_NE(fixture_, nullptr);
    const std::string id = start("long_poll", "{}");
    std::string status;
    // Two events a response, done once the cursor reaches 3: four requests.
    EXPECT_EQ(drain("long_poll", id, status, "n"), (std::vector<int>{1, 2, 3, 4, 5, 6, 7, 8}));
    EXPECT_EQ(status, "completed");
    const crank::testing::Reply reply = crank::testing::exchange(fixturePort_, "GET", "/stats", {});
    rapidjson::Document stats;
    stats.Parse(reply.body.c_str());
    ASSERT_TRUE(stats.IsObject() && stats.HasMember("long_poll_cursors")) << reply.body;
    std::vector<std::string> cursors;
    for (const auto& c : stats["long_poll_cursors"].GetArray()) {
        cursors.emplace_back(c.GetString());
    }
    // The first request without a cursor, then each response's next_cursor.
    EXPECT_EQ(cursors, (std::vector<std::string>{"-", "1", "2", "3"}));
}

TEST_F(PolledSessionTest, ZzOpenPolledSessionsDoNotStopCrankd) {
    start("slow_feed", R"({"items": 3})");
    start("slow_feed", R"({"items": 3, "delay": 20000})");
    start("feed", R"({"items": 25})");
    // TearDownTestSuite checks that SIGTERM still ends crankd with status 0.
}

}  // namespace
