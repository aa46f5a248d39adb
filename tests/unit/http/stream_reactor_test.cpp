// StreamReactor over real sockets (AF_UNIX pairs and loopback TCP). Every wait is bounded by
// kWait; tests assert that things happen, not how fast. A ClosedLog is always declared before the
// reactor whose callbacks record into it: the reactor's destructor runs the last callbacks.

#include "http/stream_reactor.h"

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "http/sse_event.h"
#include "http_test_support.h"
#include <sys/socket.h>

namespace crank::http::test {
namespace {

constexpr std::size_t kKiB = 1024;

/// A started reactor; the test fails at once if it cannot start.
std::unique_ptr<StreamReactor> startedReactor(StreamReactor::Options options = {}) {
    auto reactor = std::make_unique<StreamReactor>(options);
    const Result<void> started = reactor->start();
    EXPECT_TRUE(started.ok()) << started.error().message;
    return reactor;
}

StreamId adopt(StreamReactor& reactor, SocketPair& pair, ClosedLog& closed) {
    Result<StreamId> id = reactor.adopt(pair.server.release(), closed.callback());
    EXPECT_TRUE(id.ok()) << id.error().message;
    return id.ok() ? *id : 0;
}

/// `count` events of about `size` bytes each, concatenated.
std::vector<std::string> events(int count, std::size_t size) {
    std::vector<std::string> out;
    out.reserve(static_cast<std::size_t>(count));
    for (int i = 0; i < count; ++i) {
        out.push_back(formatSseEvent(std::to_string(i), "message",
                                     std::string(size, static_cast<char>('a' + i % 26))));
    }
    return out;
}

std::string concat(const std::vector<std::string>& parts) {
    std::string all;
    for (const auto& p : parts) {
        all += p;
    }
    return all;
}

TEST(StreamReactor, EventsArriveInOrder) {
    ClosedLog closed;
    auto reactor = startedReactor();
    SocketPair pair = unixPair();
    const StreamId id = adopt(*reactor, pair, closed);
    EXPECT_EQ(reactor->openStreams(), 1U);

    const auto sent = events(200, 100);
    for (const auto& e : sent) {
        ASSERT_TRUE(reactor->send(id, e));
    }
    const ReadResult got = readBytes(pair.client.get(), concat(sent).size());
    EXPECT_EQ(got.bytes, concat(sent));
    EXPECT_FALSE(got.eof);
    EXPECT_EQ(reactor->openStreams(), 1U);
    EXPECT_TRUE(closed.all().empty());
}

TEST(StreamReactor, EventsArriveInOrderOverTcp) {
    ClosedLog closed;
    auto reactor = startedReactor();
    SocketPair pair = tcpPair();
    const StreamId id = adopt(*reactor, pair, closed);
    const auto sent = events(500, 1000);
    for (const auto& e : sent) {
        ASSERT_TRUE(reactor->send(id, e));
    }
    EXPECT_EQ(readBytes(pair.client.get(), concat(sent).size()).bytes, concat(sent));
}

TEST(StreamReactor, CloseFlushesWhatIsQueuedThenCloses) {
    ClosedLog closed;
    auto reactor = startedReactor();
    SocketPair pair = unixPair(4096);  // the kernel takes little: most bytes wait in the reactor
    const StreamId id = adopt(*reactor, pair, closed);
    const auto sent = events(64, 8000);  // ~512 KiB, under the 1 MiB limit
    for (const auto& e : sent) {
        ASSERT_TRUE(reactor->send(id, e));
    }
    reactor->close(id);
    EXPECT_FALSE(reactor->send(id, "late")) << "a closing stream takes no more bytes";
    reactor->close(id);  // closing twice is harmless

    const ReadResult got = readToEof(pair.client.get());
    EXPECT_TRUE(got.eof);
    EXPECT_EQ(got.bytes.size(), concat(sent).size());
    EXPECT_EQ(got.bytes, concat(sent));
    EXPECT_EQ(closed.waitFor(id), CloseReason::closed_by_server);
    EXPECT_EQ(reactor->openStreams(), 0U);
}

TEST(StreamReactor, PeerCloseIsReportedOnceAsPeerClosed) {
    ClosedLog closed;
    auto reactor = startedReactor();
    SocketPair pair = tcpPair();
    const StreamId id = adopt(*reactor, pair, closed);
    ASSERT_TRUE(reactor->send(id, formatSseEvent("1", "", "hello")));
    std::string buffer;
    ASSERT_TRUE(readUntil(pair.client.get(), buffer, "hello"));

    pair.client.reset();
    EXPECT_EQ(closed.waitFor(id), CloseReason::peer_closed);
    EXPECT_FALSE(reactor->send(id, "after"));
    reactor->close(id);  // unknown by now: ignored
    EXPECT_EQ(reactor->openStreams(), 0U);

    reactor->shutdown(1s);  // every callback has run once shutdown() returns
    EXPECT_EQ(closed.countFor(id), 1U);
    EXPECT_EQ(closed.all().size(), 1U);
}

TEST(StreamReactor, PeerCloseWhileBytesAreWaitingIsPeerClosed) {
    ClosedLog closed;
    auto reactor = startedReactor();
    SocketPair pair = tcpPair(8192);
    const StreamId id = adopt(*reactor, pair, closed);
    for (const auto& e : events(50, 8000)) {
        ASSERT_TRUE(reactor->send(id, e));
    }
    pair.client.reset();
    EXPECT_EQ(closed.waitFor(id), CloseReason::peer_closed);
    reactor->shutdown(1s);
    EXPECT_EQ(closed.all().size(), 1U);
}

TEST(StreamReactor, HalfCloseByThePeerIsPeerClosed) {
    ClosedLog closed;
    auto reactor = startedReactor();
    SocketPair pair = unixPair();
    const StreamId id = adopt(*reactor, pair, closed);
    ASSERT_EQ(::shutdown(pair.client.get(), SHUT_WR), 0);
    EXPECT_EQ(closed.waitFor(id), CloseReason::peer_closed);
    EXPECT_TRUE(readToEof(pair.client.get()).eof);
}

void expectOverflowDisconnects(SocketPair pair) {
    StreamReactor::Options options;
    options.max_buffered_bytes = 64 * kKiB;
    ClosedLog closed;
    auto reactor = startedReactor(options);
    const StreamId id = adopt(*reactor, pair, closed);

    // 8 MiB in 16 KiB events to a client that never reads.
    const std::string chunk = formatSseEvent("x", "", std::string(16 * kKiB, 'z'));
    std::size_t accepted = 0;
    bool refused = false;
    for (std::size_t total = 0; total < 8 * kKiB * kKiB; total += chunk.size()) {
        if (!reactor->send(id, chunk)) {
            refused = true;
            break;
        }
        accepted += chunk.size();
    }
    EXPECT_TRUE(refused) << "8 MiB were all accepted into a 64 KiB limit";
    EXPECT_LT(accepted, 8 * kKiB * kKiB);
    EXPECT_EQ(closed.waitFor(id), CloseReason::overflow);
    EXPECT_FALSE(reactor->send(id, chunk));
    EXPECT_EQ(reactor->openStreams(), 0U);

    // Disconnected: the client reads what the kernel still held, then EOF (or a reset over TCP).
    const ReadResult rest = readToEof(pair.client.get());
    EXPECT_TRUE(rest.eof);
    EXPECT_LE(rest.bytes.size(), accepted);
}

TEST(StreamReactor, OverflowDisconnectsAReaderThatNeverReads) {
    expectOverflowDisconnects(unixPair(16 * 1024));
}

TEST(StreamReactor, OverflowDisconnectsAReaderThatNeverReadsOverTcp) {
    expectOverflowDisconnects(tcpPair(16 * 1024));
}

TEST(StreamReactor, OneMessageLargerThanTheLimitOverflows) {
    StreamReactor::Options options;
    options.max_buffered_bytes = 1000;
    ClosedLog closed;
    auto reactor = startedReactor(options);
    SocketPair pair = unixPair();
    const StreamId id = adopt(*reactor, pair, closed);
    EXPECT_FALSE(reactor->send(id, std::string(1001, 'x')));
    EXPECT_EQ(closed.waitFor(id), CloseReason::overflow);
}

TEST(StreamReactor, StalledReaderIsDisconnectedEvenUnderTheLimit) {
    StreamReactor::Options options;
    options.stall_timeout_ms = 100;
    options.heartbeat_interval_ms = 0;
    ClosedLog closed;
    auto reactor = startedReactor(options);
    SocketPair pair = unixPair(4096);
    const StreamId id = adopt(*reactor, pair, closed);
    for (const auto& e : events(20, 8000)) {  // ~160 KiB: far under 1 MiB, far over the kernel's
        ASSERT_TRUE(reactor->send(id, e));
    }
    reactor->close(id);  // a graceful close cannot finish either: the stall ends it
    EXPECT_EQ(closed.waitFor(id), CloseReason::overflow);
    EXPECT_TRUE(readToEof(pair.client.get()).eof);
}

TEST(StreamReactor, HeartbeatArrivesOnAnIdleStream) {
    StreamReactor::Options options;
    options.heartbeat_interval_ms = 50;
    ClosedLog closed;
    auto reactor = startedReactor(options);
    SocketPair pair = unixPair();
    const StreamId id = adopt(*reactor, pair, closed);

    const std::string ping = formatSseComment("ping");
    std::string buffer;
    EXPECT_TRUE(readUntil(pair.client.get(), buffer, ping));
    // A heartbeat only goes between events, never into one; and heartbeats go on afterwards.
    const std::string event = formatSseEvent("7", "message", "payload");
    ASSERT_TRUE(reactor->send(id, event));
    EXPECT_TRUE(readUntil(pair.client.get(), buffer, event));
    EXPECT_TRUE(readUntil(pair.client.get(), buffer, event + ping));
    EXPECT_TRUE(closed.all().empty());
}

TEST(StreamReactor, NoHeartbeatWhenTurnedOff) {
    StreamReactor::Options options;
    options.heartbeat_interval_ms = 0;
    options.stall_timeout_ms = 0;
    ClosedLog closed;
    auto reactor = startedReactor(options);
    SocketPair pair = unixPair();
    adopt(*reactor, pair, closed);
    const ReadResult got = readFor(pair.client.get(), 200ms);
    EXPECT_TRUE(got.bytes.empty());
    EXPECT_FALSE(got.eof);
}

TEST(StreamReactor, AdoptBeyondMaxStreamsIsRefusedAndClosesTheDescriptor) {
    StreamReactor::Options options;
    options.max_streams = 2;
    ClosedLog closed;
    auto reactor = startedReactor(options);
    SocketPair first = unixPair();
    SocketPair second = unixPair();
    SocketPair third = unixPair();
    const StreamId a = adopt(*reactor, first, closed);
    adopt(*reactor, second, closed);

    bool called = false;
    Result<StreamId> refused =
        reactor->adopt(third.server.release(), [&](StreamId, CloseReason) { called = true; });
    ASSERT_FALSE(refused.ok());
    EXPECT_EQ(refused.error().code, ErrorCode::unavailable);
    EXPECT_NE(refused.error().message.find("max_streams (2)"), std::string::npos)
        << refused.error().message;
    EXPECT_TRUE(readToEof(third.client.get()).eof) << "the refused descriptor was not closed";
    EXPECT_EQ(reactor->openStreams(), 2U);

    // A slot frees up once a stream has ended.
    reactor->close(a);
    ASSERT_EQ(closed.waitFor(a), CloseReason::closed_by_server);
    SocketPair fourth = unixPair();
    EXPECT_NE(adopt(*reactor, fourth, closed), 0U);
    reactor->shutdown(1s);
    EXPECT_FALSE(called);
}

TEST(StreamReactor, ManyThreadsSendToManyStreams) {
    constexpr int kStreams = 40;
    constexpr int kThreads = 8;
    constexpr int kMessages = 250;
    ClosedLog closed;
    auto reactor = startedReactor();
    std::vector<SocketPair> pairs;
    std::vector<StreamId> ids;
    for (int i = 0; i < kStreams; ++i) {
        pairs.push_back(unixPair());
        ids.push_back(adopt(*reactor, pairs.back(), closed));
    }
    auto message = [](int thread, int n) {
        return "t" + std::to_string(thread) + " n" + std::to_string(n) + "\n";
    };
    std::size_t perStream = 0;
    for (int t = 0; t < kThreads; ++t) {
        for (int n = 0; n < kMessages; ++n) {
            perStream += message(t, n).size();
        }
    }

    std::atomic<bool> go{false};
    std::atomic<int> refused{0};
    std::vector<std::thread> senders;
    senders.reserve(kThreads);
    for (int t = 0; t < kThreads; ++t) {
        senders.emplace_back([&, t] {
            while (!go.load()) {
                std::this_thread::yield();
            }
            for (int n = 0; n < kMessages; ++n) {
                for (const StreamId id : ids) {
                    if (!reactor->send(id, message(t, n))) {
                        ++refused;
                    }
                }
            }
        });
    }
    std::vector<ReadResult> received(kStreams);
    std::thread reader([&] {
        for (int i = 0; i < kStreams; ++i) {
            received[static_cast<std::size_t>(i)] =
                readBytes(pairs[static_cast<std::size_t>(i)].client.get(), perStream);
        }
    });
    go = true;
    for (auto& s : senders) {
        s.join();
    }
    reader.join();

    EXPECT_EQ(refused.load(), 0);
    for (int i = 0; i < kStreams; ++i) {
        const std::string& bytes = received[static_cast<std::size_t>(i)].bytes;
        ASSERT_EQ(bytes.size(), perStream) << "stream " << i;
        std::map<int, int> next;  // thread -> next message number expected
        std::size_t start = 0;
        while (start < bytes.size()) {
            const std::size_t end = bytes.find('\n', start);
            ASSERT_NE(end, std::string::npos);
            // "t<thread> n<number>"
            const std::string line = bytes.substr(start, end - start);
            const std::size_t space = line.find(" n");
            ASSERT_TRUE(line.rfind('t', 0) == 0 && space != std::string::npos) << line;
            const int thread = std::stoi(line.substr(1, space - 1));
            const int n = std::stoi(line.substr(space + 2));
            EXPECT_EQ(n, next[thread]) << "stream " << i << " thread " << thread;
            next[thread] = n + 1;
            start = end + 1;
        }
        for (int t = 0; t < kThreads; ++t) {
            EXPECT_EQ(next[t], kMessages) << "stream " << i << " thread " << t;
        }
    }
    EXPECT_TRUE(closed.all().empty());
}

TEST(StreamReactor, CallbackMayCallBackIntoTheReactor) {
    ClosedLog closed;
    auto reactor = startedReactor();
    SocketPair a = unixPair();
    SocketPair b = unixPair();
    SocketPair d = unixPair();
    const StreamId idB = adopt(*reactor, b, closed);

    std::mutex mutex;
    bool sendToSelf = true;
    bool sendToOther = false;
    std::size_t openSeen = 0;
    Result<StreamId> adoptedFromCallback = Error{ErrorCode::internal, "callback did not run"};
    const int dFd = d.server.release();
    Result<StreamId> idA = reactor->adopt(a.server.release(), [&](StreamId self, CloseReason r) {
        closed.record(self, r);
        std::lock_guard lock(mutex);
        sendToSelf = reactor->send(self, "x");
        sendToOther = reactor->send(idB, formatSseEvent("b1", "", "from-callback"));
        reactor->close(idB);
        openSeen = reactor->openStreams();
        adoptedFromCallback = reactor->adopt(dFd, closed.callback());
    });
    ASSERT_TRUE(idA.ok());

    a.client.reset();  // ends A: its callback runs on the reactor thread
    ASSERT_EQ(closed.waitFor(*idA), CloseReason::peer_closed);
    const ReadResult bGot = readToEof(b.client.get());
    EXPECT_TRUE(bGot.eof);
    EXPECT_EQ(bGot.bytes, formatSseEvent("b1", "", "from-callback"));
    EXPECT_EQ(closed.waitFor(idB), CloseReason::closed_by_server);
    {
        std::lock_guard lock(mutex);
        EXPECT_FALSE(sendToSelf);
        EXPECT_TRUE(sendToOther);
        EXPECT_EQ(openSeen, 1U);  // B, still closing
        ASSERT_TRUE(adoptedFromCallback.ok()) << adoptedFromCallback.error().message;
    }
    EXPECT_TRUE(reactor->send(*adoptedFromCallback, "d"));
    EXPECT_EQ(readBytes(d.client.get(), 1).bytes, "d");
}

TEST(StreamReactor, ShutdownWithGraceFlushesThenClosesEverything) {
    constexpr int kStreams = 5;
    ClosedLog closed;
    auto reactor = startedReactor();
    std::vector<SocketPair> pairs;
    std::vector<StreamId> ids;
    const auto sent = events(32, 8000);  // ~256 KiB per stream, most of it waiting in the reactor
    for (int i = 0; i < kStreams; ++i) {
        pairs.push_back(unixPair(4096));
        ids.push_back(adopt(*reactor, pairs.back(), closed));
        for (const auto& e : sent) {
            ASSERT_TRUE(reactor->send(ids.back(), e));
        }
    }

    // Readers start only once shutdown() is under way: it must keep writing until they are done.
    std::atomic<bool> shuttingDown{false};
    std::vector<ReadResult> received(kStreams);
    std::vector<std::thread> readers;
    readers.reserve(kStreams);
    for (int i = 0; i < kStreams; ++i) {
        readers.emplace_back([&, i] {
            while (!shuttingDown.load()) {
                std::this_thread::yield();
            }
            received[static_cast<std::size_t>(i)] =
                readToEof(pairs[static_cast<std::size_t>(i)].client.get());
        });
    }
    shuttingDown = true;
    reactor->shutdown(kWait);
    for (auto& r : readers) {
        r.join();
    }

    for (int i = 0; i < kStreams; ++i) {
        EXPECT_TRUE(received[static_cast<std::size_t>(i)].eof);
        EXPECT_EQ(received[static_cast<std::size_t>(i)].bytes, concat(sent)) << "stream " << i;
    }
    ASSERT_EQ(closed.all().size(), static_cast<std::size_t>(kStreams));
    for (const auto& [id, reason] : closed.all()) {
        EXPECT_EQ(reason, CloseReason::shutdown) << "stream " << id;
    }
    EXPECT_EQ(reactor->openStreams(), 0U);
    EXPECT_FALSE(reactor->send(ids[0], "x"));

    SocketPair late = unixPair();
    Result<StreamId> refused = reactor->adopt(late.server.release(), {});
    ASSERT_FALSE(refused.ok());
    EXPECT_EQ(refused.error().code, ErrorCode::unavailable);
    EXPECT_TRUE(readToEof(late.client.get()).eof);
    reactor->shutdown(1s);  // again: nothing to do
}

TEST(StreamReactor, ShutdownCutsOffWhatIsStillWaitingAtTheDeadline) {
    ClosedLog closed;
    auto reactor = startedReactor();
    SocketPair stalled = unixPair(4096);
    SocketPair idle = unixPair();
    const StreamId s = adopt(*reactor, stalled, closed);
    const StreamId i = adopt(*reactor, idle, closed);
    for (const auto& e : events(32, 8000)) {
        ASSERT_TRUE(reactor->send(s, e));
    }
    reactor->shutdown(100ms);  // nobody reads `stalled`
    EXPECT_EQ(closed.waitFor(s, 0ms), CloseReason::shutdown);
    EXPECT_EQ(closed.waitFor(i, 0ms), CloseReason::shutdown);
    EXPECT_TRUE(readToEof(stalled.client.get()).eof);
    EXPECT_TRUE(readToEof(idle.client.get()).eof);
}

TEST(StreamReactor, StreamsClosingBeforeShutdownKeepTheirReason) {
    ClosedLog closed;
    auto reactor = startedReactor();
    SocketPair pair = unixPair(4096);
    const StreamId id = adopt(*reactor, pair, closed);
    const auto sent = events(16, 8000);
    for (const auto& e : sent) {
        ASSERT_TRUE(reactor->send(id, e));
    }
    reactor->close(id);
    std::thread reader([&] { EXPECT_EQ(readToEof(pair.client.get()).bytes, concat(sent)); });
    reactor->shutdown(kWait);
    reader.join();
    EXPECT_EQ(closed.waitFor(id, 0ms), CloseReason::closed_by_server);
}

TEST(StreamReactor, DestructorClosesOpenStreams) {
    ClosedLog closed;
    std::vector<SocketPair> pairs;
    {
        auto reactor = startedReactor();
        for (int i = 0; i < 3; ++i) {
            pairs.push_back(unixPair());
            const StreamId id = adopt(*reactor, pairs.back(), closed);
            ASSERT_TRUE(reactor->send(id, formatSseEvent(std::to_string(i), "", "bye")));
        }
    }
    ASSERT_EQ(closed.all().size(), 3U);
    for (const auto& [id, reason] : closed.all()) {
        EXPECT_EQ(reason, CloseReason::shutdown);
    }
    for (auto& pair : pairs) {
        const ReadResult got = readToEof(pair.client.get());
        EXPECT_TRUE(got.eof);
    }
}

TEST(StreamReactor, BytesFromTheClientAreReadAndDropped) {
    ClosedLog closed;
    auto reactor = startedReactor();
    SocketPair pair = unixPair();
    const StreamId id = adopt(*reactor, pair, closed);
    // 4 MiB: far more than the socket buffers hold, so this only finishes if the reactor reads.
    writeAll(pair.client.get(), std::string(4 * kKiB * kKiB, 'c'));
    ASSERT_TRUE(reactor->send(id, formatSseEvent("1", "", "still here")));
    std::string buffer;
    EXPECT_TRUE(readUntil(pair.client.get(), buffer, "still here"));
    EXPECT_EQ(reactor->openStreams(), 1U);
    EXPECT_TRUE(closed.all().empty());
}

TEST(StreamReactor, UnknownStreamsAreIgnored) {
    auto reactor = startedReactor();
    EXPECT_FALSE(reactor->send(12345, "x"));
    reactor->close(12345);
    EXPECT_EQ(reactor->openStreams(), 0U);
}

TEST(StreamReactor, AdoptBeforeStartIsRefused) {
    StreamReactor reactor;
    SocketPair pair = unixPair();
    Result<StreamId> id = reactor.adopt(pair.server.release(), {});
    ASSERT_FALSE(id.ok());
    EXPECT_EQ(id.error().code, ErrorCode::unavailable);
    EXPECT_TRUE(readToEof(pair.client.get()).eof);
}

TEST(StreamReactor, AdoptRefusesWhatIsNotAStreamSocket) {
    auto reactor = startedReactor();
    int fds[2];
    ASSERT_EQ(::pipe2(fds, O_CLOEXEC), 0);
    Fd writeEnd(fds[1]);
    Result<StreamId> id = reactor->adopt(fds[0], {});
    ASSERT_FALSE(id.ok());
    EXPECT_EQ(id.error().code, ErrorCode::invalid_argument);
    EXPECT_EQ(::fcntl(fds[0], F_GETFD), -1) << "the refused descriptor was not closed";

    Result<StreamId> negative = reactor->adopt(-1, {});
    ASSERT_FALSE(negative.ok());
    EXPECT_EQ(negative.error().code, ErrorCode::invalid_argument);
}

TEST(StreamReactor, StartTwiceIsAConflict) {
    auto reactor = startedReactor();
    const Result<void> again = reactor->start();
    ASSERT_FALSE(again.ok());
    EXPECT_EQ(again.error().code, ErrorCode::conflict);
}

TEST(StreamReactor, UnusableOptionsAreRefused) {
    StreamReactor::Options options;
    options.max_buffered_bytes = 0;
    StreamReactor reactor(options);
    const Result<void> started = reactor.start();
    ASSERT_FALSE(started.ok());
    EXPECT_EQ(started.error().code, ErrorCode::invalid_argument);
}

TEST(StreamReactor, ShutdownWithoutStartIsHarmless) {
    StreamReactor reactor;
    reactor.shutdown(1s);
    SocketPair pair = unixPair();
    EXPECT_FALSE(reactor.adopt(pair.server.release(), {}).ok());
}

TEST(StreamReactor, CloseReasonNames) {
    EXPECT_EQ(closeReasonName(CloseReason::closed_by_server), "closed_by_server");
    EXPECT_EQ(closeReasonName(CloseReason::peer_closed), "peer_closed");
    EXPECT_EQ(closeReasonName(CloseReason::overflow), "overflow");
    EXPECT_EQ(closeReasonName(CloseReason::write_error), "write_error");
    EXPECT_EQ(closeReasonName(CloseReason::shutdown), "shutdown");
}

}  // namespace
}  // namespace crank::http::test
