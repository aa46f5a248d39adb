#include "mcp/legacy/mcp_session.h"

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "mcp/legacy/session_manager.h"

namespace crank::mcp {
namespace {

/// A StreamConnection that records what it is given.
struct Recorder {
    std::vector<std::string> sent;
    int closes = 0;
    bool alive = true;

    StreamConnection connection(std::uint64_t token) {
        return StreamConnection{token,
                                [this](std::string bytes) {
                                    sent.push_back(std::move(bytes));
                                    return alive;
                                },
                                [this] { ++closes; }};
    }
};

TEST(McpSessionTest, EventsCarryStreamAndSequenceIdsAfterAPrimingEvent) {
    McpSession session("s", "2025-11-25", {});
    const auto stream = session.openStream(false);
    Recorder r;
    session.attach(stream, r.connection(1));
    session.send(stream, R"({"a":1})");
    session.send(stream, R"({"a":2})");
    ASSERT_EQ(r.sent.size(), 3U);
    EXPECT_EQ(r.sent[0], "id: " + std::to_string(stream) + "-1\nretry: 1000\ndata:\n\n");
    EXPECT_EQ(r.sent[1], "id: " + std::to_string(stream) + "-2\ndata: {\"a\":1}\n\n");
    EXPECT_EQ(r.sent[2], "id: " + std::to_string(stream) + "-3\ndata: {\"a\":2}\n\n");
    session.finish(stream);
    EXPECT_EQ(r.closes, 1);
}

TEST(McpSessionTest, ResumeReplaysOnlyWhatThatStreamMissed) {
    McpSession session("s", "2025-11-25", {});
    const auto a = session.openStream(false);
    const auto b = session.openStream(false);
    Recorder first;
    session.attach(a, first.connection(1));
    session.send(a, "a1");
    session.send(b, "b1");  // another stream: never replayed on a
    session.detach(a, 1);   // the client dropped the connection
    session.send(a, "a2");
    session.send(a, "a3");
    session.finish(a);

    const std::string lastSeen = std::to_string(a) + "-2";  // it saw "a1"
    ASSERT_TRUE(session.canResume(lastSeen));
    Recorder second;
    ASSERT_TRUE(session.resume(lastSeen, second.connection(2)));
    ASSERT_EQ(second.sent.size(), 2U);
    EXPECT_NE(second.sent[0].find("data: a2"), std::string::npos);
    EXPECT_NE(second.sent[1].find("data: a3"), std::string::npos);
    EXPECT_EQ(second.closes, 1) << "a finished stream closes after the replay";

    EXPECT_FALSE(session.canResume("999-1"));
    EXPECT_FALSE(session.canResume("garbage"));
    EXPECT_FALSE(session.canResume(std::to_string(a) + "-x"));
}

TEST(McpSessionTest, ReplayBufferIsBoundedPerStreamAndPerSession) {
    McpSession session("s", "2025-11-25", ReplayLimits{3, 1 << 20});
    const auto stream = session.openStream(false);
    for (int i = 1; i <= 10; ++i) {
        session.send(stream, "m" + std::to_string(i));
    }
    Recorder r;
    ASSERT_TRUE(session.resume(std::to_string(stream) + "-0", r.connection(1)));
    ASSERT_EQ(r.sent.size(), 3U) << "only the newest 3 events are kept";
    EXPECT_NE(r.sent[0].find("data: m8"), std::string::npos);

    McpSession small("t", "2025-11-25", ReplayLimits{100, 64});
    const auto s2 = small.openStream(false);
    small.send(s2, std::string(40, 'x'));
    small.send(s2, std::string(40, 'y'));
    Recorder r2;
    ASSERT_TRUE(small.resume(std::to_string(s2) + "-0", r2.connection(1)));
    ASSERT_EQ(r2.sent.size(), 1U) << "64 bytes hold one 40-byte event with its framing";
    EXPECT_NE(r2.sent[0].find(std::string(40, 'y')), std::string::npos) << "the newest stays";
}

TEST(McpSessionTest, StandaloneMessagesGoToTheNewestAttachedGetStream) {
    McpSession session("s", "2025-11-25", {});
    EXPECT_FALSE(session.sendStandalone("dropped"));
    const auto g1 = session.openStream(true);
    const auto g2 = session.openStream(true);
    Recorder r1;
    Recorder r2;
    session.attach(g1, r1.connection(1));
    session.attach(g2, r2.connection(2));
    EXPECT_TRUE(session.sendStandalone("hello"));
    EXPECT_EQ(r1.sent.size(), 1U);  // priming only
    EXPECT_EQ(r2.sent.size(), 2U);  // priming + hello: each message on exactly one stream
    session.detach(g2, 2);
    EXPECT_TRUE(session.sendStandalone("again"));
    EXPECT_EQ(r1.sent.size(), 2U);
    session.detach(g1, 999);  // a stale token does not detach the current connection
    EXPECT_EQ(session.attachedStreams(), 1U);
}

TEST(McpSessionTest, APlaceHeldForAStreamCountsUntilAttachTakesItOrItIsGivenBack) {
    McpSession session("s", "2025-11-25", {});
    // Two GETs racing: both hold before either attaches, and a third finds no place.
    EXPECT_TRUE(session.holdStreamPlace(2));
    EXPECT_TRUE(session.holdStreamPlace(2));
    EXPECT_FALSE(session.holdStreamPlace(2));
    Recorder r;
    const auto g1 = session.openStream(true);
    session.attach(g1, r.connection(1));  // takes one held place
    EXPECT_EQ(session.attachedStreams(), 1U);
    EXPECT_FALSE(session.holdStreamPlace(2));  // one attached, one still held
    session.releaseStreamPlace();              // the second GET failed before attaching
    EXPECT_TRUE(session.holdStreamPlace(2));
    // resume() takes the place even when the id names no stream of the session.
    EXPECT_FALSE(session.resume("999-0", r.connection(2)));
    EXPECT_TRUE(session.holdStreamPlace(2));
    session.releaseStreamPlace();
    session.releaseStreamPlace();  // one too many: nothing below zero
    EXPECT_TRUE(session.holdStreamPlace(2));
    EXPECT_FALSE(session.holdStreamPlace(2));
    // A detached stream gives its place back.
    session.releaseStreamPlace();
    session.detach(g1, 1);
    EXPECT_TRUE(session.holdStreamPlace(2));
    EXPECT_TRUE(session.holdStreamPlace(2));
}

TEST(McpSessionTest, StreamsKeptOnlyForResumptionAreBoundedPerSession) {
    ReplayLimits limits;
    limits.streams_per_session = 4;
    McpSession session("s", "2025-11-25", limits);
    // A client that opens a GET stream, drops it and opens another, 50 times.
    std::vector<std::uint64_t> gets;
    Recorder r;
    for (std::uint64_t token = 1; token <= 50; ++token) {
        gets.push_back(session.openStream(true));
        session.attach(gets.back(), r.connection(token));
        session.detach(gets.back(), token);
    }
    // 50 POST streams answered and finished, and one still at work (never dropped).
    const auto working = session.openStream(false);
    for (int i = 0; i < 50; ++i) {
        const auto post = session.openStream(false);
        session.send(post, "result");
        session.finish(post);
    }
    const std::string newest = std::to_string(gets.back()) + "-1";
    EXPECT_FALSE(session.canResume(std::to_string(gets.front()) + "-1")) << "the oldest went";
    EXPECT_FALSE(session.canResume(newest)) << "50 finished POST streams came after it";
    int resumable = 0;
    for (std::uint64_t n = 1; n <= working + 50; ++n) {
        resumable += session.canResume(std::to_string(n) + "-0") ? 1 : 0;
    }
    EXPECT_EQ(resumable, 5) << "4 streams kept for resumption, and the one at work";
    EXPECT_TRUE(session.canResume(std::to_string(working) + "-0"));
    EXPECT_TRUE(session.canResume(std::to_string(working + 50) + "-1")) << "the newest stays";

    // The one at work still delivers, on a connection that resumes it.
    Recorder late;
    ASSERT_TRUE(session.resume(std::to_string(working) + "-0", late.connection(99)));
    session.send(working, "done");
    ASSERT_EQ(late.sent.size(), 1U);
    EXPECT_NE(late.sent[0].find("data: done"), std::string::npos);
}

TEST(McpSessionTest, CancellationFlagsTheRequestAndCloseAllCancelsEverything) {
    McpSession session("s", "2025-11-25", {});
    auto one = session.beginRequest("1");
    auto two = session.beginRequest("\"two\"");
    EXPECT_FALSE(session.cancelRequest("3"));
    EXPECT_TRUE(session.cancelRequest("1"));
    EXPECT_TRUE(one->load());
    EXPECT_FALSE(two->load());
    session.endRequest("1");
    EXPECT_FALSE(session.cancelRequest("1"));
    session.closeAll();
    EXPECT_TRUE(two->load());
}

TEST(SessionManagerTest, CreatesFindsRemovesAndBoundsSessions) {
    SessionManager manager(SessionLimits{2, std::chrono::minutes(1), {}});
    auto a = manager.create("2025-11-25");
    auto b = manager.create("2025-06-18");
    ASSERT_TRUE(a && b);
    EXPECT_NE((*a)->id(), (*b)->id());
    EXPECT_EQ((*a)->id().size(), 48U);
    auto c = manager.create("2025-11-25");
    ASSERT_FALSE(c);
    EXPECT_EQ(c.error().code, ErrorCode::unavailable);
    EXPECT_EQ(manager.find((*b)->id())->protocolVersion(), "2025-06-18");
    EXPECT_TRUE(manager.remove((*a)->id()));
    EXPECT_FALSE(manager.remove((*a)->id()));
    EXPECT_EQ(manager.find((*a)->id()), nullptr);
    EXPECT_TRUE(manager.create("2025-11-25"));
}

TEST(SessionManagerTest, IdleSessionsExpireButNotThoseWithAnOpenStream) {
    SessionManager manager(SessionLimits{10, std::chrono::milliseconds(30), {}});
    auto idle = manager.create("2025-11-25");
    auto streaming = manager.create("2025-11-25");
    ASSERT_TRUE(idle && streaming);
    Recorder r;
    const auto stream = (*streaming)->openStream(true);
    (*streaming)->attach(stream, r.connection(1));
    std::this_thread::sleep_for(std::chrono::milliseconds(80));
    // A request on the listening session before the sweeper runs: still there.
    EXPECT_NE(manager.find((*streaming)->id()), nullptr);
    EXPECT_EQ(manager.expireIdle(), 1U);
    EXPECT_EQ(manager.size(), 1U);
    EXPECT_EQ(manager.find((*idle)->id()), nullptr);
}

TEST(SessionManagerTest, FindExpiresAnIdleSessionWithoutAStream) {
    SessionManager manager(SessionLimits{10, std::chrono::milliseconds(30), {}});
    auto idle = manager.create("2025-11-25");
    ASSERT_TRUE(idle);
    std::this_thread::sleep_for(std::chrono::milliseconds(80));
    EXPECT_EQ(manager.find((*idle)->id()), nullptr);
    EXPECT_EQ(manager.size(), 0U) << "find removes it at once";
}

}  // namespace
}  // namespace crank::mcp
