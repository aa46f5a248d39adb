#include "admin/test_run.h"

#include <algorithm>
#include <deque>
#include <thread>
#include <utility>
#include <vector>

#include <fmt/core.h>
#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "json/json_parse.h"
#include "mcp/tool_registry.h"
#include "runtime/operation_runner.h"
#include "util/json_string.h"

namespace crank::admin {
namespace {

using Clock = std::chrono::steady_clock;
using config::ExecutionMode;
using Writer = rapidjson::Writer<rapidjson::StringBuffer>;

/// The ToolCall of a test run: cancelled once the run's deadline passes; no progress, no logs.
class TestCall final : public mcp::ToolCall {
public:
    TestCall(Clock::time_point deadline, mcp::Caller caller, const std::atomic<bool>* stopping)
        : deadline_(deadline), caller_(std::move(caller)), stopping_(stopping) {}
    bool cancelled() const override {
        return Clock::now() >= deadline_ || (stopping_ != nullptr && stopping_->load());
    }
    void progress(double /*progress*/, std::optional<double> /*total*/,
                  std::string_view /*message*/) override {}
    void log(mcp::LogLevel /*level*/, std::string_view /*logger*/,
             std::string_view /*data_json*/) override {}
    mcp::Caller caller() const override { return caller_; }

private:
    Clock::time_point deadline_;
    mcp::Caller caller_;
    const std::atomic<bool>* stopping_;
};

/// One tool call of the run, as the answer shows it.
struct Step {
    std::string tool;
    std::string arguments_json;
    mcp::ToolResult result;
    std::int64_t elapsed_ms = 0;
};

/// Cuts `text` to at most `max` bytes on a UTF-8 character boundary, marking the cut with "...".
void cutText(std::string& text, std::size_t max) {
    if (text.size() <= max) {
        return;
    }
    std::size_t end = max;
    while (end > 0 && (static_cast<unsigned char>(text[end]) & 0xC0U) == 0x80U) {
        --end;  // a continuation byte: the character starts before it
    }
    text.resize(end);
    text += "...";
}

/// The text items of a result's content, joined (at most 64 KiB).
std::string contentText(const mcp::ToolResult& result) {
    constexpr std::size_t kMaxText = std::size_t{64} * 1024;
    json::Document doc;
    std::string out;
    if (!json::parseJson(result.content_json, doc, "") || !doc.IsArray()) {
        return out;
    }
    for (const auto& item : doc.GetArray()) {
        if (!item.IsObject()) {
            continue;
        }
        auto text = item.FindMember("text");
        if (text != item.MemberEnd() && text->value.IsString()) {
            if (!out.empty()) {
                out += '\n';
            }
            out.append(text->value.GetString(), text->value.GetStringLength());
        }
        if (out.size() > kMaxText) {
            cutText(out, kMaxText);
            break;
        }
    }
    return out;
}

/// A string member of a structured result ("" when absent or not a string).
std::string member(const std::string& structured_json, std::string_view name) {
    json::Document doc;
    if (!json::parseJson(structured_json, doc, "") || !doc.IsObject()) {
        return {};
    }
    auto it = std::as_const(doc).FindMember(rapidjson::StringRef(name.data(), name.size()));
    if (it == std::as_const(doc).MemberEnd() || !it->value.IsString()) {
        return {};
    }
    return {it->value.GetString(), it->value.GetStringLength()};
}

bool isTerminalJob(std::string_view status) {
    return status == "succeeded" || status == "failed" || status == "cancelled" ||
           status == "interrupted";
}

/// Sleeps `interval` (at least kMinTestPollInterval), or until the deadline or the stop, in
/// short slices so that a stopping crankd is not kept waiting.
void sleepUntil(Clock::time_point deadline, std::chrono::milliseconds interval,
                const std::atomic<bool>* stopping) {
    const auto until = std::min(deadline, Clock::now() + std::max(interval, kMinTestPollInterval));
    while (Clock::now() < until && (stopping == nullptr || !stopping->load())) {
        std::this_thread::sleep_until(
            std::min(until, Clock::now() + std::chrono::milliseconds(50)));
    }
}

class Run {
public:
    Run(runtime::OperationRunner& runner, const TestRunRequest& request)
        : runner_(runner),
          request_(request),
          op_(*request.operation),
          started_(Clock::now()),
          deadline_(started_ + request.timeout),
          call_(deadline_, mcp::Caller{request.operation->config.workspace, request.agent},
                request.stopping) {}

