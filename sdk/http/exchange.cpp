#include <algorithm>
#include <cstring>

#include <crank/sdk/http/exchange.hpp>
#include <crank/sdk/http/text.hpp>
#include <zlib.h>

namespace crank::sdk::http {
namespace {

constexpr std::size_t kReadChunk = std::size_t{16} * 1024;
constexpr std::size_t kMaxChunkLine = 4096;
constexpr std::size_t kMaxTrailerBytes = std::size_t{16} * 1024;
// Body bytes after the end of a compressed stream read to keep the connection; past this it is
// closed instead.
constexpr std::size_t kMaxTrailingDrain = std::size_t{64} * 1024;

[[noreturn]] void failBody(std::string detail) {
    throw ExchangeFailure(ExchangeFailure::Phase::body,
                          TransportError{TransportError::Kind::io, std::move(detail)});
}

[[noreturn]] void failHead(TransportError::Kind kind, std::string detail) {
    throw ExchangeFailure(ExchangeFailure::Phase::headers, TransportError{kind, std::move(detail)});
}

std::string toLower(std::string_view s) {
    std::string out(s);
    for (char& c : out) {
        if (c >= 'A' && c <= 'Z') {
            c = static_cast<char>(c - 'A' + 'a');
        }
    }
    return out;
}

std::string_view trim(std::string_view s) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) {
        s.remove_prefix(1);
    }
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) {
        s.remove_suffix(1);
    }
    return s;
}

/// True when the comma-separated header value has `token` (case-insensitive).
bool hasToken(const std::string* value, std::string_view token) {
    if (value == nullptr) {
        return false;
    }
    const std::string lower = toLower(*value);
    std::string_view rest = lower;
    while (!rest.empty()) {
        const std::size_t comma = std::min(rest.find(','), rest.size());
        if (trim(rest.substr(0, comma)) == token) {
            return true;
        }
        rest.remove_prefix(std::min(comma + 1, rest.size()));
    }
    return false;
}

/// Refuses a request header whose name or value has a control character; the message names the
/// header (its control characters shown as '?') but never repeats the value (it may be a secret).
void checkHeader(std::string_view name, std::string_view value) {
    std::string shown(name.substr(0, 64));
    for (char& c : shown) {
        if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) == 0x7f) {
            c = '?';
        }
    }
    if (hasControlCharacter(name)) {
        throw ExchangeFailure(
            ExchangeFailure::Phase::connect,
            TransportError{TransportError::Kind::io,
                           "the request header name \"" + shown +
                               "\" contains a line break or another control character; the "
                               "request was not sent"});
    }
    if (hasControlCharacter(value)) {
        throw ExchangeFailure(
            ExchangeFailure::Phase::connect,
            TransportError{TransportError::Kind::io,
                           "the value of the request header \"" + shown +
                               "\" contains a line break or another control character; the "
                               "request was not sent"});
    }
}

bool idempotent(std::string_view method) {
    return method == "GET" || method == "HEAD" || method == "PUT" || method == "DELETE" ||
           method == "OPTIONS";
}

}  // namespace

const std::string* ResponseHead::header(std::string_view lower_name) const {
    for (const auto& [name, value] : headers) {
        if (name == lower_name) {
            return &value;
        }
    }
    return nullptr;
}

// --- ConnectionPool --------------------------------------------------------------------------

void ConnectionPool::sweepLocked(Clock::time_point now,
                                 std::vector<std::unique_ptr<Connection>>& out) {
    if (now < next_expiry_) {
        return;
    }
    next_expiry_ = Clock::time_point::max();
    for (auto it = idle_.begin(); it != idle_.end();) {
        auto& list = it->second;
        for (auto entry = list.begin(); entry != list.end();) {
            if (entry->expires <= now) {
                out.push_back(std::move(entry->connection));
                entry = list.erase(entry);
                --total_;
            } else {
                next_expiry_ = std::min(next_expiry_, entry->expires);
                ++entry;
            }
        }
        it = list.empty() ? idle_.erase(it) : std::next(it);
    }
}

