#include "rest_job.h"

#include <algorithm>
#include <thread>
#include <utility>

#include <rapidjson/document.h>
#include <rapidjson/error/en.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "json_util.h"
#include "text_util.h"
#include <crank/sdk.hpp>

namespace crank::rest {
namespace {

using Json = rapidjson::Value;

constexpr std::size_t kValueExcerpt = 512;   // bytes of an upstream value shown in a message
constexpr std::size_t kMessageBytes = 1024;  // bytes of job.message_path passed as progress

/// The value `path` names in `root`, or null.
const Json* find(const Json& root, const sdk::Path& path) {
    const Json* v = &root;
    for (const sdk::PathSegment& s : path.segments) {
        if (v->IsObject()) {
            const auto it = v->FindMember(s.name);
            if (it == v->MemberEnd()) {
                return nullptr;
            }
            v = &it->value;
        } else if (v->IsArray()) {
            const std::optional<std::size_t> index = s.index();
            if (!index || *index >= v->Size()) {
                return nullptr;
            }
            v = &(*v)[static_cast<rapidjson::SizeType>(*index)];
        } else {
            return nullptr;
        }
    }
    return v;
}

/// "job.state_path $.status: " for messages.
std::string named(const char* member, const JobPath& path) {
    return std::string("job.") + member + " " + path.text + ": ";
}

/// One parsed JSON response of the job (start or status).
class JobDocument {
public:
    /// Parses `response.body`; `what` names it ("the start response", "the status response").
    JobDocument(const FetchedResponse& response, std::string what)
        : prefix_(response.prefix),
          what_(std::move(what)),
          depth_(jsonNestingDepth(response.body)) {
        doc_.Parse<rapidjson::kParseIterativeFlag>(response.body.data(), response.body.size());
        if (doc_.HasParseError()) {
            throw sdk::Error(sdk::ErrorCode::protocol,
                             prefix_ + what_ + " is not valid JSON: " +
                                 rapidjson::GetParseError_En(doc_.GetParseError()) + " at byte " +
                                 std::to_string(doc_.GetErrorOffset()));
        }
    }

    const Json* at(const JobPath& path) const { return find(doc_, path.path); }

    /// A string (or, with `numbers`, an integer) at `path`; "" when absent. Throws when it is
    /// required, or present with another type.
    std::string text(const char* member, const JobPath& path, bool required, bool numbers,
                     std::size_t max_bytes) const {
        const Json* v = at(path);
        if (v != nullptr && numbers && (v->IsInt64() || v->IsUint64())) {
            return compactJson(*v);
        }
        if (v != nullptr && v->IsString() && v->GetStringLength() > 0) {
            if (v->GetStringLength() > max_bytes) {
                throw fail(
                    member, path,
                    "the value there is longer than " + std::to_string(max_bytes) + " bytes");
            }
            return jsonStr(*v);
        }
        if (v == nullptr && !required) {
            return {};
        }
        throw fail(member, path,
                   v == nullptr ? "has no value there"
                                : "the value there is not a " +
                                      std::string(numbers ? "string or integer" : "string") + ": " +
                                      shown(*v));
    }

    /// A value for a message: strings as they are, other values as bounded JSON.
    std::string shown(const Json& v) const {
        if (v.IsString()) {
            return excerpt(validUtf8(jsonStr(v)), kValueExcerpt);
        }
        if (depth_ > JobLimits::max_write_depth) {
            return "(a value nested too deep to show)";
        }
        return excerpt(compactJson(v), kValueExcerpt);
    }

    /// The value at `path` as compact JSON (result_path).
    std::string write(const char* member, const JobPath& path) const {
        const Json* v = at(path);
        if (v == nullptr) {
            throw fail(member, path, "has no value there");
        }
        if (depth_ > JobLimits::max_write_depth) {
            throw sdk::Error(sdk::ErrorCode::resource_exhausted,
                             prefix_ + what_ + " is nested deeper than " +
                                 std::to_string(JobLimits::max_write_depth) + " levels");
        }
        return compactJson(*v);
    }