    std::string answer() {
        switch (op_.config.execution.mode) {
            case ExecutionMode::unary:
            case ExecutionMode::window:
                main_ = step(op_.config.name, request_.arguments_json,
                             [&] { return runner_.run(op_, request_.arguments_json, call_); });
                break;
            case ExecutionMode::session:
                session();
                break;
            case ExecutionMode::async_job:
                job();
                break;
        }
        if (Clock::now() >= deadline_) {
            timed_out_ = true;
        }
        return render();
    }

private:
    template <typename F>
    std::size_t step(std::string tool, std::string arguments_json, F&& run) {
        const auto begin = Clock::now();
        Step s;
        s.tool = std::move(tool);
        s.arguments_json = std::move(arguments_json);
        s.result = run();
        s.elapsed_ms =
            std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - begin).count();
        steps_.push_back(std::move(s));
        return steps_.size() - 1;
    }

    void session() {
        const std::vector<std::string> names = op_.config.toolNames();
        const mcp::Caller caller = call_.caller();
        main_ = step(names[0], request_.arguments_json, [&] {
            return runner_.startSession(request_.operation, request_.arguments_json, caller);
        });
        if (steps_[main_].result.is_error) {
            return;
        }
        const std::string id = member(steps_[main_].result.structured_json, "session_id");
        const std::string args = R"({"session_id":)" + jsonString(id) + "}";
        std::string cursor;
        for (int i = 0; i < request_.polls && !call_.cancelled(); ++i) {
            sleepUntil(deadline_, request_.poll_interval, request_.stopping);
            // Each poll goes on from the cursor of the one before, as a client would.
            const std::string pollArgs = cursor.empty()
                                             ? args
                                             : R"({"session_id":)" + jsonString(id) +
                                                   R"(,"cursor":)" + jsonString(cursor) + "}";
            main_ = step(names[1], pollArgs,
                         [&] { return runner_.pollSession(op_, pollArgs, caller); });
            cursor = member(steps_[main_].result.structured_json, "cursor");
            const std::string status = member(steps_[main_].result.structured_json, "status");
            if (steps_[main_].result.is_error || (!status.empty() && status != "active")) {
                break;
            }
        }
        // Always closed, even after the deadline: a test run leaves nothing open.
        step(names[2], args, [&] { return runner_.stopSession(op_, args, caller); });
    }

    void job() {
        const std::vector<std::string> names = op_.config.toolNames();
        const mcp::Caller caller = call_.caller();
        main_ = step(names[0], request_.arguments_json, [&] {
            return runner_.startJob(request_.operation, request_.arguments_json, caller,
                                    call_.trace());
        });
        if (steps_[main_].result.is_error) {
            return;
        }
        const std::string id = member(steps_[main_].result.structured_json, "job_id");
        const std::string args = R"({"job_id":)" + jsonString(id) + "}";
        std::string status;
        while (true) {
            sleepUntil(deadline_, request_.poll_interval, request_.stopping);
            const std::size_t at =
                step(names[1], args, [&] { return runner_.jobStatus(op_, args, caller); });
            status = member(steps_[at].result.structured_json, "status");
            ++status_checks_;
            if (isTerminalJob(status)) {
                break;
            }
            if (steps_[at].result.is_error) {
                // No status to go by: the job is cancelled rather than left running.
                step(names[3], args, [&] { return runner_.cancelJob(op_, args, caller); });
                cancelled_ = true;
                break;
            }
            // Only the last few status answers are kept: a long job polls many times.
            if (status_checks_ > 1 && steps_.size() > 2 &&
                steps_[steps_.size() - 2].tool == names[1]) {
                steps_.erase(steps_.end() - 2);
            }
            if (call_.cancelled()) {
                timed_out_ = true;
                step(names[3], args, [&] { return runner_.cancelJob(op_, args, caller); });
                cancelled_ = true;
                break;
            }
        }
        main_ = step(names[2], args, [&] { return runner_.jobResult(op_, args, caller); });
    }

