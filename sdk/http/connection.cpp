#include <poll.h>

#include <algorithm>
#include <condition_variable>
#include <list>
#include <map>
#include <thread>
#include <utility>
#include <vector>

#include <Poco/Net/Context.h>
#include <Poco/Net/DNS.h>
#include <Poco/Net/IPAddress.h>
#include <Poco/Net/NetException.h>
#include <Poco/Net/SSLException.h>
#include <Poco/Net/SecureStreamSocket.h>
#include <Poco/Net/SocketAddress.h>
#include <Poco/Net/StreamSocket.h>
#include <Poco/Net/X509Certificate.h>
#include <Poco/Timespan.h>

#include <crank/sdk/http/connection.hpp>
#include <sys/socket.h>

namespace crank::sdk::http {
namespace {

// A blocking wait is cut into slices this long so that a cancelled call is noticed.
constexpr auto kSlice = std::chrono::milliseconds(200);

Poco::Timespan toTimespan(Clock::duration d) {
    const auto us = std::chrono::duration_cast<std::chrono::microseconds>(d).count();
    return Poco::Timespan(std::max<std::int64_t>(us, 1000));
}

[[noreturn]] void fail(TransportError::Kind kind, std::string detail) {
    throw TransportFailure(TransportError{kind, std::move(detail)});
}

/// One TLS client context per TLS settings, shared by every connection that uses them.
Poco::Net::Context::Ptr contextFor(const TlsOptions& tls) {
    static std::mutex mutex;
    static std::map<std::pair<bool, std::string>, Poco::Net::Context::Ptr> contexts;
    const std::lock_guard<std::mutex> lock(mutex);
    auto& context = contexts[{tls.verify, tls.ca_file}];
    if (!context) {
        Poco::Net::Context::Params params;
        params.verificationMode =
            tls.verify ? Poco::Net::Context::VERIFY_RELAXED : Poco::Net::Context::VERIFY_NONE;
        params.caLocation = tls.ca_file;
        params.loadDefaultCAs = tls.ca_file.empty();
        params.verificationDepth = 9;
        context = new Poco::Net::Context(Poco::Net::Context::TLS_CLIENT_USE, params);
    }
    return context;
}

/// Name lookups bounded by the connect deadline. getaddrinfo() blocks for as long as the system's
/// resolver wants (seconds per server and attempt), so each lookup runs on a thread of its own
/// while the caller waits at most until its deadline. A lookup that outlives its caller finishes
/// on its own; the threads are joined when they are reaped, and all of them when the plugin is
/// unloaded (this object is a static of the plugin library), so no thread runs plugin code after.
class Resolver {
public:
    static constexpr std::size_t kMaxLookups = 64;  // lookups in flight at most

    Resolver() = default;
    Resolver(const Resolver&) = delete;
    Resolver& operator=(const Resolver&) = delete;
    Resolver(Resolver&&) = delete;
    Resolver& operator=(Resolver&&) = delete;
    ~Resolver() {
        std::list<Running> all;
        {
            const std::lock_guard<std::mutex> lock(mutex_);
            all.swap(running_);
        }
        for (Running& r : all) {
            r.thread.join();
        }
    }

    static Resolver& instance() {
        static Resolver resolver;
        return resolver;
    }

    std::vector<Poco::Net::IPAddress> resolve(const std::string& host, Clock::time_point deadline,
                                              const CancelCheck& cancel) {
        auto lookup = std::make_shared<Lookup>();
        {
            const std::lock_guard<std::mutex> lock(mutex_);
            reapLocked();
            if (running_.size() >= kMaxLookups) {
                fail(TransportError::Kind::dns, "cannot resolve host \"" + host +
                                                    "\": " + std::to_string(kMaxLookups) +
                                                    " name lookups are already in progress");
            }
            running_.push_back(
                Running{lookup, std::thread([lookup, host] { run(*lookup, host); })});
        }
        std::unique_lock<std::mutex> lock(lookup->mutex);
        while (!lookup->done) {
            if (cancel && cancel()) {
                fail(TransportError::Kind::cancelled, "cancelled");
            }
            const auto now = Clock::now();
            if (now >= deadline) {
                fail(TransportError::Kind::timeout, "resolve");
            }
            lookup->cv.wait_until(lock, std::min(deadline, now + kSlice));
        }
        if (!lookup->error.empty()) {
            fail(TransportError::Kind::dns, lookup->error);
        }
        return lookup->addresses;
    }

private:
    struct Lookup {
        std::mutex mutex;
        std::condition_variable cv;
        bool done = false;
        std::vector<Poco::Net::IPAddress> addresses;
        std::string error;
    };
    struct Running {
        std::shared_ptr<Lookup> lookup;
        std::thread thread;
    };

