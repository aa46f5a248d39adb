#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "mcp/endpoint_access.h"
#include "mcp/log_level.h"
#include "mcp/request_id.h"
#include "mcp/request_scope.h"
#include "mcp/request_stream.h"
#include "mcp/tool_registry.h"

namespace crank::mcp {

/// The ToolCall of a 2026-07-28 request. On a request answered as an SSE stream, progress (with
/// the request's progress token) and log notifications (at or above the request's logLevel) go
/// on that stream, and the client closing it cancels the call; a request answered as one JSON
/// body gets neither. Nothing is ever pushed to the client: the era asks through input_required
/// results instead.
class StatelessToolCall final : public ToolCall {
public:
    StatelessToolCall(Caller caller, std::shared_ptr<RequestStream> stream,
                      std::optional<RequestId> progress_token, std::optional<LogLevel> log_level)
        : caller_(std::move(caller)),
          stream_(std::move(stream)),
          progress_token_(std::move(progress_token)),
          log_level_(log_level) {}

    Caller caller() const override { return caller_; }
    bool cancelled() const override { return stream_ && stream_->closed(); }
    bool progressRequested() const override { return stream_ && progress_token_.has_value(); }
    void progress(double progress, std::optional<double> total, std::string_view message) override;
    void log(LogLevel level, std::string_view logger, std::string_view data_json) override;
    ClientAnswer requestClient(std::string_view method, std::string_view params_json,
                               std::chrono::milliseconds timeout) override;

private:
    Caller caller_;
    std::shared_ptr<RequestStream> stream_;
    std::optional<RequestId> progress_token_;
    std::optional<LogLevel> log_level_;
};

/// A 2026-07-28 request as the method table sees it: its Who, no session, and the stream it is
/// answered on (none for a JSON answer) with what its _meta asked for.
class StatelessScope final : public RequestScope {
public:
    explicit StatelessScope(const Who& who, std::shared_ptr<RequestStream> stream = nullptr,
                            std::optional<LogLevel> log_level = std::nullopt)
        : who_(who), stream_(std::move(stream)), log_level_(log_level) {}

    const Who& who() const override { return who_; }
    std::unique_ptr<ToolCall> beginCall(const RequestId& /*id*/,
                                        std::optional<RequestId> progress_token) override {
        return std::make_unique<StatelessToolCall>(who_.caller(), stream_,
                                                   std::move(progress_token), log_level_);
    }

private:
    const Who& who_;
    std::shared_ptr<RequestStream> stream_;
    std::optional<LogLevel> log_level_;
};

}  // namespace crank::mcp