    void warn(std::string code, std::string message) {
        for (const auto& [c, m] : warnings_) {
            if (c == code) {
                return;
            }
        }
        warnings_.emplace_back(std::move(code), std::move(message));
    }

    /// The result-contract members of the main result (for a job, of the operation's output).
    void contract(Writer& w) {
        const mcp::ToolResult& result = steps_[main_].result;
        json::Document doc;
        const bool parsed = !result.structured_json.empty() &&
                            json::parseJson(result.structured_json, doc, "").ok() && doc.IsObject();
        const auto& e = op_.config.execution;
        w.Key("contract");
        w.StartObject();
        if (parsed) {
            const rapidjson::Value* source = &doc;
            if (auto inner = std::as_const(doc).FindMember("result");
                inner != std::as_const(doc).MemberEnd() && inner->value.IsObject()) {
                source = &inner->value;
            }
            for (const char* key : {"truncated", "window_complete", "has_more", "stop_reason",
                                    "item_count", "dropped_count", "bytes", "elapsed_ms"}) {
                auto it = source->FindMember(key);
                if (it != source->MemberEnd()) {
                    w.Key(key);
                    it->value.Accept(w);
                }
            }
            if (auto status = std::as_const(doc).FindMember("status");
                status != std::as_const(doc).MemberEnd()) {
                w.Key("status");
                status->value.Accept(w);
            }
            const auto boolOf = [&](const char* key) {
                auto it = source->FindMember(key);
                return it != source->MemberEnd() && it->value.IsBool() && it->value.GetBool();
            };
            const auto has = [&](const char* key) {
                auto it = source->FindMember(key);
                return it != source->MemberEnd();
            };
            auto stop = source->FindMember("stop_reason");
            const std::string reason =
                stop != source->MemberEnd() && stop->value.IsString()
                    ? std::string(stop->value.GetString(), stop->value.GetStringLength())
                    : std::string();
            if (reason == "max_items") {
                warn("truncated", fmt::format("the window stopped at max_items ({}): the upstream "
                                              "had more, and has_more says so",
                                              e.max_items));
            } else if (reason == "max_bytes") {
                warn("truncated", fmt::format("the window stopped at max_bytes ({} bytes): the "
                                              "upstream had more",
                                              e.max_bytes));
            }
            if (boolOf("truncated")) {
                warn("truncated",
                     fmt::format("the result was truncated to fit its bounds (max_items {}, "
                                 "max_bytes {}, max_result_bytes {}, max_field_length {})",
                                 e.max_items, e.max_bytes, e.max_result_bytes, e.max_field_length));
            }
            auto dropped = source->FindMember("dropped_count");
            if (dropped != source->MemberEnd() && dropped->value.IsInt64() &&
                dropped->value.GetInt64() > 0) {
                warn("truncated", fmt::format("{} item(s) were dropped by the limits",
                                              dropped->value.GetInt64()));
            }
            if (reason == "upstream_timeout") {
                warn("timeout", fmt::format("the upstream sent nothing for upstream_timeout_ms "
                                            "({} ms)",
                                            e.upstream_timeout_ms));
            } else if (reason == "upstream_error") {
                warn("upstream_error", "the upstream failed during the window");
            }
            if (has("window_complete") && !boolOf("window_complete") && warnings_.empty()) {
                warn("incomplete", "the window did not complete (stop_reason " +
                                       (reason.empty() ? std::string("unknown") : reason) + ")");
            }
        }
        w.EndObject();
        if (result.is_error) {
            std::string text = contentText(result);
            cutText(text, 300);
            warn("upstream_error", text.empty() ? "the call failed" : text);
        }
        if (timed_out_) {
            warn("timeout", fmt::format("the test run reached admin.test_run_timeout_ms ({} ms)",
                                        request_.timeout.count()));
        }
        if (cancelled_) {
            warn("cancelled",
                 "the job was still running at the end of the test run and was "
                 "cancelled");
        }
    }