    sdk::Error fail(const char* member, const JobPath& path, const std::string& why) const {
        return {sdk::ErrorCode::protocol, prefix_ + named(member, path) + what_ + " " + why,
                "{\"path\":" + sdk::jsonQuote(std::string("job.") + member) + "}"};
    }

    const std::string& prefix() const { return prefix_; }

private:
    std::string prefix_;
    std::string what_;
    std::size_t depth_;
    rapidjson::Document doc_;
};

/// `text` (from a response, a cursor or a template) resolved against `base`, refusing http when
/// the job started over https.
std::optional<Url> jobUrl(const Url& base, const Url& start, std::string_view text,
                          std::string& error) {
    if (text.size() > JobLimits::max_url_bytes) {
        error = "longer than " + std::to_string(JobLimits::max_url_bytes) + " bytes";
        return std::nullopt;
    }
    std::optional<Url> url = resolveUrl(base, text, error);
    if (url && start.tls() && !url->tls()) {
        error = "http:// while the job started over https://; refused";
        return std::nullopt;
    }
    return url;
}

/// A whole URL, query included (the cursor keeps it: a status URL may carry a signed token).
std::string fullUrl(const Url& url) {
    return url.origin() + url.target();
}

class JobRun {
public:
    JobRun(sdk::Call& call, const RestConfig& config, const Url& start_url, std::int64_t timeout_ms,
           JobTransport& transport)
        : call_(call),
          config_(config),
          job_(*config.job),
          start_url_(start_url),
          transport_(transport),
          prefix_(config.method + " " + start_url.describe() + ": ") {
        bound_.ms = timeout_ms > 0 ? timeout_ms : JobLimits::default_bound_ms;
        bound_.name = timeout_ms > 0 ? "upstream_timeout_ms" : "the plugin's bound for a job";
        bound_.deadline = Clock::now() + std::chrono::milliseconds(bound_.ms);
    }

    void run(std::string_view cursor) {
        if (cursor.empty()) {
            start();
        } else {
            resume(cursor);
        }
        for (;;) {
            checkStop();
            if (job_.max_polls > 0 && polls_ >= job_.max_polls) {
                abandon();
                throw sdk::Error(sdk::ErrorCode::timeout,
                                 prefix_ + "the job did not finish within job.max_polls (" +
                                     std::to_string(job_.max_polls) + ") status polls" +
                                     lastState());
            }
            const FetchedResponse response = exchange(state_.status_url);
            ++polls_;
            const JobDocument status(response, "the status response");
            const std::string state = readState(status);
            state_text_ = state;
            report(status);
            if (contains(job_.done_values, state)) {
                finish(status, response.body);
                return;
            }
            if (contains(job_.failed_values, state)) {
                failed(status, state);
            }
            sleepUntil(Clock::now() + std::chrono::milliseconds(job_.poll_interval_ms));
        }
    }

private:
    static bool contains(const std::vector<std::string>& values, const std::string& v) {
        return std::find(values.begin(), values.end(), v) != values.end();
    }

    void start() {
        const FetchedResponse response = startExchange();
        const JobDocument doc(response, "the start response");
        state_.id =
            doc.text("id_path", job_.id_path, job_.needsId(), true, JobLimits::max_id_bytes);
        std::string error;
        if (job_.status_url_path.set()) {
            const std::string text = doc.text("status_url_path", job_.status_url_path, true, false,
                                              JobLimits::max_url_bytes);
            std::optional<Url> url = jobUrl(start_url_, start_url_, text, error);
            if (!url) {
                throw doc.fail("status_url_path", job_.status_url_path,
                               "holds \"" + excerpt(validUtf8(text), kValueExcerpt) +
                                   "\", not a usable URL: " + error);
            }
            state_.status_url = std::move(*url);
        } else {
            state_.status_url = templateUrl("status_url", job_.status_url);
        }
        if (!job_.result_url.empty()) {
            state_.result_url = templateUrl("result_url", job_.result_url);
        }
        if (!job_.cancel_url.empty()) {
            state_.cancel_url = templateUrl("cancel_url", job_.cancel_url);
        }
        started_ = true;
        call_.setCursor(formatJobCursor(state_));
    }