std::unique_ptr<Connection> ConnectionPool::take(const std::string& key,
                                                 Clock::duration idle_timeout) {
    // Candidates leave the pool under the lock; the liveness check (a poll() system call) and
    // closing the dead and expired ones happen outside it.
    std::vector<std::unique_ptr<Connection>> expired;
    for (;;) {
        std::unique_ptr<Connection> c;
        {
            const std::lock_guard<std::mutex> lock(mutex_);
            sweepLocked(Clock::now(), expired);
            auto it = idle_.find(key);
            if (it == idle_.end()) {
                return nullptr;
            }
            c = std::move(it->second.back().connection);  // the most recent first
            it->second.pop_back();
            --total_;
            if (it->second.empty()) {
                idle_.erase(it);
            }
        }
        if (Clock::now() - c->idleSince() < idle_timeout && c->usableWhenIdle()) {
            return c;
        }
    }
}

void ConnectionPool::give(std::unique_ptr<Connection> connection, std::size_t max_idle,
                          Clock::duration idle_timeout) {
    std::vector<std::unique_ptr<Connection>> closed;  // closed outside the lock
    {
        const std::lock_guard<std::mutex> lock(mutex_);
        const auto now = Clock::now();
        sweepLocked(now, closed);
        if (max_idle == 0 || total_ >= kMaxIdleTotal || idle_timeout <= Clock::duration::zero()) {
            closed.push_back(std::move(connection));
        } else {
            auto& list = idle_[connection->poolKey()];
            if (list.size() >= max_idle) {
                closed.push_back(std::move(list.front().connection));  // the oldest goes
                list.pop_front();
                --total_;
            }
            connection->markIdle();
            const Clock::time_point expires = Clock::time_point::max() - now > idle_timeout
                                                  ? now + idle_timeout
                                                  : Clock::time_point::max();
            next_expiry_ = std::min(next_expiry_, expires);
            list.push_back(Idle{std::move(connection), expires});
            ++total_;
        }
    }
}

std::size_t ConnectionPool::idleCount() const {
    const std::lock_guard<std::mutex> lock(mutex_);
    return total_;
}

std::uint64_t ConnectionPool::opened() const {
    const std::lock_guard<std::mutex> lock(mutex_);
    return opened_;
}

void ConnectionPool::countOpened() {
    const std::lock_guard<std::mutex> lock(mutex_);
    ++opened_;
}

// --- Body ------------------------------------------------------------------------------------

struct HttpExchange::Body {
    enum class Framing { none, length, chunked, close };
    enum class ChunkState { size, data, data_end, trailers, done };
    Framing framing = Framing::none;
    std::uint64_t remaining = 0;  // length: body bytes left; chunked: bytes left in the chunk
    ChunkState chunk = ChunkState::size;
    std::size_t trailer_bytes = 0;
    bool ended = false;  // the framing saw the end of the body
    bool keep_alive = false;

    // Decoding (gzip / deflate).
    bool inflating = false;
    bool inflate_ended = false;
    bool drained = false;  // what followed the compressed stream was read (or given up on)
    z_stream zs{};
    std::string compressed;  // framed bytes not inflated yet
    std::size_t compressed_offset = 0;

    Body() = default;
    Body(const Body&) = delete;
    Body& operator=(const Body&) = delete;
    Body(Body&&) = delete;
    Body& operator=(Body&&) = delete;
    ~Body() {
        if (inflating) {
            inflateEnd(&zs);
        }
    }
};

// --- HttpExchange ----------------------------------------------------------------------------

HttpExchange::HttpExchange(ConnectionPool& pool, ExchangeOptions options)
    : pool_(pool), options_(std::move(options)) {}

HttpExchange::~HttpExchange() {
    dropConnection();
}

void HttpExchange::interrupt() noexcept {
    const std::lock_guard<std::mutex> lock(connection_mutex_);
    interrupted_ = true;
    if (connection_) {
        connection_->interrupt();
    }
}

void HttpExchange::dropConnection() {
    std::unique_ptr<Connection> old;
    {
        const std::lock_guard<std::mutex> lock(connection_mutex_);
        old = std::move(connection_);
    }
}

