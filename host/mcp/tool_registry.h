#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "config/rate_limit.h"
#include "mcp/upstream_slots.h"
#include "mcp/wire/log_level.h"
#include "mcp/wire/param_headers.h"
#include "mcp/wire/trace_context.h"
#include "util/error.h"

namespace crank::mcp {

/// What tools/list shows of one tool. Schemas are JSON text, passed through untouched.
class RateLimits;

struct ToolDefinition {
    std::string name;
    std::string title;  ///< empty: none
    std::string description;
    std::string input_schema_json = R"({"type":"object"})";
    std::string output_schema_json;  ///< empty: none
    /// `execution.taskSupport` (MCP 2025-11-25 Tasks): "optional" or "required" when a
    /// TaskBackend can run the tool as a task; empty means "forbidden" (not shown).
    std::string task_support;
    /// The whole tool object (JSON text) as tools/list shows it, when the tool comes from
    /// elsewhere (a federated upstream) and every member of it is passed on as it is: `name`
    /// already the published one. Empty: the members above are written instead.
    std::string raw_json;
    /// The tool may send requests to the client while it runs (ToolCall::requestClient): its
    /// tools/call is always answered as an SSE stream, where those requests go.
    bool requests_client = false;
    /// The upstream a call of it waits on (upstream_slots.h): the calls in progress of the tools
    /// of one upstream share `server.max_calls_per_upstream`. Empty: none (a tool that answers
    /// from this node, a session poll).
    std::string upstream;
    /// Run as a task (task_support set), the tool first asks its questions synchronously, by
    /// input_required rounds of the tools/call itself (MRTR), and the task starts from the retry
    /// that answers them (the Tasks extension: finish MRTR before creating the task).
    bool input_before_task = false;
    /// The Mcp-Param-* headers its inputSchema declares: compiled by the registry when the tool
    /// is published (callers leave it empty).
    std::vector<ParamHeader> param_headers = {};
    /// Its calls a second (its operation's `rate`), every caller of the workspace together;
    /// nullopt: no bound of its own (RateLimits).
    std::optional<config::RateLimit> rate = std::nullopt;
    /// The tool's upstream runs its tasks itself (a 2026-07-28 server offering the Tasks
    /// extension): a 2026 client that declared the extension calls it as any tool and the
    /// upstream decides whether the call becomes a task; a 2025 session sees it as
    /// `taskSupport: "optional"`, and its task-augmented calls go to the Catalog (ownsTool).
    bool task_by_upstream = false;
};

/// Who is calling: the agent that opened the MCP session and its workspace. With auth.mode
/// "none" every caller is the anonymous agent ("") of workspace "default".
struct Caller {
    std::string workspace = "default";
    std::string agent;  ///< "" for the anonymous agent
};

/// One question of an input_required answer (MRTR, MCP 2026-07-28): a request the client answers
/// before the call goes on.
struct InputRequest {
    std::string key;                 ///< the tool's name for it, unique in its round
    std::string method;              ///< elicitation/create, sampling/createMessage or roots/list
    std::string params_json = "{}";  ///< its params, a JSON object
};

/// What a tool needs from the client before it can answer (ToolResult::input): the questions,
/// and the tool's own state for the round that follows.
struct InputNeed {
    std::vector<InputRequest> requests;
    /// Handed back to the tool, byte for byte, with the answers. The host seals it (a 2026
    /// client carries it as `requestState`, unreadable and unforgeable) or keeps it (a 2025
    /// session, whose client the host asks itself).
    std::string state;
};

/// The client's answers to the previous round of a call (ToolCall::inputRound()).
struct InputRound {
    /// key → the answer's result (a JSON object): an ElicitResult, a CreateMessageResult, a
    /// ListRootsResult. Keys the tool did not ask for may be there too; it ignores them.
    std::map<std::string, std::string, std::less<>> responses;
    std::string state;  ///< InputNeed::state of that round; "" when there was none
    int round = 0;      ///< 1 for the answers to the call's first input_required
    /// The answer to `key`; nullptr when the client gave none.
    const std::string* response(std::string_view key) const {
        const auto it = responses.find(key);
        return it != responses.end() ? &it->second : nullptr;
    }
};

/// The running side of one tools/call, handed to the tool. Thread-safe; valid until the tool's
/// call() returns.
class ToolCall {
public:
    virtual ~ToolCall() = default;
    /// True once the client sent notifications/cancelled for this call (or its session ended).
    /// A tool polls it at its own pace; the host never kills a running call.
    virtual bool cancelled() const = 0;
    /// Sends notifications/progress when the client asked for progress; otherwise does nothing.
    /// `progress` must grow from one call to the next.
    virtual void progress(double progress, std::optional<double> total,
                          std::string_view message) = 0;
    /// True when the client asked for progress (its request had a progress token).
    virtual bool progressRequested() const { return false; }
    /// Sends notifications/message at `level` when the session's logging level lets it through.
    /// `data_json` is JSON text.
    virtual void log(LogLevel level, std::string_view logger, std::string_view data_json) = 0;
    /// Who is calling (sessions and jobs belong to their agent).
    virtual Caller caller() const { return {}; }
    /// True when cancelled() is only because crankd is stopping and means to follow the work
    /// again after its restart (an async job with a cursor): the upstream work is not undone.
    virtual bool stoppingForRestart() const { return false; }
    /// Sends a request to the client that made the call (sampling/createMessage,
    /// elicitation/create, roots/list) on the call's stream and waits for its answer, at most
    /// `timeout`, or until the call is cancelled. ok: `json` is the answer's `result`; otherwise
    /// `json` is a JSON-RPC error object (the client's, or why there was no answer).
    struct ClientAnswer {
        bool ok = false;
        std::string json;
    };
    virtual ClientAnswer requestClient(std::string_view /*method*/,
                                       std::string_view /*params_json*/,
                                       std::chrono::milliseconds /*timeout*/) {
        return {false,
                R"({"code":-32601,"message":"this call cannot send requests to the client"})"};
    }
    /// True when the client declared `capability` ("sampling", "elicitation", "roots"): a tool
    /// asks only for what was declared.
    virtual bool clientDeclares(std::string_view /*capability*/) const { return false; }
    /// True when the client declared the Tasks extension (a 2026-07-28 request): a tool may then
    /// answer with a task the client follows (a federated upstream's, passed on).
    virtual bool clientDeclaresTasks() const { return false; }
    /// The least severe log level the client takes notifications/message at (a 2025 session's
    /// logging/setLevel, a 2026 request's _meta logLevel); nullopt when it takes none.
    virtual std::optional<LogLevel> logLevel() const { return std::nullopt; }

