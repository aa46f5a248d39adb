#include "http/connection_gate.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <string>
#include <system_error>
#include <thread>
#include <unordered_map>
#include <vector>

#include <Poco/Exception.h>

#include "http/request_head.h"
#include "log/log.h"
#include "log/throttle.h"
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>

namespace crank::http {
namespace {

using Clock = std::chrono::steady_clock;

/// How long a refused or rejected connection is read from (and its bytes dropped) after its
/// answer, before it is closed: closing with unread bytes would reset the connection, and the
/// client would see a reset instead of the answer.
constexpr std::chrono::milliseconds kDrain{200};
/// How often deadlines are checked: they are seconds long, so a tenth of a second is precise
/// enough, and the sweep stays cheap under many connections.
constexpr std::chrono::milliseconds kSweep{100};
constexpr std::chrono::milliseconds kFirstBackoff{10};
constexpr std::chrono::milliseconds kMaxBackoff{1000};
/// At most this many refused connections are drained at once; beyond it they are closed at once.
constexpr std::size_t kMaxDraining = 1024;

std::int64_t msBetween(Clock::time_point from, Clock::time_point to) {
    return std::chrono::duration_cast<std::chrono::milliseconds>(to - from).count();
}

std::string peerText(const sockaddr_storage& address) {
    char text[INET6_ADDRSTRLEN] = {};
    if (address.ss_family == AF_INET) {
        const auto& v4 = reinterpret_cast<const sockaddr_in&>(address);
        ::inet_ntop(AF_INET, &v4.sin_addr, text, sizeof text);
    } else if (address.ss_family == AF_INET6) {
        const auto& v6 = reinterpret_cast<const sockaddr_in6&>(address);
        if (IN6_IS_ADDR_V4MAPPED(&v6.sin6_addr)) {
            ::inet_ntop(AF_INET, &v6.sin6_addr.s6_addr[12], text, sizeof text);
        } else {
            ::inet_ntop(AF_INET6, &v6.sin6_addr, text, sizeof text);
        }
    }
    return text;
}

std::string jsonEscaped(std::string_view s) {
    std::string out;
    for (const char c : s) {
        if (c == '"' || c == '\\') {
            out += '\\';
        }
        out += static_cast<unsigned char>(c) < 0x20 ? ' ' : c;
    }
    return out;
}

std::string_view reasonPhrase(int status) {
    switch (status) {
        case 400:
            return "Bad Request";
        case 408:
            return "Request Timeout";
        case 429:
            return "Too Many Requests";
        case 431:
            return "Request Header Fields Too Large";
        case 501:
            return "Not Implemented";
        default:
            return "Service Unavailable";
    }
}

/// A complete HTTP/1.1 answer that closes the connection: {"error":{"code","message"}}.
std::string answer(int status, std::string_view code, std::string_view message) {
    const std::string body = R"({"error":{"code":")" + std::string(code) + R"(","message":")" +
                             jsonEscaped(message) + "\"}}";
    std::string head =
        "HTTP/1.1 " + std::to_string(status) + " " + std::string(reasonPhrase(status)) + "\r\n";
    if (status == 503 || status == 429) {
        head += "Retry-After: 1\r\n";
    }
    return head + "Content-Type: application/json\r\nConnection: close\r\nContent-Length: " +
           std::to_string(body.size()) + "\r\n\r\n" + body;
}

enum class Phase {
    idle,      ///< between requests (or before the first): nothing received yet
    head,      ///< the head has begun
    body,      ///< the head is in; its small body is being read ahead
    draining,  ///< answered with an error; reading and dropping until kDrain ends
};

struct Held {
    Poco::Net::StreamSocket socket;
    ClientSocketImpl* client = nullptr;  // owned by socket
    Phase phase = Phase::idle;
    Clock::time_point since;     // when the phase began (the head's end, for `body`)
    std::size_t scanned = 0;     // head: bytes scanRequestHead found incomplete
    std::size_t head_bytes = 0;  // body: where the body starts
    std::size_t need = 0;        // body: head and body together
};

}  // namespace

struct ConnectionGate::Impl {
    Options options;
    OnReady on_ready;
    std::shared_ptr<ConnectionCounter> counter;
    int listen_fd = -1;
    int epoll_fd = -1;
    int wake_fd = -1;
    std::thread thread;
    std::atomic<bool> running{false};
    std::atomic<std::uint64_t> refused{0};
    std::atomic<std::uint64_t> rejected{0};
    std::atomic<std::size_t> held_count{0};
    std::atomic<std::uint64_t> accept_failures{0};

