#include "http/parked_workers.h"

#include <poll.h>
#include <unistd.h>

#include <array>
#include <cstdint>

#include "http/poll_until.h"
#include <sys/eventfd.h>

namespace crank::http {
namespace {

/// Each worker thread's own eventfd, opened on its first park and closed when the thread ends.
/// Only ParkedWorkers writes to it, under its lock, while the thread is listed (so in park()).
class ThreadWakeFd {
public:
    ThreadWakeFd() : fd_(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) {}
    ~ThreadWakeFd() {
        if (fd_ >= 0) {
            ::close(fd_);
        }
    }
    ThreadWakeFd(const ThreadWakeFd&) = delete;
    ThreadWakeFd& operator=(const ThreadWakeFd&) = delete;
    int fd() const { return fd_; }

private:
    int fd_;
};

int threadWakeFd() {
    thread_local ThreadWakeFd wake;
    return wake.fd();
}

void drain(int fd) {
    std::uint64_t value = 0;
    (void)::read(fd, &value, sizeof value);
}

void signal(int fd) {
    const std::uint64_t one = 1;
    (void)::write(fd, &one, sizeof one);
}

}  // namespace

ParkedWorkers::~ParkedWorkers() {
    close();
}

ParkedWorkers::Wake ParkedWorkers::park(int fd, std::chrono::steady_clock::time_point deadline,
                                        const std::function<bool()>& wanted_now) {
    Entry entry;
    entry.wake_fd = threadWakeFd();
    if (entry.wake_fd < 0) {
        return Wake::closed;  // no descriptor for the wait: the caller hands the connection on
    }
    {
        const std::lock_guard lock(mutex_);
        if (closed_) {
            return Wake::closed;
        }
        link(entry);
    }
    Wake result = Wake::timeout;
    bool waiting = !wanted_now();
    if (!waiting) {
        result = Wake::wanted;
    }
    while (waiting) {
        std::array<pollfd, 2> fds{pollfd{fd, POLLIN, 0}, pollfd{entry.wake_fd, POLLIN, 0}};
        const int rc = pollUntil(fds, deadline);
        if (rc < 0) {
            result = Wake::closed;  // the wait itself failed: hand the connection on
            break;
        }
        if (rc == 0) {
            result = Wake::timeout;
            break;
        }
        if (fds[0].revents != 0) {
            result = Wake::readable;
            break;
        }
        if (fds[1].revents != 0) {
            drain(entry.wake_fd);
            const std::lock_guard lock(mutex_);
            waiting = !entry.woken;  // woken: whoever wrote listed the reason
        }
    }
    const std::lock_guard lock(mutex_);
    if (entry.woken) {
        // Unlisted by wakeOne() or close(), which wrote to the eventfd under this lock: the value
        // is there to be read, so the next park starts from a quiet descriptor.
        drain(entry.wake_fd);
        return closed_ ? Wake::closed : Wake::wanted;
    }
    unlink(entry);
    return result;
}

bool ParkedWorkers::wakeOne() {
    const std::lock_guard lock(mutex_);
    Entry* e = oldest_;
    if (e == nullptr) {
        return false;
    }
    unlink(*e);
    e->woken = true;
    signal(e->wake_fd);
    return true;
}

void ParkedWorkers::close() {
    const std::lock_guard lock(mutex_);
    closed_ = true;
    while (oldest_ != nullptr) {
        Entry* e = oldest_;
        unlink(*e);
        e->woken = true;
        signal(e->wake_fd);
    }
}

std::size_t ParkedWorkers::parked() const {
    const std::lock_guard lock(mutex_);
    return count_;
}

void ParkedWorkers::link(Entry& e) {
    e.prev = newest_;
    e.next = nullptr;
    if (newest_ != nullptr) {
        newest_->next = &e;
    } else {
        oldest_ = &e;
    }
    newest_ = &e;
    ++count_;
}

void ParkedWorkers::unlink(Entry& e) {
    (e.prev != nullptr ? e.prev->next : oldest_) = e.next;
    (e.next != nullptr ? e.next->prev : newest_) = e.prev;
    e.prev = e.next = nullptr;
    --count_;
}

}  // namespace crank::http
