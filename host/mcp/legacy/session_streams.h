#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "config/config.h"
#include "mcp/caller_quotas.h"
#include "mcp/legacy/mcp_session.h"

namespace Poco::Net {
class HTTPServerRequest;
class HTTPServerResponse;
}  // namespace Poco::Net

namespace crank::http {
class StreamReactor;
}  // namespace crank::http

namespace crank::mcp {

/// Hands the connection of a 2025-era session's request to the stream reactor as one of the
/// session's SSE streams, within the bounds: mcp.max_streams on the node,
/// mcp.max_streams_per_session, and the agent's and workspace's stream quotas. An open stream
/// holds no thread. THREADING: any thread.
class SessionStreams {
public:
    SessionStreams(const config::McpConfig& mcp, http::StreamReactor& reactor,
                   std::shared_ptr<CallerQuotas> quotas);

    /// Answers 200 text/event-stream and attaches the connection to `stream` of `session` (or,
    /// with `resume_from`, resumes the stream that Last-Event-ID names); false after answering
    /// 503 or 429 when a bound refuses it, or when the connection could not be taken over.
    bool open(Poco::Net::HTTPServerRequest& request, Poco::Net::HTTPServerResponse& response,
              const std::shared_ptr<McpSession>& session, std::uint64_t stream,
              const std::optional<std::string>& resume_from);

private:
    std::int64_t max_streams_;
    std::int64_t max_streams_per_session_;
    http::StreamReactor& reactor_;
    std::shared_ptr<CallerQuotas> quotas_;
    std::atomic<std::uint64_t> next_token_{1};
};

}  // namespace crank::mcp