    std::mutex readmit_mutex;
    std::condition_variable drained;
    std::vector<Poco::Net::StreamSocket> readmitted;
    std::atomic<std::size_t> in_hand{0};  // taken from `readmitted`, not yet in `held`
    bool stopped = false;                 // under readmit_mutex
    bool drain_requested = false;         // under readmit_mutex
    bool listener_released = false;       // under readmit_mutex: the gate thread no longer uses it

    // Gate thread only.
    bool draining_all = false;  // drain() has begun: no accepting, no idle connections
    std::unordered_map<int, Held> held;
    std::size_t draining = 0;
    bool listener_paused = false;
    Clock::time_point resume_at;
    std::chrono::milliseconds backoff = kFirstBackoff;
    log::Throttle accept_log{1, std::chrono::seconds(10)};
    Clock::time_point last_sweep;

    Impl(const Options& o, OnReady r)
        : options(o),
          on_ready(std::move(r)),
          counter(std::make_shared<ConnectionCounter>(o.max_connections,
                                                      o.max_connections_per_address)) {}

    ~Impl() {
        if (epoll_fd >= 0) {
            ::close(epoll_fd);
        }
        if (wake_fd >= 0) {
            ::close(wake_fd);
        }
    }

    void watch(int fd) {
        epoll_event ev{};
        ev.events = EPOLLIN | EPOLLRDHUP;
        ev.data.fd = fd;
        ::epoll_ctl(epoll_fd, EPOLL_CTL_ADD, fd, &ev);
    }
    void unwatch(int fd) { ::epoll_ctl(epoll_fd, EPOLL_CTL_DEL, fd, nullptr); }

    void close(int fd) {
        const auto it = held.find(fd);
        if (it == held.end()) {
            return;
        }
        if (it->second.phase == Phase::draining) {
            --draining;
        }
        unwatch(fd);
        held.erase(it);  // the last reference: the descriptor closes, its count slot is freed
        held_count = held.size();
    }

