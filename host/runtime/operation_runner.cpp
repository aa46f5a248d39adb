#include "runtime/operation_runner.h"

#include <algorithm>
#include <chrono>
#include <random>

#include <fmt/core.h>
#include <rapidjson/document.h>

#include "json/json_parse.h"
#include "log/log.h"
#include "plugins/adapter_handle.h"
#include "plugins/aggregator_handle.h"
#include "runtime/prepared_request.h"
#include "runtime/tool_call_audit.h"
#include "runtime/unary_call.h"
#include "runtime/upstream_key.h"
#include "runtime/window_collector.h"
#include "util/json_string.h"

namespace crank::runtime {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

/// Longest a window sleeps between checks of the client's cancel (ToolCall has no callback).
constexpr milliseconds kCancelCheckInterval{50};
/// Bounds of an aggregator's snapshot (see runWindow).
constexpr std::size_t kMinSnapshotBytes = std::size_t{4} * 1024 * 1024;
constexpr std::size_t kMaxSnapshotBytes =
    static_cast<std::size_t>(config::ExecutionCeilings::max_result_bytes) +
    std::size_t{1024} * 1024;

/// A text result. Every text the runner returns goes through here, scrubbed of the operation's
/// secrets: many carry a plugin's words (its error message, an aggregator's complaint).
mcp::ToolResult textResult(const SecretScrubber& scrubber, std::string_view text, bool is_error) {
    mcp::ToolResult r;
    r.content_json = R"([{"type":"text","text":)" +
                     (scrubber.empty() ? jsonString(text) : jsonString(scrubber.scrub(text))) +
                     "}]";
    r.is_error = is_error;
    return r;
}

/// A structured result; `json` is already scrubbed (before its size was checked).
mcp::ToolResult structuredResult(std::string json, bool is_error) {
    mcp::ToolResult r;
    r.content_json = R"([{"type":"text","text":)" + jsonString(json) + "}]";
    r.structured_json = std::move(json);
    r.is_error = is_error;
    return r;
}

std::uint64_t samplingSeed(const config::ExecutionConfig& e) {
    if (e.sampling_seed) {
        return static_cast<std::uint64_t>(*e.sampling_seed);
    }
    if (e.sampling_rate >= 1.0) {
        return 0;  // nothing is sampled out: the seed is never used
    }
    // One engine per thread, seeded once: a std::random_device per call showed in profiles.
    thread_local std::mt19937_64 engine = [] {
        std::random_device device;
        return std::mt19937_64((static_cast<std::uint64_t>(device()) << 32) ^ device());
    }();
    return engine();
}

std::int64_t msSince(Clock::time_point start) {
    return std::chrono::duration_cast<milliseconds>(Clock::now() - start).count();
}

std::string describeUpstreamError(const std::optional<UpstreamError>& error) {
    if (!error) {
        return "the plugin reported a failure without a reason";
    }
    if (error->details_json.empty()) {
        return fmt::format("{} ({})", error->message, error->code);
    }
    return fmt::format("{} ({})\ndetails: {}", error->message, error->code, error->details_json);
}

}  // namespace

namespace {

SessionRegistry::Options sessionOptions(const RuntimeOptions& options,
                                        std::shared_ptr<store::Store> store,
                                        std::shared_ptr<AuditLog> audit,
                                        const config::AuthConfig* auth,
                                        const std::string& node_id) {
    SessionRegistry::Options o;
    o.audit = std::move(audit);
    o.node_id = node_id;
    o.cancel_grace_ms = options.cancel_grace_ms;
    o.flow = FlowMetrics(options.metrics);
    o.store = std::move(store);
    if (auth != nullptr) {
        for (const config::Agent& agent : auth->agents) {
            o.agent_max_sessions[agent.id] = agent.limits.max_sessions;
        }
        for (const config::Workspace& workspace : auth->workspaces) {
            o.workspace_max_sessions[workspace.id] = workspace.limits.max_sessions;
        }
    }
    return o;
}

JobRegistry::Options jobOptions(std::shared_ptr<store::Store> store,
                                std::shared_ptr<AuditLog> audit, const config::AuthConfig* auth,
                                const config::JobsConfig& jobs, std::string node_id) {
    JobRegistry::Options o;
    o.audit = std::move(audit);
    o.store = std::move(store);
    o.node_id = std::move(node_id);
    o.workers = jobs.workers;
    o.max_queued = static_cast<std::size_t>(jobs.max_queued);
    o.heartbeat_interval_ms = jobs.heartbeat_interval_ms;
    o.lease_ms = jobs.lease_ms;
    o.poll_interval_ms = jobs.poll_interval_ms;
    if (auth != nullptr) {
        for (const config::Agent& agent : auth->agents) {
            o.agent_max_jobs[agent.id] = agent.limits.max_jobs;
        }
        for (const config::Workspace& workspace : auth->workspaces) {
            o.workspace_max_jobs[workspace.id] = workspace.limits.max_jobs;
        }
    }
    return o;
}

}  // namespace

