// The audit log through the real crankd and its SQLite file (issue 24): retention by age and by
// size (the cleaner deletes the oldest events only, newer ones stay), sampling of session polls
// and job status reads, and an entry for every unary and window tools/call. The store file is
// seeded before crankd starts and read beside it (WAL: readers do not block crankd).

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include "crankd_suite.h"
#include "mcp_http_client.h"
#include "store/open_store.h"
#include "test_json.h"

namespace {

using crank::store::AuditEvent;
using crank::store::AuditQuery;
using crank::store::SortOrder;
using crank::testing::CrankdSuite;
using crank::testing::McpClient;
using namespace std::chrono_literals;

constexpr std::int64_t kDayMs = 86'400'000;

constexpr const char* kInputSchema = R"({"type": "object", "additionalProperties": false,
    "properties": {"items": {"type": "integer", "minimum": 0, "maximum": 1000},
                   "fail_on_open": {"type": "boolean"}}})";
constexpr const char* kSyntheticConfig =
    R"({"items": "{{items}}", "fail_on_open": "{{fail_on_open}}", "item_bytes": 40})";

std::string operation(const std::string& name, const std::string& execution) {
    return R"({"name": ")" + name + R"(", "description": "synthetic", "protocol": "synthetic",
        "input_schema": )" +
           std::string(kInputSchema) + R"(, "config": )" + kSyntheticConfig + R"(, "execution": )" +
           execution + "}";
}

std::string unaryOperation(const std::string& name) {
    return operation(name, R"({"mode": "unary"})");
}

std::int64_t nowMs() {
    return std::chrono::duration_cast<std::chrono::milliseconds>(
               std::chrono::system_clock::now().time_since_epoch())
        .count();
}

std::unique_ptr<crank::store::Store> openAt(const std::string& path) {
    crank::store::StoreOptions options;
    options.path = path;
    auto store = crank::store::openStore(options);
    EXPECT_TRUE(static_cast<bool>(store)) << store.error().message;
    return store ? std::move(store).value() : nullptr;
}

/// Every event of the file, oldest (ts, id) first.
std::vector<AuditEvent> allEvents(const std::string& path) {
    auto store = openAt(path);
    if (!store) {
        return {};
    }
    std::vector<AuditEvent> out;
    AuditQuery q;
    q.order = SortOrder::oldest_first;
    q.limit = crank::store::kMaxListLimit;
    for (int page = 0; page < 100; ++page) {
        auto events = store->queryAudit(q);
        EXPECT_TRUE(static_cast<bool>(events)) << events.error().message;
        if (!events || events->empty()) {
            break;
        }
        out.insert(out.end(), events->begin(), events->end());
        // Pages by ts; events sharing the last ts are read again and skipped below.
        q.from_ts = events->back().ts;
        if (events->size() < static_cast<std::size_t>(q.limit)) {
            break;
        }
    }
    std::set<std::int64_t> seen;
    std::vector<AuditEvent> unique;
    for (auto& e : out) {
        if (seen.insert(e.id).second) {
            unique.push_back(std::move(e));
        }
    }
    return unique;
}

std::vector<std::int64_t> idsOf(const std::vector<AuditEvent>& events) {
    std::vector<std::int64_t> ids;
    for (const auto& e : events) {
        ids.push_back(e.id);
    }
    std::sort(ids.begin(), ids.end());
    return ids;
}

/// Waits (bounded: 20 s) until `done(events)` holds for the file's events; the last events read.
template <typename Done>
std::vector<AuditEvent> waitForEvents(const std::string& path, Done done) {
    std::vector<AuditEvent> events;
    for (int i = 0; i < 400; ++i) {
        events = allEvents(path);
        if (done(events)) {
            return events;
        }
        std::this_thread::sleep_for(50ms);
    }
    ADD_FAILURE() << "the audit log never reached the expected state (" << events.size()
                  << " events)";
    return events;
}

AuditEvent seedEvent(std::int64_t ts, const std::string& action) {
    AuditEvent e;
    e.ts = ts;
    e.workspace_id = "default";
    e.agent_id = "seed";
    e.operation_id = "seeded";
    e.action = action;
    e.outcome = "ok";
    return e;
}

