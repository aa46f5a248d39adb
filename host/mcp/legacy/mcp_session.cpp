#include "mcp/legacy/mcp_session.h"

#include <algorithm>
#include <charconv>

#include "http/sse_event.h"

namespace crank::mcp {

McpSession::McpSession(std::string id, std::string protocolVersion, ReplayLimits limits)
    : id_(std::move(id)), protocolVersion_(std::move(protocolVersion)), limits_(std::move(limits)) {
    touch();
}

McpSession::~McpSession() {
    if (limits_.budget) {
        limits_.budget->remove(replayBytes_);
    }
}

void McpSession::touch() {
    lastUsedTicks_ = std::chrono::steady_clock::now().time_since_epoch().count();
}

std::chrono::steady_clock::time_point McpSession::lastUsed() const {
    return std::chrono::steady_clock::time_point(
        std::chrono::steady_clock::duration(lastUsedTicks_.load()));
}

std::uint64_t McpSession::openStream(bool standalone) {
    std::lock_guard lock(mutex_);
    const std::uint64_t number = nextStream_++;
    streams_[number].standalone = standalone;
    return number;
}

std::string McpSession::appendEvent(std::uint64_t number, Stream& stream, std::string_view data) {
    const std::uint64_t seq = stream.nextSeq++;
    std::string bytes =
        http::formatSseEvent(std::to_string(number) + "-" + std::to_string(seq), "", data);
    if (limits_.events_per_stream > 0 && limits_.bytes_per_session > 0) {
        stream.replay.push_back({seq, bytes, std::chrono::steady_clock::now()});
        keptReplay(bytes.size());
        if (stream.replay.size() > limits_.events_per_stream) {
            forgotReplay(stream.replay.front().bytes.size());
            stream.replay.pop_front();
        }
        evictForBudget();
    }
    return bytes;
}

void McpSession::evictForBudget() {
    // Oldest first across the session: the lowest-numbered streams hold the oldest events.
    for (auto it = streams_.begin();
         replayBytes_ > limits_.bytes_per_session && it != streams_.end();) {
        Stream& s = it->second;
        while (!s.replay.empty() && replayBytes_ > limits_.bytes_per_session) {
            forgotReplay(s.replay.front().bytes.size());
            s.replay.pop_front();
        }
        // A finished stream with nothing left to replay is gone for good.
        if (s.replay.empty() && s.finished && !s.connection) {
            it = streams_.erase(it);
        } else {
            ++it;
        }
    }
}

void McpSession::keptReplay(std::size_t n) {
    replayBytes_ += n;
    if (limits_.budget) {
        limits_.budget->add(n);
    }
}

void McpSession::forgotReplay(std::size_t n) {
    replayBytes_ -= n;
    if (limits_.budget) {
        limits_.budget->remove(n);
    }
}

std::optional<std::chrono::steady_clock::time_point> McpSession::oldestReplayEvent() const {
    std::lock_guard lock(mutex_);
    std::optional<std::chrono::steady_clock::time_point> oldest;
    for (const auto& [number, stream] : streams_) {
        if (!stream.replay.empty() && (!oldest || stream.replay.front().sent < *oldest)) {
            oldest = stream.replay.front().sent;
        }
    }
    return oldest;
}

std::size_t McpSession::dropOldestReplay(std::size_t bytes) {
    std::lock_guard lock(mutex_);
    std::size_t freed = 0;
    while (freed < bytes) {
        Stream* oldest = nullptr;
        for (auto& [number, stream] : streams_) {
            if (!stream.replay.empty() &&
                (oldest == nullptr || stream.replay.front().sent < oldest->replay.front().sent)) {
                oldest = &stream;
            }
        }
        if (oldest == nullptr) {
            break;
        }
        freed += oldest->replay.front().bytes.size();
        forgotReplay(oldest->replay.front().bytes.size());
        oldest->replay.pop_front();
    }
    return freed;
}

bool McpSession::waitsForResumeOnly(std::uint64_t number, const Stream& stream) const {
    return !stream.connection &&
           (stream.finished || (stream.standalone && lastStandalone_ != number));
}

void McpSession::pruneStreams() {
    std::size_t waiting = 0;
    for (const auto& [number, stream] : streams_) {
        waiting += waitsForResumeOnly(number, stream) ? 1 : 0;
    }
    // Oldest first: stream numbers only grow.
    for (auto it = streams_.begin();
         waiting > limits_.streams_per_session && it != streams_.end();) {
        if (waitsForResumeOnly(it->first, it->second)) {
            for (const Event& e : it->second.replay) {
                forgotReplay(e.bytes.size());
            }
            it = streams_.erase(it);
            --waiting;
        } else {
            ++it;
        }
    }
}

void McpSession::attach(std::uint64_t number, StreamConnection connection) {
    std::lock_guard lock(mutex_);
    takeHeldPlace();
    Stream& stream = streams_[number];
    // Priming event: an id and empty data (2025-11-25), so that the client can resume from here.
    const std::string priming = http::formatSseEvent(
        std::to_string(number) + "-" + std::to_string(stream.nextSeq++), "", "", limits_.retry_ms);
    connection.send(priming);
    stream.connection = std::move(connection);
    if (stream.standalone) {
        lastStandalone_ = number;
    }
}

void McpSession::detach(std::uint64_t number, std::uint64_t token) {
    std::lock_guard lock(mutex_);
    const auto it = streams_.find(number);
    if (it != streams_.end() && it->second.connection && it->second.connection->token == token) {
        it->second.connection.reset();
        if (lastStandalone_ == number) {
            lastStandalone_.reset();
            for (auto& [n, s] : streams_) {
                if (s.standalone && s.connection) {
                    lastStandalone_ = n;
                }
            }
        }
        pruneStreams();
    }
}

void McpSession::send(std::uint64_t number, std::string_view message) {
    {
        std::lock_guard lock(mutex_);
        Stream& stream = streams_[number];
        std::string bytes = appendEvent(number, stream, message);
        if (stream.connection && !stream.connection->send(std::move(bytes))) {
            stream.connection.reset();
        }
    }
    if (limits_.budget) {
        limits_.budget->trimIfOver();  // outside the lock: the trim locks sessions one by one
    }
}

void McpSession::finish(std::uint64_t number) {
    std::lock_guard lock(mutex_);
    const auto it = streams_.find(number);
    if (it == streams_.end()) {
        return;
    }
    it->second.finished = true;
    if (it->second.connection) {
        it->second.connection->close();
        it->second.connection.reset();
    }
    pruneStreams();
}

bool McpSession::sendStandalone(std::string_view message) {
    {
        std::lock_guard lock(mutex_);
        if (!lastStandalone_) {
            return false;
        }
        Stream& stream = streams_[*lastStandalone_];
        std::string bytes = appendEvent(*lastStandalone_, stream, message);
        if (stream.connection && !stream.connection->send(std::move(bytes))) {
            stream.connection.reset();
        }
    }
    if (limits_.budget) {
        limits_.budget->trimIfOver();
    }
    return true;
}

namespace {

/// "<stream>-<sequence>" into its two numbers.
bool parseEventId(std::string_view id, std::uint64_t& number, std::uint64_t& seq) {
    const auto dash = id.find('-');
    if (dash == std::string_view::npos) {
        return false;
    }
    const auto parse = [](std::string_view text, std::uint64_t& out) {
        const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
        return ec == std::errc() && end == text.data() + text.size() && !text.empty();
    };
    return parse(id.substr(0, dash), number) && parse(id.substr(dash + 1), seq);
}

}  // namespace

bool McpSession::canResume(std::string_view lastEventId) const {
    std::uint64_t number = 0;
    std::uint64_t seq = 0;
    if (!parseEventId(lastEventId, number, seq)) {
        return false;
    }
    std::lock_guard lock(mutex_);
    return streams_.count(number) != 0;
}

bool McpSession::resume(std::string_view lastEventId, StreamConnection connection) {
    std::lock_guard lock(mutex_);
    takeHeldPlace();
    std::uint64_t number = 0;
    std::uint64_t seq = 0;
    if (!parseEventId(lastEventId, number, seq)) {
        return false;
    }
    const auto it = streams_.find(number);
    if (it == streams_.end()) {
        return false;
    }
    Stream& stream = it->second;
    if (stream.connection) {
        stream.connection->close();  // one connection per stream: the newest wins
    }
    for (const Event& e : stream.replay) {
        if (e.seq > seq) {
            connection.send(e.bytes);
        }
    }
    if (stream.finished) {
        connection.close();
        return true;
    }
    stream.connection = std::move(connection);
    if (stream.standalone) {
        lastStandalone_ = number;
    }
    return true;
}

void McpSession::closeAll() {
    ended_.store(true);
    std::lock_guard lock(mutex_);
    for (auto& [number, stream] : streams_) {
        if (stream.connection) {
            stream.connection->close();
            stream.connection.reset();
        }
    }
    lastStandalone_.reset();
    for (auto& [key, flag] : inflight_) {
        *flag = true;  // a deleted session's work has nobody to answer
    }
}

std::shared_ptr<std::atomic<bool>> McpSession::beginRequest(const std::string& requestKey) {
    std::lock_guard lock(mutex_);
    std::shared_ptr<std::atomic<bool>>& flag = inflight_[requestKey];
    if (!flag) {
        flag = std::make_shared<std::atomic<bool>>(false);
    }
    return flag;
}

void McpSession::endRequest(const std::string& requestKey) {
    std::lock_guard lock(mutex_);
    inflight_.erase(requestKey);
}

bool McpSession::cancelRequest(const std::string& requestKey) {
    std::lock_guard lock(mutex_);
    const auto it = inflight_.find(requestKey);
    if (it == inflight_.end()) {
        return false;
    }
    *it->second = true;
    return true;
}

std::string McpSession::beginClientRequest() {
    std::lock_guard lock(clientMutex_);
    std::string id = "crank-s2c-" + std::to_string(nextClientRequest_++);
    clientRequests_.emplace("\"" + id + "\"", std::nullopt);
    return id;
}

bool McpSession::deliverClientAnswer(const std::string& id_json, bool ok, std::string json) {
    {
        std::lock_guard lock(clientMutex_);
        const auto it = clientRequests_.find(id_json);
        if (it == clientRequests_.end() || it->second) {
            return false;
        }
        it->second.emplace(ok, std::move(json));
    }
    clientAnswered_.notify_all();
    return true;
}

std::optional<std::pair<bool, std::string>> McpSession::awaitClientAnswer(
    const std::string& id, std::chrono::steady_clock::time_point deadline,
    const std::function<bool()>& cancelled) {
    const std::string key = "\"" + id + "\"";
    std::unique_lock lock(clientMutex_);
    while (true) {
        const auto it = clientRequests_.find(key);
        if (it == clientRequests_.end()) {
            return std::nullopt;
        }
        if (it->second) {
            auto answer = std::move(it->second);
            clientRequests_.erase(it);
            return answer;
        }
        const auto now = std::chrono::steady_clock::now();
        if (now >= deadline || (cancelled && cancelled())) {
            clientRequests_.erase(it);
            return std::nullopt;
        }
        clientAnswered_.wait_until(lock, std::min(deadline, now + std::chrono::milliseconds(50)));
    }
}

std::size_t McpSession::attachedStreams() const {
    std::lock_guard lock(mutex_);
    return attachedLocked();
}

std::size_t McpSession::attachedLocked() const {
    std::size_t n = 0;
    for (const auto& [number, stream] : streams_) {
        n += stream.connection ? 1 : 0;
    }
    return n;
}

void McpSession::takeHeldPlace() {
    heldPlaces_ -= heldPlaces_ > 0 ? 1 : 0;
}

bool McpSession::holdStreamPlace(std::size_t limit) {
    std::lock_guard lock(mutex_);
    if (attachedLocked() + heldPlaces_ >= limit) {
        return false;
    }
    ++heldPlaces_;
    return true;
}

void McpSession::releaseStreamPlace() {
    std::lock_guard lock(mutex_);
    takeHeldPlace();
}

}  // namespace crank::mcp