void OperationRunner::setCallerLimits(const config::AuthConfig& auth) {
    SessionRegistry::Options sessions = sessionOptions({}, nullptr, nullptr, &auth, "");
    sessions_.setLimits(std::move(sessions.agent_max_sessions),
                        std::move(sessions.workspace_max_sessions));
    if (jobs_) {
        JobRegistry::Options jobs = jobOptions(nullptr, nullptr, &auth, config::JobsConfig{}, "");
        jobs_->setLimits(std::move(jobs.agent_max_jobs), std::move(jobs.workspace_max_jobs));
    }
}

OperationRunner::OperationRunner(const RuntimeOptions& options, std::shared_ptr<store::Store> store,
                                 const config::AuthConfig* auth, const config::JobsConfig& jobs,
                                 std::string node_id)
    : options_(options),
      flow_(options.metrics),
      audit_(std::make_shared<AuditLog>(store, options.audit_sample_reads, options.audit_writer)),
      sessions_(sessionOptions(options, store, audit_, auth, node_id)) {
    // Not moved: sessions_ got a copy of the pointer above, the jobs get this one.
    if (store) {
        jobs_ = std::make_unique<JobRegistry>(
            jobOptions(std::move(store), audit_, auth, jobs, std::move(node_id)),
            [this](const Operation& op, std::string_view arguments_json, PreparedRequest& request) {
                return prepare(op, arguments_json, request);
            },
            [this](const Operation& op, PreparedRequest& request, mcp::ToolCall& call) {
                if (op.config.execution.transport_behavior ==
                    config::TransportBehavior::server_stream) {
                    return runWindow(op, request, call);
                }
                return runUnary(op, request, call);
            });
    }
}

OperationRunner::~OperationRunner() {
    // The workers call back into this runner: they stop before its members go.
    jobs_.reset();
}

void OperationRunner::startJobs() {
    if (jobs_) {
        jobs_->start();
    }
}

mcp::ToolResult OperationRunner::startJob(const OperationPtr& op, std::string_view arguments_json,
                                          const mcp::Caller& caller,
                                          const mcp::TraceContext& trace) {
    if (!jobs_) {
        return textResult(op->scrubber, "async jobs need a store", true);
    }
    auto started = jobs_->startJob(op, arguments_json, caller, trace);
    if (!started) {
        return textResult(op->scrubber, started.error().message, true);
    }
    return structuredResult(std::move(*started), false);
}

mcp::ToolResult OperationRunner::jobStatus(const Operation& op, std::string_view arguments_json,
                                           const mcp::Caller& caller) {
    if (!jobs_) {
        return textResult(op.scrubber, "async jobs need a store", true);
    }
    auto status = jobs_->status(op, arguments_json, caller);
    if (!status) {
        return textResult(op.scrubber, status.error().message, true);
    }
    return structuredResult(std::move(*status), false);
}

mcp::ToolResult OperationRunner::jobResult(const Operation& op, std::string_view arguments_json,
                                           const mcp::Caller& caller) {
    if (!jobs_) {
        return textResult(op.scrubber, "async jobs need a store", true);
    }
    bool failed = false;
    auto result = jobs_->result(op, arguments_json, caller, failed);
    if (!result) {
        return textResult(op.scrubber, result.error().message, true);
    }
    return structuredResult(std::move(*result), failed);
}

