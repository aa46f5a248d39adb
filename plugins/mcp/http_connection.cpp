#include "http_connection.h"

#include <poll.h>

#include <algorithm>
#include <functional>
#include <system_error>

#include <Poco/Exception.h>
#include <Poco/Net/Context.h>
#include <Poco/Net/DNS.h>
#include <Poco/Net/HostEntry.h>
#include <Poco/Net/IPAddress.h>
#include <Poco/Net/SSLManager.h>
#include <Poco/Net/SecureStreamSocket.h>
#include <Poco/Net/SocketAddress.h>
#include <Poco/Net/StreamSocket.h>
#include <Poco/Net/X509Certificate.h>
#include <Poco/Timespan.h>
#include <rapidjson/document.h>
#include <rapidjson/error/en.h>

#include "json_text.h"
#include "sse_parser.h"
#include <crank/sdk/json.hpp>
#include <sys/socket.h>

namespace crank::mcpc {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

/// An http(s) URL, as the transport uses it.
struct HttpUrl {
    bool tls = false;
    std::string host;  ///< lowercase; an IPv6 address without its brackets
    std::uint16_t port = 0;
    std::string target = "/";  ///< path and query

    /// host[:port], as the Host header has it (the port left out when it is the default).
    std::string authority() const {
        std::string a = host.find(':') != std::string::npos ? "[" + host + "]" : host;
        if (port != (tls ? 443 : 80)) {
            a += ":" + std::to_string(port);
        }
        return a;
    }
    std::string origin() const { return (tls ? "https://" : "http://") + authority(); }
    /// For messages: without the query, which may carry a secret (a key, a session id).
    std::string shown() const { return origin() + target.substr(0, target.find('?')); }
};

/// Why an exchange stopped before it was done.
enum class HttpHalt {
    none,
    cancelled,  ///< RequestHooks::cancelled said so
    closed,     ///< the connection is closing or ended
    answered,   ///< the answer arrived another way (on another stream)
};
using HaltCheck = std::function<HttpHalt()>;

class HttpWireFailure : public std::exception {
public:
    enum class Kind {
        halted,   ///< the halt check said stop (halt() says why)
        timeout,  ///< the deadline of the exchange passed
        failed,   ///< anything else; what() says what, naming the request ("POST http://...")
    };
    HttpWireFailure(Kind kind, HttpHalt halt, std::string message)
        : kind_(kind), halt_(halt), message_(std::move(message)) {}
    Kind kind() const noexcept { return kind_; }
    HttpHalt halt() const noexcept { return halt_; }
    const char* what() const noexcept override { return message_.c_str(); }

private:
    Kind kind_;
    HttpHalt halt_;
    std::string message_;
};

/// The status line and headers of a response.
struct HttpHead {
    int status = 0;
    std::string reason;
    std::vector<std::pair<std::string, std::string>> headers;  ///< names lowercased

