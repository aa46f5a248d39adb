// AuditWriter (the audit trail written behind the calls) on a real SQLite file, and
// Store::appendAuditBatch under it.

#include "runtime/audit_writer.h"

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <Poco/Data/SQLite/Connector.h>
#include <Poco/Data/Session.h>
#include <gtest/gtest.h>

#include "runtime/audit_log.h"
#include "store/open_store.h"
#include "store/store_limits.h"
#include "temp_dir.h"
#include "test_json.h"

namespace crank::runtime {
namespace {

using crank::testing::TempDir;
using Poco::Data::Keywords::now;

class AuditWriterTest : public ::testing::Test {
protected:
    void SetUp() override {
        store::StoreOptions options;
        options.path = dir_.file("crank.db");
        options.busy_timeout_ms = 20'000;  // the writer waits out a lock a test holds
        auto opened = store::openStore(options);
        ASSERT_TRUE(static_cast<bool>(opened)) << opened.error().message;
        store_ = std::shared_ptr<store::Store>(std::move(opened).value());
    }

    static store::AuditEvent event(int n, const std::string& action = "unary.call") {
        store::AuditEvent e;
        e.workspace_id = "ws";
        e.agent_id = "agent-" + std::to_string(n % 3);
        e.operation_id = "op";
        e.action = action;
        e.outcome = "ok";
        e.detail_json = R"({"n":)" + std::to_string(n) + "}";
        return e;
    }

    std::vector<store::AuditEvent> all() {
        store::AuditQuery q;
        q.order = store::SortOrder::oldest_first;
        q.limit = store::kMaxListLimit;
        auto found = store_->queryAudit(q);
        EXPECT_TRUE(found.ok()) << found.error().message;
        return found.ok() ? std::move(found).value() : std::vector<store::AuditEvent>{};
    }