mcp::ToolResult OperationRunner::cancelJob(const Operation& op, std::string_view arguments_json,
                                           const mcp::Caller& caller) {
    if (!jobs_) {
        return textResult(op.scrubber, "async jobs need a store", true);
    }
    auto cancelled = jobs_->cancelJob(op, arguments_json, caller);
    if (!cancelled) {
        return textResult(op.scrubber, cancelled.error().message, true);
    }
    return structuredResult(std::move(*cancelled), false);
}

mcp::ToolResult OperationRunner::startSession(const OperationPtr& op,
                                              std::string_view arguments_json,
                                              const mcp::Caller& caller,
                                              const mcp::TraceContext& trace) {
    if (stopping_.load()) {
        return textResult(op->scrubber, "crankd is shutting down", true);
    }
    PreparedRequest request;
    if (auto failed = prepare(*op, arguments_json, request)) {
        return std::move(*failed);
    }
    request.traceparent = trace.traceparent;  // every poll's upstream request carries it
    request.tracestate = trace.tracestate;
    auto started =
        sessions_.start(op, request, samplingSeed(op->config.execution), options_.safety, caller);
    if (!started) {
        return textResult(op->scrubber, started.error().message, true);
    }
    log::info("session of \"{}\" started", op->config.name);
    return structuredResult(std::move(*started), false);
}

mcp::ToolResult OperationRunner::pollSession(const Operation& op, std::string_view arguments_json,
                                             const mcp::Caller& caller) {
    auto polled = sessions_.poll(op, arguments_json, caller);
    if (!polled) {
        return textResult(op.scrubber, polled.error().message, true);
    }
    return structuredResult(std::move(*polled), false);
}

mcp::ToolResult OperationRunner::stopSession(const Operation& op, std::string_view arguments_json,
                                             const mcp::Caller& caller) {
    auto stopped = sessions_.stop(op, arguments_json, caller);
    if (!stopped) {
        return textResult(op.scrubber, stopped.error().message, true);
    }
    return structuredResult(std::move(*stopped), false);
}

void OperationRunner::stop() {
    if (jobs_) {
        jobs_->stop();  // first: a job that the stop cancels is not a failed job
    }
    stopping_.store(true);
}

std::size_t OperationRunner::shutdown() {
    if (jobs_) {
        jobs_->stop();
    }
    stopping_.store(true);
    if (jobs_) {
        jobs_->shutdown(milliseconds(options_.cancel_grace_ms));
    }
    const std::size_t sessions = sessions_.shutdown(milliseconds(options_.cancel_grace_ms));
    return sessions + reaper_.shutdown(milliseconds(options_.cancel_grace_ms));
}

std::optional<mcp::ToolResult> OperationRunner::prepare(const Operation& op,
                                                        std::string_view arguments_json,
                                                        PreparedRequest& request) const {
    json::Document input;
    if (auto parsed = json::parseJson(arguments_json, input, "input"); !parsed) {
        return textResult(op.scrubber, "invalid input: " + parsed.error().message, true);
    }
    const json::ValidationResult validation = op.input_schema->validate(input, "input");
    if (!validation.ok()) {
        std::string text = "invalid input:";
        for (const json::ValidationFailure& f : validation.failures) {
            text += "\n- " + f.toString();
        }
        return textResult(op.scrubber, text, true);
    }
    auto rendered = json::render(*op.request_template, input, options_.max_request_bytes);
    if (!rendered) {
        return textResult(op.scrubber,
                          "cannot build the upstream request: " + rendered.error().message, true);
    }
    request.request_json = std::move(*rendered);
    request.input_json = std::string(arguments_json);
    request.timeout_ms = op.config.execution.upstream_timeout_ms;
    request.max_item_bytes = static_cast<std::int64_t>(std::min<std::uint64_t>(
        options_.safety.max_item_bytes, static_cast<std::uint64_t>(op.config.execution.max_bytes)));
    return std::nullopt;
}

mcp::ToolResult OperationRunner::run(const Operation& op, std::string_view arguments_json,
                                     mcp::ToolCall& call) {
    PreparedRequest request;
    if (auto failed = prepare(op, arguments_json, request)) {
        return std::move(*failed);
    }
    request.traceparent = call.trace().traceparent;
    request.tracestate = call.trace().tracestate;
    switch (op.config.execution.mode) {
        case config::ExecutionMode::unary:
            return runUnary(op, request, call);
        case config::ExecutionMode::window:
            return runWindow(op, request, call);
        case config::ExecutionMode::session:
        case config::ExecutionMode::async_job:
            break;
    }
    return textResult(op.scrubber, "this execution mode is not available in this version of crankd",
                      true);
}

