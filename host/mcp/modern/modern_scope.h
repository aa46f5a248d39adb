#pragma once

#include <chrono>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

#include "mcp/endpoint_access.h"
#include "mcp/modern/held_calls.h"
#include "mcp/modern/request_state_seal.h"
#include "mcp/request_scope.h"
#include "mcp/request_stream.h"
#include "mcp/tool_registry.h"
#include "mcp/wire/client_capabilities.h"
#include "mcp/wire/log_level.h"
#include "mcp/wire/request_id.h"
#include "mcp/wire/tool_call_params.h"

namespace crank::mcp {

/// The ToolCall of a 2026-07-28 request. On a request answered as an SSE stream, progress (with
/// the request's progress token) and log notifications (at or above the request's logLevel) go
/// on that stream, and the client closing it cancels the call; a request answered as one JSON
/// body gets neither. Nothing is ever pushed to the client: the era asks through input_required
/// results instead (a held call's questions, held_calls.h). A call that would ask for a capability
/// the request did not declare records it in its Outcome, and the request is answered -32021.
class ModernToolCall final : public ToolCall {
public:
    /// What the calls of one request learnt that decides its answer: the client capability a
    /// call needed and the request did not declare ("" when none).
    struct Outcome {
        std::mutex mutex;
        std::string missing_capability;
        /// Records that the request needed `capability` (the first one wins).
        void needs(std::string_view capability) {
            const std::lock_guard lock(mutex);
            if (missing_capability.empty()) {
                missing_capability = capability;
            }
        }
    };

    /// `capabilities`: what the request's _meta declared.
    ModernToolCall(Caller caller, std::shared_ptr<RequestStream> stream,
                   std::optional<RequestId> progress_token, std::optional<LogLevel> log_level,
                   SharedClientCapabilities capabilities, std::shared_ptr<Outcome> outcome,
                   std::shared_ptr<HeldCall> held = nullptr)
        : caller_(std::move(caller)),
          stream_(std::move(stream)),
          progress_token_(std::move(progress_token)),
          log_level_(log_level),
          capabilities_(std::move(capabilities)),
          outcome_(std::move(outcome)),
          held_(std::move(held)) {}

    Caller caller() const override { return caller_; }
    bool cancelled() const override {
        return (stream_ && stream_->closed()) || (held_ && held_->abandoned());
    }
    bool progressRequested() const override;
    void progress(double progress, std::optional<double> total, std::string_view message) override;
    void log(LogLevel level, std::string_view logger, std::string_view data_json) override;
    ClientAnswer requestClient(std::string_view method, std::string_view params_json,
                               std::chrono::milliseconds timeout) override;
    bool clientDeclares(std::string_view capability) const override;
    bool clientDeclaresTasks() const override {
        return capabilities_->declaresExtension(kTasksExtension);
    }
    std::optional<LogLevel> logLevel() const override { return log_level_; }

private:
    Caller caller_;
    std::shared_ptr<RequestStream> stream_;
    std::optional<RequestId> progress_token_;
    std::optional<LogLevel> log_level_;
    SharedClientCapabilities capabilities_;
    std::shared_ptr<Outcome> outcome_;
    std::shared_ptr<HeldCall> held_;  ///< set: the call is held, its questions go to the client
};

/// What a 2026-07-28 request brings to MRTR: where an input_required result's state is sealed and
/// what it is bound to, and the round the request retries, if it is a retry.
struct ModernRound {
    const RequestStateSeal* seal = nullptr;  ///< null: no state can be sealed (tools refused)
    StateBinding binding;
    /// The client's answers and the tool's opened state; nullopt for a request that is no retry.
    std::optional<InputRound> retry;
    /// Set: the retry answers the questions of this call, held on this node (held_calls.h).
    std::string held_id;
};

/// A 2026-07-28 request as the method table sees it: its Who, no session, and the stream it is
/// answered on (none for a JSON answer) with what its _meta asked for.
class ModernScope final : public RequestScope {
public:
    /// `capabilities`: the request's declared capabilities.
    explicit ModernScope(const Who& who,
                         SharedClientCapabilities capabilities = noClientCapabilities(),
                         std::shared_ptr<RequestStream> stream = nullptr,
                         std::optional<LogLevel> log_level = std::nullopt, ModernRound&& round = {},
                         std::shared_ptr<HeldCall> held = nullptr)
        : who_(who),
          capabilities_(std::move(capabilities)),
          stream_(std::move(stream)),
          log_level_(log_level),
          round_(std::move(round)),
          held_(std::move(held)) {}

    const Who& who() const override { return who_; }
    std::unique_ptr<ToolCall> beginCall(const RequestId& /*id*/,
                                        std::optional<RequestId> progress_token) override {
        auto call =
            std::make_unique<ModernToolCall>(who_.caller(), stream_, std::move(progress_token),
                                             log_level_, capabilities_, outcome_, held_);
        call->setInputRound(round_.retry);
        return call;
    }

    /// The input_required result of `need`, its state sealed for this request's binding; -32021
    /// (recorded for missingCapability()) when it asks what the request did not declare.
    InputStep inputRequired(const InputNeed& need, ToolCall& call, std::string_view tool,
                            std::chrono::milliseconds wait) override;

    /// -32021 naming the capability when missingCapability() is not "" (the tool's own answer,
    /// made without it, is then not the request's); nullopt otherwise.
    std::optional<MethodAnswer> undeclared() const;

    /// The client capability a call of this request needed and the request did not declare
    /// ("sampling", "elicitation", "roots"); "" when none. The request is then answered -32021.
    std::string missingCapability() const {
        const std::lock_guard lock(outcome_->mutex);
        return outcome_->missing_capability;
    }

private:
    const Who& who_;
    SharedClientCapabilities capabilities_;
    std::shared_ptr<RequestStream> stream_;
    std::optional<LogLevel> log_level_;
    ModernRound round_;
    std::shared_ptr<HeldCall> held_;
    std::shared_ptr<ModernToolCall::Outcome> outcome_ = std::make_shared<ModernToolCall::Outcome>();
};

/// The MRTR side of a 2026 request of `method` on `target` (a tool's or prompt's name, a URI)
/// with `arguments_json` from `who`: what a state sealed for it is bound to and, when it retries a
/// round (`retry` carries answers or a state), the answers and the opened state, or the held call
/// they answer. The error (for -32602) says why its requestState does not open.
Result<ModernRound> openRound(std::string_view method, std::string_view target,
                              std::string_view arguments_json, const InputRetry& retry,
                              const Who& who, const RequestStateSeal* seal);

}  // namespace crank::mcp
