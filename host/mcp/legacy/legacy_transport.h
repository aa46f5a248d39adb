#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>

#include "config/config.h"
#include "mcp/caller_quotas.h"
#include "mcp/catalog.h"
#include "mcp/endpoint_access.h"
#include "mcp/endpoint_observer.h"
#include "mcp/legacy/legacy_tasks.h"
#include "mcp/legacy/session_manager.h"
#include "mcp/legacy/session_streams.h"
#include "mcp/method_table.h"
#include "mcp/wire/json_rpc.h"
#include "mcp/wire/protocol_version.h"
#include "mcp/wire/trace_context.h"

namespace Poco::Net {
class HTTPServerRequest;
class HTTPServerResponse;
}  // namespace Poco::Net

namespace crank::mcp {

/// The 2025-era Streamable HTTP transport (2025-03-26, 2025-06-18, 2025-11-25): `initialize`
/// opens a session (Mcp-Session-Id) that every later POST, GET and DELETE names; the lifecycle
/// methods (ping, logging/setLevel), the session's notifications and its answers to requests
/// the server sent, 2025-03-26 batches, SSE answers and GET streams with resumption, and Tasks
/// for 2025-11-25 sessions. Every other method goes to the MethodTable.
///
/// THREADING: any number of requests at once, on the HTTP worker threads.
class LegacyTransport {
public:
    LegacyTransport(ServerIdentity identity, SessionManager& sessions, SessionStreams& streams,
                    LegacyTasks& tasks, const MethodTable& methods,
                    std::shared_ptr<CallerQuotas> quotas, const EndpointObserver& observer);

    /// A POST whose body has been read and parsed (`since`: when it was). `tool_call`: the
    /// params of a body that is one tools/call, when they were read already.
    void post(Poco::Net::HTTPServerRequest& request, Poco::Net::HTTPServerResponse& response,
              const Who& who, const ParsedBody& parsed, const HeaderTrace& headers,
              std::chrono::steady_clock::time_point since,
              const std::optional<Result<ToolCallParams>>& tool_call = std::nullopt);
    /// GET: the session's standalone stream, or the resumption of one (Last-Event-ID).
    void get(Poco::Net::HTTPServerRequest& request, Poco::Net::HTTPServerResponse& response,
             const Who& who);
    /// DELETE: ends the session.
    void remove(Poco::Net::HTTPServerRequest& request, Poco::Net::HTTPServerResponse& response,
                const Who& who);

    /// notifications/tools/list_changed to every session of `workspace`.
    void toolsChanged(const std::string& workspace);
    /// A catalog's notice to the sessions of `workspace` it names (or all of them).
    void deliver(const std::string& workspace, const CatalogNotice& notice);

private:
    struct Reply {
        MethodAnswer answer;
        int status = 200;
    };

    /// Checks Mcp-Session-Id and MCP-Protocol-Version; answers the error itself and returns
    /// null when they are wrong.
    std::shared_ptr<McpSession> sessionOf(Poco::Net::HTTPServerRequest& request,
                                          Poco::Net::HTTPServerResponse& response, const Who& who);
    Reply initialize(const JsonRpcMessage& message, std::shared_ptr<McpSession>& created,
                     const Who& who);
    /// The answer to one request of a session (all but tasks/result), on `stream` when it is
    /// answered as SSE.
    /// `call`: a tools/call's params when the caller has read them already.
    /// `headers`: the trace context of the request's HTTP headers.
    MethodAnswer answer(const JsonRpcMessage& message, const std::shared_ptr<McpSession>& session,
                        const Who& who, const HeaderTrace& headers,
                        std::optional<std::uint64_t> stream = std::nullopt,
                        const Result<ToolCallParams>* call = nullptr);
    /// ping, logging/setLevel, and initialize on a session that has one.
    static MethodAnswer lifecycle(const JsonRpcMessage& message, McpSession& session);
    MethodAnswer toolsCall(const JsonRpcMessage& message, const Result<ToolCallParams>& params,
                           const std::shared_ptr<McpSession>& session, const Who& who,
                           const HeaderTrace& headers, std::optional<std::uint64_t> stream);
    /// A notification, or the client's answer to a request the server sent.
    void notify(const JsonRpcMessage& message, McpSession& session, const Who& who);
    /// A single request (not a batch) of a session.
    void request(Poco::Net::HTTPServerRequest& request, Poco::Net::HTTPServerResponse& response,
                 const JsonRpcMessage& message, const std::shared_ptr<McpSession>& session,
                 const Who& who, const HeaderTrace& headers,
                 std::chrono::steady_clock::time_point since,
                 const std::optional<Result<ToolCallParams>>& tool_call);
    /// True when a tools/call is answered as an SSE stream: it carries a progress token, or the
    /// tool may ask the client something and the client can be asked.
    bool streamed(const ToolCallParams& call, const McpSession& session, const Who& who) const;

    ServerIdentity identity_;
    SessionManager& sessions_;
    SessionStreams& streams_;
    LegacyTasks& tasks_;
    const MethodTable& methods_;
    std::shared_ptr<CallerQuotas> quotas_;
    const EndpointObserver& observer_;
};

}  // namespace crank::mcp