mcp::ToolResult OperationRunner::call(const Operation& op, std::string_view arguments_json,
                                      mcp::ToolCall& tool_call) {
    const Clock::time_point started = Clock::now();
    mcp::ToolResult result = run(op, arguments_json, tool_call);
    auditToolCall(*audit_, tool_call.caller(), op, result, msSince(started));
    return result;
}

mcp::ToolResult OperationRunner::runUnary(const Operation& op, const PreparedRequest& request,
                                          mcp::ToolCall& call) {
    const config::ExecutionConfig& e = op.config.execution;
    UnaryCall upstream(op.config.name, op.scrubber, &call, true, &stopping_,
                       static_cast<std::size_t>(e.max_items), static_cast<std::size_t>(e.max_bytes),
                       Clock::now() + milliseconds(e.upstream_timeout_ms));
    if (request.on_cursor) {
        upstream.setCursorSink(request.on_cursor);
    }
    const crank_request view = request.view(op);
    const crank_status status = op.adapter->unaryCall(upstream, view);
    upstream.close();
    // The host's own refusals first: a plugin that obeyed them reports no error of its own.
    if (upstream.overflowed()) {
        return textResult(op.scrubber,
                          fmt::format("the upstream response is larger than max_bytes ({}) or "
                                      "has more than max_items ({}) parts",
                                      e.max_bytes, e.max_items),
                          true);
    }
    if (status != CRANK_OK) {
        if (call.cancelled()) {
            return textResult(op.scrubber, "cancelled by the client", true);
        }
        if (stopping_.load()) {
            return textResult(op.scrubber, "crankd is shutting down", true);
        }
        if (upstream.timedOut() && !upstream.error()) {
            flow_.upstreamError(op, "timeout");
            return textResult(op.scrubber,
                              fmt::format("the upstream did not answer within "
                                          "upstream_timeout_ms ({} ms)",
                                          e.upstream_timeout_ms),
                              true);
        }
        const std::optional<UpstreamError> error = upstream.error();
        flow_.upstreamError(op, error ? std::string_view(error->code) : "internal");
        return textResult(op.scrubber, "upstream error: " + describeUpstreamError(error), true);
    }
    std::vector<std::string> parts = upstream.takeItems();
    std::uint64_t partBytes = 0;
    for (const std::string& part : parts) {
        partBytes += part.size();
    }
    flow_.collected(op, parts.size(), partBytes);
    if (parts.empty()) {
        return textResult(op.scrubber, "the upstream returned no response", true);
    }
    std::string response;
    if (parts.size() == 1) {
        response = std::move(parts[0]);
    } else {
        response = "[";
        for (std::size_t i = 0; i < parts.size(); ++i) {
            response += (i == 0 ? "" : ",") + parts[i];
        }
        response += "]";
    }
    auto safety = SafetyStage::create(e, samplingSeed(e), op.path + ".execution", options_.safety);
    if (!safety) {
        return textResult(op.scrubber, safety.error().message, true);
    }

    std::string json;
    if (op.maps_output) {
        auto mapped = op.output_mapping->map(response, static_cast<std::size_t>(e.max_items));
        if (!mapped) {
            return textResult(op.scrubber,
                              "cannot read the upstream response: " + mapped.error().message, true);
        }
        std::string items = "[";
        std::uint64_t kept = 0;
        std::uint64_t dropped = 0;
        for (const std::string& item : mapped->items) {
            const SafetyDecision d = safety->process(item);
            if (!d.accepted) {
                ++dropped;
                continue;
            }
            items += (kept++ == 0 ? "" : ",");
            items += d.text;
        }
        items += "]";
        flow_.dropped(op, "safety", dropped);
        flow_.dropped(op, "max_items",
                      mapped->items_total > mapped->items.size()
                          ? mapped->items_total - mapped->items.size()
                          : 0);
        json = fmt::format(R"({{"items":{},"item_count":{},"dropped_count":{},"truncated":{})",
                           items, kept, dropped, mapped->items_truncated ? "true" : "false");
        if (mapped->summary_json) {
            // The summary passes the safety stage too: redaction applies to it.
            const SafetyDecision d = safety->process(*mapped->summary_json);
            json += R"(,"summary":)" + (d.accepted ? std::string(d.text) : "null");
        }
        const std::optional<std::string> cursor =
            mapped->cursor ? mapped->cursor : upstream.cursor();
        json += R"(,"cursor":)" + (cursor ? jsonString(*cursor) : "null");
        if (mapped->status) {
            json += R"(,"status":)" + jsonString(*mapped->status);
        }
        if (mapped->done) {
            json += std::string(R"(,"done":)") + (*mapped->done ? "true" : "false");
        }
        json += "}";
    } else {
        const SafetyDecision d = safety->process(response);
        if (!d.accepted) {
            flow_.dropped(op, "safety", 1);
            return textResult(
                op.scrubber,
                fmt::format("the upstream response was dropped: {}", toString(d.reason)), true);
        }
        if (!d.text.empty() && d.text.front() == '{') {
            json = std::string(d.text);
        } else {
            json = R"({"result":)" + std::string(d.text) + "}";
        }
    }
    if (!op.scrubber.empty()) {
        json = op.scrubber.scrubJson(json);
    }
    if (json.size() > static_cast<std::size_t>(e.max_result_bytes)) {
        return textResult(op.scrubber,
                          fmt::format("the result is {} bytes, more than max_result_bytes ({})",
                                      json.size(), e.max_result_bytes),
                          true);
    }
    return structuredResult(std::move(json), false);
}