    static void run(Lookup& lookup, const std::string& host) {
        std::vector<Poco::Net::IPAddress> addresses;
        std::string error;
        try {
            addresses = Poco::Net::DNS::hostByName(host).addresses();
            if (addresses.empty()) {
                error = "cannot resolve host \"" + host + "\" (no address)";
            }
        } catch (const Poco::Net::HostNotFoundException&) {
            error = "cannot resolve host \"" + host + "\"";
        } catch (const Poco::Net::NoAddressFoundException&) {
            error = "cannot resolve host \"" + host + "\" (no address)";
        } catch (const std::exception& e) {
            error = "cannot resolve host \"" + host + "\": " + e.what();
        }
        {
            const std::lock_guard<std::mutex> lock(lookup.mutex);
            lookup.addresses = std::move(addresses);
            lookup.error = std::move(error);
            lookup.done = true;
        }
        lookup.cv.notify_all();
    }

    /// Joins the lookups that have finished (their threads are exiting or gone).
    void reapLocked() {
        for (auto it = running_.begin(); it != running_.end();) {
            bool done = false;
            {
                const std::lock_guard<std::mutex> lock(it->lookup->mutex);
                done = it->lookup->done;
            }
            if (done) {
                it->thread.join();
                it = running_.erase(it);
            } else {
                ++it;
            }
        }
    }

    std::mutex mutex_;
    std::list<Running> running_;
};

std::vector<Poco::Net::IPAddress> resolve(const std::string& host, Clock::time_point deadline,
                                          const CancelCheck& cancel) {
    Poco::Net::IPAddress literal;
    if (Poco::Net::IPAddress::tryParse(host, literal)) {
        return {literal};
    }
    return Resolver::instance().resolve(host, deadline, cancel);
}

}  // namespace

struct Connection::Impl {
    // The socket timeouts last set, so that the common case (a full slice) costs no system call.
    Clock::duration receive_timeout{};
    Clock::duration send_timeout{};
    std::mutex mutex;  // guards interrupted and the fd against interrupt() from other threads
    bool interrupted = false;
    std::unique_ptr<Poco::Net::StreamSocket> socket;
    int fd = -1;
    std::string authority;