    Url templateUrl(const char* member, const std::string& url_template) const {
        std::string error;
        std::optional<Url> url =
            jobUrl(start_url_, start_url_, expandJobTemplate(url_template, state_.id), error);
        if (!url) {
            throw sdk::Error(sdk::ErrorCode::invalid_argument,
                             prefix_ + "job." + member + " with the job id \"" +
                                 excerpt(validUtf8(state_.id), 128) +
                                 "\" is not a usable URL: " + error,
                             "{\"path\":" + sdk::jsonQuote(std::string("job.") + member) + "}");
        }
        return std::move(*url);
    }

    void resume(std::string_view cursor) {
        std::string error;
        std::optional<JobCursor> parsed = parseJobCursor(cursor, error);
        if (parsed) {
            for (const Url* u :
                 {&parsed->status_url, parsed->result_url ? &*parsed->result_url : nullptr,
                  parsed->cancel_url ? &*parsed->cancel_url : nullptr}) {
                if (u != nullptr && start_url_.tls() && !u->tls()) {
                    error = "it names an http:// URL while the job's request is https://";
                    parsed.reset();
                    break;
                }
            }
        }
        if (!parsed) {
            throw sdk::Error(sdk::ErrorCode::invalid_argument,
                             prefix_ + "the job cursor cannot be resumed: " + error);
        }
        state_ = std::move(*parsed);
        started_ = true;
        call_.setCursor(cursor);
    }

    /// The start request, a cancel or the bound turned into the job's own errors.
    FetchedResponse startExchange() {
        try {
            return transport_.start(bound_);
        } catch (const sdk::Error&) {
            checkStop();
            throw;
        }
    }

    /// A GET of the job, a cancel or the bound turned into the job's own errors.
    FetchedResponse exchange(const Url& url) {
        try {
            return transport_.get(url, bound_);
        } catch (const sdk::Error&) {
            checkStop();  // cancelled or out of time: that is the error to report
            throw;
        }
    }

    /// Throws when the call was cancelled or the job's bound passed, after the cancel request.
    void checkStop() {
        // The host cancels the call when its bound passes, a moment before bound_.deadline (which
        // started later): that is the bound passing too.
        if (Clock::now() >= bound_.deadline ||
            (call_.isCancelled() && call_.cancelReason() == CRANK_CANCEL_DEADLINE)) {
            abandon();
            const std::string within = std::to_string(bound_.ms) + " ms (" + bound_.name + ")";
            throw sdk::Error(
                sdk::ErrorCode::timeout,
                prefix_ + (started_ ? "the job did not finish within " + within + "; " +
                                          std::to_string(polls_) + " status polls made" +
                                          lastState() + cancelNote()
                                    : "no answer to the start request within " + within));
        }
        if (call_.isCancelled()) {
            // crankd stopping to resume the job later from the cursor: the upstream job goes on.
            const bool restart = call_.cancelReason() == CRANK_CANCEL_SHUTDOWN;
            if (!restart) {
                abandon();
            }
            throw sdk::Error(sdk::ErrorCode::timeout,
                             prefix_ +
                                 (restart ? "crankd is stopping; the job goes on upstream and is "
                                            "followed again from its cursor; "
                                          : "the call was cancelled while the job ran; ") +
                                 std::to_string(polls_) + " status polls made" + cancelNote());
        }
    }

    std::string lastState() const {
        return state_text_.empty()
                   ? std::string()
                   : ", the last state was \"" + excerpt(validUtf8(state_text_), 128) + "\"";
    }

    std::string cancelNote() const {
        if (cancel_sent_.empty()) {
            return {};
        }
        return "; " + cancel_sent_ +
               (cancel_error_.empty() ? " sent" : " failed: " + cancel_error_);
    }