const ResponseHead& HttpExchange::start(const HttpRequest& request,
                                        const ExchangeDeadlines& deadlines,
                                        const CancelCheck& cancel) {
    std::string wire;
    wire.reserve(256 + (request.body ? request.body->size() : 0));
    wire.append(request.method).append(" ").append(request.url.target()).append(" HTTP/1.1\r\n");
    wire.append("Host: ");
    const bool defaultPort = (request.url.tls() && request.url.port == 443) ||
                             (!request.url.tls() && request.url.port == 80);
    if (defaultPort) {
        wire.append(request.url.host.find(':') != std::string::npos ? "[" + request.url.host + "]"
                                                                    : request.url.host);
    } else {
        wire.append(request.url.authority());
    }
    wire.append("\r\n");
    bool userAgent = false;
    bool acceptEncoding = false;
    for (const auto& [name, value] : request.headers) {
        const std::string lower = toLower(name);
        userAgent = userAgent || lower == "user-agent";
        acceptEncoding = acceptEncoding || lower == "accept-encoding";
        checkHeader(name, value);
        wire.append(name).append(": ").append(value).append("\r\n");
    }
    if (!userAgent) {
        checkHeader("User-Agent", options_.user_agent);
        wire.append("User-Agent: ").append(options_.user_agent).append("\r\n");
    }
    if (!acceptEncoding && options_.decompress) {
        wire.append("Accept-Encoding: gzip, deflate\r\n");
    }
    if (request.body) {
        wire.append("Content-Length: ").append(std::to_string(request.body->size())).append("\r\n");
    } else if (request.method == "POST" || request.method == "PUT" || request.method == "PATCH") {
        wire.append("Content-Length: 0\r\n");
    }
    wire.append("\r\n");
    if (request.body) {
        wire.append(*request.body);
    }

    const std::string key = poolKey(request.url, options_.tls);
    for (int attempt = 0;; ++attempt) {
        std::unique_ptr<Connection> connection = attempt == 0 && options_.max_idle > 0
                                                     ? pool_.take(key, options_.idle_timeout)
                                                     : nullptr;
        if (connection && request.address_check &&
            request.address_check(connection->peerAddress())) {
            connection.reset();  // opened for a request that could go there; this one cannot
        }
        reused_ = connection != nullptr;
        if (connection) {
            connection->countUse();
        } else {
            try {
                connection = Connection::open(request.url, options_.tls, deadlines.connect, cancel,
                                              request.address_check);
            } catch (const TransportFailure& e) {
                throw ExchangeFailure(ExchangeFailure::Phase::connect, e.error());
            }
            pool_.countOpened();
        }
        {
            const std::lock_guard<std::mutex> lock(connection_mutex_);
            connection_ = std::move(connection);
            if (interrupted_) {
                connection_->interrupt();
            }
        }
        buffer_.clear();
        offset_ = 0;
        try {
            connection_->sendAll(wire, deadlines.headers, cancel);
            readHead(request.method, deadlines.headers, cancel);
            return head_;
        } catch (const TransportFailure& e) {
            const bool stale = reused_ && buffer_.empty() &&
                               (e.error().kind == TransportError::Kind::closed ||
                                e.error().kind == TransportError::Kind::io);
            dropConnection();
            if (stale && attempt == 0 && (request.replayable || idempotent(request.method))) {
                continue;  // the keep-alive race: the upstream closed an idle connection
            }
            throw ExchangeFailure(ExchangeFailure::Phase::headers, e.error());
        }
    }
}

bool HttpExchange::fill(Clock::time_point deadline, const CancelCheck& cancel) {
    if (offset_ > 0 && offset_ >= buffer_.size() / 2) {
        buffer_.erase(0, offset_);
        offset_ = 0;
    }
    const std::size_t old = buffer_.size();
    buffer_.resize(old + kReadChunk);
    std::size_t n = 0;
    try {
        n = connection_->readSome(buffer_.data() + old, kReadChunk, deadline, cancel);
    } catch (...) {
        buffer_.resize(old);
        throw;
    }
    buffer_.resize(old + n);
    return n > 0;
}

