#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "config/config.h"
#include "mcp/caller_quotas.h"
#include "mcp/endpoint_access.h"
#include "mcp/endpoint_observer.h"
#include "mcp/method_answer.h"
#include "mcp/method_table.h"
#include "mcp/modern/held_calls.h"
#include "mcp/modern/listen_hub.h"
#include "mcp/modern/modern_result.h"
#include "mcp/modern/modern_scope.h"
#include "mcp/modern/modern_tasks.h"
#include "mcp/modern/protocol_era.h"
#include "mcp/modern/request_state_seal.h"
#include "mcp/wire/json_rpc.h"
#include "mcp/wire/protocol_version.h"
#include "mcp/wire/tool_call_params.h"
#include "mcp/wire/trace_context.h"

namespace Poco::Net {
class HTTPServerRequest;
class HTTPServerResponse;
}  // namespace Poco::Net

namespace crank::http {
class StreamReactor;
}  // namespace crank::http

namespace crank::mcp {

/// The 2026-07-28 Streamable HTTP transport (SEP-2575, SEP-2243, SEP-2322): every POST stands
/// alone. Its `_meta` says who the client is and what it can do, its routing headers repeat the
/// method and the name it targets, and nothing is kept between requests. It answers
/// server/discover itself, refuses the methods the era removed (404 + -32601), and hands every
/// other request to the MethodTable, adding to each result what the era requires (resultType,
/// serverInfo, cache hints).
///
/// THREADING: const after construction; any number of requests at once.
class ModernTransport {
public:
    /// `private_lists`: the lists depend on who asks (auth.mode is not "none"), so their cache
    /// scope is private.
    /// `reactor`: where a request answered as an SSE stream goes (within mcp.max_streams and the
    /// caller's stream `quotas`); `listens`: where open subscriptions/listen streams are kept.
    /// `seal`: where the requestState of input_required results is sealed and opened.
    /// `tasks`: where the tasks of the Tasks extension run; nullptr: the extension is not offered.
    ModernTransport(const ServerIdentity& identity, const config::McpConfig& mcp,
                    bool private_lists, const MethodTable& methods, http::StreamReactor& reactor,
                    std::shared_ptr<CallerQuotas> quotas, std::shared_ptr<ListenHub> listens,
                    std::shared_ptr<const RequestStateSeal> seal, TaskBackend* tasks,
                    const EndpointObserver& observer);

    /// A POST that classifyPost() found to be of the 2026-07-28 era (`verdict`), its body read
    /// and parsed (`since`: when it was).
    void post(Poco::Net::HTTPServerRequest& request, Poco::Net::HTTPServerResponse& response,
              const Who& who, const ParsedBody& parsed, const EraVerdict& verdict,
              const HeaderTrace& headers, std::chrono::steady_clock::time_point since) const;

