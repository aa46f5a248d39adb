#pragma once

// The bridge between tools that ask the client while they run (ToolCall::requestClient: a
// federated 2025-era upstream's sampling/createMessage, elicitation/create, roots/list) and a
// 2026-07-28 client, which can only be asked through input_required results (MRTR). Such a call
// runs on a thread of its own, a HeldCall: each request about it (the first, then every retry)
// waits until the call either ends (its answer is the request's) or asks something (the request
// is answered input_required, the state naming the held call). The retry's answers go to the
// questions waiting, and the request waits again.
//
// Bounded: calls held per agent and per node (HeldCalls), each question waits at most what the
// tool allows and mcp.request_state_ttl_ms (then the tool gets an error and ends, and the upstream
// is told), and a call whose client went away is dropped when it ends.
//
// THREADING: every member may be called from any thread.

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "mcp/method_answer.h"
#include "mcp/request_stream.h"
#include "mcp/tool_registry.h"
#include "mcp/wire/log_level.h"
#include "mcp/wire/request_id.h"
#include "util/error.h"

namespace crank::mcp {

/// What a request about a held call is answered with: the call's end, or its questions.
struct HeldEvent {
    std::optional<MethodAnswer> finished;
    std::vector<InputRequest> questions;  ///< those not answered yet, when not finished
};

class HeldCall {
public:
    /// The request waiting on the call now, when it is answered as an SSE stream: where the
    /// call's progress and log notifications go, with that request's token and level.
    struct Listener {
        std::shared_ptr<RequestStream> stream;
        std::optional<RequestId> progress_token;
        std::optional<LogLevel> log_level;
    };

    HeldCall(std::string id, std::string agent, std::chrono::milliseconds max_wait)
        : id_(std::move(id)), agent_(std::move(agent)), max_wait_(max_wait) {}

    const std::string& id() const { return id_; }
    const std::string& agent() const { return agent_; }

    /// On the call's thread: asks the client `method` with `params_json` and waits for the answer
    /// a retry brings, at most `timeout` (and the held call's longest wait); an error answer when
    /// none came or the call was abandoned.
    ToolCall::ClientAnswer ask(std::string_view method, std::string_view params_json,
                               std::chrono::milliseconds timeout);
    /// On the call's thread: the call ended with `answer`. False when no request waits for it
    /// (the client went away): the answer is dropped.
    bool finish(MethodAnswer answer);
    /// True once abandon() ran: the call should stop.
    bool abandoned() const;

    /// A request's wait: until the call ends or asks something not yet answered.
    HeldEvent wait();
    /// Hands the answers by key to the questions waiting for them; unknown keys are ignored.
    void answer(const std::map<std::string, std::string, std::less<>>& responses);
    /// Tells the call to stop: its questions get an error at once.
    void abandon();

    /// The request waiting now streams (see Listener); detach() when it is answered.
    void attach(Listener listener);
    void detach();
    Listener listener() const;

private:
    struct Question {
        InputRequest request;
        std::optional<std::string> answer;
    };

    const std::string id_;
    const std::string agent_;
    const std::chrono::milliseconds max_wait_;
    mutable std::mutex mutex_;
    std::condition_variable changed_;
    std::map<std::string, Question, std::less<>> questions_;  // key → question, while asked
    std::uint64_t asked_ = 0;
    std::optional<MethodAnswer> finished_;
    int waiters_ = 0;
    bool abandoned_ = false;
    Listener listener_;
};

/// The held calls of one node, bounded per agent and in all.
class HeldCalls {
public:
    /// `max_per_agent`, `max_calls`: calls held at once; `max_wait`: the longest a question waits.
    HeldCalls(std::int64_t max_per_agent, std::int64_t max_calls,
              std::chrono::milliseconds max_wait);
    /// Abandons every call and waits for their threads to end.
    ~HeldCalls();
    HeldCalls(const HeldCalls&) = delete;
    HeldCalls& operator=(const HeldCalls&) = delete;

    /// Runs `run` on a thread of its own as a call held for `agent`; ErrorCode::unavailable when
    /// the agent or the node holds as many as they may.
    using Run = std::function<MethodAnswer(const std::shared_ptr<HeldCall>&)>;
    Result<std::shared_ptr<HeldCall>> start(const std::string& agent, Run run);
    /// The call `id` held for `agent`; null when there is none (it ended, or it is another's).
    std::shared_ptr<HeldCall> find(std::string_view id, std::string_view agent) const;
    /// Calls held now.
    std::size_t size() const;
    /// Tells every held call to stop (their questions get an error at once); does not wait.
    void abandonAll();

private:
    struct Shared {
        mutable std::mutex mutex;
        std::condition_variable ended;
        std::map<std::string, std::shared_ptr<HeldCall>, std::less<>> calls;
        std::map<std::string, std::int64_t, std::less<>> per_agent;
        std::size_t threads = 0;
    };
    std::int64_t max_per_agent_;
    std::int64_t max_calls_;
    std::chrono::milliseconds max_wait_;
    std::shared_ptr<Shared> shared_ = std::make_shared<Shared>();
};

}  // namespace crank::mcp
