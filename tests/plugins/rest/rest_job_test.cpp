// The REST plugin's long jobs (`job`, README.md "Async jobs"), driven through the SDK's FakeHost
// against the real crank-rest-fixture (tests/fixtures/upstreams): start, progress, the cursor and
// resume without a second start, failed jobs, cancel, bounds, hostile start and status responses,
// hostile cursors, and the config checks with their paths. Loopback only; the fixture is stopped
// by pid when the suite ends.
#include "rest_job.h"

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <Poco/Net/HTTPClientSession.h>
#include <Poco/Net/HTTPRequest.h>
#include <Poco/Net/HTTPResponse.h>
#include <Poco/StreamCopier.h>
#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include "child_process.h"
#include "rest_adapter.h"
#include <crank/sdk.hpp>
#include <crank/testing/fake_host.hpp>

CRANK_PLUGIN_NAMED(restJobTestEntry, "rest", "1.0.0", "the REST plugin, for its job tests",
                   crank::rest::registerRestPlugin);

namespace crank::rest {
namespace {

using crank::testing::CallResult;
using crank::testing::ChildProcess;
using crank::testing::FakeHost;
using crank::testing::RequestSpec;
using crank::testing::UnaryOptions;
using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

rapidjson::Document parse(std::string_view text) {
    rapidjson::Document doc;
    doc.Parse(text.data(), text.size());
    EXPECT_FALSE(doc.HasParseError()) << text;
    if (doc.HasParseError()) {
        doc.SetObject();
    }
    return doc;
}

class RestJobTest : public ::testing::Test {
protected:
    static void SetUpTestSuite() {
        fixture_ = std::make_unique<ChildProcess>(
            std::vector<std::string>{CRANK_REST_FIXTURE_PATH, "--listen", "127.0.0.1:0"});
        const std::optional<std::uint16_t> port = fixture_->waitForListeningPort(10s);
        ASSERT_TRUE(port) << fixture_->stderrText();
        port_ = *port;
    }

    static void TearDownTestSuite() {
        fixture_.reset();  // SIGKILL by pid, reaped
    }

    void SetUp() override {
        ASSERT_TRUE(fixture_) << "the fixture did not start";
        host_ = std::make_unique<FakeHost>(&restJobTestEntry);
        ASSERT_TRUE(host_->loaded()) << host_->initError();
    }

    static std::string base() { return "http://127.0.0.1:" + std::to_string(port_); }

    /// A GET on the fixture, its body.
    static std::string get(const std::string& path) {
        Poco::Net::HTTPClientSession session("127.0.0.1", port_);
        session.setTimeout(Poco::Timespan(5, 0));
        Poco::Net::HTTPRequest request(Poco::Net::HTTPRequest::HTTP_GET, path,
                                       Poco::Net::HTTPMessage::HTTP_1_1);
        session.sendRequest(request);
        Poco::Net::HTTPResponse response;
        std::string body;
        Poco::StreamCopier::copyToString(session.receiveResponse(response), body);
        return body;
    }

    static std::int64_t stat(const char* name) {
        const rapidjson::Document doc = parse(get("/jobs-stats"));
        const auto it = doc.FindMember(name);
        return it != doc.MemberEnd() && it->value.IsInt64() ? it->value.GetInt64() : -1;
    }

    /// A config that starts a fixture job with `job_body` and follows it with `job`.
    static std::string config(const std::string& job_body, const std::string& job,
                              const std::string& extra = "") {
        return R"({"url":")" + base() + R"(/jobs","method":"POST","body":)" + job_body +
               R"(,"job":)" + job + extra + "}";
    }

    CallResult call(const std::string& config_json, std::int64_t timeout_ms = 20'000,
                    std::string cursor = {}, UnaryOptions options = {},
                    std::string auth_json = {}) {
        RequestSpec spec;
        spec.config_json = config_json;
        spec.request_json = config_json;
        spec.timeout_ms = timeout_ms;
        spec.cursor = std::move(cursor);
        spec.auth_json = std::move(auth_json);
        options.timeout = std::chrono::milliseconds(timeout_ms) + 5s;
        return host_->callUnary("rest", spec, options);
    }