    void setFd() {
        const std::lock_guard<std::mutex> lock(mutex);
        fd = socket->impl()->sockfd();
        if (interrupted) {
            ::shutdown(fd, SHUT_RDWR);
        }
    }
    /// Shuts the socket down (a blocked call on it returns) without marking it interrupted.
    void shutdownFd() {
        const std::lock_guard<std::mutex> lock(mutex);
        if (fd >= 0) {
            ::shutdown(fd, SHUT_RDWR);
        }
    }
    bool isInterrupted() {
        const std::lock_guard<std::mutex> lock(mutex);
        return interrupted;
    }
};

Connection::Connection() : impl_(std::make_unique<Impl>()) {}

Connection::~Connection() {
    if (impl_->socket) {
        {
            const std::lock_guard<std::mutex> lock(impl_->mutex);
            impl_->fd = -1;
        }
        try {
            impl_->socket->close();
        } catch (...) {  // NOLINT(bugprone-empty-catch): closing is best effort
        }
    }
}

std::vector<std::string> resolveHost(const std::string& host, Clock::time_point deadline,
                                     const CancelCheck& cancel) {
    std::vector<std::string> out;
    for (const Poco::Net::IPAddress& address : resolve(host, deadline, cancel)) {
        out.push_back(address.toString());
    }
    return out;
}

std::string poolKey(const Url& url, const TlsOptions& tls) {
    std::string key = url.origin();
    if (url.tls()) {
        key.append(tls.verify ? "|verify|" : "|noverify|").append(tls.ca_file);
    }
    return key;
}

std::unique_ptr<Connection> Connection::open(const Url& url, const TlsOptions& tls,
                                             Clock::time_point deadline, const CancelCheck& cancel,
                                             const AddressCheck& check) {
    std::unique_ptr<Connection> c(new Connection());
    c->pool_key_ = http::poolKey(url, tls);
    c->impl_->authority = url.authority();
    const std::vector<Poco::Net::IPAddress> addresses = resolve(url.host, deadline, cancel);
    if (addresses.empty()) {
        fail(TransportError::Kind::dns, "cannot resolve host \"" + url.host + "\" (no address)");
    }
    std::string lastError;
    TransportError::Kind lastKind = TransportError::Kind::io;
    for (const Poco::Net::IPAddress& address : addresses) {
        if (cancel && cancel()) {
            fail(TransportError::Kind::cancelled, "cancelled");
        }
        std::string text = address.toString();
        if (check) {
            if (std::optional<std::string> refused = check(text)) {
                if (lastError.empty()) {  // a connect error of another address says more
                    lastKind = TransportError::Kind::refused;
                    lastError = "will not connect to " + url.authority() + ": " + *refused;
                }
                continue;
            }
        }
        const auto now = Clock::now();
        if (now >= deadline) {
            fail(TransportError::Kind::timeout, "connect");
        }
        auto socket = std::make_unique<Poco::Net::StreamSocket>(address.family());
        try {
            socket->connect(Poco::Net::SocketAddress(address, url.port),
                            toTimespan(deadline - now));
            socket->setNoDelay(true);
        } catch (const Poco::TimeoutException&) {
            fail(TransportError::Kind::timeout, "connect");
        } catch (const Poco::Net::ConnectionRefusedException&) {
            lastKind = TransportError::Kind::refused;
            lastError = "connection refused by " + url.authority();
            continue;
        } catch (const Poco::Exception& e) {
            lastKind = TransportError::Kind::io;
            lastError = "cannot connect to " + url.authority() + ": " + e.displayText();
            continue;
        }
        c->impl_->socket = std::move(socket);
        c->peer_address_ = std::move(text);
        break;
    }
    if (!c->impl_->socket) {
        fail(lastKind, lastError);
    }
    c->impl_->setFd();
    if (url.tls()) {
        // OpenSSL's blocking handshake does not honour the socket's timeouts reliably: a guard
        // thread shuts the socket down at the deadline so that a stalled peer cannot hold it.
        std::mutex guardMutex;
        std::condition_variable guardCv;
        bool handshakeDone = false;
        bool guardFired = false;
        Impl& impl = *c->impl_;
        std::thread guard([&] {
            std::unique_lock<std::mutex> lock(guardMutex);
            while (!handshakeDone) {
                const auto wake = std::min(deadline, Clock::now() + kSlice);
                guardCv.wait_until(lock, wake);
                if (handshakeDone) {
                    break;
                }
                if (Clock::now() >= deadline || (cancel && cancel())) {
                    guardFired = Clock::now() >= deadline;
                    impl.shutdownFd();
                    break;
                }
            }
        });
        // Runs once whatever the path (a second join() would throw std::system_error).
        const auto finishGuard = [&] {
            if (!guard.joinable()) {
                return;
            }
            {
                const std::lock_guard<std::mutex> lock(guardMutex);
                handshakeDone = true;
            }
            guardCv.notify_all();
            guard.join();
        };
        try {
            const Poco::Timespan left = toTimespan(deadline - Clock::now());
            c->impl_->socket->setReceiveTimeout(left);
            c->impl_->socket->setSendTimeout(left);
            auto secure = std::make_unique<Poco::Net::SecureStreamSocket>(
                Poco::Net::SecureStreamSocket::attach(*c->impl_->socket, url.host,
                                                      contextFor(tls)));
            secure->completeHandshake();
            finishGuard();
            // The chain was verified during the handshake; the name is checked here, explicitly,
            // rather than trusting a library default.
            if (tls.verify && !secure->peerCertificate().verify(url.host)) {
                fail(TransportError::Kind::tls, "TLS handshake with " + url.authority() +
                                                    " failed: its certificate is not for \"" +
                                                    url.host + "\"");
            }
            c->impl_->socket = std::move(secure);
        } catch (const TransportFailure&) {
            throw;
        } catch (const Poco::Exception& e) {
            finishGuard();
            if (guardFired) {
                fail(TransportError::Kind::timeout, "connect");
            }
            if (c->impl_->isInterrupted() || (cancel && cancel())) {
                fail(TransportError::Kind::cancelled, "cancelled");
            }
            fail(TransportError::Kind::tls,
                 "TLS handshake with " + url.authority() + " failed: " + e.displayText());
        } catch (...) {
            finishGuard();
            throw;
        }
        c->impl_->setFd();
    }
    c->countUse();
    return c;
}

void Connection::sendAll(std::string_view bytes, Clock::time_point deadline,
                         const CancelCheck& cancel) {
    while (!bytes.empty()) {
        if (impl_->isInterrupted() || (cancel && cancel())) {
            fail(TransportError::Kind::cancelled, "cancelled");
        }
        const auto now = Clock::now();
        if (now >= deadline) {
            fail(TransportError::Kind::timeout, "send");
        }
        try {
            const Clock::duration wait = std::min<Clock::duration>(deadline - now, kSlice);
            if (wait != impl_->send_timeout) {
                impl_->socket->setSendTimeout(toTimespan(wait));
                impl_->send_timeout = wait;
            }
            const int sent = impl_->socket->sendBytes(
                bytes.data(), static_cast<int>(std::min<std::size_t>(bytes.size(), 1U << 20U)));
            if (sent <= 0) {
                continue;  // a TLS want-write: try again
            }
            bytes.remove_prefix(static_cast<std::size_t>(sent));
        } catch (const Poco::TimeoutException&) {
            continue;
        } catch (const Poco::Exception& e) {
            if (impl_->isInterrupted()) {
                fail(TransportError::Kind::cancelled, "cancelled");
            }
            fail(TransportError::Kind::closed, "sending the request failed: " + e.displayText());
        }
    }
}

std::size_t Connection::readSome(char* buffer, std::size_t size, Clock::time_point deadline,
                                 const CancelCheck& cancel) {
    for (;;) {
        if (impl_->isInterrupted() || (cancel && cancel())) {
            fail(TransportError::Kind::cancelled, "cancelled");
        }
        const auto now = Clock::now();
        if (now >= deadline) {
            fail(TransportError::Kind::timeout, "read");
        }
        try {
            const Clock::duration wait = std::min<Clock::duration>(deadline - now, kSlice);
            if (wait != impl_->receive_timeout) {
                impl_->socket->setReceiveTimeout(toTimespan(wait));
                impl_->receive_timeout = wait;
            }
            const int n = impl_->socket->receiveBytes(
                buffer, static_cast<int>(std::min<std::size_t>(size, 1U << 20U)));
            if (n > 0) {
                return static_cast<std::size_t>(n);
            }
            if (n == 0) {
                if (impl_->isInterrupted()) {
                    fail(TransportError::Kind::cancelled, "cancelled");
                }
                return 0;
            }
            // A negative count is a TLS "want read": nothing yet.
        } catch (const Poco::TimeoutException&) {
            continue;
        } catch (const Poco::Exception& e) {
            if (impl_->isInterrupted()) {
                fail(TransportError::Kind::cancelled, "cancelled");
            }
            fail(TransportError::Kind::io, "reading the response failed: " + e.displayText());
        }
    }
}

void Connection::interrupt() noexcept {
    const std::lock_guard<std::mutex> lock(impl_->mutex);
    impl_->interrupted = true;
    if (impl_->fd >= 0) {
        ::shutdown(impl_->fd, SHUT_RDWR);
    }
}

bool Connection::usableWhenIdle() const {
    if (impl_->isInterrupted() || impl_->fd < 0) {
        return false;
    }
    pollfd p{impl_->fd, POLLIN, 0};
    const int r = ::poll(&p, 1, 0);
    return r == 0;
}

}  // namespace crank::sdk::http