/// Appends events at `timestamps` in a shuffled order (ids then differ from the age order) and
/// returns the ids by timestamp, oldest first.
std::vector<std::int64_t> seed(const std::string& path, std::vector<std::int64_t> timestamps) {
    auto store = openAt(path);
    if (!store) {
        return {};
    }
    std::vector<std::size_t> order(timestamps.size());
    for (std::size_t i = 0; i < order.size(); ++i) {
        order[i] = i;
    }
    std::mt19937 shuffle(7);
    std::shuffle(order.begin(), order.end(), shuffle);
    std::vector<std::int64_t> ids(timestamps.size());
    for (const std::size_t i : order) {
        auto appended = store->appendAudit(seedEvent(timestamps[i], "session.poll"));
        EXPECT_TRUE(static_cast<bool>(appended)) << appended.error().message;
        ids[i] = appended ? appended->id : 0;
    }
    return ids;
}

// ----- retention by age ---------------------------------------------------------------------

class AuditAgeRetentionTest : public CrankdSuite<AuditAgeRetentionTest> {
protected:
    static void SetUpTestSuite() {
        // The default age (30 days); the cleaner every 100 ms.
        startCrankd(R"("audit": {"clean_interval_ms": 100})", {}, [](const std::string& path) {
            const std::int64_t now = nowMs();
            std::vector<std::int64_t> ts;
            for (int day = 31; day <= 40; ++day) {
                ts.push_back(now - day * kDayMs);  // older than 30 days
            }
            for (int day = 1; day <= 9; ++day) {
                ts.push_back(now - day * kDayMs);
            }
            ts.push_back(now - 30 * kDayMs + 3'600'000);  // 29 days and 23 hours: stays
            const std::vector<std::int64_t> ids = seed(path, ts);
            old_ids_ = new std::vector<std::int64_t>(ids.begin(), ids.begin() + 10);
            new_ids_ = new std::vector<std::int64_t>(ids.begin() + 10, ids.end());
            std::sort(new_ids_->begin(), new_ids_->end());
        });
    }
    static void TearDownTestSuite() {
        CrankdSuite::TearDownTestSuite();
        delete old_ids_;
        delete new_ids_;
    }

    static inline std::vector<std::int64_t>* old_ids_ = nullptr;
    static inline std::vector<std::int64_t>* new_ids_ = nullptr;
};

TEST_F(AuditAgeRetentionTest, EventsOlderThanTheRetentionAgeAreDeletedAndNewerOnesStay) {
    ASSERT_NE(port_, 0);
    ASSERT_EQ(old_ids_->size(), 10U);
    const std::int64_t cutoff = nowMs() - 30 * kDayMs;
    const auto events = waitForEvents(storePath(), [&](const std::vector<AuditEvent>& all) {
        return std::none_of(all.begin(), all.end(),
                            [&](const AuditEvent& e) { return e.ts < cutoff; });
    });
    // Nothing but the old events went: every newer seeded event is still there.
    std::vector<std::int64_t> seeded;
    for (const auto& e : events) {
        if (e.agent_id == "seed") {
            seeded.push_back(e.id);
        }
    }
    std::sort(seeded.begin(), seeded.end());
    EXPECT_EQ(seeded, *new_ids_);
}

// ----- retention by size --------------------------------------------------------------------

class AuditSizeRetentionTest : public CrankdSuite<AuditSizeRetentionTest> {
protected:
    static constexpr std::size_t kMaxEvents = 25;