    /// The cancel request, once, when the job is known and one is configured.
    void abandon() {
        if (!started_ || job_.cancel_method.empty() || !cancel_sent_.empty()) {
            return;
        }
        const Url& url = state_.cancel_url ? *state_.cancel_url : state_.status_url;
        cancel_sent_ = job_.cancel_method + " " + url.describe();
        cancel_error_ = transport_.cancel(job_.cancel_method, url);
        if (!cancel_error_.empty()) {
            call_.log(sdk::LogLevel::warn,
                      "the job's cancel request " + cancel_sent_ + " failed: " + cancel_error_);
        }
    }

    void sleepUntil(Clock::time_point until) {
        until = std::min(until, bound_.deadline);
        for (;;) {
            checkStop();
            const auto now = Clock::now();
            if (now >= until) {
                return;
            }
            std::this_thread::sleep_for(std::min<Clock::duration>(
                until - now, std::chrono::milliseconds(JobLimits::sleep_slice_ms)));
        }
    }

    std::string readState(const JobDocument& doc) const {
        const Json* v = doc.at(job_.state_path);
        if (v == nullptr) {
            throw doc.fail("state_path", job_.state_path, "has no value there");
        }
        std::optional<std::string> text = scalarText(*v);
        if (!text) {
            throw doc.fail("state_path", job_.state_path,
                           "the value there is not a string, number or boolean: " + doc.shown(*v));
        }
        return std::move(*text);
    }

    /// Progress from a status response, when it grew.
    void report(const JobDocument& doc) {
        std::string message;
        if (job_.message_path.set()) {
            if (const Json* m = doc.at(job_.message_path); m != nullptr && m->IsString()) {
                message = excerpt(validUtf8(jsonStr(*m)), kMessageBytes);
            }
        }
        double progress = 0;
        if (job_.progress_path.set()) {
            const Json* p = doc.at(job_.progress_path);
            if (p == nullptr || !p->IsNumber()) {
                return;
            }
            progress = p->GetDouble();
        } else if (job_.message_path.set()) {
            progress = static_cast<double>(polls_);  // the poll count carries the message
        } else {
            return;
        }
        double total = -1;
        if (job_.total_path.set()) {
            if (const Json* t = doc.at(job_.total_path);
                t != nullptr && t->IsNumber() && t->GetDouble() >= 0) {
                total = t->GetDouble();
            }
        }
        if (progress_reported_ && progress <= last_progress_) {
            return;
        }
        progress_reported_ = true;
        last_progress_ = progress;
        call_.progress(progress, total, message);
    }

    [[noreturn]] void failed(const JobDocument& doc, const std::string& state) const {
        std::string why;
        if (job_.error_path.set()) {
            if (const Json* e = doc.at(job_.error_path); e != nullptr && !e->IsNull()) {
                why = doc.shown(*e);
            }
        }
        if (why.empty()) {
            why = excerpt(validUtf8(state), kValueExcerpt);
        }
        throw sdk::Error(sdk::ErrorCode::upstream, prefix_ + "job failed: " + why,
                         "{\"job_state\":" + sdk::jsonQuote(validUtf8(state)) + "}");
    }

    void finish(const JobDocument& doc, const std::string& body) {
        std::optional<Url> resultUrl = state_.result_url;
        if (job_.result_url_path.set()) {
            const std::string text = doc.text("result_url_path", job_.result_url_path, true, false,
                                              JobLimits::max_url_bytes);
            std::string error;
            resultUrl = jobUrl(state_.status_url, start_url_, text, error);
            if (!resultUrl) {
                throw doc.fail("result_url_path", job_.result_url_path,
                               "holds \"" + excerpt(validUtf8(text), kValueExcerpt) +
                                   "\", not a usable URL: " + error);
            }
        }
        if (resultUrl) {
            checkStop();
            const FetchedResponse response = exchange(*resultUrl);
            call_.emit(responseItem(response, config_.accept));
            return;
        }
        if (job_.result_path.set()) {
            call_.emit(doc.write("result_path", job_.result_path));
        } else {
            call_.emit(body);  // the whole final status response, as it came (valid JSON)
        }
    }