    /// The answers this call runs with when a previous run of it answered ToolResult::input
    /// (MRTR); nullptr on a call's first run.
    const InputRound* inputRound() const { return input_round_ ? &*input_round_ : nullptr; }
    /// Set by the host before the tool runs.
    void setInputRound(std::optional<InputRound> round) { input_round_ = std::move(round); }

    /// The client's W3C trace context, passed on to every upstream request of the call; empty
    /// when the request carried none.
    const TraceContext& trace() const { return trace_; }
    /// Set by the host before the tool runs.
    void setTrace(TraceContext trace) { trace_ = std::move(trace); }

private:
    std::optional<InputRound> input_round_;
    TraceContext trace_;
};

/// A tool's answer: the MCP CallToolResult parts, as JSON text.
struct ToolResult {
    std::string content_json = "[]";  ///< the `content` array
    std::string structured_json;      ///< `structuredContent`, empty for none
    bool is_error = false;            ///< `isError`: the tool ran and failed (not a protocol error)
    /// The whole CallToolResult object (JSON text), passed on as it is (a federated upstream's
    /// answer); the members above are then unused.
    std::string raw_json;
    /// A JSON-RPC error object to answer with instead of a result (an upstream's error, passed on
    /// as it is).
    std::string rpc_error_json;
    /// Set: the tool cannot answer yet and asks the client first (MRTR). The host gets the
    /// answers (a 2026 client retries with them, a 2025 session's client is asked on its stream)
    /// and runs the tool again with them in ToolCall::inputRound(). The other members are unused.
    std::optional<InputNeed> input;

