#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "mcp/endpoint_access.h"
#include "mcp/request_id.h"
#include "mcp/request_scope.h"
#include "mcp/tool_registry.h"

namespace crank::mcp {

/// The ToolCall of a 2026-07-28 request answered as one JSON body: nothing to send progress or
/// logs on, and nothing is ever pushed to the client (the era asks through input_required
/// results instead).
class StatelessToolCall final : public ToolCall {
public:
    explicit StatelessToolCall(Caller caller) : caller_(std::move(caller)) {}

    Caller caller() const override { return caller_; }
    bool cancelled() const override { return false; }
    void progress(double /*progress*/, std::optional<double> /*total*/,
                  std::string_view /*message*/) override {}
    void log(LogLevel /*level*/, std::string_view /*logger*/,
             std::string_view /*data_json*/) override {}
    ClientAnswer requestClient(std::string_view method, std::string_view params_json,
                               std::chrono::milliseconds timeout) override;

private:
    Caller caller_;
};

/// A 2026-07-28 request as the method table sees it: its Who, and no session.
class StatelessScope final : public RequestScope {
public:
    explicit StatelessScope(const Who& who) : who_(who) {}

    const Who& who() const override { return who_; }
    std::unique_ptr<ToolCall> beginCall(const RequestId& /*id*/,
                                        std::optional<RequestId> /*progress_token*/) override {
        return std::make_unique<StatelessToolCall>(who_.caller());
    }

private:
    const Who& who_;
};

}  // namespace crank::mcp