    /// Answers with an error and drains: the client reads the answer, then the connection ends.
    void reject(Held& h, int status, std::string_view code, std::string_view message) {
        const std::string reply = answer(status, code, message);
        const int fd = h.client->sockfd();
        (void)::send(fd, reply.data(), reply.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
        ::shutdown(fd, SHUT_WR);
        h.client->readAhead().clear();
        if (h.phase != Phase::draining) {
            ++draining;
        }
        h.phase = Phase::draining;
        h.since = Clock::now();
        if (draining > kMaxDraining) {
            close(fd);
        }
    }

    void hold(const Poco::Net::StreamSocket& socket, ClientSocketImpl* client, Phase phase) {
        const int fd = client->sockfd();
        Held h;
        h.socket = socket;
        h.client = client;
        h.phase = phase;
        h.since = Clock::now();
        held.insert_or_assign(fd, std::move(h));
        held_count = held.size();
        watch(fd);
    }

    void acceptSome() {
        for (int i = 0; i < 64; ++i) {
            sockaddr_storage address{};
            socklen_t length = sizeof address;
            const int fd = ::accept4(listen_fd, reinterpret_cast<sockaddr*>(&address), &length,
                                     SOCK_CLOEXEC | SOCK_NONBLOCK);
            if (fd < 0) {
                if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) {
                    pauseListener(errno);
                } else if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR &&
                           errno != ECONNABORTED) {
                    logAcceptFailure(errno);
                }
                return;
            }
            backoff = kFirstBackoff;
            const int on = 1;
            ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &on, sizeof on);
            std::string peer = peerText(address);
            ConnectionCounter::Refusal refusal = ConnectionCounter::Refusal::none;
            auto slot = ConnectionCounter::admit(counter, peer, refusal);
            auto* client = new ClientSocketImpl(fd, std::move(slot), peer);
            Poco::Net::StreamSocket socket(client);  // owns client, and the descriptor
            client->setBlocking(false);
            hold(socket, client, Phase::idle);
            if (refusal == ConnectionCounter::Refusal::none) {
                continue;
            }
            ++refused;
            Held& h = held.at(fd);
            if (refusal == ConnectionCounter::Refusal::too_many_from_address) {
                reject(h, 429, "too_many_connections",
                       "too many open connections from " + peer + " (server." +
                           "max_connections_per_address: " +
                           std::to_string(options.max_connections_per_address) + ")");
            } else {
                reject(h, 503, "busy",
                       "too many open connections (server.max_connections: " +
                           std::to_string(options.max_connections) + "); retry shortly");
            }
        }
    }

    void logAcceptFailure(int err) {
        std::uint64_t dropped = 0;
        if (accept_log.admit(dropped)) {
            log::warn("http: accept failed: {}{}", std::generic_category().message(err),
                      dropped > 0 ? fmt::format(" ({} more since the last report)", dropped)
                                  : std::string());
        }
    }

    /// Out of descriptors or memory: the listener stays readable, so retrying at once would spin.
    void pauseListener(int err) {
        ++accept_failures;
        logAcceptFailure(err);
        unwatch(listen_fd);
        listener_paused = true;
        resume_at = Clock::now() + backoff;
        backoff = std::min(backoff * 2, kMaxBackoff);
    }

    void onReadable(int fd, std::uint32_t events) {
        const auto it = held.find(fd);
        if (it == held.end()) {
            return;
        }
        Held& h = it->second;
        std::string& buffer = h.client->readAhead();
        const std::size_t cap = options.max_head_bytes + options.read_ahead_body_bytes;
        bool ended = (events & (EPOLLHUP | EPOLLERR)) != 0;
        for (int reads = 0; reads < 4 && !ended; ++reads) {
            // Not zeroed: recv() writes what it reads, and the rest is never looked at.
            std::array<char, 16384> chunk;  // NOLINT(cppcoreguidelines-pro-type-member-init)
            std::size_t room = chunk.size();
            if (h.phase != Phase::draining) {
                room = std::min(room, cap > buffer.size() ? cap - buffer.size() : 0);
                if (room == 0) {
                    break;
                }
            }
            const ssize_t n = ::recv(fd, chunk.data(), room, 0);
            if (n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) {
                ended = true;
                break;
            }
            if (n < 0) {
                break;
            }
            if (h.phase != Phase::draining) {
                buffer.append(chunk.data(), static_cast<std::size_t>(n));
            }
            if (static_cast<std::size_t>(n) < room) {
                break;
            }
        }
        if (ended) {
            close(fd);
            return;
        }
        advance(h);
    }

    /// Moves a connection on as far as the bytes it has sent allow.
    void advance(Held& h) {
        std::string& buffer = h.client->readAhead();
        if (h.phase == Phase::idle && !buffer.empty()) {
            h.phase = Phase::head;
            h.since = Clock::now();
        }
        if (h.phase == Phase::head) {
            const RequestHead head = scanRequestHead(buffer, options.max_head_bytes, h.scanned);
            switch (head.state) {
                case HeadState::incomplete:
                    h.scanned = buffer.size();
                    return;
                case HeadState::too_large:
                    ++rejected;
                    reject(h, head.status, "head_too_large", head.error);
                    return;
                case HeadState::invalid:
                    ++rejected;
                    reject(h, head.status, "bad_request", head.error);
                    return;
                case HeadState::complete:
                    break;
            }
            if (options.auth_failures) {
                if (const std::int64_t wait = options.auth_failures->blockedForMs(h.client->peer());
                    wait > 0) {
                    ++rejected;
                    reject(h, 429, "too_many_failed_authentications",
                           std::to_string(options.auth_failures->maxFailures()) +
                               " failed authentications from " + h.client->peer() +
                               " (server.max_auth_failures, server.auth_failure_window_ms); "
                               "retry in " +
                               std::to_string((wait + 999) / 1000) + " s");
                    return;
                }
            }
            h.head_bytes = head.head_bytes;
            h.need = head.head_bytes + readAheadBodyBytes(head, options.read_ahead_body_bytes,
                                                          options.max_body_bytes);
            h.since = Clock::now();
            h.phase = Phase::body;
        }
        if (h.phase == Phase::body && buffer.size() >= h.need) {
            ready(h);
        }
    }

    void ready(Held& h) {
        const int fd = h.client->sockfd();
        unwatch(fd);
        h.client->setBlocking(true);
        h.client->startBody(options.body, h.since, h.client->readAheadSize() - h.head_bytes);
        h.scanned = 0;
        bool taken = false;
        try {
            taken = on_ready(h.socket);
        } catch (const std::exception& e) {
            log::error("http: dispatching a connection failed: {}", e.what());
        }
        if (taken) {
            held.erase(fd);
            held_count = held.size();
            return;
        }
        ++refused;
        h.client->endBody();
        h.client->setBlocking(false);
        watch(fd);
        reject(h, 503, "busy",
               "every worker is busy and the queue is full (server.threads, server.queue); "
               "retry shortly");
    }

    void sweep(Clock::time_point now) {
        std::vector<std::pair<int, int>> late;  // fd, what to do: 0 close, else the status
        for (auto& [fd, h] : held) {
            const std::int64_t age = msBetween(h.since, now);
            switch (h.phase) {
                case Phase::idle:
                    if (draining_all || age >= options.idle_timeout_ms) {
                        late.emplace_back(fd, 0);
                    }
                    break;
                case Phase::head:
                    if (age >= options.head_timeout_ms) {
                        late.emplace_back(fd, 1);
                    }
                    break;
                case Phase::body:
                    if (bodyTooSlow(h, age)) {
                        late.emplace_back(fd, 2);
                    }
                    break;
                case Phase::draining:
                    if (age >= kDrain.count()) {
                        late.emplace_back(fd, 0);
                    }
                    break;
            }
        }
        for (const auto& [fd, what] : late) {
            if (what == 0) {
                close(fd);
                continue;
            }
            ++rejected;
            Held& h = held.at(fd);
            if (what == 1) {
                reject(h, 408, "request_timeout",
                       "the request head did not arrive within server.request_head_timeout_ms (" +
                           std::to_string(options.head_timeout_ms) + " ms)");
            } else {
                reject(h, 408, "request_timeout",
                       "the request body did not arrive in time (server.request_body_timeout_ms " +
                           std::to_string(options.body.timeout_ms) +
                           " ms, server.min_request_body_rate " +
                           std::to_string(options.body.min_bytes_per_s) + " bytes/s)");
            }
        }
    }

    bool bodyTooSlow(const Held& h, std::int64_t age) const {
        if (age >= options.body.timeout_ms) {
            return true;
        }
        const std::uint64_t got = h.client->readAheadSize() - h.head_bytes;
        return options.body.min_bytes_per_s > 0 && age > 1000 &&
               got * 1000 < static_cast<std::uint64_t>(options.body.min_bytes_per_s) *
                                static_cast<std::uint64_t>(age - 1000);
    }

    /// drain(): let go of the listener, close the connections that wait between requests.
    void beginDrain() {
        draining_all = true;
        unwatch(listen_fd);
        listener_paused = false;
        std::vector<int> idle;
        for (const auto& [fd, h] : held) {
            if (h.phase == Phase::idle) {
                idle.push_back(fd);
            }
        }
        for (const int fd : idle) {
            // A request already in the kernel's buffer has begun: read it before judging.
            onReadable(fd, 0);
            const auto it = held.find(fd);
            if (it != held.end() && it->second.phase == Phase::idle) {
                close(fd);
            }
        }
        {
            std::lock_guard lock(readmit_mutex);
            listener_released = true;
        }
        drained.notify_all();
    }

    void takeReadmitted() {
        std::vector<Poco::Net::StreamSocket> sockets;
        bool drain = false;
        {
            std::lock_guard lock(readmit_mutex);
            sockets.swap(readmitted);
            in_hand = sockets.size();
            drain = drain_requested && !draining_all;
        }
        if (drain) {
            beginDrain();
        }
        for (auto& socket : sockets) {
            // Counted by held() until this turn ends, by when hold() counts it (or it is closed).
            struct Taken {
                std::atomic<std::size_t>& n;
                ~Taken() { --n; }
            } taken{in_hand};
            auto* client = dynamic_cast<ClientSocketImpl*>(socket.impl());
            if (client == nullptr) {
                continue;
            }
            client->endBody();
            client->setBlocking(false);
            const int fd = client->sockfd();
            hold(socket, client, Phase::idle);
            if (draining_all && client->readAheadSize() == 0) {
                // Idle connections close in a drain; a request already in the kernel's buffer
                // has begun, though, and is read now rather than lost with the connection.
                onReadable(fd, 0);
                continue;
            }
            Held& h = held.at(fd);
            advance(h);  // a pipelined request may be there already
        }
    }

    void loop() {
        std::array<epoll_event, 64> events{};
        last_sweep = Clock::now();
        while (running.load()) {
            int timeout = held.empty() ? 1000 : static_cast<int>(kSweep.count());
            if (listener_paused) {
                timeout = std::min<int>(timeout, static_cast<int>(std::max<std::int64_t>(
                                                     msBetween(Clock::now(), resume_at), 0)));
            }
            const int n =
                ::epoll_wait(epoll_fd, events.data(), static_cast<int>(events.size()), timeout);
            for (int i = 0; i < n; ++i) {
                const int fd = events[i].data.fd;
                if (fd == wake_fd) {
                    std::uint64_t value = 0;
                    (void)::read(wake_fd, &value, sizeof value);
                    takeReadmitted();
                } else if (fd == listen_fd) {
                    acceptSome();
                } else {
                    onReadable(fd, events[i].events);
                }
            }
            const auto now = Clock::now();
            if (listener_paused && !draining_all && now >= resume_at) {
                listener_paused = false;
                watch(listen_fd);
            }
            if (now - last_sweep >= kSweep) {
                last_sweep = now;
                sweep(now);
            }
        }
        for (const auto& [fd, h] : held) {
            if (h.phase == Phase::head || h.phase == Phase::body) {
                ++cut_at_stop;
            }
        }
        held.clear();
        held_count = 0;
    }

    std::size_t cut_at_stop = 0;  // written by the gate thread before it ends

    void wake() const {
        const std::uint64_t one = 1;
        (void)::write(wake_fd, &one, sizeof one);
    }
};