    /// The CallToolResult object as JSON text, with `meta_json` (a JSON object) as its `_meta`
    /// when not empty.
    std::string toJson(std::string_view meta_json = {}) const;

    /// An isError result whose one content part is `text`: a limit that refused the call, in
    /// words the model reads (and may retry after).
    static ToolResult refusal(std::string_view text);
    /// The answer of a tool that needs `need` answered first.
    static ToolResult inputRequired(InputNeed need);
};

/// The tools a server publishes. The runtime fills it from operations; tests fill it directly.
/// Thread-safe: tools/list and tools/call read it while the admin API changes it.
class ToolRegistry {
public:
    virtual ~ToolRegistry() = default;

    /// Every tool, sorted by name (stable pages for tools/list cursors).
    virtual std::vector<ToolDefinition> list() const = 0;
    /// The definition of one tool; nullopt when there is none of that name.
    virtual std::optional<ToolDefinition> find(std::string_view name) const = 0;
    /// Runs `name` with `arguments_json` (a JSON object as text). ErrorCode::not_found for an
    /// unknown tool, ErrorCode::invalid_argument for arguments the tool refuses; a tool that ran
    /// and failed returns a ToolResult with is_error instead.
    virtual Result<ToolResult> call(std::string_view name, std::string_view arguments_json,
                                    ToolCall& call) = 0;

    using Listener = std::function<void()>;
    /// `listener` runs (on the changing thread) after every change of the set of tools.
    virtual void subscribe(Listener listener) = 0;
};

/// A ToolRegistry of tools given as functions. Used by tests now, by the runtime later.
class FunctionToolRegistry final : public ToolRegistry {
public:
    using Function = std::function<Result<ToolResult>(std::string_view arguments_json, ToolCall&)>;

    /// Adds or replaces a tool and notifies subscribers.
    void add(ToolDefinition definition, Function function);
    /// Removes a tool (if present) and notifies subscribers.
    void remove(std::string_view name);
    /// Removes the tools named in `remove`, then adds or replaces `add`, and notifies
    /// subscribers once, when anything changed.
    void replace(const std::vector<std::string>& remove,
                 std::vector<std::pair<ToolDefinition, Function>>&& add);

    std::vector<ToolDefinition> list() const override;
    std::optional<ToolDefinition> find(std::string_view name) const override;
    Result<ToolResult> call(std::string_view name, std::string_view arguments_json,
                            ToolCall& call) override;
    void subscribe(Listener listener) override;

    /// How one call of a known tool ended: "ok", "tool_error" (an isError result), "refused" (an
    /// Error: arguments the tool refused, a limit) or "exception".
    using CallObserver = std::function<void(std::string_view tool, std::string_view outcome,
                                            std::chrono::steady_clock::duration elapsed)>;
    /// `observer` sees every call of a known tool once it returned (metrics). Set it before
    /// serving; it runs on the calling thread.
    void observeCalls(CallObserver observer) { observer_ = std::move(observer); }

    /// The calls of tools with an `upstream` take a slot of `slots` first, and are refused (an
    /// isError result, outcome "refused") when their upstream has none left. Set it before
    /// serving; registries of several workspaces share one. Null: no bound.
    void limitUpstreams(std::shared_ptr<UpstreamSlots> slots) { slots_ = std::move(slots); }

    /// The calls of every tool are first let through by `rates` (the caller's workspace and
    /// agent, the tool's own rate), and refused (an isError result, outcome "refused") when one
    /// of them is spent. Set it before serving; registries of several workspaces share one.
    /// Null: no rate.
    void limitRates(std::shared_ptr<RateLimits> rates) { rates_ = std::move(rates); }

private:
    void notify();

    struct Entry {
        ToolDefinition definition;
        std::shared_ptr<Function> function;
    };
    mutable std::mutex mutex_;
    std::vector<Entry> tools_;  // sorted by name
    std::vector<Listener> listeners_;
    CallObserver observer_;
    std::shared_ptr<UpstreamSlots> slots_;
    std::shared_ptr<RateLimits> rates_;
};

}  // namespace crank::mcp