mcp::ToolResult OperationRunner::runWindow(const Operation& op, PreparedRequest& request,
                                           mcp::ToolCall& call) {
    const config::ExecutionConfig& e = op.config.execution;
    auto safety = SafetyStage::create(e, samplingSeed(e), op.path + ".execution", options_.safety);
    if (!safety) {
        return textResult(op.scrubber, safety.error().message, true);
    }
    WindowCollector::Limits limits;
    limits.max_items = static_cast<std::uint64_t>(e.max_items);
    limits.max_bytes = static_cast<std::uint64_t>(e.max_bytes);
    auto collector = std::make_shared<WindowCollector>(op.config.name, op.scrubber,
                                                       std::move(*safety), *op.aggregator, limits);
    if (!collector->createAggregate(e.aggregation_config_json)) {
        return textResult(
            op.scrubber,
            fmt::format("the aggregator \"{}\" could not start: {}", op.aggregator->name(),
                        describeUpstreamError(collector->error())),
            true);
    }
    const Clock::time_point start = Clock::now();
    const Clock::time_point windowEnd = start + milliseconds(e.window_duration_ms);
    const milliseconds silence(e.upstream_timeout_ms);
    const milliseconds progressEvery(options_.progress_interval_ms);
    Clock::time_point nextProgress = start + progressEvery;
    double lastProgress = 0;

    // One pass of the stop conditions that the waiting thread owns.
    const auto checkStops = [&](Clock::time_point now) {
        if (call.cancelled() || stopping_.load()) {
            collector->stop(StopReason::cancelled);
        } else if (now >= windowEnd) {
            collector->stop(StopReason::duration);
        } else if (now - collector->lastActivity() >= silence) {
            collector->stop(StopReason::upstream_timeout);
        }
        if (now >= nextProgress) {
            nextProgress = now + progressEvery;
            const auto received = static_cast<double>(collector->received());
            if (received > lastProgress) {
                lastProgress = received;
                call.progress(received, static_cast<double>(e.max_items),
                              fmt::format("{} items collected", collector->received()));
            }
        }
    };

    if (e.transport_behavior == config::TransportBehavior::server_stream) {
        const crank_request view = request.view(op);
        crank_stream* stream = op.adapter->streamOpen(*collector, view);
        if (stream == nullptr) {
            collector->stop(StopReason::upstream_error);
        } else {
            try {
                while (true) {
                    collector->settle();
                    if (collector->stopReason()) {
                        break;
                    }
                    const Clock::time_point now = Clock::now();
                    checkStops(now);
                    if (collector->stopReason()) {
                        break;
                    }
                    const Clock::time_point wake =
                        std::min({windowEnd, collector->lastActivity() + silence,
                                  now + kCancelCheckInterval, nextProgress});
                    collector->waitUntil(wake);
                }
            } catch (...) {
                // Progress or logging failed (out of memory): the stream must still be stopped
                // and released before the collector it calls into can go.
                collector->stop(StopReason::cancelled);
            }
            if (!collector->completed()) {
                // A limit, the duration or the client stopped the window: stop the upstream read.
                op.adapter->streamCancel(stream);
                const auto grace = Clock::now() + milliseconds(options_.cancel_grace_ms);
                if (!collector->waitForComplete(grace)) {
                    reaper_.adopt(collector, *op.adapter, stream);
                    stream = nullptr;
                }
            }
            if (stream != nullptr) {
                op.adapter->streamDestroy(stream);
            }
        }
    } else {
        // A request/response upstream, polled: every response's items (items_path) join the
        // window; cursor_path feeds the next request; done_path ends the window.
        while (!collector->stopReason()) {
            const Clock::time_point pollStart = Clock::now();
            // The client's cancel reaches the plugin; its progress does not (the window reports
            // its own).
            UnaryCall upstream(op.config.name, op.scrubber, &call, false, &stopping_,
                               static_cast<std::size_t>(e.max_items),
                               static_cast<std::size_t>(e.max_bytes),
                               std::min(windowEnd, pollStart + silence));
            const crank_request view = request.view(op);
            const crank_status status = op.adapter->unaryCall(upstream, view);
            upstream.close();
            if (upstream.overflowed()) {
                collector->stop(StopReason::max_bytes);
                break;
            }
            if (status != CRANK_OK) {
                const std::optional<UpstreamError> error = upstream.error();
                const Clock::time_point now = Clock::now();
                if (call.cancelled() || stopping_.load()) {
                    collector->stop(StopReason::cancelled);
                } else if (now >= windowEnd) {
                    collector->stop(StopReason::duration);
                } else if ((error && error->code == "timeout") || (upstream.timedOut() && !error)) {
                    collector->stop(StopReason::upstream_timeout);
                } else {
                    collector->fail(error.value_or(UpstreamError{
                        "internal", "the plugin reported a failure without a reason"}));
                }
                break;
            }
            collector->touch();
            bool refused = false;
            std::optional<std::string> pageCursor = upstream.cursor();
            for (const std::string& response : upstream.takeItems()) {
                auto mapped =
                    op.output_mapping->map(response, static_cast<std::size_t>(e.max_items));
                if (!mapped) {
                    collector->fail(UpstreamError{"protocol", mapped.error().message});
                    refused = true;
                    break;
                }
                for (const std::string& item : mapped->items) {
                    if (collector->intake(item) == CRANK_EMIT_CANCELLED) {
                        refused = true;
                        break;
                    }
                }
                if (mapped->cursor) {
                    pageCursor = mapped->cursor;
                }
                if (!refused && mapped->done.value_or(false)) {
                    collector->stop(StopReason::upstream_end);
                }
            }
            // Only a page taken whole moves the cursor: the next window starts at the first item
            // this one did not take.
            if (pageCursor && !refused) {
                request.cursor = *pageCursor;
                collector->setPollCursor(*pageCursor);
            }
            const Clock::time_point nextPoll = pollStart + milliseconds(e.poll_interval_ms);
            while (!collector->stopReason()) {
                const Clock::time_point now = Clock::now();
                checkStops(now);
                if (now >= nextPoll) {
                    break;
                }
                collector->waitUntil(std::min({nextPoll, windowEnd, now + kCancelCheckInterval}));
            }
        }
    }

    // The snapshot may be larger than the result: rendering leaves items out to fit
    // max_result_bytes. The writer's bound keeps a runaway aggregator from growing without end.
    const std::size_t writerLimit = std::clamp<std::size_t>(
        4 * static_cast<std::size_t>(e.max_result_bytes), kMinSnapshotBytes, kMaxSnapshotBytes);
    auto result = collector->finish(msSince(start), writerLimit);
    if (!result) {
        log::warn("window \"{}\" failed: {}", op.config.name, result.error().message);
        return textResult(op.scrubber, result.error().message, true);
    }
    flow_.collected(op, result->item_count + result->dropped_count, result->bytes);
    flow_.dropped(op, "safety", result->dropped_count);
    if (result->stop_reason == StopReason::max_bytes) {
        flow_.dropped(op, "max_bytes", 1);  // the item that would have passed the limit
    } else if (result->stop_reason == StopReason::upstream_timeout) {
        flow_.upstreamError(op, "timeout");
    } else if (result->stop_reason == StopReason::upstream_error) {
        flow_.upstreamError(op, result->error ? std::string_view(result->error->code) : "internal");
    }
    log::info("window \"{}\" stopped: stop_reason={} items={} dropped={} bytes={} elapsed_ms={}",
              op.config.name, toString(result->stop_reason), result->item_count,
              result->dropped_count, result->bytes, result->elapsed_ms);
    auto rendered = renderWindowResult(*result, static_cast<std::size_t>(e.max_result_bytes));
    if (!rendered) {
        return textResult(op.scrubber, rendered.error().message, true);
    }
    // A window that failed before it collected anything is a failed call; with items, the
    // result says what was collected and why it stopped.
    const bool failed =
        result->stop_reason == StopReason::upstream_error && result->item_count == 0;
    return structuredResult(std::move(rendered->json), failed);
}

