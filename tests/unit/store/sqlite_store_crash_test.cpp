#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <string>

#include <gtest/gtest.h>

#include "store_test_support.h"
#include <sys/types.h>
#include <sys/wait.h>

namespace crank::store::test {
namespace {

constexpr std::uint64_t kWritesBeforeKill = 200;
constexpr std::uint64_t kChildMaxWrites = 100000;
constexpr auto kParentDeadline = std::chrono::seconds(20);

/// Kills and reaps the child in every path out of the test, including failed assertions.
class ChildGuard {
public:
    explicit ChildGuard(pid_t pid) : pid_(pid) {}
    ~ChildGuard() { killAndReap(); }
    ChildGuard(const ChildGuard&) = delete;
    ChildGuard& operator=(const ChildGuard&) = delete;

    /// SIGKILL and waitpid; returns the wait status (or -1 when already reaped).
    int killAndReap() {
        if (pid_ <= 0) {
            return -1;
        }
        ::kill(pid_, SIGKILL);
        int status = 0;
        while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
        }
        pid_ = -1;
        return status;
    }

private:
    pid_t pid_;
};

/// In the child: append audit events (ts = base + i) until killed, or at most kChildMaxWrites,
/// reporting each committed count i on `report_fd`.
[[noreturn]] void runWriter(const StoreOptions& options, std::int64_t base, int report_fd) {
    auto opened = SqliteStore::open(options);
    if (!opened) {
        ::_exit(2);
    }
    auto store = std::move(opened).value();
    for (std::uint64_t i = 1; i <= kChildMaxWrites; ++i) {
        AuditEvent event;
        event.ts = base + static_cast<std::int64_t>(i);
        event.workspace_id = "ws1";
        event.agent_id = "writer";
        event.action = "job.progress";
        event.outcome = "ok";
        event.detail_json =
            "{\"i\":" + std::to_string(i) + ",\"pad\":\"" + std::string(200, 'p') + "\"}";
        if (!store->appendAudit(event).ok()) {
            ::_exit(3);
        }
        // Committed: tell the parent. An 8-byte write to a pipe is atomic.
        if (::write(report_fd, &i, sizeof i) != static_cast<ssize_t>(sizeof i)) {
            ::_exit(4);
        }
    }
    ::_exit(0);
}

/// Reads 8-byte counters from `fd` until `enough` is reached (or EOF, or the deadline); returns
/// the last complete counter read.
std::uint64_t readCounts(int fd, std::uint64_t enough, std::chrono::steady_clock::time_point end,
                         bool* eof) {
    std::uint64_t last = 0;
    unsigned char buffer[4096];
    std::size_t pending = 0;
    *eof = false;
    while (last < enough && std::chrono::steady_clock::now() < end) {
        pollfd pfd{fd, POLLIN, 0};
        const int ready = ::poll(&pfd, 1, 100);
        if (ready <= 0) {
            continue;
        }
        const ssize_t n = ::read(fd, buffer + pending, sizeof buffer - pending);
        if (n == 0) {
            *eof = true;
            break;
        }
        if (n < 0) {
            if (errno == EINTR) {
                continue;
            }
            *eof = true;
            break;
        }
        pending += static_cast<std::size_t>(n);
        const std::size_t whole = pending / sizeof last * sizeof last;
        if (whole > 0) {
            std::memcpy(&last, buffer + whole - sizeof last, sizeof last);
            std::memmove(buffer, buffer + whole, pending - whole);
            pending -= whole;
        }
    }
    return last;
}

// Three times: a child process writes to the file as fast as it can and is killed with SIGKILL
// once it has reported kWritesBeforeKill commits; the file must then hold every reported commit,
// at most one more (committed but not yet reported), and pass SQLite's integrity check.
TEST(SqliteStoreCrashTest, KillNineDuringWritesLosesAtMostTheTransactionInFlight) {
    TempDir dir;
    const StoreOptions options = fileOptions(dir, "crash.db", 2);
    std::int64_t rows_before = 0;
    for (int round = 1; round <= 3; ++round) {
        SCOPED_TRACE("round " + std::to_string(round));
        int fds[2];
        ASSERT_EQ(::pipe2(fds, O_CLOEXEC), 0);
        const pid_t pid = ::fork();
        ASSERT_GE(pid, 0) << "fork failed";
        if (pid == 0) {
            ::close(fds[0]);
            runWriter(options, rows_before, fds[1]);
        }
        ::close(fds[1]);
        ChildGuard child(pid);

        bool eof = false;
        std::uint64_t reported = readCounts(
            fds[0], kWritesBeforeKill, std::chrono::steady_clock::now() + kParentDeadline, &eof);
        if (eof || reported < kWritesBeforeKill) {
            ::close(fds[0]);
            FAIL() << "the writer stopped or stalled after " << reported << " writes";
        }
        const int status = child.killAndReap();
        // Counts the child reported between our last read and its death; EOF ends the read.
        const std::uint64_t after_kill =
            readCounts(fds[0], kChildMaxWrites + 1,
                       std::chrono::steady_clock::now() + std::chrono::seconds(5), &eof);
        ::close(fds[0]);
        reported = std::max(reported, after_kill);
        ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL)
            << "the writer must have been killed mid-stream, status " << status;

        // The file on its own first (a separate connection), then through the store.
        EXPECT_EQ(rawInt(options.path,
                         "SELECT count(*) FROM pragma_integrity_check WHERE "
                         "integrity_check = 'ok'"),
                  1);
        auto store = openOrFail(options);
        ASSERT_NE(store, nullptr);
        EXPECT_TRUE(store->integrityCheck().ok());
        const std::int64_t rows = rawInt(options.path, "SELECT count(*) FROM audit_events");
        const std::int64_t committed = rows_before + static_cast<std::int64_t>(reported);
        EXPECT_GE(rows, committed) << "a reported commit was lost";
        EXPECT_LE(rows, committed + 1) << "more rows than reported commits plus the one in flight";
        // The rows are exactly 1..rows: nothing half-written, nothing out of order.
        EXPECT_EQ(rawInt(options.path, "SELECT max(ts) FROM audit_events"), rows);
        EXPECT_EQ(rawInt(options.path, "SELECT count(DISTINCT ts) FROM audit_events"), rows);
        rows_before = rows;
    }
}

}  // namespace
}  // namespace crank::store::test