ConnectionGate::ConnectionGate(const Options& options, OnReady on_ready)
    : impl_(std::make_unique<Impl>(options, std::move(on_ready))) {}

ConnectionGate::~ConnectionGate() {
    stop();
}

Result<void> ConnectionGate::start(int listen_fd) {
    Impl& impl = *impl_;
    impl.listen_fd = listen_fd;
    const int flags = ::fcntl(listen_fd, F_GETFL);
    ::fcntl(listen_fd, F_SETFL, flags | O_NONBLOCK);
    impl.epoll_fd = ::epoll_create1(EPOLL_CLOEXEC);
    impl.wake_fd = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (impl.epoll_fd < 0 || impl.wake_fd < 0) {
        return Error{ErrorCode::io, "http: cannot create the connection gate's epoll set: " +
                                        std::generic_category().message(errno)};
    }
    impl.watch(impl.wake_fd);
    impl.watch(listen_fd);
    impl.running = true;
    try {
        impl.thread = std::thread([&impl] { impl.loop(); });
    } catch (const std::system_error& e) {
        impl.running = false;
        return Error{ErrorCode::io,
                     std::string("http: cannot start the connection gate: ") + e.what()};
    }
    return {};
}

void ConnectionGate::readmit(const Poco::Net::StreamSocket& socket) {
    Impl& impl = *impl_;
    {
        std::lock_guard lock(impl.readmit_mutex);
        if (impl.stopped || !impl.running.load()) {
            return;  // the socket closes with its last reference
        }
        impl.readmitted.push_back(socket);
    }
    impl.wake();
}