void HttpExchange::readHead(const std::string& method, Clock::time_point deadline,
                            const CancelCheck& cancel) {
    for (;;) {  // 1xx answers are skipped (bounded: each consumes input)
        std::size_t end = std::string::npos;
        // Bytes after offset_ already searched: relative, since fill() may move the unconsumed
        // bytes to the front of buffer_.
        std::size_t searched = 0;
        for (;;) {
            const std::string_view view(buffer_.data() + offset_, buffer_.size() - offset_);
            const std::size_t from = searched > 3 ? searched - 3 : 0;
            std::size_t crlf = view.find("\r\n\r\n", from);
            std::size_t lf = view.find("\n\n", from);
            if (crlf != std::string_view::npos && (lf == std::string_view::npos || crlf < lf)) {
                end = crlf + 4;
            } else if (lf != std::string_view::npos) {
                end = lf + 2;
            }
            if (end != std::string::npos) {
                break;
            }
            if (view.size() > options_.max_head_bytes) {
                failHead(TransportError::Kind::io, "the response headers are larger than " +
                                                       std::to_string(options_.max_head_bytes) +
                                                       " bytes");
            }
            searched = view.size();
            if (!fill(deadline, cancel)) {
                if (buffer_.size() == offset_) {
                    throw TransportFailure(
                        TransportError{TransportError::Kind::closed,
                                       "the upstream closed the connection without answering"});
                }
                failHead(TransportError::Kind::io,
                         "the upstream closed the connection in the middle of the response "
                         "headers");
            }
        }
        if (end > options_.max_head_bytes) {
            failHead(TransportError::Kind::io, "the response headers are larger than " +
                                                   std::to_string(options_.max_head_bytes) +
                                                   " bytes");
        }
        const std::string_view headText(buffer_.data() + offset_, end);
        offset_ += end;
        head_ = ResponseHead{};
        std::size_t pos = 0;
        bool first = true;
        while (pos < headText.size()) {
            std::size_t nl = headText.find('\n', pos);
            if (nl == std::string_view::npos) {
                nl = headText.size();
            }
            std::string_view line = headText.substr(pos, nl - pos);
            pos = nl + 1;
            if (!line.empty() && line.back() == '\r') {
                line.remove_suffix(1);
            }
            if (line.empty()) {
                break;
            }
            if (first) {
                first = false;
                // HTTP/1.x SP 3DIGIT [SP reason]
                if (line.size() < 12 || line.substr(0, 7) != "HTTP/1." || line[8] != ' ' ||
                    !std::isdigit(static_cast<unsigned char>(line[9])) ||
                    !std::isdigit(static_cast<unsigned char>(line[10])) ||
                    !std::isdigit(static_cast<unsigned char>(line[11])) ||
                    (line.size() > 12 && line[12] != ' ')) {
                    std::string shown(line.substr(0, 64));
                    for (char& c : shown) {
                        if (static_cast<unsigned char>(c) < 0x20 ||
                            static_cast<unsigned char>(c) >= 0x7f) {
                            c = '?';
                        }
                    }
                    failHead(TransportError::Kind::io,
                             "the upstream did not answer with HTTP/1.x (status line \"" + shown +
                                 "\")");
                }
                head_.minor_version = line[7] - '0';
                head_.status = (line[9] - '0') * 100 + (line[10] - '0') * 10 + (line[11] - '0');
                head_.reason = line.size() > 13 ? std::string(line.substr(13)) : std::string();
                continue;
            }
            if (line.front() == ' ' || line.front() == '\t') {
                failHead(TransportError::Kind::io,
                         "the response headers use obsolete line folding");
            }
            const std::size_t colon = line.find(':');
            if (colon == std::string_view::npos || colon == 0) {
                failHead(TransportError::Kind::io, "a response header line has no name");
            }
            head_.headers.emplace_back(toLower(line.substr(0, colon)),
                                       std::string(trim(line.substr(colon + 1))));
        }
        if (head_.status >= 100 && head_.status < 200 && head_.status != 101) {
            continue;
        }
        break;
    }

    body_ = std::make_unique<Body>();
    Body& b = *body_;
    const std::string* te = head_.header("transfer-encoding");
    const std::string* cl = head_.header("content-length");
    if (method == "HEAD" || head_.status == 204 || head_.status == 304 ||
        (head_.status >= 100 && head_.status < 200)) {
        b.framing = Body::Framing::none;
        b.ended = true;
    } else if (te != nullptr) {
        const std::string lower = toLower(*te);
        const std::size_t last = lower.rfind(',');
        const std::string_view lastCoding =
            trim(std::string_view(lower).substr(last == std::string::npos ? 0 : last + 1));
        b.framing = lastCoding == "chunked" ? Body::Framing::chunked : Body::Framing::close;
    } else if (cl != nullptr) {
        std::uint64_t length = 0;
        const std::string_view text = trim(*cl);
        if (text.empty() || text.size() > 18 ||
            !std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; })) {
            failHead(TransportError::Kind::io, "the response's Content-Length is not a number");
        }
        for (const char c : text) {
            length = length * 10 + static_cast<std::uint64_t>(c - '0');
        }
        b.framing = Body::Framing::length;
        b.remaining = length;
        b.ended = length == 0;
    } else {
        b.framing = Body::Framing::close;
    }
    const std::string* connectionHeader = head_.header("connection");
    // After a 101 the connection speaks another protocol: it is never HTTP/1.1 again.
    b.keep_alive = b.framing != Body::Framing::close && head_.status != 101 &&
                   !hasToken(connectionHeader, "close") &&
                   (head_.minor_version >= 1 || hasToken(connectionHeader, "keep-alive"));

    const std::string* encoding = head_.header("content-encoding");
    if (encoding != nullptr && options_.decompress && b.framing != Body::Framing::none) {
        const std::string lower = toLower(trim(*encoding));
        if (lower == "gzip" || lower == "x-gzip" || lower == "deflate") {
            // 15 + 32: zlib or gzip wrapper, detected from the header.
            if (inflateInit2(&b.zs, 15 + 32) != Z_OK) {
                failHead(TransportError::Kind::io, "cannot start decompressing the response");
            }
            b.inflating = true;
        } else if (!lower.empty() && lower != "identity") {
            failHead(TransportError::Kind::io, "the response uses Content-Encoding \"" + lower +
                                                   "\", which crank cannot decode");
        }
    }
}

