#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>

#include "config/config.h"
#include "mcp/caller_quotas.h"
#include "mcp/method_answer.h"
#include "mcp/request_scope.h"
#include "mcp/wire/json_rpc.h"
#include "mcp/wire/tool_call_params.h"
#include "util/error.h"

namespace crank::mcp {

/// The MCP methods both protocol eras answer alike: tools/list, tools/call and the workspace
/// catalog's (resources, prompts, completion, and the tasks of upstreams that run them). A
/// transport handles what belongs to its era (the session lifecycle, Tasks, discovery, listens)
/// and hands every other request here with its RequestScope.
///
/// THREADING: const after construction; any number of requests at once.
class MethodTable {
public:
    /// `quotas`: where a tools/call takes its call slot (per agent, per workspace, node).
    MethodTable(const config::McpConfig& mcp, std::shared_ptr<CallerQuotas> quotas);

    /// The answer to request `message` when its method is one of the table's; nullopt when it
    /// is not (the transport answers method-not-found). Progress is not offered: a request
    /// answered as one JSON body has nowhere to send it.
    std::optional<MethodAnswer> answer(const JsonRpcMessage& message, RequestScope& scope) const;

    /// The members (without braces) of the server capabilities both eras announce: tools with
    /// listChanged, logging, and those of the workspace's catalog (resources, prompts,
    /// completions).
    std::string capabilitiesJson(const Who& who) const;

    /// tools/list: a page of the workspace's tools (mcp.tools_page_size), with an opaque cursor.
    MethodAnswer toolsList(const JsonRpcMessage& message, const RequestScope& scope) const;

    /// tools/call of `params`: takes a call slot (an isError result naming the limit when none
    /// is left), runs the tool with the scope's ToolCall, and answers its result, its error, or
    /// none when the client cancelled the call meanwhile.
    MethodAnswer toolsCall(const RequestId& id, const ToolCallParams& params, RequestScope& scope,
                           std::optional<RequestId> progress_token) const;

    /// A method of the workspace's catalog; nullopt when the workspace has none or the method is
    /// not one of its.
    std::optional<MethodAnswer> catalogRequest(const JsonRpcMessage& message,
                                               RequestScope& scope) const;

private:
    /// What becomes of a tool's `need` (MRTR): the request's answer, or nullopt after `call` got
    /// the answers to run again with. A malformed need is the tool's error (-32603); past
    /// mcp.max_input_rounds the call ends with an isError result.
    std::optional<MethodAnswer> inputRound(const InputNeed& need, ToolCall& call,
                                           const std::string& tool, RequestScope& scope) const;

    std::int64_t tools_page_size_;
    std::int64_t max_input_rounds_;
    std::chrono::milliseconds input_wait_;
    std::shared_ptr<CallerQuotas> quotas_;
};

}  // namespace crank::mcp