    /// The first value of header `lower_name`, or null.
    const std::string* header(std::string_view lower_name) const {
        for (const auto& [name, value] : headers) {
            if (name == lower_name) {
                return &value;
            }
        }
        return nullptr;
    }
    /// The media type of Content-Type, lowercased, without parameters ("" when none).
    std::string mediaType() const;
};

namespace {

/// Every blocking wait is cut into slices this long, so that a cancellation, a close() or the
/// deadline is noticed promptly.
constexpr milliseconds kSlice{50};
constexpr std::size_t kMaxHeadBytes = std::size_t{64} * 1024;    // status line plus headers
constexpr std::size_t kMaxChunkLine = 4096;                      // a chunk-size or trailer line
constexpr std::size_t kExcerpt = 300;                            // of a body, in an error message
constexpr std::size_t kErrorBodyBytes = std::size_t{64} * 1024;  // read of an error's body
constexpr milliseconds kErrorBodyWait{1'000};
constexpr std::size_t kMaxSessionId = 1024;
constexpr std::size_t kMaxProtocolVersion = 64;
constexpr milliseconds kCancelBound{2'000};  // the POST of notifications/cancelled
constexpr std::size_t kReadChunk = 16384;
constexpr std::size_t kSendChunk = std::size_t{64} * 1024;

std::string lower(std::string_view text) {
    std::string out(text);
    for (char& c : out) {
        if (c >= 'A' && c <= 'Z') {
            c = static_cast<char>(c - 'A' + 'a');
        }
    }
    return out;
}

std::string_view trim(std::string_view text) {
    const std::size_t first = text.find_first_not_of(" \t");
    if (first == std::string_view::npos) {
        return {};
    }
    return text.substr(first, text.find_last_not_of(" \t") - first + 1);
}

/// At most about `max` bytes of `text`, for a message: control characters and bytes that are
/// not UTF-8 become '?' (line breaks and tabs a space), cut at a character boundary.
std::string excerpt(std::string_view text, std::size_t max = kExcerpt) {
    std::string out;
    std::size_t i = 0;
    while (i < text.size()) {
        const auto c = static_cast<unsigned char>(text[i]);
        std::size_t len = 0;
        if (c < 0x80) {
            len = 1;
        } else if ((c >> 5U) == 0x6) {
            len = 2;
        } else if ((c >> 4U) == 0xE) {
            len = 3;
        } else if ((c >> 3U) == 0x1E) {
            len = 4;
        }
        bool valid = len > 0 && i + len <= text.size();
        for (std::size_t k = 1; valid && k < len; ++k) {
            valid = (static_cast<unsigned char>(text[i + k]) & 0xC0U) == 0x80U;
        }
        if (out.size() + (valid ? len : 1) > max) {
            out += "...";
            return out;
        }
        if (!valid) {
            out += '?';
            ++i;
            continue;
        }
        if (len == 1 && (c < 0x20 || c == 0x7F)) {
            out += c == '\n' || c == '\r' || c == '\t' ? ' ' : '?';
        } else {
            out.append(text.substr(i, len));
        }
        i += len;
    }
    return out;
}

std::string errnoText(int err) {
    return std::generic_category().message(err);  // strerror() is not thread-safe
}

bool isToken(std::string_view text) {
    if (text.empty()) {
        return false;
    }
    return std::all_of(text.begin(), text.end(), [](char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
               std::string_view("!#$%&'*+-.^_`|~").find(c) != std::string_view::npos;
    });
}

/// Every character visible ASCII (0x21-0x7E), and at least one.
bool isVisibleAscii(std::string_view text) {
    return !text.empty() &&
           std::all_of(text.begin(), text.end(), [](char c) { return c > 0x20 && c < 0x7F; });
}

RpcOutcome failure(std::string message) {
    RpcOutcome r;
    r.error_message = std::move(message);
    return r;
}

std::string statusText(const HttpHead& head) {
    std::string s = "HTTP " + std::to_string(head.status);
    if (!head.reason.empty()) {
        s += " " + excerpt(head.reason, 60);
    }
    return s;
}

[[noreturn]] void failWire(std::string message) {
    throw HttpWireFailure(HttpWireFailure::Kind::failed, HttpHalt::none, std::move(message));
}

/// Throws when `halt` says stop or `deadline` has passed.
void checkHalt(const HaltCheck& halt, Clock::time_point deadline) {
    const HttpHalt h = halt ? halt() : HttpHalt::none;
    if (h != HttpHalt::none) {
        throw HttpWireFailure(HttpWireFailure::Kind::halted, h, "halted");
    }
    if (Clock::now() >= deadline) {
        throw HttpWireFailure(HttpWireFailure::Kind::timeout, HttpHalt::none, "timed out");
    }
}

/// Waits `wait`, polling `halt` every slice; throws as checkHalt() does.
void pause(Clock::duration wait, Clock::time_point deadline, const HaltCheck& halt) {
    const Clock::time_point until = std::min(deadline, Clock::now() + wait);
    while (true) {
        checkHalt(halt, deadline);
        const Clock::time_point now = Clock::now();
        if (now >= until) {
            return;
        }
        std::this_thread::sleep_for(std::min<Clock::duration>(until - now, kSlice));
    }
}

/// poll() timeout: a slice, or less when `until` comes sooner (at least 1 ms).
int pollMs(Clock::time_point until) {
    const auto left = std::chrono::duration_cast<milliseconds>(until - Clock::now());
    return static_cast<int>(std::clamp<milliseconds::rep>(left.count(), 1, kSlice.count()));
}

Poco::Timespan timespan(Clock::duration d) {
    const auto us = std::chrono::duration_cast<std::chrono::microseconds>(d).count();
    return Poco::Timespan(std::max<std::int64_t>(us, 1000));
}

/// Parses an absolute http(s) URL.
bool parseUrl(std::string_view text, HttpUrl& url, std::string& error) {
    const std::size_t sep = text.find("://");
    const std::string scheme = lower(text.substr(0, sep));
    if (sep == std::string_view::npos || (scheme != "http" && scheme != "https")) {
        error = sdk::jsonQuote(excerpt(text, 200)) + " is not an http:// or https:// URL";
        return false;
    }
    url = HttpUrl{};
    url.tls = scheme == "https";
    const std::string_view rest = text.substr(sep + 3);
    const std::size_t authorityEnd = rest.find_first_of("/?#");
    const std::string_view authority = rest.substr(0, authorityEnd);
    std::string_view remainder =
        authorityEnd == std::string_view::npos ? std::string_view() : rest.substr(authorityEnd);
    if (authority.find('@') != std::string_view::npos) {
        error =
            "a user name or password in the URL is not supported (send an Authorization "
            "header instead)";
        return false;
    }
    std::string_view host = authority;
    std::string_view portText;
    bool bracketed = false;
    if (!authority.empty() && authority.front() == '[') {
        const std::size_t close = authority.find(']');
        if (close == std::string_view::npos) {
            error = "the URL's IPv6 address has no closing ']'";
            return false;
        }
        host = authority.substr(1, close - 1);
        const std::string_view after = authority.substr(close + 1);
        if (!after.empty() && after.front() != ':') {
            error = "the URL's authority is malformed";
            return false;
        }
        portText = after.empty() ? after : after.substr(1);
        bracketed = true;
    } else if (const std::size_t colon = authority.rfind(':'); colon != std::string_view::npos) {
        host = authority.substr(0, colon);
        portText = authority.substr(colon + 1);
    }
    const auto hostChar = [bracketed](char c) {
        const bool alnum =
            (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
        return bracketed ? alnum || c == ':' || c == '.'
                         : alnum || c == '-' || c == '.' || c == '_';
    };
    if (host.empty() || !std::all_of(host.begin(), host.end(), hostChar)) {
        error = "the URL has no valid host name";
        return false;
    }
    url.host = lower(host);
    url.port = url.tls ? 443 : 80;
    if (!portText.empty()) {
        if (portText.size() > 5 || portText.find_first_not_of("0123456789") != std::string::npos ||
            std::stoi(std::string(portText)) < 1 || std::stoi(std::string(portText)) > 65535) {
            error = "the URL's port is not a number from 1 to 65535";
            return false;
        }
        url.port = static_cast<std::uint16_t>(std::stoi(std::string(portText)));
    }
    remainder = remainder.substr(0, remainder.find('#'));
    if (!remainder.empty() && !isVisibleAscii(remainder)) {
        error = "the URL's path has spaces, control or non-ASCII characters (percent-encode them)";
        return false;
    }
    if (remainder.empty() || remainder.front() == '?') {
        url.target = "/" + std::string(remainder);
    } else {
        url.target = std::string(remainder);
    }
    return true;
}

/// RFC 3986 5.2.4, for a path that starts with '/'.
std::string removeDotSegments(std::string_view path) {
    std::vector<std::string_view> kept;
    std::size_t start = 1;
    while (true) {
        const std::size_t slash = path.find('/', start);
        const bool last = slash == std::string_view::npos;
        const std::string_view segment = path.substr(start, last ? path.npos : slash - start);
        if (segment == "..") {
            if (!kept.empty()) {
                kept.pop_back();
            }
            if (last) {
                kept.emplace_back();
            }
        } else if (segment == ".") {
            if (last) {
                kept.emplace_back();
            }
        } else {
            kept.push_back(segment);
        }
        if (last) {
            break;
        }
        start = slash + 1;
    }
    std::string out;
    for (const std::string_view s : kept) {
        out += '/';
        out.append(s);
    }
    return out.empty() ? "/" : out;
}

/// Resolves the URI reference `ref` (an endpoint event's data) against `base`.
bool resolveReference(const HttpUrl& base, std::string_view ref, HttpUrl& out, std::string& error) {
    ref = trim(ref);
    if (!isVisibleAscii(ref)) {
        error = ref.empty() ? "it is empty"
                            : "it has spaces, control or non-ASCII characters: " +
                                  sdk::jsonQuote(excerpt(ref, 200));
        return false;
    }
    ref = ref.substr(0, ref.find('#'));
    const std::size_t colon = ref.find(':');
    const std::size_t delimiter = ref.find_first_of("/?");
    if (colon != std::string_view::npos &&
        (delimiter == std::string_view::npos || colon < delimiter)) {
        return parseUrl(ref, out, error);  // an absolute URL
    }
    if (ref.substr(0, 2) == "//") {
        return parseUrl((base.tls ? "https:" : "http:") + std::string(ref), out, error);
    }
    out = base;
    const std::string basePath = base.target.substr(0, base.target.find('?'));
    const std::size_t q = ref.find('?');
    std::string path(ref.substr(0, q));
    const std::string query =
        q == std::string_view::npos ? std::string() : std::string(ref.substr(q));
    if (path.empty()) {
        path = basePath;
    } else if (path.front() != '/') {
        path = basePath.substr(0, basePath.rfind('/') + 1) + path;
    }
    out.target = removeDotSegments(path) + query;
    return true;
}

/// One TLS client context per (verify, CA file), shared by the connections that use them.
Poco::Net::Context::Ptr tlsContext(bool verify, const std::string& ca_file) {
    static std::once_flag initialized;
    std::call_once(initialized, [] { Poco::Net::initializeSSL(); });
    static std::mutex mutex;
    static std::map<std::pair<bool, std::string>, Poco::Net::Context::Ptr> contexts;
    const std::lock_guard lock(mutex);
    Poco::Net::Context::Ptr& context = contexts[{verify, ca_file}];
    if (!context) {
        Poco::Net::Context::Params params;
        params.verificationMode =
            verify ? Poco::Net::Context::VERIFY_RELAXED : Poco::Net::Context::VERIFY_NONE;
        params.caLocation = ca_file;
        params.loadDefaultCAs = ca_file.empty();
        params.verificationDepth = 9;
        context = new Poco::Net::Context(Poco::Net::Context::TLS_CLIENT_USE, params);
    }
    return context;
}

/// Shuts a socket down when `until` passes before stop() is called: a TLS handshake in OpenSSL's
/// blocking mode is bounded by it, whatever the peer does.
class HandshakeGuard {
public:
    HandshakeGuard(int fd, Clock::time_point until)
        : thread_([this, fd, until] {
              std::unique_lock lock(mutex_);
              if (!done_cv_.wait_until(lock, until, [this] { return done_; })) {
                  fired_ = true;
                  ::shutdown(fd, SHUT_RDWR);
              }
          }) {}
    ~HandshakeGuard() { stop(); }
    HandshakeGuard(const HandshakeGuard&) = delete;
    HandshakeGuard& operator=(const HandshakeGuard&) = delete;
    HandshakeGuard(HandshakeGuard&&) = delete;
    HandshakeGuard& operator=(HandshakeGuard&&) = delete;

    /// Ends the guard; true when it had fired.
    bool stop() {
        {
            const std::lock_guard lock(mutex_);
            done_ = true;
        }
        done_cv_.notify_all();
        if (thread_.joinable()) {
            thread_.join();
        }
        return fired_;
    }

private:
    std::mutex mutex_;
    std::condition_variable done_cv_;
    bool done_ = false;
    bool fired_ = false;
    std::thread thread_;
};

/// What a JSON-RPC message is, for routing.
struct Classified {
    enum class Kind { answer, message, invalid } kind = Kind::invalid;
    bool int_id = false;
    std::int64_t id = 0;
    bool null_id = false;
};

Classified classify(const rapidjson::Value& v) {
    Classified c;
    if (!v.IsObject()) {
        return c;
    }
    const auto method = v.FindMember("method");
    const auto id = v.FindMember("id");
    if (method == v.MemberEnd() && id != v.MemberEnd() &&
        (v.HasMember("result") || v.HasMember("error"))) {
        c.kind = Classified::Kind::answer;
        c.int_id = id->value.IsInt64();
        c.id = c.int_id ? id->value.GetInt64() : 0;
        c.null_id = id->value.IsNull();
    } else if (method != v.MemberEnd() && method->value.IsString()) {
        c.kind = Classified::Kind::message;
    }
    return c;
}

/// An answer's outcome: its result, or its error's code, message and data.
RpcOutcome answerOutcome(const rapidjson::Value& v) {
    RpcOutcome outcome;
    if (v.HasMember("result")) {
        outcome.ok = true;
        outcome.result_json = jsonText(v["result"]);
        return outcome;
    }
    const rapidjson::Value& e = v["error"];
    outcome.error_code =
        e.IsObject() && e.HasMember("code") && e["code"].IsInt64() ? e["code"].GetInt64() : -32603;
    outcome.error_message =
        e.IsObject() && e.HasMember("message") && e["message"].IsString()
            ? std::string(e["message"].GetString(), e["message"].GetStringLength())
            : std::string("the server answered an error without a message");
    if (e.IsObject() && e.HasMember("data")) {
        outcome.error_data_json = jsonText(e["data"]);
    }
    return outcome;
}

/// Runs `f` when it goes out of scope.
template <typename F>
class Finally {
public:
    explicit Finally(F f) : f_(std::move(f)) {}
    ~Finally() { f_(); }
    Finally(const Finally&) = delete;
    Finally& operator=(const Finally&) = delete;
    Finally(Finally&&) = delete;
    Finally& operator=(Finally&&) = delete;

private:
    F f_;
};

bool isStatusOk(int status) {
    return status >= 200 && status < 300;
}

bool isJsonType(const std::string& type) {
    return type == "application/json" ||
           (type.size() > 5 && type.compare(type.size() - 5, 5, "+json") == 0);
}

}  // namespace

std::string HttpHead::mediaType() const {
    const std::string* type = header("content-type");
    return type == nullptr ? std::string()
                           : lower(trim(std::string_view(*type).substr(0, type->find(';'))));
}

/// One HTTP/1.1 exchange on a connection of its own ("Connection: close"): the request written,
/// the response head read (bounded), the body unframed (Content-Length, chunked, or until the
/// connection closes). Every wait is cut into slices polling a halt check and bounded by a
/// deadline. Throws HttpWireFailure.
class HttpWire {
public:
    /// Connects to `target` (with TLS for https). The TCP connect and the TLS handshake get at
    /// most options.connect_timeout, and end at `deadline` anyway.
    HttpWire(const char* verb, const HttpUrl& target, const HttpOptions& options,
             Clock::time_point deadline, const HaltCheck& halt);
    ~HttpWire() = default;
    HttpWire(const HttpWire&) = delete;
    HttpWire& operator=(const HttpWire&) = delete;
    HttpWire(HttpWire&&) = delete;
    HttpWire& operator=(HttpWire&&) = delete;

    void send(std::string_view bytes, Clock::time_point deadline, const HaltCheck& halt);
    /// The response head (1xx answers skipped).
    const HttpHead& readHead(Clock::time_point deadline, const HaltCheck& halt);
    /// Appends body bytes to `out`; false (nothing appended) at the end of the body.
    bool readBody(std::string& out, Clock::time_point deadline, const HaltCheck& halt);
    /// Up to `max` bytes of the body, read until `until` at most (an error's explanation).
    /// Never throws: what could be read.
    std::string readAtMost(std::size_t max, Clock::time_point until);
    /// The body's Content-Length, when it has one.
    std::optional<std::uint64_t> contentLength() const { return content_length_; }
    /// The head readHead() read.
    const HttpHead& head() const { return head_; }
    /// "POST http://host/path", for messages.
    const std::string& what() const { return what_; }

private:
    [[noreturn]] void fail(const std::string& problem) const { failWire(what_ + ": " + problem); }
    /// Reads what is there into in_; false when the peer closed the connection.
    bool receive(Clock::time_point deadline, const HaltCheck& halt);
    std::size_t buffered() const { return in_.size() - pos_; }
    void parseHead(std::string_view text);

    enum class Framing { none, length, chunked, close };
    enum class Chunk { size, data, data_end, trailer };

    std::string what_;
    std::unique_ptr<Poco::Net::StreamSocket> socket_;
    int fd_ = -1;
    std::string in_;  // bytes received and not consumed yet (from pos_)
    std::size_t pos_ = 0;
    bool received_any_ = false;
    HttpHead head_;
    Framing framing_ = Framing::none;
    Chunk chunk_ = Chunk::size;
    std::uint64_t remaining_ = 0;  // of the body (length) or of the chunk (chunked)
    std::optional<std::uint64_t> content_length_;
    std::size_t trailer_bytes_ = 0;
    bool encoded_ = false;  // a Content-Encoding crank did not ask for
    bool done_ = false;
};

HttpWire::HttpWire(const char* verb, const HttpUrl& target, const HttpOptions& options,
                   Clock::time_point deadline, const HaltCheck& halt)
    : what_(std::string(verb) + " " + target.shown()) {
    checkHalt(halt, deadline);
    const Clock::time_point connectBy = std::min(deadline, Clock::now() + options.connect_timeout);
    const auto connectTimedOut = [&](const char* step) {
        if (connectBy >= deadline) {
            throw HttpWireFailure(HttpWireFailure::Kind::timeout, HttpHalt::none, "timed out");
        }
        fail(std::string(step) + " within " + std::to_string(options.connect_timeout.count()) +
             " ms (connect_timeout)");
    };
    std::vector<Poco::Net::IPAddress> addresses;
    try {
        Poco::Net::IPAddress literal;
        if (Poco::Net::IPAddress::tryParse(target.host, literal)) {
            addresses.push_back(literal);
        } else {
            addresses = Poco::Net::DNS::hostByName(target.host).addresses();
        }
    } catch (const Poco::Exception& e) {
        fail("cannot resolve " + sdk::jsonQuote(target.host) + ": " + e.displayText());
    }
    if (addresses.empty()) {
        fail("cannot resolve " + sdk::jsonQuote(target.host) + ": no address");
    }
    // Each address in turn (::1 then 127.0.0.1 for localhost...) until one accepts.
    std::unique_ptr<Poco::Net::StreamSocket> socket;
    std::string refused;
    for (const Poco::Net::IPAddress& ip : addresses) {
        try {
            auto attempt = std::make_unique<Poco::Net::StreamSocket>(ip.family());
            attempt->connectNB(Poco::Net::SocketAddress(ip, target.port));
            const int fd = attempt->impl()->sockfd();
            int r = 0;
            while (r <= 0) {
                checkHalt(halt, deadline);
                if (Clock::now() >= connectBy) {
                    connectTimedOut("cannot connect");
                }
                pollfd p{fd, POLLOUT, 0};
                r = ::poll(&p, 1, pollMs(connectBy));
                if (r < 0 && errno != EINTR) {
                    fail("cannot connect: " + errnoText(errno));
                }
            }
            if (const int err = attempt->impl()->socketError(); err != 0) {
                refused = errnoText(err);
                continue;
            }
            attempt->setBlocking(true);
            attempt->setNoDelay(true);
            socket = std::move(attempt);
            fd_ = fd;
            break;
        } catch (const Poco::Exception& e) {
            refused = e.displayText();
        }
    }
    if (!socket) {
        fail("cannot connect: " + refused);
    }
    if (target.tls) {
        Poco::Net::Context::Ptr context;
        try {
            context = tlsContext(options.tls_verify, options.ca_file);
        } catch (const Poco::Exception& e) {
            fail("cannot set TLS up: " + e.displayText());
        }
        HandshakeGuard guard(fd_, connectBy);
        try {
            const Poco::Timespan budget = timespan(connectBy - Clock::now());
            socket->setReceiveTimeout(budget);
            socket->setSendTimeout(budget);
            auto secure = std::make_unique<Poco::Net::SecureStreamSocket>(
                Poco::Net::SecureStreamSocket::attach(*socket, target.host, context));
            secure->completeHandshake();
            if (guard.stop()) {
                connectTimedOut("the TLS handshake did not complete");
            }
            // The chain was verified in the handshake; the name is checked here, explicitly.
            if (options.tls_verify && !secure->peerCertificate().verify(target.host)) {
                fail("the server's TLS certificate is not for " + sdk::jsonQuote(target.host));
            }
            socket = std::move(secure);
        } catch (const Poco::Exception& e) {
            if (guard.stop()) {
                connectTimedOut("the TLS handshake did not complete");
            }
            fail("the TLS handshake failed: " + e.displayText());
        }
    }
    try {
        socket->setReceiveTimeout(timespan(kSlice));
        socket->setSendTimeout(timespan(kSlice));
    } catch (const Poco::Exception& e) {
        fail("cannot set the socket up: " + e.displayText());
    }
    socket_ = std::move(socket);
}

void HttpWire::send(std::string_view bytes, Clock::time_point deadline, const HaltCheck& halt) {
    while (!bytes.empty()) {
        checkHalt(halt, deadline);
        int n = 0;
        try {
            n = socket_->sendBytes(
                bytes.data(), static_cast<int>(std::min(bytes.size(), kSendChunk)), MSG_NOSIGNAL);
        } catch (const Poco::TimeoutException&) {
            continue;
        } catch (const Poco::Exception& e) {
            fail("sending the request failed: " + e.displayText());
        }
        if (n > 0) {
            bytes.remove_prefix(static_cast<std::size_t>(n));
        }
    }
}

bool HttpWire::receive(Clock::time_point deadline, const HaltCheck& halt) {
    if (pos_ == in_.size()) {
        in_.clear();
        pos_ = 0;
    } else if (pos_ > kReadChunk * 4) {
        in_.erase(0, pos_);
        pos_ = 0;
    }
    char buffer[kReadChunk];
    while (true) {
        checkHalt(halt, deadline);
        int n = 0;
        try {
            n = socket_->receiveBytes(buffer, static_cast<int>(sizeof buffer));
        } catch (const Poco::TimeoutException&) {
            continue;
        } catch (const Poco::Exception& e) {
            fail("the connection broke: " + e.displayText());
        }
        if (n > 0) {
            in_.append(buffer, static_cast<std::size_t>(n));
            received_any_ = true;
            return true;
        }
        if (n == 0) {
            return false;
        }
        // A negative count: TLS needs more bytes before it has any to give.
        pollfd p{fd_, POLLIN, 0};
        ::poll(&p, 1, pollMs(deadline));
    }
}

const HttpHead& HttpWire::readHead(Clock::time_point deadline, const HaltCheck& halt) {
    while (true) {
        std::size_t end = std::string_view::npos;
        std::size_t endLength = 0;
        while (true) {
            const std::string_view view(in_.data() + pos_, buffered());
            const std::size_t crlf = view.find("\r\n\r\n");
            const std::size_t lf = view.find("\n\n");
            if (crlf != std::string_view::npos && (lf == std::string_view::npos || crlf < lf)) {
                end = crlf;
                endLength = 4;
            } else if (lf != std::string_view::npos) {
                end = lf;
                endLength = 2;
            }
            if (end != std::string_view::npos || view.size() > kMaxHeadBytes) {
                break;
            }
            if (!receive(deadline, halt)) {
                fail(received_any_ ? "the connection closed in the middle of the response head"
                                   : "the server closed the connection without answering");
            }
        }
        if (end > kMaxHeadBytes) {  // npos too: no end within the limit
            fail("the response head is larger than " + std::to_string(kMaxHeadBytes) + " bytes");
        }
        parseHead(std::string_view(in_.data() + pos_, end));
        pos_ += end + endLength;
        if (head_.status == 101) {
            fail("the server switched protocols (HTTP 101)");
        }
        if (head_.status >= 200) {
            break;
        }
        // 1xx (100 Continue, 103 Early Hints): the real answer follows.
    }
    framing_ = Framing::close;
    if (head_.status == 204 || head_.status == 304) {
        framing_ = Framing::none;
    } else if (const std::string* te = head_.header("transfer-encoding")) {
        if (lower(trim(*te)) != "chunked") {
            fail("the response uses Transfer-Encoding " + sdk::jsonQuote(excerpt(*te, 60)) +
                 ", which crank does not decode");
        }
        framing_ = Framing::chunked;
    } else {
        for (const auto& [name, value] : head_.headers) {
            if (name != "content-length") {
                continue;
            }
            const std::string_view digits = trim(value);
            if (digits.empty() || digits.size() > 18 ||
                digits.find_first_not_of("0123456789") != std::string_view::npos ||
                (content_length_ && *content_length_ != std::stoull(std::string(digits)))) {
                fail("the response has an invalid Content-Length");
            }
            content_length_ = std::stoull(std::string(digits));
        }
        if (content_length_) {
            framing_ = Framing::length;
            remaining_ = *content_length_;
        }
    }
    done_ = framing_ == Framing::none;
    if (const std::string* ce = head_.header("content-encoding")) {
        encoded_ = lower(trim(*ce)) != "identity";
    }
    return head_;
}

void HttpWire::parseHead(std::string_view text) {
    head_ = HttpHead{};
    std::vector<std::string_view> lines;
    while (!text.empty()) {
        const std::size_t lf = text.find('\n');
        std::string_view line = text.substr(0, lf);
        if (!line.empty() && line.back() == '\r') {
            line.remove_suffix(1);
        }
        lines.push_back(line);
        text.remove_prefix(lf == std::string_view::npos ? text.size() : lf + 1);
    }
    const std::string_view status = lines.empty() ? std::string_view() : lines.front();
    if (status.substr(0, 7) != "HTTP/1." || status.size() < 12 || status[8] != ' ' ||
        status.substr(9, 3).find_first_not_of("0123456789") != std::string_view::npos ||
        (status.size() > 12 && status[12] != ' ')) {
        fail("the server did not answer in HTTP/1.x: " + sdk::jsonQuote(excerpt(status, 80)));
    }
    head_.status = std::stoi(std::string(status.substr(9, 3)));
    head_.reason = status.size() > 13 ? std::string(trim(status.substr(13))) : std::string();
    for (std::size_t i = 1; i < lines.size(); ++i) {
        const std::string_view line = lines[i];
        if (!line.empty() && (line.front() == ' ' || line.front() == '\t') &&
            !head_.headers.empty()) {
            head_.headers.back().second += " ";  // an obsolete folded line: part of the last one
            head_.headers.back().second.append(trim(line));
            continue;
        }
        const std::size_t colon = line.find(':');
        if (colon == std::string_view::npos || !isToken(line.substr(0, colon))) {
            fail("the response has a malformed header line");
        }
        head_.headers.emplace_back(lower(line.substr(0, colon)),
                                   std::string(trim(line.substr(colon + 1))));
    }
}

bool HttpWire::readBody(std::string& out, Clock::time_point deadline, const HaltCheck& halt) {
    if (encoded_ && !done_) {
        fail("the server compressed the response (Content-Encoding " +
             sdk::jsonQuote(excerpt(*head_.header("content-encoding"), 60)) +
             "), which crank did not ask for");
    }
    while (!done_) {
        if (framing_ == Framing::close) {
            if (buffered() > 0) {
                out.append(in_, pos_, std::string::npos);
                pos_ = in_.size();
                return true;
            }
            if (!receive(deadline, halt)) {
                done_ = true;
            }
            continue;
        }
        if (framing_ == Framing::length || chunk_ == Chunk::data) {
            if (remaining_ == 0) {
                if (framing_ == Framing::length) {
                    done_ = true;
                } else {
                    chunk_ = Chunk::data_end;
                }
                continue;
            }
            if (buffered() > 0) {
                const auto n =
                    static_cast<std::size_t>(std::min<std::uint64_t>(remaining_, buffered()));
                out.append(in_, pos_, n);
                pos_ += n;
                remaining_ -= n;
                return true;
            }
            if (!receive(deadline, halt)) {
                fail(framing_ == Framing::length
                         ? "the connection closed before the end of the body"
                         : "the connection closed in the middle of a chunk");
            }
            continue;
        }
        // Chunked framing: a chunk-size line, the line end after a chunk, or a trailer line.
        const std::string_view view(in_.data() + pos_, buffered());
        const std::size_t lf = view.find('\n');
        if (lf == std::string_view::npos) {
            if (view.size() > kMaxChunkLine) {
                fail("the chunked body is malformed (a line longer than " +
                     std::to_string(kMaxChunkLine) + " bytes)");
            }
            if (!receive(deadline, halt)) {
                fail("the connection closed in the middle of a chunked body");
            }
            continue;
        }
        std::string_view line = view.substr(0, lf);
        if (!line.empty() && line.back() == '\r') {
            line.remove_suffix(1);
        }
        pos_ += lf + 1;
        if (chunk_ == Chunk::size) {
            const std::string_view size = trim(line.substr(0, line.find(';')));
            if (size.empty() || size.size() > 15 ||
                size.find_first_not_of("0123456789abcdefABCDEF") != std::string_view::npos) {
                fail("the chunked body is malformed (chunk size " +
                     sdk::jsonQuote(excerpt(size, 20)) + ")");
            }
            remaining_ = std::stoull(std::string(size), nullptr, 16);
            chunk_ = remaining_ == 0 ? Chunk::trailer : Chunk::data;
        } else if (chunk_ == Chunk::data_end) {
            if (!line.empty()) {
                fail("the chunked body is malformed (no line end after a chunk)");
            }
            chunk_ = Chunk::size;
        } else {
            trailer_bytes_ += line.size();
            if (trailer_bytes_ > kMaxHeadBytes) {
                fail("the chunked body's trailer is larger than " + std::to_string(kMaxHeadBytes) +
                     " bytes");
            }
            done_ = line.empty();
        }
    }
    return false;
}

std::string HttpWire::readAtMost(std::size_t max, Clock::time_point until) {
    std::string body;
    try {
        while (body.size() < max && readBody(body, until, nullptr)) {
        }
    } catch (const HttpWireFailure&) {
        // What could be read is enough to explain an error.
    }
    if (body.size() > max) {
        body.resize(max);
    }
    return body;
}

// --- HttpConnection ------------------------------------------------------------------------------

struct HttpConnection::Call {
    std::int64_t id = 0;
    std::string method;
    std::string message;
    Clock::time_point deadline;
    milliseconds timeout{0};
    const RequestHooks* hooks = nullptr;
    HaltCheck halt;
    bool sent = false;  // the request reached the server: a cancellation is worth sending
};

bool parseHttpMode(std::string_view name, HttpMode& mode) {
    if (name == "auto") {
        mode = HttpMode::automatic;
    } else if (name == "streamable_http") {
        mode = HttpMode::streamable_http;
    } else if (name == "sse") {
        mode = HttpMode::sse;
    } else {
        return false;
    }
    return true;
}

HttpConnection::HttpConnection(HttpOptions options, MessageHandler on_message, LogHandler on_log)
    : options_(std::move(options)),
      on_message_(std::move(on_message)),
      on_log_(std::move(on_log)) {}

std::unique_ptr<HttpConnection> HttpConnection::create(HttpOptions options,
                                                       MessageHandler on_message, LogHandler on_log,
                                                       std::string& error) {
    auto url = std::make_unique<HttpUrl>();
    if (!parseUrl(options.url, *url, error)) {
        error = "url: " + error;
        return nullptr;
    }
    static constexpr std::string_view kReserved[] = {
        "host",   "content-length", "content-type",         "transfer-encoding", "connection",
        "accept", "mcp-session-id", "mcp-protocol-version", "last-event-id"};
    std::string lines;
    for (const auto& [name, value] : options.headers) {
        if (!isToken(name)) {
            error = "headers: " + sdk::jsonQuote(excerpt(name, 64)) + " is not a header name";
            return nullptr;
        }
        if (std::find(std::begin(kReserved), std::end(kReserved), lower(name)) !=
            std::end(kReserved)) {
            error = "headers: " + name + " is set by the transport itself";
            return nullptr;
        }
        if (value.find_first_of(std::string_view("\r\n\0", 3)) != std::string::npos) {
            error = "headers: the value of " + name + " has a line break or a NUL character";
            return nullptr;
        }
        lines.append(name).append(": ").append(value).append("\r\n");
    }
    if (options.max_message_bytes == 0 || options.connect_timeout.count() <= 0) {
        error = "max_message_bytes and connect_timeout must be positive";
        return nullptr;
    }
    options.max_reconnect_attempts = std::max(options.max_reconnect_attempts, 0);
    options.max_retry_delay = std::max(options.max_retry_delay, milliseconds(1));
    options.retry_delay = std::clamp(options.retry_delay, milliseconds(1), options.max_retry_delay);
    std::unique_ptr<HttpConnection> c(
        new HttpConnection(std::move(options), std::move(on_message), std::move(on_log)));
    c->url_ = std::move(url);
    c->header_lines_ = std::move(lines);
    c->active_ = c->options_.mode == HttpMode::streamable_http ? Active::streamable
                 : c->options_.mode == HttpMode::sse           ? Active::legacy
                                                               : Active::undecided;
    return c;
}

HttpConnection::~HttpConnection() {
    close();
    std::unique_lock lock(mutex_);
    changed_.wait(lock, [this] { return running_ == 0; });
    if (stream_thread_.joinable()) {
        // Only when close() ran on the stream's own thread (from a handler).
        if (stream_thread_.get_id() == std::this_thread::get_id()) {
            stream_thread_.detach();
        } else {
            std::thread t = std::move(stream_thread_);
            lock.unlock();
            t.join();
        }
    }
}

HttpConnection::Active HttpConnection::active() const {
    const std::lock_guard lock(mutex_);
    return active_;
}

bool HttpConnection::open() const {
    const std::lock_guard lock(mutex_);
    return !ended_;
}

std::string HttpConnection::endReason() const {
    const std::lock_guard lock(mutex_);
    return end_reason_;
}

std::string HttpConnection::transportName() const {
    return active() == Active::legacy ? "sse" : "streamable_http";
}

std::string HttpConnection::sessionId() const {
    const std::lock_guard lock(mutex_);
    return session_id_;
}

void HttpConnection::setProtocolVersion(const std::string& version) {
    if (version.size() > kMaxProtocolVersion || !isVisibleAscii(version)) {
        log("the protocol version " + sdk::jsonQuote(excerpt(version, 64)) +
            " cannot be sent in a header; MCP-Protocol-Version is left out");
        return;
    }
    const std::lock_guard lock(mutex_);
    protocol_version_ = version;
}

void HttpConnection::log(const std::string& line) const {
    if (on_log_) {
        on_log_(line);
    }
}

void HttpConnection::end(const std::string& reason) {
    {
        const std::lock_guard lock(mutex_);
        if (!ended_) {
            ended_ = true;
            end_reason_ = reason;
        }
    }
    stop_ = true;
    changed_.notify_all();
}

void HttpConnection::expire() {
    {
        const std::lock_guard lock(mutex_);
        deleted_ = true;  // nothing left to DELETE
    }
    end("the server ended the session (it answered HTTP 404 to the session id)");
}

bool HttpConnection::deliver(std::int64_t id, RpcOutcome outcome) {
    {
        const std::lock_guard lock(mutex_);
        const auto it = waiting_.find(id);
        if (it == waiting_.end() || it->second) {
            return false;
        }
        it->second = std::move(outcome);
    }
    changed_.notify_all();
    return true;
}

bool HttpConnection::noteSessionId(const std::string* header, std::string& error) {
    if (header == nullptr) {
        return true;
    }
    const std::lock_guard lock(mutex_);
    if (!session_id_.empty()) {
        return true;
    }
    if (header->size() > kMaxSessionId || !isVisibleAscii(*header)) {
        error = "the server's Mcp-Session-Id header is invalid (it must be 1 to " +
                std::to_string(kMaxSessionId) + " visible ASCII characters)";
        return false;
    }
    session_id_ = *header;
    return true;
}

std::string HttpConnection::requestHead(const char* verb, const HttpUrl& target, bool streamable,
                                        std::size_t content_length,
                                        const std::string& last_event_id) const {
    const bool get = std::string_view(verb) == "GET";
    std::string h = std::string(verb) + " " + target.target +
                    " HTTP/1.1\r\nHost: " + target.authority() + "\r\n";
    h += get ? "Accept: text/event-stream\r\nCache-Control: no-cache\r\n"
             : "Accept: application/json, text/event-stream\r\n";
    if (content_length != std::string::npos) {
        h += "Content-Type: application/json\r\nContent-Length: " + std::to_string(content_length) +
             "\r\n";
    }
    if (streamable) {
        const std::lock_guard lock(mutex_);
        if (!session_id_.empty()) {
            h += "Mcp-Session-Id: " + session_id_ + "\r\n";
        }
        if (!protocol_version_.empty()) {
            h += "MCP-Protocol-Version: " + protocol_version_ + "\r\n";
        }
    }
    // An id with control characters cannot be sent; the server then resumes nothing.
    if (!last_event_id.empty() &&
        std::all_of(last_event_id.begin(), last_event_id.end(),
                    [](char c) { return static_cast<unsigned char>(c) >= 0x20 && c != 0x7F; })) {
        h += "Last-Event-ID: " + last_event_id + "\r\n";
    }
    h += header_lines_;
    h += "User-Agent: crank\r\nConnection: close\r\n\r\n";
    return h;
}

bool HttpConnection::routeText(std::string_view text, Call* call, std::optional<RpcOutcome>& own,
                               std::string& problem) {
    rapidjson::Document doc;
    if (const std::string why = parseServerMessage(text, doc); !why.empty()) {
        problem = "data that is not JSON (" + why + "): " + excerpt(text);
        return false;
    }
    const auto one = [&](const rapidjson::Value& v, std::string_view json) {
        const Classified c = classify(v);
        if (c.kind == Classified::Kind::invalid) {
            problem = "JSON that is not a JSON-RPC message: " + excerpt(json);
            return false;
        }
        if (c.kind == Classified::Kind::answer) {
            if (call != nullptr &&
                ((c.int_id && c.id == call->id) || (c.null_id && v.HasMember("error")))) {
                own = answerOutcome(v);
            } else if (!c.int_id || !deliver(c.id, answerOutcome(v))) {
                log("an answer to no request waiting was dropped (id " +
                    excerpt(jsonText(v["id"]), 40) + ")");
            }
            return true;
        }
        if (call != nullptr && call->hooks->on_related) {
            call->hooks->on_related(json);
        } else if (on_message_) {
            on_message_(json);
        }
        return true;
    };
    if (doc.IsArray()) {  // a batch (2025-03-26)
        for (const rapidjson::Value& v : doc.GetArray()) {
            if (!one(v, jsonText(v))) {
                return false;
            }
        }
        return true;
    }
    return one(doc, text);
}

RpcOutcome HttpConnection::request(std::string_view method, std::string_view params_json,
                                   milliseconds timeout, const RequestHooks& hooks) {
    Call call;
    call.method = std::string(method);
    call.timeout = timeout;
    call.hooks = &hooks;
    {
        const std::lock_guard lock(mutex_);
        if (ended_) {
            return failure("the connection to the server is closed: " + end_reason_);
        }
        call.id = next_id_++;
        waiting_.emplace(call.id, std::nullopt);
        ++running_;
    }
    const Finally done([this, &call] {
        {
            const std::lock_guard lock(mutex_);
            waiting_.erase(call.id);
            --running_;
        }
        changed_.notify_all();
    });
    if (hooks.on_id) {
        hooks.on_id(call.id);
    }
    call.message = R"({"jsonrpc":"2.0","id":)" + std::to_string(call.id) + R"(,"method":)" +
                   sdk::jsonQuote(method);
    if (!params_json.empty()) {
        call.message += R"(,"params":)" + std::string(params_json);
    }
    call.message += "}";
    call.deadline = Clock::now() + timeout;
    call.halt = [this, &call] {
        if (stop_) {
            return HttpHalt::closed;
        }
        {
            const std::lock_guard lock(mutex_);
            const auto it = waiting_.find(call.id);
            if (it != waiting_.end() && it->second) {
                return HttpHalt::answered;
            }
        }
        if (call.hooks->cancelled && call.hooks->cancelled()) {
            return HttpHalt::cancelled;
        }
        return HttpHalt::none;
    };
    RpcOutcome outcome;
    try {
        Active a = active();
        if (a == Active::undecided && startDetection(call)) {
            const Finally detected([this] {
                {
                    const std::lock_guard lock(mutex_);
                    detecting_ = false;
                }
                changed_.notify_all();
            });
            a = active();
            if (a == Active::undecided) {
                std::string refused;
                outcome = streamableCall(call, true, refused);
                if (!refused.empty()) {
                    {
                        const std::lock_guard lock(mutex_);
                        active_ = Active::legacy;
                    }
                    log("the server refused the Streamable HTTP POST (" + refused +
                        "); trying the legacy HTTP+SSE transport");
                    outcome = legacyCall(call, refused);
                }
                return outcome;
            }
        }
        a = active();
        std::string refused;
        outcome = a == Active::legacy ? legacyCall(call, "") : streamableCall(call, false, refused);
    } catch (const HttpWireFailure& f) {
        if (f.kind() == HttpWireFailure::Kind::halted && f.halt() == HttpHalt::answered) {
            const std::lock_guard lock(mutex_);
            const auto it = waiting_.find(call.id);
            if (it != waiting_.end() && it->second) {
                outcome = std::move(*it->second);
            }
        } else if (f.kind() == HttpWireFailure::Kind::halted && f.halt() == HttpHalt::cancelled) {
            if (call.sent) {
                sendCancelled(call.id, "cancelled by the client");
            }
            outcome = failure(call.method + ": cancelled");
            outcome.cancelled = true;
        } else if (f.kind() == HttpWireFailure::Kind::halted) {
            const std::string reason = endReason();
            outcome = failure(call.method + ": " +
                              (reason.empty() ? std::string("the connection was closed") : reason));
        } else if (f.kind() == HttpWireFailure::Kind::timeout) {
            if (call.sent) {
                sendCancelled(call.id, "timed out");
            }
            outcome = failure(call.method + ": the server did not answer within " +
                              std::to_string(timeout.count()) + " ms");
        } else {
            outcome = failure(call.method + ": " + f.what());
        }
    } catch (const std::exception& e) {
        outcome = failure(call.method + ": " + e.what());
    }
    return outcome;
}

bool HttpConnection::startDetection(Call& call) {
    while (true) {
        {
            std::unique_lock lock(mutex_);
            changed_.wait_until(lock, std::min(call.deadline, Clock::now() + kSlice),
                                [this] { return !detecting_ || active_ != Active::undecided; });
            if (active_ != Active::undecided) {
                return false;
            }
            if (!detecting_) {
                detecting_ = true;
                return true;
            }
        }
        checkHalt(call.halt, call.deadline);
    }
}

RpcOutcome HttpConnection::streamableCall(Call& call, bool detecting, std::string& refused) {
    maybeStartStandaloneStream();
    const bool withSession = !sessionId().empty();
    auto wire = std::make_unique<HttpWire>("POST", *url_, options_, call.deadline, call.halt);
    wire->send(requestHead("POST", *url_, true, call.message.size(), "") + call.message,
               call.deadline, call.halt);
    call.sent = true;
    const HttpHead& head = wire->readHead(call.deadline, call.halt);
    if (head.status == 404 && withSession) {
        expire();
        RpcOutcome r = failure(call.method + ": the session has expired (" + wire->what() +
                               " answered HTTP 404 to the session id)");
        r.session_expired = true;
        return r;
    }
    if (detecting && (head.status == 400 || head.status == 404 || head.status == 405)) {
        refused = wire->what() + " answered " + statusText(head);
        return {};
    }
    if (!isStatusOk(head.status)) {
        return httpError(*wire, call, *url_);
    }
    std::string invalid;
    if (!noteSessionId(head.header("mcp-session-id"), invalid)) {
        return failure(call.method + ": " + wire->what() + ": " + invalid);
    }
    if (detecting) {
        const std::lock_guard lock(mutex_);
        active_ = Active::streamable;
    }
    if (head.status == 202 || head.status == 204) {
        return waitAnswer(call);  // accepted: the answer comes on another stream
    }
    const std::string type = head.mediaType();
    if (type == "text/event-stream") {
        return answerStream(call, std::move(wire));
    }
    if (!isJsonType(type)) {
        return failure(call.method + ": " + wire->what() + " answered with Content-Type " +
                       sdk::jsonQuote(excerpt(type.empty() ? "(none)" : type, 80)) +
                       ", not application/json or text/event-stream");
    }
    const std::size_t max = options_.max_message_bytes;
    const std::string tooLarge = call.method + ": " + wire->what() +
                                 ": the answer is larger than max_message_bytes (" +
                                 std::to_string(max) + " bytes)";
    if (wire->contentLength() && *wire->contentLength() > max) {
        return failure(tooLarge);
    }
    std::string body;
    while (wire->readBody(body, call.deadline, call.halt)) {
        if (body.size() > max) {
            return failure(tooLarge);
        }
    }
    std::optional<RpcOutcome> own;
    std::string problem;
    if (!routeText(body, &call, own, problem)) {
        return failure(call.method + ": " + wire->what() + " answered " + problem);
    }
    if (!own) {
        return failure(call.method + ": " + wire->what() +
                       " answered JSON without the answer: " + excerpt(body));
    }
    return std::move(*own);
}

std::chrono::milliseconds HttpConnection::reconnectDelay(const SseParser& parser,
                                                         int failures) const {
    // The server's `retry:` when it gave one; else retry_delay, doubled after each failed
    // attempt; both at most max_retry_delay.
    if (parser.retryMs()) {
        return std::min(milliseconds(*parser.retryMs()), options_.max_retry_delay);
    }
    milliseconds delay = options_.retry_delay;
    for (int i = 1; i < failures && delay < options_.max_retry_delay; ++i) {
        delay *= 2;
    }
    return std::min(delay, options_.max_retry_delay);
}

RpcOutcome HttpConnection::answerStream(Call& call, std::unique_ptr<HttpWire> wire) {
    SseParser parser(options_.max_message_bytes);
    int failures = 0;     // reconnection attempts since the stream last gave an event
    std::string problem;  // why the stream (or the last attempt to resume it) failed
    while (true) {
        if (wire) {
            const std::uint64_t before = parser.eventsEnded();
            std::string broke;
            try {
                std::string chunk;
                std::vector<SseEvent> events;
                while (wire->readBody(chunk, call.deadline, call.halt)) {
                    const bool fed = parser.feed(chunk, events);
                    chunk.clear();
                    for (const SseEvent& e : events) {
                        if (!e.type.empty() && e.type != "message") {
                            continue;
                        }
                        std::optional<RpcOutcome> own;
                        std::string bad;
                        if (!routeText(e.data, &call, own, bad)) {
                            return failure(call.method + ": " + wire->what() +
                                           ": the event stream carried " + bad);
                        }
                        if (own) {
                            return std::move(*own);
                        }
                    }
                    events.clear();
                    if (!fed) {
                        return failure(call.method + ": " + wire->what() + ": " + parser.error() +
                                       " (max_message_bytes)");
                    }
                }
            } catch (const HttpWireFailure& f) {
                if (f.kind() != HttpWireFailure::Kind::failed) {
                    throw;
                }
                broke = f.what();
            }
            if (parser.eventsEnded() > before) {
                failures = 0;
            }
            problem = broke.empty() ? wire->what() +
                                          ": the server ended the event stream before "
                                          "the answer"
                                    : broke;
            wire.reset();
            if (parser.lastEventId().empty()) {
                return failure(call.method + ": " + problem +
                               ", and gave no event id to resume it from");
            }
        }
        if (failures >= options_.max_reconnect_attempts) {
            return failure(call.method + ": the event stream of the answer could not be resumed (" +
                           std::to_string(failures) + " attempts): " + problem);
        }
        ++failures;
        const milliseconds delay = reconnectDelay(parser, failures);
        pause(delay, call.deadline, call.halt);
        try {
            auto next =
                std::make_unique<HttpWire>("GET", *url_, options_, call.deadline, call.halt);
            next->send(requestHead("GET", *url_, true, std::string::npos, parser.lastEventId()),
                       call.deadline, call.halt);
            const HttpHead& head = next->readHead(call.deadline, call.halt);
            if (head.status == 200 && head.mediaType() == "text/event-stream") {
                parser.restart();
                wire = std::move(next);
                continue;
            }
            if (head.status == 405) {
                return failure(call.method + ": " + problem +
                               ", and the server does not allow resuming it (" + next->what() +
                               " answered HTTP 405)");
            }
            if (head.status == 404 && !sessionId().empty()) {
                expire();
                return failure(call.method + ": the session ended before the answer arrived (" +
                               next->what() + " answered HTTP 404)");
            }
            problem = next->what() + " answered " + statusText(head);
        } catch (const HttpWireFailure& f) {
            if (f.kind() != HttpWireFailure::Kind::failed) {
                throw;
            }
            problem = f.what();
        }
    }
}

RpcOutcome HttpConnection::waitAnswer(Call& call) {
    while (true) {
        {
            std::unique_lock lock(mutex_);
            const auto it = waiting_.find(call.id);
            changed_.wait_until(lock, std::min(call.deadline, Clock::now() + kSlice),
                                [&] { return ended_ || it->second.has_value(); });
            if (it->second) {
                RpcOutcome r = std::move(*it->second);
                it->second.reset();
                return r;
            }
            if (ended_) {
                return failure(call.method + ": " + end_reason_);
            }
        }
        checkHalt(call.halt, call.deadline);
    }
}

RpcOutcome HttpConnection::httpError(HttpWire& wire, const Call& call, const HttpUrl& target) {
    const HttpHead& head = wire.head();
    const std::string body =
        wire.readAtMost(kErrorBodyBytes, std::min(call.deadline, Clock::now() + kErrorBodyWait));
    RpcOutcome r;
    std::string what = call.method + ": " + wire.what() + " answered " + statusText(head);
    if (head.status >= 300 && head.status < 400) {
        const std::string* location = head.header("location");
        HttpUrl to;
        std::string ignored;
        what += location != nullptr && resolveReference(target, *location, to, ignored)
                    ? ", a redirect to " + to.shown() +
                          ", which is not followed (configure the "
                          "final URL)"
                    : ", a redirect, which is not followed (configure the final URL)";
    }
    if (head.status == 401 || head.status == 403) {
        what += " (check the credentials configured for this server";
        if (const std::string* challenge = head.header("www-authenticate")) {
            what += "; WWW-Authenticate: " + excerpt(*challenge, 200);
        }
        what += ")";
    }
    rapidjson::Document doc;
    if (parseServerMessage(body, doc).empty() && doc.IsObject() && doc.HasMember("error") &&
        doc["error"].IsObject()) {
        const RpcOutcome e = answerOutcome(doc);
        r.error_code = e.error_code;
        r.error_data_json = e.error_data_json;
        what += ": " + excerpt(e.error_message);
    } else if (!trim(body).empty()) {
        what += ": " + excerpt(trim(body));
    }
    r.error_message = std::move(what);
    return r;
}

std::string HttpConnection::openLegacy(Call& call) {
    {
        const std::lock_guard lock(mutex_);
        if (endpoint_) {
            return {};
        }
        if (ended_) {
            return end_reason_;
        }
        if (stop_) {
            return "the connection was closed";
        }
        if (!stream_started_) {
            stream_started_ = true;
            stream_thread_ = std::thread([this] {
                try {
                    legacyStream();
                } catch (const std::exception& e) {
                    end(std::string("the SSE stream ended: ") + e.what());
                }
            });
        }
    }
    while (true) {
        {
            std::unique_lock lock(mutex_);
            changed_.wait_until(lock, std::min(call.deadline, Clock::now() + kSlice),
                                [this] { return endpoint_ != nullptr || ended_; });
            if (endpoint_) {
                return {};
            }
            if (ended_) {
                return end_reason_;
            }
        }
        if (Clock::now() >= call.deadline) {
            end("GET " + url_->shown() + " gave no endpoint event within " +
                std::to_string(call.timeout.count()) + " ms");
            return endReason();
        }
        checkHalt(call.halt, call.deadline);
    }
}

RpcOutcome HttpConnection::legacyCall(Call& call, const std::string& detection) {
    const std::string problem = openLegacy(call);
    if (!problem.empty()) {
        return failure(call.method + ": " +
                       (detection.empty() ? problem
                                          : detection +
                                                " (not Streamable HTTP), and as a legacy "
                                                "HTTP+SSE server: " +
                                                problem));
    }
    HttpUrl endpoint;
    {
        const std::lock_guard lock(mutex_);
        endpoint = *endpoint_;
    }
    HttpWire wire("POST", endpoint, options_, call.deadline, call.halt);
    wire.send(requestHead("POST", endpoint, false, call.message.size(), "") + call.message,
              call.deadline, call.halt);
    call.sent = true;
    const HttpHead& head = wire.readHead(call.deadline, call.halt);
    if (head.status == 404) {
        end("the server no longer knows the SSE session (" + wire.what() + " answered HTTP 404)");
        RpcOutcome r = failure(call.method + ": the SSE session has expired (" + wire.what() +
                               " answered HTTP 404)");
        r.session_expired = true;
        return r;
    }
    if (!isStatusOk(head.status)) {
        return httpError(wire, call, endpoint);
    }
    return waitAnswer(call);
}

bool HttpConnection::post(std::string_view message, milliseconds bound, std::string_view what) {
    HttpUrl target;
    bool streamable = true;
    {
        const std::lock_guard lock(mutex_);
        if (ended_ || stop_) {
            return false;
        }
        if (active_ == Active::legacy) {
            if (!endpoint_) {
                return false;
            }
            target = *endpoint_;
            streamable = false;
        } else {
            target = *url_;
        }
        ++running_;
    }
    const Finally done([this] {
        {
            const std::lock_guard lock(mutex_);
            --running_;
        }
        changed_.notify_all();
    });
    const Clock::time_point deadline = Clock::now() + bound;
    const HaltCheck halt = [this] { return stop_ ? HttpHalt::closed : HttpHalt::none; };
    bool ok = false;
    try {
        const bool withSession = streamable && !sessionId().empty();
        HttpWire wire("POST", target, options_, deadline, halt);
        wire.send(
            requestHead("POST", target, streamable, message.size(), "") + std::string(message),
            deadline, halt);
        const HttpHead& head = wire.readHead(deadline, halt);
        ok = isStatusOk(head.status);
        if (!ok && head.status == 404 && withSession) {
            expire();
        } else if (!ok && head.status == 404 && !streamable) {
            end("the server no longer knows the SSE session (" + wire.what() +
                " answered HTTP 404)");
        } else if (!ok) {
            const std::string body =
                wire.readAtMost(kErrorBodyBytes, std::min(deadline, Clock::now() + kErrorBodyWait));
            log(std::string(what) + ": " + wire.what() + " answered " + statusText(head) +
                (trim(body).empty() ? std::string() : ": " + excerpt(trim(body))));
        }
    } catch (const HttpWireFailure& f) {
        if (f.kind() == HttpWireFailure::Kind::timeout) {
            log(std::string(what) + ": no answer to the POST within " +
                std::to_string(bound.count()) + " ms");
        } else if (f.kind() == HttpWireFailure::Kind::failed) {
            log(std::string(what) + ": " + f.what());
        }
    } catch (const std::exception& e) {
        log(std::string(what) + ": " + e.what());
    }
    return ok;
}

bool HttpConnection::notify(std::string_view method, std::string_view params_json) {
    std::string message = R"({"jsonrpc":"2.0","method":)" + sdk::jsonQuote(method);
    if (!params_json.empty()) {
        message += R"(,"params":)" + std::string(params_json);
    }
    message += "}";
    const bool ok = post(message, options_.send_timeout, method);
    if (ok && method == "notifications/initialized") {
        maybeStartStandaloneStream();
        awaitStreamRequested();
    }
    return ok;
}

bool HttpConnection::send(std::string_view message_json) {
    return post(message_json, options_.send_timeout, "a message to the server");
}

void HttpConnection::sendCancelled(std::int64_t id, const char* reason) {
    post(R"({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":)" +
             std::to_string(id) + R"(,"reason":)" + sdk::jsonQuote(reason) + "}}",
         std::min(options_.send_timeout, kCancelBound), "notifications/cancelled");
}

void HttpConnection::maybeStartStandaloneStream() {
    const std::lock_guard lock(mutex_);
    if (stream_started_ || active_ != Active::streamable || protocol_version_.empty() || ended_ ||
        stop_) {
        return;
    }
    stream_started_ = true;
    stream_thread_ = std::thread([this] {
        try {
            standaloneStream();
        } catch (const std::exception& e) {
            log(std::string("the standalone SSE stream stopped: ") + e.what());
        }
        markStreamRequested();
    });
}

namespace {
/// The most notifications/initialized waits for the standalone stream's GET to be sent.
constexpr std::chrono::milliseconds kGetHeadStart{2'000};
}  // namespace

void HttpConnection::markStreamRequested() {
    {
        const std::lock_guard lock(mutex_);
        stream_requested_ = true;
    }
    changed_.notify_all();
}

void HttpConnection::awaitStreamRequested() {
    std::unique_lock lock(mutex_);
    // Bounded short: a server slow to take the GET must not hold up initialization.
    changed_.wait_for(lock,
                      std::min<std::chrono::milliseconds>(options_.connect_timeout, kGetHeadStart),
                      [&] { return stream_requested_ || !stream_started_ || stop_ || ended_; });
}

void HttpConnection::standaloneStream() {
    const HaltCheck halt = [this] { return stop_ ? HttpHalt::closed : HttpHalt::none; };
    const Clock::time_point forever = Clock::time_point::max();
    SseParser parser(options_.max_message_bytes);
    int failures = 0;
    while (!stop_) {
        bool delivered = false;
        std::string problem;
        try {
            HttpWire wire("GET", *url_, options_, forever, halt);
            wire.send(requestHead("GET", *url_, true, std::string::npos, parser.lastEventId()),
                      forever, halt);
            markStreamRequested();
            const HttpHead& head = wire.readHead(forever, halt);
            if (head.status == 405) {
                log("the server offers no standalone SSE stream (" + wire.what() +
                    " answered HTTP 405)");
                return;
            }
            if (head.status == 404 && !sessionId().empty()) {
                log("the standalone SSE stream stops: " + wire.what() +
                    " answered HTTP 404 (the session has ended)");
                return;
            }
            if (head.status != 200 || head.mediaType() != "text/event-stream") {
                problem = wire.what() + " answered " + statusText(head) +
                          (head.status == 200 ? " with Content-Type " +
                                                    sdk::jsonQuote(excerpt(head.mediaType(), 80))
                                              : std::string());
            } else {
                parser.restart();
                const std::uint64_t before = parser.eventsEnded();
                std::string chunk;
                std::vector<SseEvent> events;
                while (wire.readBody(chunk, forever, halt)) {
                    const bool fed = parser.feed(chunk, events);
                    chunk.clear();
                    for (const SseEvent& e : events) {
                        if (!e.type.empty() && e.type != "message") {
                            continue;
                        }
                        std::optional<RpcOutcome> own;
                        std::string bad;
                        if (!routeText(e.data, nullptr, own, bad)) {
                            log("the standalone SSE stream carried " + bad + "; ignored");
                        }
                    }
                    events.clear();
                    if (!fed) {
                        problem = parser.error() + " (max_message_bytes)";
                        break;
                    }
                }
                delivered = parser.eventsEnded() > before;
                if (problem.empty()) {
                    problem = "the server ended it";
                }
            }
        } catch (const HttpWireFailure& f) {
            if (f.kind() == HttpWireFailure::Kind::halted) {
                return;
            }
            problem = f.what();
        }
        failures = delivered ? 0 : failures + 1;
        if (failures > options_.max_reconnect_attempts) {
            log("the standalone SSE stream is given up after " + std::to_string(failures) +
                " failed attempts: " + problem);
            return;
        }
        const milliseconds delay = reconnectDelay(parser, failures);
        if (!delivered) {
            log("the standalone SSE stream failed (" + problem + "); trying again in " +
                std::to_string(delay.count()) + " ms");
        }
        try {
            pause(delay, forever, halt);
        } catch (const HttpWireFailure&) {
            return;
        }
    }
}

void HttpConnection::legacyStream() {
    const HaltCheck halt = [this] { return stop_ ? HttpHalt::closed : HttpHalt::none; };
    const Clock::time_point forever = Clock::time_point::max();
    std::string why;
    try {
        HttpWire wire("GET", *url_, options_, forever, halt);
        wire.send(requestHead("GET", *url_, false, std::string::npos, ""), forever, halt);
        const HttpHead& head = wire.readHead(forever, halt);
        if (head.status != 200) {
            const std::string body =
                wire.readAtMost(kErrorBodyBytes, Clock::now() + kErrorBodyWait);
            why = wire.what() + " answered " + statusText(head) +
                  (trim(body).empty() ? std::string() : ": " + excerpt(trim(body)));
        } else if (head.mediaType() != "text/event-stream") {
            why = wire.what() + " answered with Content-Type " +
                  sdk::jsonQuote(
                      excerpt(head.mediaType().empty() ? "(none)" : head.mediaType(), 80)) +
                  ", not text/event-stream";
        } else {
            SseParser parser(options_.max_message_bytes);
            std::string chunk;
            std::vector<SseEvent> events;
            while (why.empty() && wire.readBody(chunk, forever, halt)) {
                const bool fed = parser.feed(chunk, events);
                chunk.clear();
                for (const SseEvent& e : events) {
                    if (e.type == "endpoint") {
                        HttpUrl endpoint;
                        std::string error;
                        if (!resolveReference(*url_, e.data, endpoint, error)) {
                            why = "its endpoint event is not a usable URL: " + error;
                            break;
                        }
                        if (endpoint.origin() != url_->origin()) {
                            why = "its endpoint event points to another origin (" +
                                  endpoint.origin() + ", not " + url_->origin() + "): refused";
                            break;
                        }
                        {
                            const std::lock_guard lock(mutex_);
                            if (!endpoint_) {
                                endpoint_ = std::make_unique<HttpUrl>(std::move(endpoint));
                            }
                        }
                        changed_.notify_all();
                    } else if (e.type.empty() || e.type == "message") {
                        std::optional<RpcOutcome> own;
                        std::string bad;
                        if (!routeText(e.data, nullptr, own, bad)) {
                            log("the SSE stream carried " + bad + "; ignored");
                        }
                    }
                }
                events.clear();
                if (!fed && why.empty()) {
                    why = parser.error() + " (max_message_bytes)";
                }
            }
            why = wire.what() + ": " + (why.empty() ? std::string("the server closed it") : why);
        }
    } catch (const HttpWireFailure& f) {
        if (f.kind() == HttpWireFailure::Kind::halted) {
            return;
        }
        why = f.what();
    }
    end("the SSE stream ended: " + why);
}

void HttpConnection::close() {
    stop_ = true;
    changed_.notify_all();
    std::thread thread;
    bool remove = false;
    {
        const std::lock_guard lock(mutex_);
        if (stream_thread_.joinable() && stream_thread_.get_id() != std::this_thread::get_id()) {
            thread = std::move(stream_thread_);
        }
        if (!deleted_ && active_ == Active::streamable && !session_id_.empty()) {
            deleted_ = true;
            remove = true;
        }
    }
    if (thread.joinable()) {
        thread.join();
    }
    if (remove) {
        const Clock::time_point deadline = Clock::now() + options_.close_timeout;
        try {
            HttpWire wire("DELETE", *url_, options_, deadline, nullptr);
            wire.send(requestHead("DELETE", *url_, true, std::string::npos, ""), deadline, nullptr);
            const HttpHead& head = wire.readHead(deadline, nullptr);
            if (!isStatusOk(head.status) && head.status != 404 && head.status != 405) {
                log("deleting the session: " + wire.what() + " answered " + statusText(head));
            }
        } catch (const HttpWireFailure& f) {
            log(std::string("deleting the session: ") +
                (f.kind() == HttpWireFailure::Kind::timeout
                     ? "no answer within " + std::to_string(options_.close_timeout.count()) + " ms"
                     : f.what()));
        } catch (const std::exception& e) {
            log(std::string("deleting the session: ") + e.what());
        }
    }
    end("the connection was closed");
}

ConnectionFactory httpTransport(HttpOptions options) {
    return [options = std::move(options)](Connection::MessageHandler on_message,
                                          Connection::LogHandler on_log,
                                          std::string& error) -> std::unique_ptr<Connection> {
        return HttpConnection::create(options, std::move(on_message), std::move(on_log), error);
    };
}

}  // namespace crank::mcpc