std::size_t HttpExchange::readFramed(char* buffer, std::size_t size, Clock::time_point deadline,
                                     const CancelCheck& cancel) {
    Body& b = *body_;
    const auto available = [this] { return buffer_.size() - offset_; };
    const auto take = [&](std::size_t n) {
        std::memcpy(buffer, buffer_.data() + offset_, n);
        offset_ += n;
        return n;
    };
    // Reads one line (without its end) of a chunked body; bounded.
    const auto line = [&](std::string& out) {
        for (;;) {
            const std::string_view view(buffer_.data() + offset_, available());
            const std::size_t nl = view.find('\n');
            if (nl != std::string_view::npos) {
                out.assign(view.substr(0, nl));
                if (!out.empty() && out.back() == '\r') {
                    out.pop_back();
                }
                offset_ += nl + 1;
                return;
            }
            if (view.size() > kMaxChunkLine) {
                failBody("a chunk header of the response is longer than 4096 bytes");
            }
            if (!fill(deadline, cancel)) {
                failBody("the upstream closed the connection in the middle of a chunked body");
            }
        }
    };
    while (!b.ended) {
        switch (b.framing) {
            case Body::Framing::none:
                b.ended = true;
                return 0;
            case Body::Framing::length: {
                if (available() == 0 && !fill(deadline, cancel)) {
                    failBody("the upstream closed the connection " + std::to_string(b.remaining) +
                             " bytes before the end of the body (Content-Length)");
                }
                const std::size_t n = take(static_cast<std::size_t>(
                    std::min<std::uint64_t>({size, b.remaining, available()})));
                b.remaining -= n;
                b.ended = b.remaining == 0;
                return n;
            }
            case Body::Framing::close: {
                if (available() == 0 && !fill(deadline, cancel)) {
                    b.ended = true;
                    return 0;
                }
                return take(std::min(size, available()));
            }
            case Body::Framing::chunked: {
                switch (b.chunk) {
                    case Body::ChunkState::size: {
                        std::string text;
                        line(text);
                        const std::string_view sizeText =
                            trim(std::string_view(text).substr(0, text.find(';')));
                        std::uint64_t chunkSize = 0;
                        if (sizeText.empty() || sizeText.size() > 15) {
                            failBody("a chunk size of the response is not a hexadecimal number");
                        }
                        for (const char c : sizeText) {
                            const int digit = c >= '0' && c <= '9'   ? c - '0'
                                              : c >= 'a' && c <= 'f' ? c - 'a' + 10
                                              : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                                                     : -1;
                            if (digit < 0) {
                                failBody(
                                    "a chunk size of the response is not a hexadecimal number");
                            }
                            chunkSize = chunkSize * 16 + static_cast<std::uint64_t>(digit);
                        }
                        if (chunkSize == 0) {
                            b.chunk = Body::ChunkState::trailers;
                        } else {
                            b.remaining = chunkSize;
                            b.chunk = Body::ChunkState::data;
                        }
                        break;
                    }
                    case Body::ChunkState::data: {
                        if (available() == 0 && !fill(deadline, cancel)) {
                            failBody("the upstream closed the connection in the middle of a chunk");
                        }
                        const std::size_t n = take(static_cast<std::size_t>(
                            std::min<std::uint64_t>({size, b.remaining, available()})));
                        b.remaining -= n;
                        if (b.remaining == 0) {
                            b.chunk = Body::ChunkState::data_end;
                        }
                        return n;
                    }
                    case Body::ChunkState::data_end: {
                        std::string text;
                        line(text);
                        if (!text.empty()) {
                            failBody("a chunk of the response is longer than its size says");
                        }
                        b.chunk = Body::ChunkState::size;
                        break;
                    }
                    case Body::ChunkState::trailers: {
                        std::string text;
                        line(text);
                        b.trailer_bytes += text.size() + 2;
                        if (b.trailer_bytes > kMaxTrailerBytes) {
                            failBody("the response's trailers are larger than 16384 bytes");
                        }
                        if (text.empty()) {
                            b.chunk = Body::ChunkState::done;
                            b.ended = true;
                        }
                        break;
                    }
                    case Body::ChunkState::done:
                        b.ended = true;
                        break;
                }
                break;
            }
        }
    }
    return 0;
}