    sdk::Call& call_;
    const RestConfig& config_;
    const JobOptions& job_;
    const Url& start_url_;
    JobTransport& transport_;
    std::string prefix_;
    JobBound bound_;
    JobCursor state_;
    bool started_ = false;
    std::uint64_t polls_ = 0;
    std::string state_text_;
    bool progress_reported_ = false;
    double last_progress_ = 0;
    std::string cancel_sent_;
    std::string cancel_error_;
};

}  // namespace

std::string formatJobCursor(const JobCursor& cursor) {
    std::string out = "{\"v\":1,\"status_url\":";
    sdk::appendJsonString(out, fullUrl(cursor.status_url));
    if (!cursor.id.empty()) {
        out.append(",\"id\":");
        sdk::appendJsonString(out, validUtf8(cursor.id));
    }
    if (cursor.result_url) {
        out.append(",\"result_url\":");
        sdk::appendJsonString(out, fullUrl(*cursor.result_url));
    }
    if (cursor.cancel_url) {
        out.append(",\"cancel_url\":");
        sdk::appendJsonString(out, fullUrl(*cursor.cancel_url));
    }
    out.push_back('}');
    return out;
}

std::optional<JobCursor> parseJobCursor(std::string_view text, std::string& error) {
    if (text.size() > JobLimits::max_cursor_bytes) {
        error = "it is longer than " + std::to_string(JobLimits::max_cursor_bytes) + " bytes";
        return std::nullopt;
    }
    rapidjson::Document doc;
    doc.Parse<rapidjson::kParseIterativeFlag>(text.data(), text.size());
    if (doc.HasParseError()) {
        error = std::string("it is not valid JSON: ") +
                rapidjson::GetParseError_En(doc.GetParseError()) + " at byte " +
                std::to_string(doc.GetErrorOffset());
        return std::nullopt;
    }
    const rapidjson::Value& root = doc;  // const lookups (C++20 iterator comparisons)
    if (!root.IsObject()) {
        error = "it is not a JSON object";
        return std::nullopt;
    }
    const auto version = root.FindMember("v");
    if (version == root.MemberEnd() || !version->value.IsInt() || version->value.GetInt() != 1) {
        error = "its \"v\" is not 1 (a cursor of another version, or not a job cursor)";
        return std::nullopt;
    }
    JobCursor cursor;
    const auto url = [&root, &error](const char* key, bool required) -> std::optional<Url> {
        const auto it = root.FindMember(key);
        if (it == root.MemberEnd()) {
            if (required) {
                error = std::string("it has no \"") + key + "\"";
            }
            return std::nullopt;
        }
        if (!it->value.IsString() || it->value.GetStringLength() > JobLimits::max_url_bytes) {
            error = std::string("its \"") + key + "\" is not a URL string of at most " +
                    std::to_string(JobLimits::max_url_bytes) + " bytes";
            return std::nullopt;
        }
        std::string why;
        std::optional<Url> parsed = parseUrl(jsonStr(it->value), why);
        if (!parsed) {
            error = std::string("its \"") + key + "\" is not a usable URL: " + why;
        }
        return parsed;
    };
    std::optional<Url> status = url("status_url", true);
    if (!status) {
        return std::nullopt;
    }
    cursor.status_url = std::move(*status);
    for (const auto& [key, slot] : {std::pair{"result_url", &cursor.result_url},
                                    std::pair{"cancel_url", &cursor.cancel_url}}) {
        *slot = url(key, false);
        if (!error.empty()) {
            return std::nullopt;
        }
    }
    const auto id = root.FindMember("id");
    if (id != root.MemberEnd()) {
        if (!id->value.IsString() || id->value.GetStringLength() == 0 ||
            id->value.GetStringLength() > JobLimits::max_id_bytes) {
            error = "its \"id\" is not a string of 1 to " +
                    std::to_string(JobLimits::max_id_bytes) + " bytes";
            return std::nullopt;
        }
        cursor.id = jsonStr(id->value);
    }
    return cursor;
}

void runJob(sdk::Call& call, const RestConfig& config, const Url& start_url,
            std::string_view cursor, std::int64_t timeout_ms, JobTransport& transport) {
    JobRun(call, config, start_url, timeout_ms, transport).run(cursor);
}

}  // namespace crank::rest
