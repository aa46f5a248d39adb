#include "client_requests.h"

#include <algorithm>
#include <system_error>
#include <thread>
#include <utility>

#include <crank/sdk/json.hpp>

namespace crank::mcpc {
namespace {

using Clock = std::chrono::steady_clock;

std::string errorAnswer(const std::string& id_json, const std::string& message) {
    return R"({"jsonrpc":"2.0","id":)" + id_json + R"(,"error":{"code":-32603,"message":)" +
           sdk::jsonQuote(message) + "}}";
}

template <typename T>
bool contains(const std::vector<T>& items, const T& item) {
    return std::find(items.begin(), items.end(), item) != items.end();
}

}  // namespace

ClientRequests::ClientRequests(Options options, Send send)
    : options_(options), send_(std::move(send)) {}

ClientRequests::~ClientRequests() {
    close();
}

std::shared_ptr<ClientRequests::Flight> ClientRequests::begin(sdk::Call call,
                                                              std::string progress_token) {
    auto flight = std::make_shared<Flight>(Flight{call, std::move(progress_token)});
    const std::lock_guard lock(mutex_);
    flights_.push_back(flight);
    if (!flight->progress_token.empty()) {
        by_token_[flight->progress_token] = flight;
    }
    return flight;
}

void ClientRequests::end(const std::shared_ptr<Flight>& flight, bool answered) {
    std::unique_lock lock(mutex_);
    flight->answered = answered;
    flights_.erase(std::remove(flights_.begin(), flights_.end(), flight), flights_.end());
    if (!flight->progress_token.empty()) {
        by_token_.erase(flight->progress_token);
    }
    changed_.notify_all();
    // No request of the server may use the call after this returns.
    changed_.wait(lock, [&] { return users_.count(flight.get()) == 0; });
}

std::shared_ptr<ClientRequests::Flight> ClientRequests::byToken(const std::string& token) const {
    const std::lock_guard lock(mutex_);
    const auto it = by_token_.find(token);
    return it == by_token_.end() ? nullptr : it->second;
}

std::shared_ptr<ClientRequests::Flight> ClientRequests::sole() const {
    const std::lock_guard lock(mutex_);
    return flights_.size() == 1 ? flights_.front() : nullptr;
}

void ClientRequests::handle(const std::string& id_json, const std::string& method,
                            const std::string& params, const std::shared_ptr<Flight>& related) {
    std::string refusal;
    {
        const std::lock_guard lock(mutex_);
        if (closing_ || running_ >= options_.max_requests) {
            refusal = "too many requests to clients at once";
        } else if (!related && flights_.empty()) {
            // Refused rather than answered for nobody (an empty roots list would be kept by the
            // server as the truth): the server may ask again during a call, which has a client.
            refusal = "crank forwards " + method +
                      " only to the client of a call in flight, and "
                      "none is";
        } else {
            ++running_;
            std::shared_ptr<Flight> flight = related;
            if (!flight && flights_.size() == 1) {
                flight = flights_.front();
            }
            if (flight) {
                ++users_[flight.get()];
            }
            // The answer may take a person's time (elicitation): never on the reader's thread.
            try {
                std::thread([this, id_json, method, params, flight] {
                    run(id_json, method, params, flight);
                }).detach();
                return;
            } catch (const std::system_error&) {
                --running_;  // no thread: nothing runs, nothing is counted
                if (flight && --users_[flight.get()] == 0) {
                    users_.erase(flight.get());
                }
                refusal = "crank cannot start a thread for it now";
            }
        }
    }
    send_(errorAnswer(id_json, refusal));
}

void ClientRequests::run(const std::string& id_json, const std::string& method,
                         const std::string& params, std::shared_ptr<Flight> flight) {
    if (!flight) {
        std::vector<std::shared_ptr<Flight>> candidates;
        {
            const std::lock_guard lock(mutex_);
            candidates = flights_;
        }
        flight = route(id_json, method, std::move(candidates));
    }
    if (flight) {
        ask(id_json, method, params, flight);
    }
    finished();
}

std::shared_ptr<ClientRequests::Flight> ClientRequests::route(
    const std::string& id_json, const std::string& method,
    std::vector<std::shared_ptr<Flight>> candidates) {
    std::unique_lock lock(mutex_);
    const std::size_t inFlight = candidates.size();
    const Clock::time_point arrived = Clock::now();
    const Clock::time_point deadline = arrived + options_.unrouted_wait;
    // The questions already put to these calls' clients keep this one waiting: bounded now.
    for (auto& entry : questions_) {
        Question& q = *entry.second;
        if (!q.answered && contains(candidates, q.flight)) {
            q.cut_at = std::min(q.cut_at, arrived + options_.blocking_question);
        }
    }
    waiting_.insert(id_json);
    std::string refusal;
    for (;;) {
        if (cancelled_.erase(id_json) > 0) {
            waiting_.erase(id_json);
            return nullptr;  // the server gave it up: nothing to answer
        }
        bool unanswered = false;  // a candidate ended without the server's answer
        candidates.erase(std::remove_if(candidates.begin(), candidates.end(),
                                        [&](const auto& f) {
                                            const bool gone = !contains(flights_, f);
                                            unanswered = unanswered || (gone && !f->answered);
                                            return gone;
                                        }),
                         candidates.end());
        const Clock::time_point now = Clock::now();
        if (closing_) {
            refusal = "crank is closing the connection";
        } else if (unanswered) {
            refusal = "crank cannot tell which client " + method +
                      " is for: a call it may belong to ended without the server's answer "
                      "(cancelled or timed out)";
        } else if (candidates.size() == 1) {
            waiting_.erase(id_json);
            ++users_[candidates.front().get()];
            return candidates.front();
        } else if (candidates.empty()) {
            refusal = "the calls in flight when the server sent " + method +
                      " ended before crank could tell which client it is for";
        } else if (now >= deadline) {
            refusal = "crank cannot tell which client " + method +
                      " is for: " + std::to_string(inFlight) +
                      " calls were in flight on this connection, " +
                      std::to_string(candidates.size()) + " still are after " +
                      std::to_string(options_.unrouted_wait.count()) + " ms";
        }
        if (!refusal.empty()) {
            waiting_.erase(id_json);
            lock.unlock();
            send_(errorAnswer(id_json, refusal));
            return nullptr;
        }
        std::vector<std::string> cut;
        Clock::time_point next = deadline;
        for (auto& entry : questions_) {
            Question& q = *entry.second;
            if (q.answered || !contains(candidates, q.flight)) {
                continue;
            }
            if (q.cut_at <= now) {
                q.answered = true;
                cut.push_back(entry.first);
            } else {
                next = std::min(next, q.cut_at);
            }
        }
        if (!cut.empty()) {
            lock.unlock();
            for (const std::string& id : cut) {
                send_(errorAnswer(id, "the client did not answer within " +
                                          std::to_string(options_.blocking_question.count()) +
                                          " ms while a request for another call waited behind "
                                          "it (blocking_question_ms)"));
            }
            lock.lock();
            continue;
        }
        changed_.wait_until(lock, next);
    }
}

void ClientRequests::ask(const std::string& id_json, const std::string& method,
                         const std::string& params, const std::shared_ptr<Flight>& flight) {
    auto question = std::make_shared<Question>();
    question->flight = flight;
    {
        const std::lock_guard lock(mutex_);
        questions_[id_json] = question;
    }
    std::string answer;
    const bool ok = flight->call.request(method, params, options_.answer_timeout.count(), answer);
    bool late = false;
    {
        const std::lock_guard lock(mutex_);
        late = question->answered;
        question->answered = true;
        const auto it = questions_.find(id_json);
        if (it != questions_.end() && it->second == question) {
            questions_.erase(it);
        }
        if (--users_[flight.get()] == 0) {
            users_.erase(flight.get());
        }
        changed_.notify_all();
    }
    if (!late) {
        send_(R"({"jsonrpc":"2.0","id":)" + id_json + (ok ? R"(,"result":)" : R"(,"error":)") +
              (answer.empty() ? std::string("{}") : answer) + "}");
    }
}

void ClientRequests::cancelled(const std::string& id_json) {
    const std::lock_guard lock(mutex_);
    if (waiting_.count(id_json) > 0) {
        cancelled_.insert(id_json);
        changed_.notify_all();
        return;
    }
    const auto it = questions_.find(id_json);
    if (it != questions_.end()) {
        it->second->answered = true;  // the server wants no answer; the client's is dropped
    }
}

void ClientRequests::finished() {
    const std::lock_guard lock(mutex_);
    --running_;
    changed_.notify_all();
}

void ClientRequests::close() {
    std::unique_lock lock(mutex_);
    closing_ = true;
    changed_.notify_all();
    changed_.wait(lock, [&] { return running_ == 0; });
}

}  // namespace crank::mcpc