std::size_t HttpExchange::readBody(char* buffer, std::size_t size, Clock::time_point deadline,
                                   const CancelCheck& cancel) {
    if (!body_ || size == 0) {
        return 0;
    }
    try {
        Body& b = *body_;
        if (!b.inflating) {
            return readFramed(buffer, size, deadline, cancel);
        }
        for (;;) {
            if (b.inflate_ended) {
                // Anything framed after the compressed stream is ignored, but read (up to a
                // bound) so that the connection can be reused; past the bound it is closed.
                if (!b.drained) {
                    b.drained = true;
                    char sink[4096];
                    std::size_t drained = 0;
                    while (drained < kMaxTrailingDrain) {
                        const std::size_t n =
                            readFramed(sink, std::min(sizeof sink, kMaxTrailingDrain - drained),
                                       deadline, cancel);
                        if (n == 0) {
                            break;
                        }
                        drained += n;
                    }
                    if (!b.ended) {
                        b.keep_alive = false;
                        dropConnection();
                    }
                }
                return 0;
            }
            if (b.compressed_offset < b.compressed.size()) {
                b.zs.next_in = reinterpret_cast<Bytef*>(b.compressed.data() + b.compressed_offset);
                b.zs.avail_in = static_cast<uInt>(b.compressed.size() - b.compressed_offset);
                b.zs.next_out = reinterpret_cast<Bytef*>(buffer);
                b.zs.avail_out = static_cast<uInt>(std::min<std::size_t>(size, 1U << 30U));
                const int rc = inflate(&b.zs, Z_NO_FLUSH);
                b.compressed_offset = b.compressed.size() - b.zs.avail_in;
                const std::size_t produced =
                    std::min<std::size_t>(size, 1U << 30U) - b.zs.avail_out;
                if (rc == Z_STREAM_END) {
                    b.inflate_ended = true;
                } else if (rc != Z_OK && rc != Z_BUF_ERROR) {
                    failBody(std::string("the compressed response is corrupt (") +
                             (b.zs.msg != nullptr ? b.zs.msg : "zlib error") + ")");
                }
                if (produced > 0) {
                    return produced;
                }
                if (b.inflate_ended) {
                    continue;
                }
            }
            b.compressed.resize(kReadChunk);
            b.compressed_offset = 0;
            const std::size_t n = readFramed(b.compressed.data(), kReadChunk, deadline, cancel);
            b.compressed.resize(n);
            if (n == 0) {
                failBody("the compressed response ends before its compressed stream does");
            }
        }
    } catch (const TransportFailure& e) {
        throw ExchangeFailure(ExchangeFailure::Phase::body, e.error());
    }
}

void HttpExchange::finish() {
    std::unique_ptr<Connection> connection;
    bool interrupted = false;
    {
        const std::lock_guard<std::mutex> lock(connection_mutex_);  // interrupt() writes both
        connection = std::move(connection_);
        interrupted = interrupted_;
    }
    if (connection && body_ && body_->ended && body_->keep_alive && !interrupted &&
        offset_ == buffer_.size() && (!body_->inflating || body_->inflate_ended)) {
        pool_.give(std::move(connection), options_.max_idle, options_.idle_timeout);
    }
    body_.reset();
}

}  // namespace crank::sdk::http