    static void rawOrNull(Writer& w, const std::string& json) {
        if (json.empty()) {
            w.Null();
        } else {
            w.RawValue(json.data(), json.size(), rapidjson::kObjectType);
        }
    }

    std::string render() {
        rapidjson::StringBuffer buffer;
        Writer w(buffer);
        const mcp::ToolResult& main = steps_[main_].result;
        w.StartObject();
        w.Key("mode");
        const std::string_view mode = config::toString(op_.config.execution.mode);
        w.String(mode.data(), static_cast<rapidjson::SizeType>(mode.size()));
        w.Key("operation");
        w.String(op_.config.name.c_str(), static_cast<rapidjson::SizeType>(op_.config.name.size()));
        w.Key("is_error");
        w.Bool(main.is_error);
        w.Key("result");
        rawOrNull(w, main.structured_json);
        // The text rendering only when there is no structured result (an error's message).
        w.Key("text");
        const std::string text = main.structured_json.empty() ? contentText(main) : std::string();
        w.String(text.c_str(), static_cast<rapidjson::SizeType>(text.size()));
        contract(w);
        w.Key("outcome");
        w.String(timed_out_ ? "timeout" : (main.is_error ? "error" : "ok"));
        w.Key("warnings");
        w.StartArray();
        for (const auto& [code, message] : warnings_) {
            w.StartObject();
            w.Key("code");
            w.String(code.c_str(), static_cast<rapidjson::SizeType>(code.size()));
            w.Key("message");
            w.String(message.c_str(), static_cast<rapidjson::SizeType>(message.size()));
            w.EndObject();
        }
        w.EndArray();
        w.Key("status_checks");
        w.Int(status_checks_);
        w.Key("steps");
        w.StartArray();
        for (std::size_t i = 0; i < steps_.size(); ++i) {
            const Step& s = steps_[i];
            w.StartObject();
            w.Key("tool");
            w.String(s.tool.c_str(), static_cast<rapidjson::SizeType>(s.tool.size()));
            w.Key("arguments");
            rawOrNull(w, s.arguments_json);
            w.Key("is_error");
            w.Bool(s.result.is_error);
            w.Key("elapsed_ms");
            w.Int64(s.elapsed_ms);
            // The main step's result is the answer's `result` already: not repeated.
            w.Key("main");
            w.Bool(i == main_);
            w.Key("result");
            rawOrNull(w, i == main_ ? std::string() : s.result.structured_json);
            if (s.result.structured_json.empty() && i != main_) {
                w.Key("text");
                const std::string t = contentText(s.result);
                w.String(t.c_str(), static_cast<rapidjson::SizeType>(t.size()));
            }
            w.EndObject();
        }
        w.EndArray();
        w.Key("elapsed_ms");
        w.Int64(
            std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - started_).count());
        w.EndObject();
        return {buffer.GetString(), buffer.GetSize()};
    }

    runtime::OperationRunner& runner_;
    const TestRunRequest& request_;
    const runtime::Operation& op_;
    Clock::time_point started_;
    Clock::time_point deadline_;
    TestCall call_;
    std::vector<Step> steps_;
    std::size_t main_ = 0;
    int status_checks_ = 0;
    bool timed_out_ = false;
    bool cancelled_ = false;
    std::vector<std::pair<std::string, std::string>> warnings_;
};

}  // namespace

std::string runTest(runtime::OperationRunner& runner, const TestRunRequest& request) {
    return Run(runner, request).answer();
}

}  // namespace crank::admin