    std::vector<crank::testing::Diagnostic> problems(const std::string& config_json) {
        return host_->validate("rest", config_json).diagnostics;
    }

    static bool hasProblem(const std::vector<crank::testing::Diagnostic>& found,
                           const std::string& path, const std::string& needle) {
        for (const auto& d : found) {
            if (d.path == path && d.message.find(needle) != std::string::npos) {
                return true;
            }
        }
        return false;
    }

    static std::string describe(const std::vector<crank::testing::Diagnostic>& found) {
        std::string out;
        for (const auto& d : found) {
            out += d.path + ": " + d.message + "\n";
        }
        return out;
    }

    static std::string errorOf(const CallResult& r) {
        return r.error ? r.error->message : std::string("(no error)");
    }

    static inline std::unique_ptr<ChildProcess> fixture_;
    static inline std::uint16_t port_ = 0;
    std::unique_ptr<FakeHost> host_;
};

constexpr const char* kFollow =
    R"({"status_url_path":"$.status_url","poll_interval_ms":40,"progress_path":"$.progress",)"
    R"("total_path":"$.total","message_path":"$.message")";

TEST_F(RestJobTest, HappyPathReportsGrowingProgressAndFetchesTheResult) {
    const std::string job = std::string(kFollow) + R"(,"result_url_path":"$.result_url"})";
    const CallResult r =
        call(config(R"({"duration_ms":600,"steps":6,"result":{"answer":42,"rows":[1,2]}})", job));
    ASSERT_TRUE(r.ok()) << errorOf(r);
    ASSERT_EQ(r.items.size(), 1U);
    const rapidjson::Document item = parse(r.items[0]);
    ASSERT_TRUE(item.HasMember("result")) << r.items[0];
    EXPECT_EQ(item["result"]["answer"].GetInt(), 42);
    EXPECT_TRUE(item.HasMember("finished_at_ms"));
    ASSERT_GE(r.progress.size(), 2U);
    for (std::size_t i = 1; i < r.progress.size(); ++i) {
        EXPECT_GT(r.progress[i].progress, r.progress[i - 1].progress);
    }
    EXPECT_EQ(r.progress.back().progress, 6);
    EXPECT_EQ(r.progress.back().total, 6);
    EXPECT_EQ(r.progress.back().message, "step 6 of 6");
    // The cursor names the job: its absolute status URL and id.
    const rapidjson::Document cursor = parse(r.cursor);
    EXPECT_EQ(cursor["v"].GetInt(), 1);
    const std::string statusUrl = cursor["status_url"].GetString();
    EXPECT_EQ(statusUrl.rfind(base() + "/jobs/job-", 0), 0U) << r.cursor;
    EXPECT_EQ(statusUrl, base() + "/jobs/" + cursor["id"].GetString());
}

TEST_F(RestJobTest, ResultDefaultsToTheFinalStatusResponse) {
    const CallResult r =
        call(config(R"({"duration_ms":0,"steps":3})",
                    R"({"status_url_path":"$.status_url","poll_interval_ms":10})"));
    ASSERT_TRUE(r.ok()) << errorOf(r);
    ASSERT_EQ(r.items.size(), 1U);
    const rapidjson::Document item = parse(r.items[0]);
    EXPECT_STREQ(item["status"].GetString(), "done");
    EXPECT_EQ(item["progress"].GetInt(), 3);
    EXPECT_TRUE(r.progress.empty());  // nothing to report without progress_path / message_path

    const CallResult picked =
        call(config(R"({"duration_ms":0,"steps":3})",
                    R"({"status_url_path":"$.status_url","result_path":"$.message"})"));
    ASSERT_TRUE(picked.ok()) << errorOf(picked);
    ASSERT_EQ(picked.items.size(), 1U);
    EXPECT_EQ(picked.items[0], R"("step 3 of 3")");
}

TEST_F(RestJobTest, UrlTemplatesUseThePercentEncodedId) {
    const CallResult r =
        call(config(R"({"duration_ms":100,"result":"templated"})",
                    R"({"status_url":"/jobs/{id}","result_url":"/jobs/{id}/result",)"
                    R"("poll_interval_ms":20})"));
    ASSERT_TRUE(r.ok()) << errorOf(r);
    ASSERT_EQ(r.items.size(), 1U);
    EXPECT_STREQ(parse(r.items[0])["result"].GetString(), "templated");
    const rapidjson::Document cursor = parse(r.cursor);
    const std::string id = cursor["id"].GetString();
    EXPECT_EQ(std::string(cursor["result_url"].GetString()), base() + "/jobs/" + id + "/result");
    EXPECT_EQ(expandJobTemplate("/jobs/{id}/x?id={id}", "a b/c"), "/jobs/a%20b%2Fc/x?id=a%20b%2Fc");
}

TEST_F(RestJobTest, ResumeFromTheCursorDoesNotStartTheJobAgain) {
    const std::string cfg = config(R"({"duration_ms":700,"steps":7,"result":"once"})",
                                   R"({"status_url_path":"$.status_url","poll_interval_ms":20,)"
                                   R"("progress_path":"$.progress","max_polls":1,)"
                                   R"("result_url_path":"$.result_url"})");
    const std::int64_t before = stat("started");
    const CallResult first = call(cfg);
    ASSERT_TRUE(first.error);
    EXPECT_EQ(first.error->code, sdk::ErrorCode::timeout);
    EXPECT_NE(first.error->message.find("job.max_polls (1)"), std::string::npos)
        << first.error->message;
    ASSERT_FALSE(first.cursor.empty());
    EXPECT_EQ(stat("started"), before + 1);

    // As after a crankd restart: the same operation, the persisted cursor, no max_polls.
    const std::string again = config(R"({"duration_ms":700,"steps":7,"result":"once"})",
                                     R"({"status_url_path":"$.status_url","poll_interval_ms":20,)"
                                     R"("result_url_path":"$.result_url"})");
    const std::int64_t polls = stat("status_polls");
    const CallResult resumed = call(again, 20'000, first.cursor);
    ASSERT_TRUE(resumed.ok()) << errorOf(resumed);
    ASSERT_EQ(resumed.items.size(), 1U);
    EXPECT_STREQ(parse(resumed.items[0])["result"].GetString(), "once");
    EXPECT_EQ(stat("started"), before + 1) << "the resumed call POSTed the job again";
    EXPECT_GT(stat("status_polls"), polls);
    EXPECT_EQ(resumed.cursor, first.cursor);
}

TEST_F(RestJobTest, AFailedJobNamesTheUpstreamError) {
    const CallResult r = call(config(R"({"duration_ms":50,"fail":true})",
                                     R"({"status_url_path":"$.status_url","poll_interval_ms":20,)"
                                     R"("error_path":"$.error"})"));
    ASSERT_TRUE(r.error);
    EXPECT_EQ(r.status, sdk::Status::error);
    EXPECT_EQ(r.error->code, sdk::ErrorCode::upstream);
    EXPECT_EQ(r.error->message.rfind("POST " + base() +
                                         "/jobs: job failed: the job failed on "
                                         "purpose at step",
                                     0),
              0U)
        << r.error->message;
    EXPECT_NE(r.error->details_json.find(R"("job_state":"failed")"), std::string::npos);

    const CallResult bare =
        call(config(R"({"duration_ms":0,"fail":true})", R"({"status_url_path":"$.status_url"})"));
    ASSERT_TRUE(bare.error);
    EXPECT_EQ(bare.error->message, "POST " + base() + "/jobs: job failed: failed");
}

TEST_F(RestJobTest, CancelSendsTheCancelRequestAndReturnsPromptly) {
    const std::int64_t cancelled = stat("cancelled");
    UnaryOptions options;
    options.cancel_after = 300ms;
    const auto start = Clock::now();
    const CallResult r = call(config(R"({"duration_ms":30000})",
                                     R"({"status_url_path":"$.status_url","poll_interval_ms":5000,)"
                                     R"("cancel_method":"DELETE"})"),
                              60'000, {}, options);
    const auto took = Clock::now() - start;
    EXPECT_LT(took, 2s) << "cancel waited for the poll interval";
    ASSERT_TRUE(r.error);
    EXPECT_NE(r.error->message.find("the call was cancelled while the job ran"), std::string::npos)
        << r.error->message;
    EXPECT_NE(r.error->message.find("DELETE " + base() + "/jobs/job-"), std::string::npos)
        << r.error->message;
    EXPECT_EQ(stat("cancelled"), cancelled + 1);
    const std::string id = parse(r.cursor)["id"].GetString();
    EXPECT_STREQ(parse(get("/jobs/" + id))["status"].GetString(), "cancelled");
    EXPECT_TRUE(r.violations.empty());
}

TEST_F(RestJobTest, CancelUrlTemplateAndNoCancelMethod) {
    const std::int64_t cancelled = stat("cancelled");
    UnaryOptions options;
    options.cancel_after = 200ms;
    const CallResult viaPost =
        call(config(R"({"duration_ms":30000})",
                    R"({"status_url_path":"$.status_url","poll_interval_ms":50,)"
                    R"("cancel_method":"POST","cancel_url":"/jobs/{id}/cancel"})"),
             60'000, {}, options);
    ASSERT_TRUE(viaPost.error);
    EXPECT_EQ(stat("cancelled"), cancelled + 1);
    // Without cancel_method the job is left running upstream.
    const CallResult left =
        call(config(R"({"duration_ms":30000})",
                    R"({"status_url_path":"$.status_url","poll_interval_ms":50})"),
             60'000, {}, options);
    ASSERT_TRUE(left.error);
    EXPECT_EQ(stat("cancelled"), cancelled + 1);
}

TEST_F(RestJobTest, TheJobIsBoundedByTheCallsTimeout) {
    const auto start = Clock::now();
    const CallResult r =
        call(config(R"({"duration_ms":30000})",
                    R"({"status_url_path":"$.status_url","poll_interval_ms":100})"),
             700);
    EXPECT_LT(Clock::now() - start, 3s);
    ASSERT_TRUE(r.error);
    EXPECT_EQ(r.error->code, sdk::ErrorCode::timeout);
    EXPECT_NE(r.error->message.find("the job did not finish within 700 ms (upstream_timeout_ms)"),
              std::string::npos)
        << r.error->message;
    EXPECT_NE(r.error->message.find("status polls made"), std::string::npos);
    EXPECT_NE(r.error->message.find(R"(the last state was "running")"), std::string::npos);
}

TEST_F(RestJobTest, AStartThatGetsNoAnswerEndsByTheCallsTimeoutAndSaysSo) {
    // crankd cancels the call (CRANK_CANCEL_DEADLINE) when upstream_timeout_ms passes, a moment
    // before the plugin's own bound, which started later: the error still names the bound.
    UnaryOptions options;
    options.cancel_after = 700ms;
    options.cancel_reason = CRANK_CANCEL_DEADLINE;
    const auto start = Clock::now();
    const CallResult r = call(R"({"url":")" + base() +
                                  R"(/slow-headers?ms=20000","method":"POST","body":{},)"
                                  R"("job":{"status_url_path":"$.status_url"}})",
                              700, {}, options);
    EXPECT_LT(Clock::now() - start, 3s);
    ASSERT_TRUE(r.error);
    EXPECT_EQ(r.error->code, sdk::ErrorCode::timeout);
    EXPECT_EQ(r.error->message, "POST " + base() +
                                    "/slow-headers: no answer to the start request within 700 "
                                    "ms (upstream_timeout_ms)")
        << r.error->message;
}

TEST_F(RestJobTest, CredentialsGoOnlyToTheRequestsOrigin) {
    const std::string auth = R"({"type":"bearer","token":"t0ken","headers":{}})";
    const std::int64_t authorized = stat("authorized_polls");
    const std::int64_t polls = stat("status_polls");
    const CallResult same =
        call(config(R"({"duration_ms":100})",
                    R"({"status_url_path":"$.status_url","poll_interval_ms":20})"),
             20'000, {}, {}, auth);
    ASSERT_TRUE(same.ok()) << errorOf(same);
    const std::int64_t samePolls = stat("status_polls") - polls;
    EXPECT_GE(samePolls, 1);
    EXPECT_EQ(stat("authorized_polls") - authorized, samePolls);

    const CallResult other =
        call(config(R"({"duration_ms":100,"alt_origin":true})",
                    R"({"status_url_path":"$.status_url","poll_interval_ms":20})"),
             20'000, {}, {}, auth);
    ASSERT_TRUE(other.ok()) << errorOf(other);
    EXPECT_EQ(stat("authorized_polls") - authorized, samePolls) << "credentials left the origin";
    EXPECT_EQ(std::string(parse(other.cursor)["status_url"].GetString()).rfind(base(), 0),
              std::string::npos);
}

TEST_F(RestJobTest, AStartResponseWithoutAStatusUrl) {
    const CallResult r =
        call(config(R"({"hostile":"no-status-url"})", R"({"status_url_path":"$.status_url"})"));
    ASSERT_TRUE(r.error);
    EXPECT_EQ(r.error->code, sdk::ErrorCode::protocol);
    EXPECT_EQ(r.error->message, "POST " + base() +
                                    "/jobs: job.status_url_path $.status_url: the start response "
                                    "has no value there");
    EXPECT_TRUE(r.cursor.empty());

    const CallResult noId =
        call(config(R"({"duration_ms":0})", R"({"status_url":"/jobs/{id}","id_path":"$.job_id"})"));
    ASSERT_TRUE(noId.error);
    EXPECT_NE(noId.error->message.find("job.id_path $.job_id: the start response has no value"),
              std::string::npos)
        << noId.error->message;
}

TEST_F(RestJobTest, HostileStatusResponses) {
    const std::string follow = R"({"status_url_path":"$.status_url","poll_interval_ms":20})";
    const CallResult notJson = call(config(R"({"hostile":"not-json"})", follow));
    ASSERT_TRUE(notJson.error);
    EXPECT_EQ(notJson.error->code, sdk::ErrorCode::protocol);
    EXPECT_NE(notJson.error->message.find(": the status response is not valid JSON"),
              std::string::npos)
        << notJson.error->message;
    EXPECT_EQ(notJson.error->message.rfind("GET " + base() + "/jobs/job-", 0), 0U);

    const CallResult truncated = call(config(R"({"hostile":"truncated"})", follow));
    ASSERT_TRUE(truncated.error);
    EXPECT_EQ(truncated.error->code, sdk::ErrorCode::protocol) << truncated.error->message;

    const CallResult noState = call(config(R"({"hostile":"no-state"})", follow));
    ASSERT_TRUE(noState.error);
    EXPECT_NE(
        noState.error->message.find("job.state_path $.status: the status response has no value"),
        std::string::npos)
        << noState.error->message;

    const CallResult huge = call(config(R"({"hostile":"huge"})", follow));
    ASSERT_TRUE(huge.error);
    EXPECT_EQ(huge.error->code, sdk::ErrorCode::resource_exhausted);
    EXPECT_NE(huge.error->message.find("max_response_bytes (1048576)"), std::string::npos);
}

TEST_F(RestJobTest, HostileCursorsAreRefusedWithoutStartingAJob) {
    const std::string cfg = config("{}", R"({"status_url_path":"$.status_url"})");
    const std::int64_t before = stat("started");
    const std::vector<std::pair<std::string, std::string>> cases = {
        {"not json at all", "is not valid JSON"},
        {"[1,2]", "is not a JSON object"},
        {R"({"v":2,"status_url":"http://127.0.0.1:1/x"})", R"("v" is not 1)"},
        {R"({"v":1})", R"(has no "status_url")"},
        {R"({"v":1,"status_url":5})", R"("status_url" is not a URL string)"},
        {R"({"v":1,"status_url":"ftp://127.0.0.1/x"})", R"("status_url" is not a usable URL)"},
        {R"({"v":1,"status_url":"http://127.0.0.1:1/x","id":7})", R"("id" is not a string)"},
        {R"({"v":1,"status_url":"http://127.0.0.1:1/x","result_url":[]})",
         R"("result_url" is not a URL string)"},
        {R"({"v":1,"status_url":")" + std::string(20'000, 'a') + "\"}", "longer than 16384"},
        {std::string(100'000, '['), "longer than 16384"},
    };
    for (const auto& [cursor, needle] : cases) {
        const CallResult r = call(cfg, 5'000, cursor);
        ASSERT_TRUE(r.error) << cursor.substr(0, 80);
        EXPECT_EQ(r.error->code, sdk::ErrorCode::invalid_argument);
        EXPECT_NE(r.error->message.find("the job cursor cannot be resumed: "), std::string::npos);
        EXPECT_NE(r.error->message.find(needle), std::string::npos)
            << r.error->message.substr(0, 300);
    }
    EXPECT_EQ(stat("started"), before);
    // The parser on its own, both ways.
    std::string error;
    JobCursor cursor;
    cursor.status_url = *parseUrl("http://127.0.0.1:9/jobs/a?sig=x%20y", error);
    cursor.id = "a\"b";
    const std::optional<JobCursor> back = parseJobCursor(formatJobCursor(cursor), error);
    ASSERT_TRUE(back) << error;
    EXPECT_EQ(back->status_url.target(), "/jobs/a?sig=x%20y");
    EXPECT_EQ(back->id, "a\"b");
    EXPECT_FALSE(back->result_url);
}

TEST_F(RestJobTest, ConfigProblemsNameTheirPath) {
    const std::string url = R"("url":"http://127.0.0.1:1/jobs","method":"POST")";
    const auto check = [&](const std::string& job, const std::string& path,
                           const std::string& needle, const std::string& extra = "") {
        const auto found = problems("{" + url + extra + R"(,"job":)" + job + "}");
        EXPECT_TRUE(hasProblem(found, path, needle)) << job << "\n" << describe(found);
    };
    check("{}", "job", "needs job.status_url_path");
    check("[]", "job", "expected an object");
    check(R"({"status_url_path":"$.a","status_url":"/x/{id}"})", "job.status_url", "not both");
    check(R"({"status_url_path":"$..a"})", "job.status_url_path", "not a valid path");
    check(R"({"status_url_path":"$.a.*"})", "job.status_url_path", "must name one value");
    check(R"({"status_url_path":7})", "job.status_url_path", "expected a path string");
    check(R"({"status_url":"http://[bad/{id}"})", "job.status_url", "not a usable URL");
    check(R"({"status_url_path":"$.a","poll_interval_ms":5})", "job.poll_interval_ms",
          "from 10 to 3600000");
    check(R"({"status_url_path":"$.a","done_values":[]})", "job.done_values", "non-empty array");
    check(R"({"status_url_path":"$.a","done_values":["x"],"failed_values":["x"]})",
          "job.failed_values", R"("x" is also in job.done_values)");
    check(R"({"status_url_path":"$.a","cancel_url":"/c"})", "job.cancel_url",
          "needs job.cancel_method");
    check(R"({"status_url_path":"$.a","cancel_method":"HEAD"})", "job.cancel_method",
          "expected one of DELETE");
    check(R"({"status_url_path":"$.a","result_url":"/r","result_path":"$.x"})", "job.result_path",
          "no result URL");
    check(R"({"status_url_path":"$.a","result_url":"/r","result_url_path":"$.x"})",
          "job.result_url", "not both");
    check(R"({"status_url_path":"$.a","max_polls":-1})", "job.max_polls", "from 0 (no bound)");
    check(R"({"status_url_path":"$.a","colour":"red"})", "job.colour", "unknown member");
    check(R"({"status_url_path":"$.a"})", "job", "cursor_param", R"(,"cursor_param":"c")");
    EXPECT_TRUE(problems("{" + url +
                         R"(,"job":{"status_url":"/jobs/{id}","cancel_method":"DELETE",)"
                         R"("result_url":"/jobs/{id}/result","progress_path":"$.p"}})")
                    .empty());
    // An https request cannot follow its job over http.
    const auto downgrade = problems(
        R"({"url":"https://127.0.0.1:1/jobs","job":{"status_url":"http://127.0.0.1:1/{id}"}})");
    EXPECT_TRUE(hasProblem(downgrade, "job.status_url", "over http://")) << describe(downgrade);
}

// The demo operation of plugins/rest/README.md ("build_report") against the demo upstream's
// report job, as examples/demo.json publishes it (its input rendered: rows 100).
TEST_F(RestJobTest, TheDemoReportJob) {
    ChildProcess demo({CRANK_DEMO_UPSTREAM_PATH, "--listen", "127.0.0.1:0"});
    const std::optional<std::uint16_t> port = demo.waitForListeningPort(10s);
    ASSERT_TRUE(port) << demo.stderrText();
    const std::string cfg =
        R"({"url":"http://127.0.0.1:)" + std::to_string(*port) +
        R"(/reports","method":"POST","body":{"rows":100},)"
        R"("job":{"status_url_path":"$.status_url","id_path":"$.report_id",)"
        R"("poll_interval_ms":250,"progress_path":"$.rows_done","total_path":"$.rows",)"
        R"("message_path":"$.message","result_url":"/reports/{id}/download",)"
        R"("cancel_method":"DELETE"}})";
    EXPECT_TRUE(problems(cfg).empty()) << describe(problems(cfg));
    const CallResult r = call(cfg, 60'000);
    ASSERT_TRUE(r.ok()) << errorOf(r);
    ASSERT_EQ(r.items.size(), 1U);
    const rapidjson::Document report = parse(r.items[0]);
    EXPECT_EQ(report["rows"].GetInt(), 100);
    EXPECT_EQ(report["by_region"].Size(), 4U);
    ASSERT_FALSE(r.progress.empty());
    EXPECT_EQ(r.progress.back().progress, 100);
    EXPECT_EQ(r.progress.back().total, 100);
    EXPECT_EQ(r.progress.back().message, "100 of 100 rows");
    EXPECT_STREQ(parse(r.cursor)["id"].GetString(), report["report_id"].GetString());
}

TEST_F(RestJobTest, AJobOverAStreamIsRefused) {
    RequestSpec spec;
    spec.config_json = config("{}", R"({"status_url_path":"$.status_url"})");
    spec.request_json = spec.config_json;
    const CallResult r = host_->runStream("rest", spec);
    ASSERT_TRUE(r.error);
    EXPECT_EQ(r.error->code, sdk::ErrorCode::invalid_argument);
    EXPECT_NE(r.error->message.find("config.job"), std::string::npos) << r.error->message;
}

}  // namespace
}  // namespace crank::rest
