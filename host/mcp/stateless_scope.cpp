#include "mcp/stateless_scope.h"

#include "mcp/call_notifications.h"
#include "util/json_string.h"

namespace crank::mcp {

void StatelessToolCall::progress(double progress, std::optional<double> total,
                                 std::string_view message) {
    if (!stream_ || !progress_token_) {
        return;
    }
    if (std::string note = progressNotification(*progress_token_, progress, total, message);
        !note.empty()) {
        stream_->send(note);
    }
}

void StatelessToolCall::log(LogLevel level, std::string_view logger, std::string_view data_json) {
    // Without a logLevel in the request's _meta no log notification is sent at all.
    if (stream_ && log_level_ && level >= *log_level_) {
        stream_->send(logNotification(level, logger, data_json));
    }
}

ToolCall::ClientAnswer StatelessToolCall::requestClient(std::string_view method,
                                                        std::string_view /*params_json*/,
                                                        std::chrono::milliseconds /*timeout*/) {
    return {false, R"({"code":-32601,"message":)" +
                       jsonString("a 2026-07-28 request cannot be sent " +
                                  std::string(method.substr(0, 100)) +
                                  ": a server of that era asks through input_required results") +
                       "}"};
}

}  // namespace crank::mcp
