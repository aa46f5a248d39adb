#include "mcp/modern/held_calls.h"

#include <algorithm>
#include <thread>
#include <utility>

#include "util/random.h"

namespace crank::mcp {

ToolCall::ClientAnswer HeldCall::ask(std::string_view method, std::string_view params_json,
                                     std::chrono::milliseconds timeout) {
    std::unique_lock lock(mutex_);
    if (abandoned_) {
        return {false, R"({"code":-32800,"message":"the call was abandoned"})"};
    }
    const std::string key = "input_" + std::to_string(++asked_);
    questions_[key] =
        Question{InputRequest{key, std::string(method), std::string(params_json)}, std::nullopt};
    changed_.notify_all();
    const auto deadline = std::chrono::steady_clock::now() + std::min(timeout, max_wait_);
    changed_.wait_until(lock, deadline,
                        [&] { return abandoned_ || questions_.at(key).answer.has_value(); });
    std::optional<std::string> answer = std::move(questions_.at(key).answer);
    questions_.erase(key);
    if (answer) {
        return {true, std::move(*answer)};
    }
    return {false, abandoned_ ? R"({"code":-32800,"message":"the call was abandoned"})"
                              : R"({"code":-32001,"message":"the client did not answer in time"})"};
}

bool HeldCall::finish(MethodAnswer answer) {
    const std::lock_guard lock(mutex_);
    finished_ = std::move(answer);
    changed_.notify_all();
    return waiters_ > 0;
}

bool HeldCall::abandoned() const {
    const std::lock_guard lock(mutex_);
    return abandoned_;
}

HeldEvent HeldCall::wait() {
    std::unique_lock lock(mutex_);
    ++waiters_;
    const auto unanswered = [this] {
        return std::any_of(questions_.begin(), questions_.end(),
                           [](const auto& q) { return !q.second.answer; });
    };
    // An abandoned call's questions are not asked any more: only its end is awaited.
    changed_.wait(lock, [&] { return finished_.has_value() || (!abandoned_ && unanswered()); });
    --waiters_;
    HeldEvent event;
    if (finished_) {
        event.finished = std::move(finished_);
        finished_.reset();
        return event;
    }
    for (const auto& [key, question] : questions_) {
        if (!question.answer) {
            event.questions.push_back(question.request);
        }
    }
    return event;
}

void HeldCall::answer(const std::map<std::string, std::string, std::less<>>& responses) {
    const std::lock_guard lock(mutex_);
    for (auto& [key, question] : questions_) {
        const auto it = responses.find(key);
        if (it != responses.end() && !question.answer) {
            question.answer = it->second;
        }
    }
    changed_.notify_all();
}

void HeldCall::abandon() {
    const std::lock_guard lock(mutex_);
    abandoned_ = true;
    changed_.notify_all();
}

void HeldCall::attach(Listener listener) {
    const std::lock_guard lock(mutex_);
    listener_ = std::move(listener);
}

void HeldCall::detach() {
    const std::lock_guard lock(mutex_);
    listener_ = Listener{};
}

HeldCall::Listener HeldCall::listener() const {
    const std::lock_guard lock(mutex_);
    return listener_;
}

HeldCalls::HeldCalls(std::int64_t max_per_agent, std::int64_t max_calls,
                     std::chrono::milliseconds max_wait)
    : max_per_agent_(max_per_agent), max_calls_(max_calls), max_wait_(max_wait) {}

void HeldCalls::abandonAll() {
    const std::lock_guard lock(shared_->mutex);
    for (const auto& [id, call] : shared_->calls) {
        call->abandon();
    }
}

HeldCalls::~HeldCalls() {
    std::unique_lock lock(shared_->mutex);
    for (const auto& [id, call] : shared_->calls) {
        call->abandon();
    }
    // Their tools honour cancellation (and every wait of theirs is bounded): they end soon.
    shared_->ended.wait(lock, [this] { return shared_->threads == 0; });
}

Result<std::shared_ptr<HeldCall>> HeldCalls::start(const std::string& agent, Run run) {
    std::shared_ptr<HeldCall> call;
    {
        const std::lock_guard lock(shared_->mutex);
        if (static_cast<std::int64_t>(shared_->calls.size()) >= max_calls_) {
            return Error{ErrorCode::unavailable,
                         "this node holds as many calls waiting for client input as "
                         "mcp.max_held_calls allows (" +
                             std::to_string(max_calls_) + "); try again later"};
        }
        std::int64_t& mine = shared_->per_agent[agent];
        if (mine >= max_per_agent_) {
            return Error{ErrorCode::unavailable,
                         "this agent holds as many calls waiting for client input as "
                         "mcp.max_held_calls_per_agent allows (" +
                             std::to_string(max_per_agent_) + "); answer or abandon one first"};
        }
        ++mine;
        call = std::make_shared<HeldCall>(newId("held_"), agent, max_wait_);
        shared_->calls.emplace(call->id(), call);
        ++shared_->threads;
    }
    std::thread([shared = shared_, call, run = std::move(run)] {
        MethodAnswer answer = MethodAnswer::error(-32603, "the call failed");
        try {
            answer = run(call);
        } catch (const std::exception& e) {
            answer = MethodAnswer::error(-32603, std::string("the call failed: ") + e.what());
        }
        call->finish(std::move(answer));
        const std::lock_guard lock(shared->mutex);
        shared->calls.erase(call->id());
        if (auto it = shared->per_agent.find(call->agent());
            it != shared->per_agent.end() && --it->second <= 0) {
            shared->per_agent.erase(it);
        }
        --shared->threads;
        shared->ended.notify_all();
    }).detach();
    return call;
}

std::shared_ptr<HeldCall> HeldCalls::find(std::string_view id, std::string_view agent) const {
    const std::lock_guard lock(shared_->mutex);
    const auto it = shared_->calls.find(id);
    if (it == shared_->calls.end() || it->second->agent() != agent) {
        return nullptr;
    }
    return it->second;
}

std::size_t HeldCalls::size() const {
    const std::lock_guard lock(shared_->mutex);
    return shared_->calls.size();
}

}  // namespace crank::mcp