namespace {

void jobTools(const OperationPtr& op, OperationRunner& runner, OperationTools& tools) {
    const std::vector<std::string> names = op->config.toolNames();
    const std::string& title = op->config.title;
    const auto titled = [&](std::string_view what) {
        return title.empty() ? std::string() : fmt::format("{} ({})", title, what);
    };
    mcp::ToolDefinition start;
    start.name = names[0];
    start.title = titled("start");
    start.description = fmt::format(
        "{} Starts a job and returns its job_id at once; the job runs in the background and "
        "outlives this session. Follow it with {}, fetch its result with {}, stop it with {}. "
        "Called as an MCP task, the task's result is the job's result.",
        op->config.description, names[1], names[2], names[3]);
    start.input_schema_json = op->config.input_schema_json;
    start.output_schema_json = JobRegistry::startOutputSchema(op->output_schema_json);
    start.task_support = runner.tasks() != nullptr ? "optional" : "";
    tools.emplace_back(std::move(start),
                       [op, &runner](std::string_view arguments_json,
                                     mcp::ToolCall& call) -> Result<mcp::ToolResult> {
                           return runner.startJob(op, arguments_json, call.caller(), call.trace());
                       });
    mcp::ToolDefinition status;
    status.name = names[1];
    status.title = titled("status");
    status.description = fmt::format(
        "Returns the status of a {} job (queued, running, succeeded, failed, "
        "cancelled, interrupted), its progress and whether its result is ready.",
        names[0]);
    status.input_schema_json = JobRegistry::jobIdInputSchema();
    status.output_schema_json = JobRegistry::statusOutputSchema();
    tools.emplace_back(std::move(status),
                       [op, &runner](std::string_view arguments_json,
                                     mcp::ToolCall& call) -> Result<mcp::ToolResult> {
                           return runner.jobStatus(*op, arguments_json, call.caller());
                       });
    mcp::ToolDefinition result;
    result.name = names[2];
    result.title = titled("result");
    result.description = fmt::format(
        "Returns the result of a finished {} job, or says that it is not ready yet.", names[0]);
    result.input_schema_json = JobRegistry::jobIdInputSchema();
    result.output_schema_json = JobRegistry::resultOutputSchema();
    tools.emplace_back(std::move(result),
                       [op, &runner](std::string_view arguments_json,
                                     mcp::ToolCall& call) -> Result<mcp::ToolResult> {
                           return runner.jobResult(*op, arguments_json, call.caller());
                       });
    mcp::ToolDefinition cancel;
    cancel.name = names[3];
    cancel.title = titled("cancel");
    cancel.description = fmt::format(
        "Cancels a {} job (idempotent: cancelling again, or a finished job, changes nothing).",
        names[0]);
    cancel.input_schema_json = JobRegistry::jobIdInputSchema();
    cancel.output_schema_json = JobRegistry::cancelOutputSchema();
    tools.emplace_back(std::move(cancel),
                       [op, &runner](std::string_view arguments_json,
                                     mcp::ToolCall& call) -> Result<mcp::ToolResult> {
                           return runner.cancelJob(*op, arguments_json, call.caller());
                       });
}

/// The tools of `op` by its mode (operationTools() adds what applies to all of them).
OperationTools toolsByMode(const OperationPtr& op, OperationRunner& runner) {
    OperationTools tools;
    {
        if (op->config.execution.mode == config::ExecutionMode::session) {
            const std::vector<std::string> names = op->config.toolNames();
            const std::string& title = op->config.title;
            mcp::ToolDefinition start;
            start.name = names[0];
            start.title = title.empty() ? "" : title + " (start)";
            start.description = fmt::format(
                "{} Starts a session and returns its session_id at once; the upstream keeps being "
                "read into a bounded buffer. Read it with {} and close it with {}.",
                op->config.description, names[1], names[2]);
            start.input_schema_json = op->config.input_schema_json;
            start.output_schema_json = SessionRegistry::startOutputSchema();
            tools.emplace_back(std::move(start),
                               [op, &runner](std::string_view arguments_json,
                                             mcp::ToolCall& call) -> Result<mcp::ToolResult> {
                                   return runner.startSession(op, arguments_json, call.caller(),
                                                              call.trace());
                               });
            mcp::ToolDefinition poll;
            poll.name = names[1];
            poll.title = title.empty() ? "" : title + " (poll)";
            poll.description = fmt::format(
                "Returns the items a {} session collected after the cursor (all buffered ones "
                "without one), the next cursor, has_more and the session's status. Polling again "
                "with the same cursor returns the same items.",
                names[0]);
            poll.input_schema_json =
                SessionRegistry::pollInputSchema(op->config.execution.max_items);
            poll.output_schema_json = SessionRegistry::pollOutputSchema();
            tools.emplace_back(std::move(poll),
                               [op, &runner](std::string_view arguments_json,
                                             mcp::ToolCall& call) -> Result<mcp::ToolResult> {
                                   return runner.pollSession(*op, arguments_json, call.caller());
                               });
            mcp::ToolDefinition stop;
            stop.name = names[2];
            stop.title = title.empty() ? "" : title + " (stop)";
            stop.description = fmt::format(
                "Stops a {} session: closes the upstream and returns the final counters.",
                names[0]);
            stop.input_schema_json = SessionRegistry::stopInputSchema();
            stop.output_schema_json = SessionRegistry::stopOutputSchema();
            tools.emplace_back(std::move(stop),
                               [op, &runner](std::string_view arguments_json,
                                             mcp::ToolCall& call) -> Result<mcp::ToolResult> {
                                   return runner.stopSession(*op, arguments_json, call.caller());
                               });
            return tools;
        }
        if (op->config.execution.mode == config::ExecutionMode::async_job) {
            jobTools(op, runner, tools);
            return tools;
        }
        mcp::ToolDefinition definition;
        definition.name = op->config.name;
        definition.title = op->config.title;
        definition.description = op->config.description;
        definition.input_schema_json = op->config.input_schema_json;
        definition.output_schema_json = op->output_schema_json;
        definition.upstream = upstreamKey(op->config);  // a unary or window call waits on it
        tools.emplace_back(std::move(definition),
                           [op, &runner](std::string_view arguments_json,
                                         mcp::ToolCall& call) -> Result<mcp::ToolResult> {
                               return runner.call(*op, arguments_json, call);
                           });
    }
    return tools;
}

}  // namespace

OperationTools operationTools(const OperationPtr& op, OperationRunner& runner) {
    OperationTools tools = toolsByMode(op, runner);
    for (auto& [definition, function] : tools) {
        definition.rate = op->config.rate;  // each tool its own bucket
    }
    return tools;
}

void publishOperations(const std::vector<OperationPtr>& operations, OperationRunner& runner,
                       mcp::FunctionToolRegistry& tools) {
    for (const OperationPtr& op : operations) {
        for (auto& [definition, function] : operationTools(op, runner)) {
            tools.add(std::move(definition), std::move(function));
        }
        if (op->config.execution.mode == config::ExecutionMode::async_job) {
            runner.addJobOperation(op);
        }
    }
}

}  // namespace crank::runtime