    /// A task changed (the task backend's listener): notifications/tasks to the listens that
    /// follow it.
    void taskChanged(const TaskInfo& task) const;
    /// Shutdown: every held call stops waiting for its client (its questions get an error), so
    /// that the upstream requests behind them can end.
    void abandonHeldCalls() const { held_->abandonAll(); }

private:
    /// The answer to one request (but tools/call) whose envelope and headers were checked.
    MethodAnswer answer(const JsonRpcMessage& message, const RequestMeta& meta, const Who& who,
                        const TraceContext& trace) const;
    MethodAnswer discover(const Who& who) const;
    /// tools/call: its Mcp-Param-* headers checked, then run; answered as an SSE stream when the
    /// request asked for progress or logs, as JSON otherwise. `since`: when the body was read.
    void toolsCall(Poco::Net::HTTPServerRequest& request, Poco::Net::HTTPServerResponse& response,
                   const JsonRpcMessage& message, const Result<ToolCallParams>& params,
                   const RequestMeta& meta, const Who& who, const TraceContext& trace,
                   std::chrono::steady_clock::time_point since) const;
    /// subscriptions/listen: the acknowledgement of the honoured kinds on a stream that stays
    /// open in the ListenHub until the client closes it.
    void listen(Poco::Net::HTTPServerRequest& request, Poco::Net::HTTPServerResponse& response,
                const JsonRpcMessage& message, const RequestMeta& meta, const Who& who,
                const TraceContext& trace, std::chrono::steady_clock::time_point since) const;
    /// Subscribes `subscriber` (a listen) to `uris` on the caller's catalog; the ones it could.
    std::vector<std::string> subscribeResources(const std::vector<std::string>& uris,
                                                const std::string& subscriber,
                                                const RequestMeta& meta, const Who& who,
                                                const TraceContext& trace,
                                                const std::shared_ptr<RequestStream>& stream) const;
    /// Sends `refusal` (its status, and a JSON-RPC error with the id of a request).
    void refuse(Poco::Net::HTTPServerResponse& response, const JsonRpcMessage& message,
                const EraRefusal& refusal, std::chrono::steady_clock::time_point since) const;
    /// Sends `answered` to request `message` as JSON (its status from its error code).
    void reply(Poco::Net::HTTPServerResponse& response, const JsonRpcMessage& message,
               const MethodAnswer& answered, std::chrono::steady_clock::time_point since) const;
    /// What a held call runs, with its scope.
    using HeldWork = std::function<MethodAnswer(ModernScope&)>;
    /// Runs `work` as a held call (it may ask the client) for request `message`, with `round`
    /// (its binding, the round it retries) and the request's `capabilities`: answered as soon as
    /// it ends or asks something (modern_held.cpp).
    /// `wants`: the progress token and log level the request asked for (its stream is opened
    /// here when it asked for either).
    void startHeld(Poco::Net::HTTPServerRequest& request, Poco::Net::HTTPServerResponse& response,
                   const JsonRpcMessage& message, ModernRound round,
                   SharedClientCapabilities capabilities, const HeldCall::Listener& wants,
                   const Who& who, const TraceContext& trace, HeldWork work,
                   std::chrono::steady_clock::time_point since) const;
    /// A retry answering the questions of the held call `round` names.
    void resumeHeld(Poco::Net::HTTPServerRequest& request, Poco::Net::HTTPServerResponse& response,
                    const JsonRpcMessage& message, const InputRetry& retry,
                    const ModernRound& round, const HeldCall::Listener& wants, const Who& who,
                    std::chrono::steady_clock::time_point since) const;
    /// Waits on `held` and answers the request with its end, or its questions (the state sealed
    /// for `binding`, round `round` + 1).
    void answerHeld(Poco::Net::HTTPServerRequest& request, Poco::Net::HTTPServerResponse& response,
                    const JsonRpcMessage& message, const std::shared_ptr<HeldCall>& held,
                    const StateBinding& binding, int round, const HeldCall::Listener& wants,
                    const Who& who, std::chrono::steady_clock::time_point since) const;
    /// The answer of a held call's `event`: its end, or its questions with the state sealed for
    /// `binding`, round `round` + 1.
    MethodAnswer answerOf(HeldEvent& event, const std::shared_ptr<HeldCall>& held,
                          const StateBinding& binding, int round) const;
    /// prompts/get and resources/read that may need input (a retry of a held one, or a client
    /// that can be asked): answered here, true; false for the other requests.
    bool catalogWithInput(Poco::Net::HTTPServerRequest& request,
                          Poco::Net::HTTPServerResponse& response, const JsonRpcMessage& message,
                          const RequestMeta& meta, const Who& who, const TraceContext& trace,
                          std::chrono::steady_clock::time_point since) const;

    /// The JSON-RPC message of `answered`; "" for none.
    std::string messageOf(const JsonRpcMessage& message, const MethodAnswer& answered) const;
    /// The cache hint of `method`'s results; nullopt for a method whose results carry none.
    std::optional<CacheHint> hintOf(std::string_view method) const;

    std::string server_info_json_;  ///< {"name":..,"version":..}
    std::int64_t list_ttl_ms_;
    std::int64_t read_ttl_ms_;
    bool private_lists_;
    const MethodTable& methods_;
    http::StreamReactor& reactor_;
    std::int64_t max_streams_;
    std::shared_ptr<CallerQuotas> quotas_;
    std::shared_ptr<ListenHub> listens_;
    std::shared_ptr<const RequestStateSeal> seal_;
    std::int64_t max_input_rounds_;
    ModernTasks tasks_;
    const EndpointObserver& observer_;
    /// Last: destroyed first, it waits for the held calls' threads, which use the members above.
    std::unique_ptr<HeldCalls> held_;
};

}  // namespace crank::mcp