    static void SetUpTestSuite() {
        // Only the size bound (no age bound): 40 recent events seeded, 25 kept.
        startCrankd(R"("audit": {"max_age_days": 0, "max_events": 25, "clean_interval_ms": 100},
                       "operations": [)" +
                        unaryOperation("echo") + "]",
                    {}, [](const std::string& path) {
                        const std::int64_t now = nowMs();
                        std::vector<std::int64_t> ts;
                        for (int i = 40; i >= 1; --i) {
                            ts.push_back(now - i * 60'000);  // minutes old, oldest first
                        }
                        ids_ = new std::vector<std::int64_t>(seed(path, ts));
                    });
    }
    static void TearDownTestSuite() {
        CrankdSuite::TearDownTestSuite();
        delete ids_;
    }

    static inline std::vector<std::int64_t>* ids_ = nullptr;  ///< by age, oldest first
};

TEST_F(AuditSizeRetentionTest, TheOldestEventsBeyondTheBoundAreDeletedAndTheNewestStay) {
    ASSERT_NE(port_, 0);
    ASSERT_EQ(ids_->size(), 40U);
    auto events = waitForEvents(
        storePath(), [](const std::vector<AuditEvent>& all) { return all.size() <= kMaxEvents; });
    std::vector<std::int64_t> newest(ids_->end() - kMaxEvents, ids_->end());
    std::sort(newest.begin(), newest.end());
    EXPECT_EQ(idsOf(events), newest);

    // New events push the oldest out as the cleaner keeps running; the new ones stay.
    McpClient client(port_);
    ASSERT_TRUE(client.open());
    for (int i = 0; i < 5; ++i) {
        const auto result = client.callTool("echo", R"({"items": 1})");
        EXPECT_FALSE(result["isError"].GetBool()) << crank::testing::jsonText(result);
    }
    events = waitForEvents(storePath(), [](const std::vector<AuditEvent>& all) {
        const auto calls = std::count_if(
            all.begin(), all.end(), [](const AuditEvent& e) { return e.action == "unary.call"; });
        return all.size() <= kMaxEvents && calls == 5;
    });
    std::vector<std::int64_t> kept(ids_->end() - (kMaxEvents - 5), ids_->end());
    std::sort(kept.begin(), kept.end());
    std::vector<std::int64_t> seeded;
    for (const auto& e : events) {
        if (e.agent_id == "seed") {
            seeded.push_back(e.id);
        }
    }
    std::sort(seeded.begin(), seeded.end());
    EXPECT_EQ(seeded, kept);
}

// ----- sampling and tool calls --------------------------------------------------------------

class AuditTrailTest : public CrankdSuite<AuditTrailTest> {
protected:
    static void SetUpTestSuite() {
        startCrankd(R"("audit": {"sample_reads": 3},
            "auth": {"mode": "api_key",
              "workspaces": [{"id": "team"}],
              "agents": [
                {"id": "alice", "workspace": "team", "api_key": {"env": "KEY_ALICE"}},
                {"id": "dave", "workspace": "team", "api_key": {"env": "KEY_DAVE"}}]},
            "operations": [)" +
                        operation("lookup", R"({"mode": "unary"}, "workspace": "team")") + "," +
                        operation("collect", R"({"mode": "window",
                            "transport_behavior": "server_stream", "max_items": 100},
                            "workspace": "team")") +
                        "," + operation("report", R"({"mode": "async_job"}, "workspace": "team")") +
                        "," + operation("watch", R"({"mode": "session",
                            "transport_behavior": "server_stream", "max_items": 100},
                            "workspace": "team")") +
                        "]",
                    {{"KEY_ALICE", "alice-key-0123456789"}, {"KEY_DAVE", "dave-key-0123456789"}});
    }

    void SetUp() override { ASSERT_NE(port_, 0); }

    /// structuredContent of a call that must succeed.
    static rapidjson::Document ok(const McpClient& client, const std::string& tool,
                                  const std::string& arguments) {
        const rapidjson::Document result = client.callTool(tool, arguments);
        EXPECT_TRUE(result.HasMember("isError") && !result["isError"].GetBool())
            << tool << ": " << crank::testing::jsonText(result);
        rapidjson::Document out;
        if (result.HasMember("structuredContent")) {
            out.CopyFrom(result["structuredContent"], out.GetAllocator());
        } else {
            out.SetObject();
        }
        return out;
    }

    /// Waits (bounded) until `n` events of `action` mention `needle`. The trail is written
    /// behind the calls, in the order they were made: once the last call's event is there,
    /// every earlier one is too.
    static void awaitEvents(const std::string& action, const std::string& needle, std::size_t n) {
        EXPECT_TRUE(
            crank::testing::eventually([&] { return eventsOf(action, needle).size() >= n; }, 10s))
            << "no " << n << " " << action << " events mentioning " << needle;
    }

    /// The events of `action` whose detail mentions `needle`.
    static std::vector<AuditEvent> eventsOf(const std::string& action, const std::string& needle) {
        std::vector<AuditEvent> out;
        for (auto& e : allEvents(storePath())) {
            if (e.action == action && e.detail_json.find(needle) != std::string::npos) {
                out.push_back(std::move(e));
            }
        }
        return out;
    }
};