void ConnectionGate::drain() {
    Impl& impl = *impl_;
    std::unique_lock lock(impl.readmit_mutex);
    if (!impl.running.load() || impl.drain_requested) {
        return;
    }
    impl.drain_requested = true;
    impl.wake();
    // Bounded: the gate thread answers within one loop turn.
    impl.drained.wait_for(lock, std::chrono::seconds(5),
                          [&impl] { return impl.listener_released; });
}

std::size_t ConnectionGate::stop() {
    Impl& impl = *impl_;
    {
        std::lock_guard lock(impl.readmit_mutex);
        impl.stopped = true;
        impl.readmitted.clear();
    }
    const bool was_running = impl.running.exchange(false);
    if (was_running) {
        impl.wake();
    }
    if (impl.thread.joinable()) {
        impl.thread.join();
    }
    return was_running ? impl.cut_at_stop : 0;
}

std::uint64_t ConnectionGate::refused() const {
    return impl_->refused.load();
}

std::uint64_t ConnectionGate::rejected() const {
    return impl_->rejected.load();
}

std::size_t ConnectionGate::held() const {
    // Given back but not yet taken by the gate thread counts too: a drain that waits for held()
    // to reach 0 must not stop the gate under a connection a worker has just handed over.
    std::lock_guard lock(impl_->readmit_mutex);
    return impl_->held_count.load() + impl_->readmitted.size() + impl_->in_hand.load();
}

std::uint64_t ConnectionGate::acceptFailures() const {
    return impl_->accept_failures.load();
}

}  // namespace crank::http