    TempDir dir_;
    std::shared_ptr<store::Store> store_;
};

TEST_F(AuditWriterTest, FlushReturnsOnceEverySubmittedEventIsWrittenInOrder) {
    AuditWriter writer(store_, {});
    const auto before = std::chrono::system_clock::now();
    for (int i = 0; i < 300; ++i) {
        writer.submit(event(i));
    }
    writer.flush();
    const std::vector<store::AuditEvent> events = all();
    ASSERT_EQ(events.size(), 300U);
    const std::int64_t since =
        std::chrono::duration_cast<std::chrono::milliseconds>(before.time_since_epoch()).count();
    for (int i = 0; i < 300; ++i) {
        EXPECT_EQ(events[i].detail_json, R"({"n":)" + std::to_string(i) + "}");
        EXPECT_GE(events[i].ts, since);  // stamped when submitted
        if (i > 0) {
            EXPECT_GT(events[i].id, events[i - 1].id);
        }
    }
    EXPECT_EQ(writer.stats().written, 300);
    EXPECT_EQ(writer.stats().failed, 0);
    EXPECT_EQ(writer.stats().queued, 0U);
}

TEST_F(AuditWriterTest, ABurstIsGatheredIntoOneTransactionAndAFlushEndsTheGathering) {
    AuditWriter::Options options;
    options.gather = std::chrono::milliseconds(5'000);  // far longer than the burst takes
    AuditWriter writer(store_, options);
    for (int i = 0; i < 100; ++i) {
        writer.submit(event(i));
    }
    const auto asked = std::chrono::steady_clock::now();
    writer.flush();  // does not wait out the gathering
    EXPECT_LT(std::chrono::steady_clock::now() - asked, std::chrono::milliseconds(4'000));
    EXPECT_EQ(writer.stats().written, 100);
    EXPECT_EQ(writer.stats().batches, 1);
    EXPECT_EQ(all().size(), 100U);
}

TEST_F(AuditWriterTest, AFullBatchIsWrittenWithoutWaitingOutTheGathering) {
    AuditWriter::Options options;
    options.batch_max = 10;
    options.gather = std::chrono::milliseconds(60'000);
    AuditWriter writer(store_, options);
    for (int i = 0; i < 30; ++i) {
        writer.submit(event(i));
    }
    // No flush: only full batches end the gathering, well before its minute.
    EXPECT_TRUE(crank::testing::eventually([&] { return writer.stats().written == 30; },
                                           std::chrono::seconds(20)));
    EXPECT_LE(writer.stats().batches, 3);
}

TEST_F(AuditWriterTest, ManyThreadsThroughASmallQueueLoseNothing) {
    AuditWriter::Options options;
    options.queue_max = 8;
    options.batch_max = 4;
    AuditWriter writer(store_, options);
    constexpr int kThreads = 4;
    constexpr int kEach = 200;  // 800 events: one query reads them all
    std::vector<std::thread> threads;
    threads.reserve(kThreads);
    for (int t = 0; t < kThreads; ++t) {
        threads.emplace_back([&writer, t] {
            for (int i = 0; i < kEach; ++i) {
                writer.submit(event(t * kEach + i));
            }
        });
    }
    for (std::thread& t : threads) {
        t.join();
    }
    writer.flush();
    EXPECT_EQ(writer.stats().written, kThreads * kEach);
    std::set<std::string> details;
    for (const store::AuditEvent& e : all()) {
        details.insert(e.detail_json);
    }
    EXPECT_EQ(details.size(), static_cast<std::size_t>(kThreads * kEach));  // each one, once
}

TEST_F(AuditWriterTest, ARefusedEventTakesOnlyItselfOutOfItsBatch) {
    AuditWriter writer(store_, {});
    writer.submit(event(1));
    writer.submit(event(2, ""));  // no action: the store refuses it
    writer.submit(event(3));
    writer.flush();
    const std::vector<store::AuditEvent> events = all();
    ASSERT_EQ(events.size(), 2U);
    EXPECT_EQ(events[0].detail_json, R"({"n":1})");
    EXPECT_EQ(events[1].detail_json, R"({"n":3})");
    EXPECT_EQ(writer.stats().written, 2);
    EXPECT_EQ(writer.stats().failed, 1);
}

TEST_F(AuditWriterTest, AFullQueueHoldsTheCallerUntilTheStoreTakesTheBacklog) {
    AuditWriter::Options options;
    options.queue_max = 2;
    options.batch_max = 1;
    AuditWriter writer(store_, options);
    // Another connection holds the write lock: the writer's first batch waits on it.
    Poco::Data::SQLite::Connector::registerConnector();
    Poco::Data::Session blocker("SQLite", dir_.file("crank.db"));
    blocker << "BEGIN IMMEDIATE", now;
    writer.submit(event(0));  // taken by the writer, which now waits for the lock
    for (int spin = 0; spin < 200 && writer.stats().queued != 0; ++spin) {
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    writer.submit(event(1));
    writer.submit(event(2));  // the queue is full now
    std::atomic<bool> returned{false};
    std::thread caller([&] {
        writer.submit(event(3));
        returned = true;
    });
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    EXPECT_FALSE(returned.load()) << "submit() returned while the queue was full";
    blocker << "COMMIT", now;
    caller.join();
    writer.flush();
    EXPECT_EQ(all().size(), 4U);
    EXPECT_EQ(writer.stats().failed, 0);
}

TEST_F(AuditWriterTest, StopWritesWhatIsQueuedAndLaterEventsAreWrittenAtOnce) {
    {
        AuditWriter writer(store_, {});
        for (int i = 0; i < 50; ++i) {
            writer.submit(event(i));
        }
        writer.stop();
        EXPECT_EQ(all().size(), 50U);
        writer.submit(event(50));  // after stop: written by this thread
        EXPECT_EQ(all().size(), 51U);
        writer.stop();  // idempotent
    }
    EXPECT_EQ(all().size(), 51U);
}

TEST_F(AuditWriterTest, AnAuditLogWithAWriterQueuesAndItsFlushMakesTheEventsVisible) {
    auto writer = std::make_shared<AuditWriter>(store_, AuditWriter::Options{});
    AuditLog log(store_, 1, writer);
    for (int i = 0; i < 20; ++i) {
        ASSERT_TRUE(log.append(event(i)).ok());
    }
    log.flush();
    EXPECT_EQ(all().size(), 20U);
}

TEST_F(AuditWriterTest, TheStoreWritesABatchWhole) {
    std::vector<store::AuditEvent> batch;
    for (int i = 0; i < 250; ++i) {
        batch.push_back(event(i));
    }
    ASSERT_TRUE(store_->appendAuditBatch(batch).ok());
    for (std::size_t i = 1; i < batch.size(); ++i) {
        EXPECT_GT(batch[i].id, batch[i - 1].id);
        EXPECT_GT(batch[i].ts, 0);
    }
    // The ids handed back are the rows' own.
    const std::vector<store::AuditEvent> stored = all();
    ASSERT_EQ(stored.size(), batch.size());
    for (std::size_t i = 0; i < batch.size(); ++i) {
        EXPECT_EQ(stored[i].id, batch[i].id) << i;
        EXPECT_EQ(stored[i].detail_json, batch[i].detail_json) << i;
    }
    std::vector<store::AuditEvent> bad = {event(1), event(2, "")};
    auto refused = store_->appendAuditBatch(bad);
    ASSERT_FALSE(refused.ok());
    EXPECT_EQ(refused.error().message, "audit[1].action: must not be empty");
    EXPECT_EQ(all().size(), 250U);  // nothing of the refused batch
    std::vector<store::AuditEvent> huge(store::kMaxAuditBatch + 1, event(0));
    auto tooMany = store_->appendAuditBatch(huge);
    ASSERT_FALSE(tooMany.ok());
    EXPECT_EQ(tooMany.error().code, ErrorCode::invalid_argument);
    std::vector<store::AuditEvent> none;
    EXPECT_TRUE(store_->appendAuditBatch(none).ok());
}

TEST_F(AuditWriterTest, ARowSqliteRefusesMidBatchRollsTheBatchBackAndSaysWhy) {
    // A trigger of the test's own makes SQLite refuse one row in the middle of a batch: the step
    // fails after rows were inserted, on the store's own INSERT statement.
    Poco::Data::Session session("SQLite", dir_.file("crank.db"));
    session << "CREATE TRIGGER refuse_boom BEFORE INSERT ON audit_events WHEN NEW.action = 'boom'"
               " BEGIN SELECT RAISE(ABORT, 'boom is refused'); END",
        now;
    std::vector<store::AuditEvent> batch = {event(1), event(2), event(3, "boom"), event(4)};
    auto refused = store_->appendAuditBatch(batch);
    ASSERT_FALSE(refused.ok());
    EXPECT_EQ(refused.error().code, ErrorCode::conflict) << refused.error().message;
    EXPECT_NE(refused.error().message.find("boom is refused"), std::string::npos)
        << refused.error().message;
    EXPECT_EQ(refused.error().message.rfind("store: cannot append audit events: ", 0), 0U)
        << refused.error().message;
    EXPECT_TRUE(all().empty());  // the rows before it went with the transaction
    // The connection is left usable: no transaction or statement is left open on it.
    std::vector<store::AuditEvent> next = {event(5), event(6)};
    ASSERT_TRUE(store_->appendAuditBatch(next).ok());
    EXPECT_EQ(all().size(), 2U);
    // The writer's retry one by one loses only the refused event.
    auto writer = std::make_shared<AuditWriter>(store_, AuditWriter::Options{});
    writer->submit(event(7));
    writer->submit(event(8, "boom"));
    writer->submit(event(9));
    writer->flush();
    const std::vector<store::AuditEvent> stored = all();
    ASSERT_EQ(stored.size(), 4U);
    EXPECT_EQ(stored[2].detail_json, R"({"n":7})");
    EXPECT_EQ(stored[3].detail_json, R"({"n":9})");
}

}  // namespace
}  // namespace crank::runtime