TEST_F(AuditTrailTest, UnaryAndWindowCallsNameAgentWorkspaceToolAndOutcome) {
    McpClient alice(port_, "alice-key-0123456789");
    ASSERT_TRUE(alice.open());
    ok(alice, "lookup", R"({"items": 2})");
    ok(alice, "collect", R"({"items": 3})");
    const auto failed = alice.callTool("lookup", R"({"fail_on_open": true})");
    EXPECT_TRUE(failed["isError"].GetBool()) << crank::testing::jsonText(failed);
    const auto refused = alice.callTool("collect", R"({"items": "many"})");
    EXPECT_TRUE(refused["isError"].GetBool()) << crank::testing::jsonText(refused);

    awaitEvents("window.call", R"("tool":"collect")", 2);  // the last call's
    const auto unary = eventsOf("unary.call", R"("tool":"lookup")");
    ASSERT_EQ(unary.size(), 2U);
    for (const auto& e : unary) {
        EXPECT_EQ(e.workspace_id, "team");
        EXPECT_EQ(e.agent_id, "alice");
        EXPECT_EQ(e.operation_id, "lookup");
    }
    EXPECT_EQ(unary[0].outcome, "ok");
    EXPECT_EQ(unary[0].detail_json.find("error"), std::string::npos) << unary[0].detail_json;
    EXPECT_EQ(unary[1].outcome, "error");
    EXPECT_NE(unary[1].detail_json.find("fail_on_open"), std::string::npos) << unary[1].detail_json;

    const auto window = eventsOf("window.call", R"("tool":"collect")");
    ASSERT_EQ(window.size(), 2U);
    for (const auto& e : window) {
        EXPECT_EQ(e.workspace_id, "team");
        EXPECT_EQ(e.agent_id, "alice");
        EXPECT_EQ(e.operation_id, "collect");
    }
    EXPECT_EQ(window[0].outcome, "ok");
    EXPECT_EQ(window[1].outcome, "error");
    EXPECT_NE(window[1].detail_json.find("invalid input"), std::string::npos)
        << window[1].detail_json;
}

TEST_F(AuditTrailTest, JobStatusReadsAreSampledButFailuresAndStartsAreNot) {
    McpClient dave(port_, "dave-key-0123456789");
    ASSERT_TRUE(dave.open());
    const auto started = ok(dave, "report_start", R"({"items": 1})");
    ASSERT_TRUE(started.HasMember("job_id"));
    const std::string id = started["job_id"].GetString();
    for (int i = 0; i < 7; ++i) {
        ok(dave, "report_status", R"({"job_id":")" + id + R"("})");
    }
    const auto missing = dave.callTool("report_status", R"({"job_id":"job_missing"})");
    EXPECT_TRUE(missing["isError"].GetBool());

    awaitEvents("job.status", "job_missing", 1);  // the last call's
    EXPECT_EQ(eventsOf("job.start", id).size(), 1U);
    // Reads 1, 4 and 7 of the seven, each saying what it stands for.
    const auto reads = eventsOf("job.status", id);
    ASSERT_EQ(reads.size(), 3U);
    for (const auto& e : reads) {
        EXPECT_EQ(e.agent_id, "dave");
        EXPECT_EQ(e.outcome, "ok");
        EXPECT_NE(e.detail_json.find(R"("sample_every":3)"), std::string::npos) << e.detail_json;
    }
    const auto failures = eventsOf("job.status", "job_missing");
    ASSERT_EQ(failures.size(), 1U);
    EXPECT_EQ(failures[0].outcome, "not_found");
}

TEST_F(AuditTrailTest, SessionPollsAreSampledPerAgent) {
    McpClient alice(port_, "alice-key-0123456789");
    ASSERT_TRUE(alice.open());
    McpClient dave(port_, "dave-key-0123456789");
    ASSERT_TRUE(dave.open());
    const auto a = ok(alice, "watch_start", R"({"items": 2})");
    const auto d = ok(dave, "watch_start", R"({"items": 2})");
    ASSERT_TRUE(a.HasMember("session_id") && d.HasMember("session_id"));
    const std::string aliceSession = a["session_id"].GetString();
    const std::string daveSession = d["session_id"].GetString();
    // Alice's busy polling does not take the place of Dave's single poll.
    for (int i = 0; i < 5; ++i) {
        ok(alice, "watch_poll", R"({"session_id":")" + aliceSession + R"("})");
    }
    ok(dave, "watch_poll", R"({"session_id":")" + daveSession + R"("})");

    awaitEvents("session.poll", daveSession, 1);                   // the last call's
    EXPECT_EQ(eventsOf("session.poll", aliceSession).size(), 2U);  // polls 1 and 4
    EXPECT_EQ(eventsOf("session.poll", daveSession).size(), 1U);
    EXPECT_EQ(eventsOf("session.start", aliceSession).size(), 1U);
}

}  // namespace
