// The admin API (docs/admin-api.md) through the real crankd: the token and the Origin policy,
// operations created, listed, edited, validated, published, rolled back and deleted, with what MCP
// clients see of it (tools/list, notifications/tools/list_changed, tools/call), concurrent edits
// and publishes, test runs in every execution mode (the synthetic fixture plugin, and
// crank-rest-fixture for unary REST calls), plugins, meta and auth profiles (never a secret),
// live sessions and jobs stopped and cancelled by the operator, the audit log, bad input of every
// kind, a restart on the same store, and an API turned off. One crankd serves most of the suite;
// the restart and the disabled API have their own.

#include <signal.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include "admin_client.h"
#include "child_process.h"
#include "mcp_http_client.h"
#include "temp_dir.h"
#include "test_json.h"

namespace {

using crank::testing::ChildProcess;
using crank::testing::contains;
using crank::testing::eventually;
using crank::testing::lacks;
using crank::testing::McpClient;
using crank::testing::SseReader;
using crank::testing::TempDir;
using crank::testing::admin::AdminClient;
using crank::testing::admin::Answer;
using crank::testing::admin::at;
using crank::testing::admin::count;
using crank::testing::admin::elements;
using crank::testing::admin::flag;
using crank::testing::admin::Headers;
using crank::testing::admin::isNull;
using crank::testing::admin::isObject;
using crank::testing::admin::jsonOf;
using crank::testing::admin::kAbsent;
using crank::testing::admin::num;
using crank::testing::admin::quote;
using crank::testing::admin::str;
using crank::testing::admin::strings;
using crank::testing::admin::textAt;
using namespace std::chrono_literals;

// The admin token and an upstream secret: neither may ever appear in an answer or in crankd's log.
constexpr const char* kAdminToken = "adm-T0ken-9f8e7d6c5b4a3210";
constexpr const char* kBearerSecret = "bearer-S3cret-Vx7qPz";

// Every synthetic parameter comes from the tool input; one left out of the input is removed from
// the rendered config (whole-string template), so the plugin's default applies.
constexpr const char* kSyntheticConfig =
    R"({"items": "{{items}}", "rate_per_sec": "{{rate}}", "item_bytes": 60,
        "hang_on_open": "{{hang}}", "delay_ms": "{{delay_ms}}",
        "fail_after_items": "{{fail_after}}"})";
constexpr const char* kInputSchema = R"({"type": "object", "additionalProperties": false,
    "properties": {"items": {"type": "integer", "minimum": -1},
                   "rate": {"type": "integer", "minimum": 0}, "hang": {"type": "boolean"},
                   "delay_ms": {"type": "integer", "minimum": 0},
                   "fail_after": {"type": "integer", "minimum": 0}}})";

constexpr const char* kWindow =
    R"("mode": "window", "transport_behavior": "server_stream", "max_items": 5,
       "window_duration_ms": 3000, "upstream_timeout_ms": 2000)";
constexpr const char* kSession =
    R"("mode": "session", "transport_behavior": "server_stream", "max_items": 50,
       "poll_interval_ms": 100)";
constexpr const char* kJob = R"("mode": "async_job", "upstream_timeout_ms": 60000,
       "poll_interval_ms": 100)";
constexpr const char* kUnary = R"("mode": "unary")";

/// A synthetic operation: `execution` is the members of its execution block, `extra` more members
/// of the operation (", ...").
std::string syntheticOp(const std::string& name, const std::string& execution,
                        const std::string& extra = "") {
    return R"({"name": )" + quote(name) +
           R"(, "description": "a synthetic operation", "protocol": "synthetic",
        "input_schema": )" +
           kInputSchema + R"(, "config": )" + kSyntheticConfig + R"(, "execution": {)" + execution +
           "}" + extra + "}";
}

/// A unary REST operation against crank-rest-fixture's `path`.
std::string restOp(const std::string& name, std::uint16_t port, const std::string& path) {
    return R"({"name": )" + quote(name) +
           R"(, "description": "a REST call", "protocol": "rest", "config": {"url": )" +
           quote("http://127.0.0.1:" + std::to_string(port) + path) +
           R"(}, "execution": {"mode": "unary", "upstream_timeout_ms": 5000}})";
}

std::string createBody(const std::string& op, const std::string& comment = "") {
    return R"({"config": )" + op + R"(, "comment": )" + quote(comment) + "}";
}

std::string putBody(const std::string& op, std::int64_t base, const std::string& comment = "") {
    return R"({"config": )" + op + R"(, "base_version": )" + std::to_string(base) +
           R"(, "comment": )" + quote(comment) + "}";
}

std::string publishBody(std::int64_t version, std::optional<std::int64_t> expected = {}) {
    std::string body = R"({"version": )" + std::to_string(version);
    if (expected) {
        body += R"(, "expected_published": )" + std::to_string(*expected);
    }
    return body + "}";
}

/// Empty arrays nested `depth` levels deep: [[[...]]].
std::string nested(int depth) {
    return std::string(static_cast<std::size_t>(depth), '[') +
           std::string(static_cast<std::size_t>(depth), ']');
}

std::int64_t nowMs() {
    return std::chrono::duration_cast<std::chrono::milliseconds>(
               std::chrono::system_clock::now().time_since_epoch())
        .count();
}

/// A crankd with `members` after its store and plugin directories, on a free loopback port.
/// `enabled`: the plugins.enabled list (JSON), empty for every library found.
std::unique_ptr<ChildProcess> launch(const TempDir& dir, const std::string& members,
                                     const std::map<std::string, std::string>& env,
                                     std::uint16_t& port, const std::string& enabled = "") {
    const std::string config =
        dir.write("crank.json", R"({"store": {"path": ")" + dir.file("crank.db") +
                                    R"("}, "plugins": {"directories": [")" CRANK_PLUGIN_DIR
                                    R"(", ")" CRANK_TEST_PLUGIN_DIR R"("])" +
                                    (enabled.empty() ? "" : R"(, "enabled": )" + enabled) + "}, " +
                                    members + "}");
    auto process = std::make_unique<ChildProcess>(
        std::vector<std::string>{CRANKD_PATH, "--config", config, "--listen", "127.0.0.1:0"}, env);
    const auto listening = process->waitForListeningPort(20s);
    port = listening ? *listening : 0;
    return process;
}

/// SIGTERM, and it must exit with status 0.
void stop(std::unique_ptr<ChildProcess>& process) {
    if (process) {
        process->signal(SIGTERM);
        EXPECT_EQ(process->waitForExit(20s), 0) << process->stderrText();
        process.reset();
    }
}

/// Every tool name an MCP client is offered (tools/list, every page).
std::set<std::string> toolNames(const McpClient& client) {
    std::set<std::string> names;
    std::string cursor;
    for (int page = 0; page < 50; ++page) {
        const std::string params =
            cursor.empty() ? "" : R"(, "params": {"cursor": )" + quote(cursor) + "}";
        const crank::testing::Reply reply =
            client.post(R"({"jsonrpc":"2.0","id":7,"method":"tools/list")" + params + "}");
        const rapidjson::Document doc = crank::testing::parseJsonOrFail(reply.body);
        for (const rapidjson::Value* tool : elements(doc, "result.tools")) {
            names.insert(str(*tool, "name"));
        }
        cursor = str(doc, "result.nextCursor");
        if (cursor == kAbsent || cursor.empty()) {
            break;
        }
    }
    return names;
}

std::set<std::string> toolNames(std::uint16_t port, const std::string& path = "/mcp") {
    McpClient client(port, "", path);
    if (!client.open()) {
        return {};
    }
    return toolNames(client);
}

/// The structuredContent of a tools/call that must succeed.
rapidjson::Document callOk(std::uint16_t port, const std::string& tool,
                           const std::string& arguments) {
    McpClient client(port);
    rapidjson::Document out;
    out.SetObject();
    if (!client.open()) {
        return out;
    }
    const rapidjson::Document result = client.callTool(tool, arguments);
    if (flag(result, "isError") != false || !isObject(result, "structuredContent")) {
        ADD_FAILURE() << tool << " " << arguments << ": " << jsonOf(result);
        return out;
    }
    out.CopyFrom(result["structuredContent"], out.GetAllocator());
    return out;
}

std::vector<std::int64_t> versionNumbers(const Answer& a) {
    std::vector<std::int64_t> out;
    for (const rapidjson::Value* v : elements(a.json, "versions")) {
        out.push_back(num(*v, "version"));
    }
    return out;
}

/// The change of `diff` at `path`, or nullptr.
const rapidjson::Value* changeAt(const Answer& diff, const std::string& path) {
    for (const rapidjson::Value* c : elements(diff.json, "changes")) {
        if (str(*c, "path") == path) {
            return c;
        }
    }
    return nullptr;
}

class AdminApi : public ::testing::Test {
protected:
    static void SetUpTestSuite() {
        fixture_ = new ChildProcess(
            std::vector<std::string>{CRANK_REST_FIXTURE_PATH, "--listen", "127.0.0.1:0"});
        const auto fixturePort = fixture_->waitForListeningPort(20s);
        ASSERT_TRUE(fixturePort) << fixture_->stderrText();
        fixturePort_ = *fixturePort;

        dir_ = new TempDir();
        const std::string operations = syntheticOp("cfg_window", kWindow) + "," +
                                       syntheticOp("cfg_team", kUnary, R"(, "workspace": "team")") +
                                       "," + syntheticOp("cfg_session", kSession) + "," +
                                       syntheticOp("cfg_job", kJob);
        const std::string members =
            R"("server": {"allowed_origins": ["https://console.example.com"]},
               "admin": {"token": {"env": "CRANK_ADMIN_TOKEN"}, "test_run_timeout_ms": 8000,
                         "max_test_runs": 2},
               "auth": {"workspaces": [{"id": "team", "description": "the team's tools"}]},
               "auth_profiles": {"bearer_p": {"type": "bearer",
                   "token": {"env": "CRANK_ADMIN_TEST_BEARER"}, "headers": {"X-Tenant": "acme"}}},
               "operations": [)" +
            operations + "]";
        std::uint16_t port = 0;
        crankd_ =
            launch(*dir_, members,
                   {{"CRANK_ADMIN_TOKEN", kAdminToken}, {"CRANK_ADMIN_TEST_BEARER", kBearerSecret}},
                   port)
                .release();
        ASSERT_NE(port, 0) << crankd_->stderrText();
        port_ = port;
    }

    static void TearDownTestSuite() {
        if (crankd_ != nullptr) {
            crankd_->signal(SIGTERM);
            EXPECT_EQ(crankd_->waitForExit(20s), 0) << crankd_->stderrText();
            // Neither the admin token nor an upstream secret ever reached the log.
            EXPECT_TRUE(lacks(crankd_->stderrText(), kAdminToken));
            EXPECT_TRUE(lacks(crankd_->stderrText(), kBearerSecret));
            EXPECT_TRUE(lacks(crankd_->stdoutText(), kAdminToken));
            delete crankd_;
            crankd_ = nullptr;
        }
        delete fixture_;  // stops it by its pid
        fixture_ = nullptr;
        delete dir_;
        dir_ = nullptr;
    }

    void SetUp() override { ASSERT_NE(port_, 0); }

    static AdminClient admin() { return {port_, kAdminToken}; }

    /// POST /admin/api/operations that must answer 201; the new operation's id ("" otherwise).
    static std::string create(const std::string& op, const std::string& comment = "") {
        const Answer a = admin().post("/admin/api/operations", createBody(op, comment));
        EXPECT_EQ(a.status, 201) << a.describe();
        return str(a.json, "operation.id") == kAbsent ? "" : str(a.json, "operation.id");
    }

    /// PUT that must answer 201; the new version's number.
    static std::int64_t update(const std::string& id, const std::string& op, std::int64_t base,
                               const std::string& comment = "") {
        const Answer a = admin().put("/admin/api/operations/" + id, putBody(op, base, comment));
        EXPECT_EQ(a.status, 201) << a.describe();
        return num(a.json, "version.version");
    }

    static Answer publish(const std::string& id, std::int64_t version,
                          std::optional<std::int64_t> expected = {}) {
        return admin().post("/admin/api/operations/" + id + "/publish",
                            publishBody(version, expected));
    }

    static Answer getOp(const std::string& id) {
        return admin().get("/admin/api/operations/" + id);
    }

    static Answer testRun(const std::string& body) {
        return admin().post("/admin/api/test-runs", body);
    }

    /// The events of an audit answer.
    static std::vector<const rapidjson::Value*> events(const Answer& a) {
        return elements(a.json, "events");
    }

    /// The names of the operations of a list answer.
    static std::vector<std::string> opNames(const Answer& a) {
        std::vector<std::string> out;
        for (const rapidjson::Value* op : elements(a.json, "operations")) {
            out.push_back(str(*op, "name"));
        }
        return out;
    }

    static bool listed(const Answer& a, const std::string& name) {
        const auto names = opNames(a);
        return std::find(names.begin(), names.end(), name) != names.end();
    }

    static inline TempDir* dir_ = nullptr;
    static inline ChildProcess* crankd_ = nullptr;
    static inline ChildProcess* fixture_ = nullptr;
    static inline std::uint16_t port_ = 0;
    static inline std::uint16_t fixturePort_ = 0;
};

// --- the token, the Origin policy, paths and methods --------------------------------------------

TEST_F(AdminApi, EveryRequestNeedsTheToken) {
    const AdminClient a = admin();
    for (const std::string& path :
         {std::string("/admin/api/operations"), std::string("/admin/api/plugins"),
          std::string("/admin/api/operations/config:default:cfg_window"),
          std::string("/admin/api/sessions"), std::string("/admin/api/audit")}) {
        const Answer none = a.request("GET", path, "", {}, false);
        EXPECT_EQ(none.status, 401) << path << ": " << none.describe();
        EXPECT_EQ(none.code(), "unauthorized") << none.describe();
        EXPECT_TRUE(contains(none.header("www-authenticate"), R"(Bearer realm="crank-admin")"))
            << path;
    }
    // The token comes before anything else: an unknown resource is no 404 to a stranger.
    EXPECT_EQ(a.request("GET", "/admin/api/no-such-thing", "", {}, false).status, 401);
    const std::string wrongs[] = {"Bearer wrong-token", "Bearer adm-T0ken-9f8e7d6c5b4a321",
                                  std::string("Bearer ") + kAdminToken + "x",
                                  std::string("Basic ") + kAdminToken, "Bearer "};
    for (const std::string& wrong : wrongs) {
        const Answer refused =
            a.request("GET", "/admin/api/operations", "", {{"Authorization", wrong}}, false);
        EXPECT_EQ(refused.status, 401) << wrong << ": " << refused.describe();
        EXPECT_EQ(refused.code(), "unauthorized");
        EXPECT_TRUE(contains(refused.header("www-authenticate"), "Bearer"));
        EXPECT_TRUE(lacks(refused.body, kAdminToken));
    }
    // Nothing happens without the token: the operation is not created, no test run is made.
    const Answer created =
        a.request("POST", "/admin/api/operations", createBody(syntheticOp("no_token_op", kWindow)),
                  {{"Content-Type", "application/json"}}, false);
    EXPECT_EQ(created.status, 401) << created.describe();
    EXPECT_FALSE(listed(a.get("/admin/api/operations"), "no_token_op"));
    EXPECT_EQ(a.request("POST", "/admin/api/test-runs",
                        R"({"config": )" + syntheticOp("no_token_run", kWindow) + "}",
                        {{"Content-Type", "application/json"}}, false)
                  .status,
              401);

    const Answer ok = a.get("/admin/api/operations");
    EXPECT_EQ(ok.status, 200) << ok.describe();
    EXPECT_TRUE(contains(ok.header("content-type"), "application/json"));
    EXPECT_TRUE(at(ok.json, "operations") != nullptr && at(ok.json, "operations")->IsArray())
        << ok.describe();
}

TEST_F(AdminApi, AForeignBrowserOriginIsRefused) {
    const AdminClient a = admin();
    const Answer evil =
        a.request("GET", "/admin/api/operations", "", {{"Origin", "http://evil.example.com"}});
    EXPECT_EQ(evil.status, 403) << evil.describe();
    EXPECT_EQ(evil.code(), "forbidden_origin") << evil.describe();
    // Not even a write gets through with the token.
    const Answer write =
        a.request("POST", "/admin/api/operations", createBody(syntheticOp("evil_op", kWindow)),
                  {{"Origin", "http://evil.example.com"}});
    EXPECT_EQ(write.status, 403) << write.describe();
    EXPECT_FALSE(listed(a.get("/admin/api/operations"), "evil_op"));
    // Loopback origins (the UI itself) and the listed ones pass.
    for (const char* origin :
         {"http://localhost:5173", "http://127.0.0.1:8080", "https://console.example.com"}) {
        const Answer allowed = a.request("GET", "/admin/api/operations", "", {{"Origin", origin}});
        EXPECT_EQ(allowed.status, 200) << origin << ": " << allowed.describe();
    }
}

TEST_F(AdminApi, UnknownPathsAre404AndWrongMethods405WithAllow) {
    const AdminClient a = admin();
    const Answer missing = a.get("/admin/api/no-such-thing");
    EXPECT_EQ(missing.status, 404) << missing.describe();
    EXPECT_EQ(missing.code(), "not_found") << missing.describe();
    const Answer noOp = a.get("/admin/api/operations/op_does_not_exist");
    EXPECT_EQ(noOp.status, 404) << noOp.describe();
    EXPECT_EQ(noOp.code(), "not_found");
    EXPECT_FALSE(noOp.message().empty());

    const Answer wrong = a.request("DELETE", "/admin/api/plugins");
    EXPECT_EQ(wrong.status, 405) << wrong.describe();
    EXPECT_EQ(wrong.code(), "method_not_allowed") << wrong.describe();
    EXPECT_TRUE(contains(wrong.header("allow"), "GET")) << wrong.describe();
    const Answer patch = a.request("PATCH", "/admin/api/operations", "{}");
    EXPECT_EQ(patch.status, 405) << patch.describe();
    EXPECT_TRUE(contains(patch.header("allow"), "POST")) << patch.describe();
    EXPECT_TRUE(contains(patch.header("allow"), "GET")) << patch.describe();
    const Answer getPublish = a.get("/admin/api/operations/op_x/publish");
    EXPECT_EQ(getPublish.status, 405) << getPublish.describe();
    EXPECT_TRUE(contains(getPublish.header("allow"), "POST")) << getPublish.describe();
}

// --- operations from the config file ------------------------------------------------------------

TEST_F(AdminApi, ConfigOperationsAreListedReadOnly) {
    const Answer list = admin().get("/admin/api/operations?source=config");
    ASSERT_EQ(list.status, 200) << list.describe();
    const rapidjson::Value* window = nullptr;
    const rapidjson::Value* session = nullptr;
    for (const rapidjson::Value* op : elements(list.json, "operations")) {
        EXPECT_EQ(str(*op, "source"), "config") << jsonOf(*op);
        EXPECT_EQ(flag(*op, "read_only"), true) << jsonOf(*op);
        if (str(*op, "name") == "cfg_window") {
            window = op;
        } else if (str(*op, "name") == "cfg_session") {
            session = op;
        }
    }
    ASSERT_NE(window, nullptr) << list.describe();
    ASSERT_NE(session, nullptr) << list.describe();
    EXPECT_EQ(str(*window, "id"), "config:default:cfg_window");
    EXPECT_EQ(str(*window, "workspace"), "default");
    EXPECT_EQ(str(*window, "mode"), "window");
    EXPECT_EQ(str(*window, "protocol"), "synthetic");
    EXPECT_EQ(strings(*window, "tools"), std::vector<std::string>{"cfg_window"});
    EXPECT_EQ(str(*session, "mode"), "session");
    const auto sessionTools = strings(*session, "tools");
    EXPECT_EQ(std::set<std::string>(sessionTools.begin(), sessionTools.end()),
              (std::set<std::string>{"cfg_session_start", "cfg_session_poll", "cfg_session_stop"}));

    const std::string id = "config:default:cfg_window";
    const Answer one = getOp(id);
    ASSERT_EQ(one.status, 200) << one.describe();
    EXPECT_EQ(str(one.json, "operation.source"), "config");
    EXPECT_EQ(flag(one.json, "operation.read_only"), true);
    EXPECT_TRUE(isNull(one.json, "latest.version")) << one.describe();
    EXPECT_EQ(str(one.json, "latest.config.name"), "cfg_window") << one.describe();
    EXPECT_EQ(num(one.json, "latest.config.execution.max_items"), 5) << one.describe();
    EXPECT_EQ(str(getOp("config%3Adefault%3Acfg_window").json, "operation.id"), id)
        << "a percent-encoded id is the same id";
    const Answer team = getOp("config:team:cfg_team");
    EXPECT_EQ(team.status, 200) << team.describe();
    EXPECT_EQ(str(team.json, "operation.workspace"), "team");

    // Read-only: no edit, delete or publish, and it keeps serving.
    const Answer put =
        admin().put("/admin/api/operations/" + id, putBody(syntheticOp("cfg_window", kWindow), 1));
    EXPECT_EQ(put.status, 409) << put.describe();
    EXPECT_EQ(put.code(), "read_only") << put.describe();
    const Answer del = admin().del("/admin/api/operations/" + id);
    EXPECT_EQ(del.status, 409) << del.describe();
    EXPECT_EQ(del.code(), "read_only") << del.describe();
    const Answer pub = publish(id, 1);
    EXPECT_EQ(pub.status, 409) << pub.describe();
    EXPECT_EQ(pub.code(), "read_only") << pub.describe();
    const Answer back = admin().post("/admin/api/operations/" + id + "/rollback", "{}");
    EXPECT_EQ(back.status, 409) << back.describe();
    EXPECT_EQ(back.code(), "read_only") << back.describe();
    EXPECT_EQ(toolNames(port_).count("cfg_window"), 1U);
    EXPECT_EQ(num(callOk(port_, "cfg_window", R"({"items": -1})"), "item_count"), 5);
}

// --- create, read, list, update, delete ---------------------------------------------------------

TEST_F(AdminApi, CreateGetListAndUpdateAnOperation) {
    const Answer created = admin().post(
        "/admin/api/operations",
        createBody(syntheticOp("crud_op", kWindow, R"(, "title": "CRUD")"), "first cut"));
    ASSERT_EQ(created.status, 201) << created.describe();
    const std::string id = str(created.json, "operation.id");
    EXPECT_EQ(id.rfind("op_", 0), 0U) << created.describe();
    EXPECT_EQ(str(created.json, "operation.name"), "crud_op");
    EXPECT_EQ(str(created.json, "operation.workspace"), "default");
    EXPECT_EQ(str(created.json, "operation.source"), "admin");
    EXPECT_EQ(flag(created.json, "operation.read_only"), false);
    EXPECT_EQ(str(created.json, "operation.status"), "draft");
    EXPECT_EQ(str(created.json, "operation.mode"), "window");
    EXPECT_EQ(str(created.json, "operation.protocol"), "synthetic");
    EXPECT_EQ(num(created.json, "operation.latest_version"), 1);
    EXPECT_TRUE(isNull(created.json, "operation.published_version")) << created.describe();
    EXPECT_TRUE(isNull(created.json, "operation.deleted_at")) << created.describe();
    EXPECT_GT(num(created.json, "operation.created_at"), nowMs() - 600000);
    EXPECT_EQ(num(created.json, "version.version"), 1);
    EXPECT_EQ(str(created.json, "version.state"), "draft");
    EXPECT_EQ(str(created.json, "version.comment"), "first cut");
    EXPECT_EQ(str(created.json, "version.config.name"), "crud_op");
    EXPECT_EQ(str(created.json, "version.config.title"), "CRUD");

    const Answer one = getOp(id);
    ASSERT_EQ(one.status, 200) << one.describe();
    EXPECT_EQ(str(one.json, "operation.id"), id);
    EXPECT_EQ(num(one.json, "latest.version"), 1);
    EXPECT_EQ(num(one.json, "latest.config.execution.max_items"), 5);
    EXPECT_TRUE(isNull(one.json, "published")) << one.describe();

    // A second operation in another workspace, and the filters.
    const std::string teamId =
        create(syntheticOp("crud_team_op", kWindow, R"(, "workspace": "team")"));
    const Answer all = admin().get("/admin/api/operations");
    ASSERT_EQ(all.status, 200) << all.describe();
    EXPECT_TRUE(listed(all, "crud_op"));
    EXPECT_TRUE(listed(all, "crud_team_op"));
    EXPECT_TRUE(listed(all, "cfg_window"));
    // Sorted by workspace, then name.
    std::vector<std::pair<std::string, std::string>> keys;
    for (const rapidjson::Value* op : elements(all.json, "operations")) {
        keys.emplace_back(str(*op, "workspace"), str(*op, "name"));
    }
    EXPECT_TRUE(std::is_sorted(keys.begin(), keys.end())) << all.describe();
    const Answer team = admin().get("/admin/api/operations?workspace=team");
    ASSERT_EQ(team.status, 200) << team.describe();
    EXPECT_TRUE(listed(team, "crud_team_op"));
    EXPECT_TRUE(listed(team, "cfg_team"));
    EXPECT_FALSE(listed(team, "crud_op"));
    for (const rapidjson::Value* op : elements(team.json, "operations")) {
        EXPECT_EQ(str(*op, "workspace"), "team");
    }
    const Answer mine = admin().get("/admin/api/operations?source=admin");
    ASSERT_EQ(mine.status, 200) << mine.describe();
    EXPECT_TRUE(listed(mine, "crud_op"));
    EXPECT_FALSE(listed(mine, "cfg_window"));
    for (const rapidjson::Value* op : elements(mine.json, "operations")) {
        EXPECT_EQ(str(*op, "source"), "admin");
    }
    const Answer both = admin().get("/admin/api/operations?workspace=team&source=admin");
    EXPECT_TRUE(listed(both, "crud_team_op"));
    EXPECT_FALSE(listed(both, "cfg_team"));
    EXPECT_FALSE(listed(both, "crud_op"));
    const Answer nowhere = admin().get("/admin/api/operations?workspace=nowhere");
    EXPECT_TRUE(nowhere.status == 400 ||
                (nowhere.status == 200 && count(nowhere.json, "operations") == 0))
        << nowhere.describe();

    // An edit from version 1: version 2, a draft; nothing published yet.
    const Answer put =
        admin().put("/admin/api/operations/" + id,
                    putBody(syntheticOp("crud_op", R"("mode": "window", "transport_behavior":
            "server_stream", "max_items": 7)"),
                            1, "raise max_items"));
    ASSERT_EQ(put.status, 201) << put.describe();
    EXPECT_EQ(num(put.json, "version.version"), 2);
    EXPECT_EQ(str(put.json, "version.state"), "draft");
    EXPECT_EQ(str(put.json, "version.comment"), "raise max_items");
    EXPECT_EQ(num(put.json, "operation.latest_version"), 2);
    EXPECT_TRUE(isNull(put.json, "operation.published_version"));
    EXPECT_EQ(num(getOp(id).json, "latest.config.execution.max_items"), 7);

    // An edit from a version that is no longer the latest: conflict, naming the latest.
    const Answer stale = admin().put("/admin/api/operations/" + id,
                                     putBody(syntheticOp("crud_op", kWindow), 1, "stale"));
    EXPECT_EQ(stale.status, 409) << stale.describe();
    EXPECT_EQ(stale.code(), "conflict");
    EXPECT_EQ(num(stale.json, "error.latest_version"), 2) << stale.describe();
    EXPECT_EQ(num(getOp(id).json, "operation.latest_version"), 2);

    // name and workspace cannot change.
    const Answer renamed = admin().put("/admin/api/operations/" + id,
                                       putBody(syntheticOp("crud_renamed", kWindow), 2));
    EXPECT_EQ(renamed.status, 422) << renamed.describe();
    EXPECT_EQ(renamed.code(), "invalid");
    EXPECT_TRUE(renamed.field("name").has_value()) << renamed.describe();
    const Answer moved =
        admin().put("/admin/api/operations/" + id,
                    putBody(syntheticOp("crud_op", kWindow, R"(, "workspace": "team")"), 2));
    EXPECT_EQ(moved.status, 422) << moved.describe();
    EXPECT_EQ(num(getOp(id).json, "operation.latest_version"), 2);
    EXPECT_EQ(str(getOp(id).json, "operation.name"), "crud_op");

    // An edit must say what it started from.
    const Answer noBase = admin().put("/admin/api/operations/" + id,
                                      R"({"config": )" + syntheticOp("crud_op", kWindow) + "}");
    EXPECT_TRUE(noBase.status == 400 || noBase.status == 422) << noBase.describe();
    EXPECT_EQ(num(getOp(id).json, "operation.latest_version"), 2);
    // Unknown operations.
    EXPECT_EQ(
        admin().put("/admin/api/operations/op_nope", putBody(syntheticOp("x", kWindow), 1)).status,
        404);
    EXPECT_EQ(admin().del("/admin/api/operations/op_nope").status, 404);
    EXPECT_EQ(publish("op_nope", 1).status, 404);
    EXPECT_FALSE(teamId.empty());
}

TEST_F(AdminApi, DeleteWithdrawsTheToolsAndKeepsTheHistory) {
    const std::string id = create(syntheticOp("doomed", kWindow));
    ASSERT_FALSE(id.empty());
    ASSERT_EQ(publish(id, 1).status, 200);
    EXPECT_EQ(toolNames(port_).count("doomed"), 1U);
    McpClient watcher(port_);
    ASSERT_TRUE(watcher.open());
    SseReader stream(port_, "GET",
                     {{"Accept", "text/event-stream"}, {"Mcp-Session-Id", watcher.session()}});
    ASSERT_TRUE(stream.next());  // priming

    const Answer deleted = admin().del("/admin/api/operations/" + id);
    ASSERT_EQ(deleted.status, 200) << deleted.describe();
    EXPECT_EQ(str(deleted.json, "operation.status"), "deleted");
    EXPECT_FALSE(isNull(deleted.json, "operation.deleted_at")) << deleted.describe();
    EXPECT_GT(num(deleted.json, "operation.deleted_at"), 0) << deleted.describe();
    // Withdrawn at once, and announced.
    const auto e = stream.next();
    ASSERT_TRUE(e) << "no notification on the GET stream";
    EXPECT_EQ(e->data, R"({"jsonrpc":"2.0","method":"notifications/tools/list_changed"})");
    EXPECT_EQ(toolNames(watcher).count("doomed"), 0U);
    EXPECT_EQ(toolNames(port_).count("doomed"), 0U);
    // A deleted operation cannot be published again, nor edited into serving.
    const Answer republish = publish(id, 1);
    EXPECT_TRUE(republish.status == 404 || republish.status == 409) << republish.describe();
    const Answer edit =
        admin().put("/admin/api/operations/" + id, putBody(syntheticOp("doomed", kWindow), 1));
    EXPECT_TRUE(edit.status == 404 || edit.status == 409) << edit.describe();
    EXPECT_EQ(toolNames(port_).count("doomed"), 0U);
    const Answer twice = admin().del("/admin/api/operations/" + id);
    EXPECT_TRUE(twice.status == 404 || twice.status == 409) << twice.describe();
    McpClient client(port_);
    ASSERT_TRUE(client.open());
    const crank::testing::Reply call =
        client.post(R"({"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"doomed",)"
                    R"("arguments":{"items":1}}})");
    const rapidjson::Document callDoc = crank::testing::parseJsonOrFail(call.body);
    EXPECT_TRUE(at(callDoc, "error") != nullptr || flag(callDoc, "result.isError") == true)
        << call.body;
    // Out of the list, unless deleted ones are asked for; the versions stay.
    EXPECT_FALSE(listed(admin().get("/admin/api/operations"), "doomed"));
    const Answer withDeleted = admin().get("/admin/api/operations?include_deleted=true");
    ASSERT_EQ(withDeleted.status, 200) << withDeleted.describe();
    EXPECT_TRUE(listed(withDeleted, "doomed")) << withDeleted.describe();
    const Answer versions = admin().get("/admin/api/operations/" + id + "/versions");
    EXPECT_EQ(versions.status, 200) << versions.describe();
    EXPECT_EQ(versionNumbers(versions), std::vector<std::int64_t>{1}) << versions.describe();
    // The name is free again.
    const Answer again =
        admin().post("/admin/api/operations", createBody(syntheticOp("doomed", kWindow)));
    EXPECT_EQ(again.status, 201) << again.describe();
    EXPECT_NE(str(again.json, "operation.id"), id);
}

// Deleting a session operation stops its live sessions on this node: their _poll and _stop are
// gone with it, so nothing else could close them before their idle timeout.
TEST_F(AdminApi, DeletingASessionOperationStopsItsSessions) {
    const std::string id = create(syntheticOp("doomed_feed", kSession));
    ASSERT_FALSE(id.empty());
    ASSERT_EQ(publish(id, 1).status, 200);
    McpClient agent(port_);
    ASSERT_TRUE(agent.open());
    const rapidjson::Document started =
        agent.callTool("doomed_feed_start", R"({"items": -1, "rate": 20})");
    const std::string session = str(started, "structuredContent.session_id");
    ASSERT_NE(session, kAbsent) << jsonOf(started);
    ASSERT_EQ(str(admin().get("/admin/api/sessions/" + session).json, "session.status"), "active");

    ASSERT_EQ(admin().del("/admin/api/operations/" + id).status, 200);
    const Answer after = admin().get("/admin/api/sessions/" + session);
    ASSERT_EQ(after.status, 200) << after.describe();
    const std::string status = str(after.json, "session.status");
    EXPECT_TRUE(status == "closed" || status == "stopped") << after.describe();
    EXPECT_FALSE(isNull(after.json, "session.closed_at")) << after.describe();
}

TEST_F(AdminApi, NamesAreUniquePerWorkspaceAcrossConfigAndAdmin) {
    // A config operation's name.
    const Answer cfg =
        admin().post("/admin/api/operations", createBody(syntheticOp("cfg_window", kWindow)));
    EXPECT_EQ(cfg.status, 409) << cfg.describe();
    EXPECT_EQ(cfg.code(), "conflict");
    EXPECT_TRUE(cfg.field("name").has_value()) << cfg.describe();
    EXPECT_TRUE(contains(cfg.field("name").value_or(""), "cfg_window")) << cfg.describe();
    // A tool a config operation publishes.
    const Answer tool = admin().post("/admin/api/operations",
                                     createBody(syntheticOp("cfg_session_start", kWindow)));
    EXPECT_EQ(tool.status, 409) << tool.describe();
    EXPECT_TRUE(tool.field("name").has_value()) << tool.describe();
    // Another admin operation's name.
    const std::string first = create(syntheticOp("unique_op", kWindow));
    ASSERT_FALSE(first.empty());
    const Answer twice =
        admin().post("/admin/api/operations", createBody(syntheticOp("unique_op", kUnary)));
    EXPECT_EQ(twice.status, 409) << twice.describe();
    EXPECT_EQ(twice.code(), "conflict");
    EXPECT_TRUE(twice.field("name").has_value()) << twice.describe();
    // The same name in another workspace is another operation, published on that workspace's
    // endpoint only.
    const std::string other = create(syntheticOp("unique_op", kWindow, R"(, "workspace": "team")"));
    ASSERT_FALSE(other.empty());
    EXPECT_NE(other, first);
    const Answer published = publish(other, 1);
    EXPECT_EQ(published.status, 200) << published.describe();
    EXPECT_EQ(toolNames(port_, "/w/team/mcp").count("unique_op"), 1U);
    EXPECT_EQ(toolNames(port_, "/w/default/mcp").count("unique_op"), 0U);

    // validate: the operation's own name is no conflict when its id is given.
    const std::string body = syntheticOp("unique_op", kWindow);
    const Answer own = admin().post("/admin/api/operations/validate",
                                    R"({"config": )" + body + R"(, "id": )" + quote(first) + "}");
    EXPECT_EQ(own.status, 200) << own.describe();
    EXPECT_EQ(flag(own.json, "valid"), true) << own.describe();
    const Answer taken =
        admin().post("/admin/api/operations/validate", R"({"config": )" + body + "}");
    EXPECT_NE(taken.status, 200) << taken.describe();
    EXPECT_TRUE(taken.field("name").has_value()) << taken.describe();
}

// --- bad input ----------------------------------------------------------------------------------

TEST_F(AdminApi, BadBodiesAreRefusedWithClearMessages) {
    const AdminClient a = admin();
    const auto expect400 = [&](const std::string& what, const std::string& body) {
        const Answer r = a.post("/admin/api/operations", body);
        EXPECT_EQ(r.status, 400) << what << ": " << r.describe();
        EXPECT_EQ(r.code(), "bad_request") << what << ": " << r.describe();
        EXPECT_NE(r.message(), kAbsent) << what;
        EXPECT_GT(r.message().size(), 5U) << what << ": " << r.describe();
        EXPECT_TRUE(contains(r.header("content-type"), "application/json")) << what;
        return r.message();
    };
    const std::string notJson = expect400("not JSON", "this is not JSON");
    EXPECT_TRUE(contains(notJson, "JSON")) << notJson;
    expect400("truncated", R"({"config": {"name": "trunc", "protocol": "synth)");
    expect400("trailing garbage", R"({"config": {}} }})");
    expect400("comment", R"({/* strict */ "config": {}})");
    expect400("trailing comma", R"({"config": {"name": "x",}})");
    expect400("empty", "");
    const std::string deep =
        expect400("70 levels", R"({"config": {"name": "deep", "x": )" + nested(70) + "}}");
    EXPECT_TRUE(deep.find("64") != std::string::npos || deep.find("deep") != std::string::npos ||
                deep.find("nest") != std::string::npos)
        << deep;
    // A key given twice: in the operation, a field error; in the body itself, a body that says
    // two things.
    const Answer twiceInOp =
        a.post("/admin/api/operations",
               createBody(syntheticOp("dup_key", R"("mode": "window", "transport_behavior":
            "server_stream", "max_items": 3, "max_items": 4)")));
    EXPECT_EQ(twiceInOp.status, 422) << twiceInOp.describe();
    EXPECT_TRUE(twiceInOp.field("execution.max_items").has_value()) << twiceInOp.describe();
    const std::string op = syntheticOp("dup_body", kWindow);
    const Answer twiceInBody =
        a.post("/admin/api/operations", R"({"config": )" + op + R"(, "config": )" + op + "}");
    EXPECT_EQ(twiceInBody.status, 400) << twiceInBody.describe();
    EXPECT_FALSE(listed(a.get("/admin/api/operations"), "dup_body"));
    // 62 levels are within the bound: the body parses, and the stray member is a field error.
    const Answer within =
        a.post("/admin/api/operations",
               R"({"config": )" + syntheticOp("deep_ok", kWindow, R"(, "x": )" + nested(60)) + "}");
    EXPECT_EQ(within.status, 422) << within.describe();
    EXPECT_TRUE(within.field("x").has_value()) << within.describe();
    // The same on the other endpoints that take a body.
    const std::string target = create(syntheticOp("bad_body_target", kWindow));
    ASSERT_FALSE(target.empty());
    const Answer badPut = a.put("/admin/api/operations/" + target, "{not json");
    EXPECT_EQ(badPut.status, 400) << badPut.describe();
    EXPECT_EQ(badPut.code(), "bad_request");
    EXPECT_EQ(a.post("/admin/api/operations/" + target + "/publish", "{\"version\": ").status, 400);
    EXPECT_EQ(num(getOp(target).json, "operation.latest_version"), 1);
    EXPECT_EQ(a.post("/admin/api/test-runs", "{not json").status, 400);
    EXPECT_EQ(a.post("/admin/api/operations/validate", "[1, 2").status, 400);

    // Too large: over server.max_request_body_bytes (1 MiB).
    const std::string big = R"({"config": {"name": "big", "description": ")" +
                            std::string(std::size_t{2} << 20, 'x') + R"("}})";
    const Answer tooLarge = a.post("/admin/api/operations", big);
    EXPECT_EQ(tooLarge.status, 413) << tooLarge.describe();
    EXPECT_EQ(tooLarge.code(), "too_large") << tooLarge.describe();
    EXPECT_FALSE(listed(a.get("/admin/api/operations"), "big"));

    // Well-formed JSON of the wrong shape.
    for (const std::string& body :
         {std::string("[1, 2, 3]"), std::string(R"("a string")"), std::string("{}"),
          std::string(R"({"config": "not an object"})"), std::string(R"({"config": [1]})")}) {
        const Answer r = a.post("/admin/api/operations", body);
        EXPECT_TRUE(r.status == 400 || r.status == 422) << body << ": " << r.describe();
        EXPECT_NE(r.message(), kAbsent) << body << ": " << r.describe();
    }
    // Malformed query parameters.
    EXPECT_EQ(a.get("/admin/api/operations?source=elsewhere").status, 400);
    EXPECT_EQ(a.get("/admin/api/operations?include_deleted=perhaps").status, 400);
    EXPECT_EQ(a.get("/admin/api/operations").status, 200);
}

TEST_F(AdminApi, ValidationErrorsNameTheirFields) {
    const AdminClient a = admin();
    struct Case {
        std::string what;
        std::string op;
        std::string path;
        std::string inMessage;  // a word the message has
    };
    const std::string rest = R"(, "protocol": "rest", "config": {"url": "ftp://127.0.0.1/x"},
        "execution": {"mode": "unary"}})";
    const std::vector<Case> cases{
        {"max_items 0",
         syntheticOp("v_max_items", R"("mode": "window", "transport_behavior": "server_stream",
             "max_items": 0)"),
         "execution.max_items", "positive"},
        {"max_items of another type",
         syntheticOp("v_max_items2", R"("mode": "window", "max_items": "many")"),
         "execution.max_items", ""},
        {"unknown execution key",
         syntheticOp("v_unknown_key", R"("mode": "window", "transport_behavior": "server_stream",
             "max_itemz": 10)"),
         "execution.max_itemz", "max_items"},
        {"unknown mode", syntheticOp("v_mode", R"("mode": "sometimes")"), "execution.mode",
         "sometimes"},
        {"unknown protocol",
         R"({"name": "v_protocol", "description": "x", "protocol": "nope", "config": {},
             "execution": {"mode": "unary"}})",
         "protocol", "nope"},
        {"a config member the plugin refuses",
         R"({"name": "v_rest_url", "description": "x")" + rest, "config.url", "http"},
        {"a config member the plugin does not know",
         R"({"name": "v_synthetic", "description": "x", "protocol": "synthetic",
             "config": {"itemz": 3}, "execution": {"mode": "unary"}})",
         "config.itemz", ""},
        {"unknown auth profile", syntheticOp("v_auth", kUnary, R"(, "auth_profile": "ghost")"),
         "auth_profile", "ghost"},
        {"unknown workspace", syntheticOp("v_ws", kUnary, R"(, "workspace": "nowhere")"),
         "workspace", "nowhere"},
        {"name of another type",
         R"({"name": 5, "description": "x", "protocol": "synthetic", "config": {},
             "execution": {"mode": "unary"}})",
         "name", ""},
        {"name with a space", syntheticOp("bad name!", kUnary), "name", ""},
        {"name of 129 characters", syntheticOp(std::string(129, 'n'), kUnary), "name", ""},
        {"no description",
         R"({"name": "v_nodesc", "protocol": "synthetic", "config": {},
             "execution": {"mode": "unary"}})",
         "description", ""},
    };
    for (const Case& c : cases) {
        const Answer r = a.post("/admin/api/operations", createBody(c.op));
        EXPECT_EQ(r.status, 422) << c.what << ": " << r.describe();
        EXPECT_EQ(r.code(), "invalid") << c.what;
        const auto message = r.field(c.path);
        EXPECT_TRUE(message.has_value())
            << c.what << ": no field " << c.path << " in " << r.describe();
        if (message) {
            EXPECT_FALSE(message->empty()) << c.what;
            EXPECT_TRUE(contains(*message, c.inMessage)) << c.what;
        }
        // validate says the same.
        const Answer v = a.post("/admin/api/operations/validate", R"({"config": )" + c.op + "}");
        EXPECT_EQ(v.status, 422) << c.what << ": " << v.describe();
        EXPECT_TRUE(v.field(c.path).has_value()) << c.what << ": " << v.describe();
    }

    // A bad input_schema: the path goes into it.
    const auto schemaCase = [&](const std::string& schema, const std::string& prefix) {
        const std::string op = R"({"name": "v_schema", "description": "x",
            "protocol": "synthetic", "config": {}, "execution": {"mode": "unary"},
            "input_schema": )" +
                               schema + "}";
        const Answer r = a.post("/admin/api/operations", createBody(op));
        EXPECT_EQ(r.status, 422) << schema << ": " << r.describe();
        bool found = false;
        for (const std::string& path : r.fieldPaths()) {
            found = found || path.rfind(prefix, 0) == 0;
        }
        EXPECT_TRUE(found) << schema << ": no field under " << prefix << " in " << r.describe();
    };
    schemaCase(R"({"type": "object", "properties": {"id": {"type": "strin"}}})",
               "input_schema.properties.id");
    schemaCase(R"({"type": "array"})", "input_schema");
    schemaCase(R"("not a schema")", "input_schema");

    // Several problems at once: each has its field.
    const Answer many =
        a.post("/admin/api/operations",
               createBody(syntheticOp("v_many", R"("mode": "window", "transport_behavior":
            "server_stream", "max_items": 0, "window_duration_ms": -5, "max_itemz": 1)",
                                      R"(, "title": 7)")));
    EXPECT_EQ(many.status, 422) << many.describe();
    for (const char* path :
         {"execution.max_items", "execution.window_duration_ms", "execution.max_itemz", "title"}) {
        EXPECT_TRUE(many.field(path).has_value()) << path << " in " << many.describe();
    }
    // None of them was saved.
    const Answer list = a.get("/admin/api/operations");
    for (const char* name : {"v_max_items", "v_unknown_key", "v_protocol", "v_rest_url", "v_auth",
                             "v_schema", "v_many", "v_nodesc"}) {
        EXPECT_FALSE(listed(list, name)) << name;
    }
}

TEST_F(AdminApi, ValidateDescribesTheToolsWithoutSaving) {
    const Answer window = admin().post("/admin/api/operations/validate",
                                       R"({"config": )" + syntheticOp("val_window", kWindow) + "}");
    ASSERT_EQ(window.status, 200) << window.describe();
    EXPECT_EQ(flag(window.json, "valid"), true);
    ASSERT_EQ(count(window.json, "tools"), 1) << window.describe();
    EXPECT_EQ(str(window.json, "tools.0.name"), "val_window");
    EXPECT_EQ(str(window.json, "tools.0.description"), "a synthetic operation");
    EXPECT_EQ(str(window.json, "tools.0.input_schema.type"), "object") << window.describe();
    EXPECT_TRUE(isObject(window.json, "tools.0.input_schema.properties.items"));
    EXPECT_TRUE(isObject(window.json, "tools.0.output_schema")) << window.describe();
    EXPECT_TRUE(isObject(window.json, "tools.0.output_schema.properties.stop_reason"))
        << window.describe();

    const Answer session =
        admin().post("/admin/api/operations/validate",
                     R"({"config": )" + syntheticOp("val_session", kSession) + "}");
    ASSERT_EQ(session.status, 200) << session.describe();
    std::set<std::string> names;
    for (const rapidjson::Value* tool : elements(session.json, "tools")) {
        names.insert(str(*tool, "name"));
    }
    EXPECT_EQ(names,
              (std::set<std::string>{"val_session_start", "val_session_poll", "val_session_stop"}));
    EXPECT_FALSE(listed(admin().get("/admin/api/operations"), "val_window"));
    EXPECT_EQ(toolNames(port_).count("val_window"), 0U);
}

// --- concurrency --------------------------------------------------------------------------------

TEST_F(AdminApi, ConcurrentEditsOfOneOperationHaveExactlyOneWinner) {
    const std::string id = create(syntheticOp("contended", kWindow));
    ASSERT_FALSE(id.empty());
    std::int64_t base = 1;
    for (int round = 0; round < 2; ++round) {
        constexpr int kThreads = 8;
        std::atomic<bool> go{false};
        std::vector<int> statuses(kThreads, 0);
        std::vector<std::string> bodies(kThreads);
        std::vector<std::int64_t> numbers(kThreads, 0);
        std::vector<std::thread> threads;
        threads.reserve(kThreads);
        for (int t = 0; t < kThreads; ++t) {
            threads.emplace_back([&, t] {
                const AdminClient a = admin();
                const std::string body =
                    putBody(syntheticOp("contended", R"("mode": "window", "transport_behavior":
                        "server_stream", "max_items": )" +
                                                         std::to_string(10 + t)),
                            base, "thread " + std::to_string(t));
                while (!go.load()) {
                    std::this_thread::yield();
                }
                const Answer r = a.put("/admin/api/operations/" + id, body);
                statuses[static_cast<std::size_t>(t)] = r.status;
                bodies[static_cast<std::size_t>(t)] = r.body;
                numbers[static_cast<std::size_t>(t)] = r.status == 201
                                                           ? num(r.json, "version.version")
                                                           : num(r.json, "error.latest_version");
            });
        }
        go = true;
        for (std::thread& t : threads) {
            t.join();
        }
        int won = 0;
        std::int64_t winner = 0;
        for (int t = 0; t < kThreads; ++t) {
            if (statuses[static_cast<std::size_t>(t)] == 201) {
                ++won;
                winner = numbers[static_cast<std::size_t>(t)];
            }
        }
        EXPECT_EQ(won, 1) << "round " << round;
        EXPECT_EQ(winner, base + 1);
        for (int t = 0; t < kThreads; ++t) {
            const auto i = static_cast<std::size_t>(t);
            if (statuses[i] != 201) {
                EXPECT_EQ(statuses[i], 409) << bodies[i];
                EXPECT_TRUE(contains(bodies[i], R"("conflict")"));
                EXPECT_EQ(numbers[i], base + 1) << bodies[i];
            }
        }
        base = base + 1;
    }
    // Numbered without gaps, newest first.
    const Answer versions = admin().get("/admin/api/operations/" + id + "/versions");
    EXPECT_EQ(versionNumbers(versions), (std::vector<std::int64_t>{3, 2, 1}))
        << versions.describe();
    EXPECT_EQ(num(getOp(id).json, "operation.latest_version"), 3);
}

TEST_F(AdminApi, ConcurrentPublishesWithTheSameExpectationHaveExactlyOneWinner) {
    const std::string id = create(syntheticOp("race_pub", kWindow));
    ASSERT_FALSE(id.empty());
    for (std::int64_t v = 1; v < 4; ++v) {
        update(id,
               syntheticOp("race_pub", R"("mode": "window", "transport_behavior": "server_stream",
                   "max_items": )" + std::to_string(v + 1)),
               v);
    }
    const Answer first = publish(id, 1);
    ASSERT_EQ(first.status, 200) << first.describe();
    constexpr int kThreads = 6;
    std::atomic<bool> go{false};
    std::vector<int> statuses(kThreads, 0);
    std::vector<std::string> bodies(kThreads);
    std::vector<std::int64_t> published(kThreads, 0);
    std::vector<std::int64_t> asked(kThreads, 0);
    std::vector<std::thread> threads;
    threads.reserve(kThreads);
    for (int t = 0; t < kThreads; ++t) {
        const std::int64_t version = 2 + t % 3;
        asked[static_cast<std::size_t>(t)] = version;
        threads.emplace_back([&, t, version] {
            while (!go.load()) {
                std::this_thread::yield();
            }
            const Answer r = publish(id, version, 1);
            const auto i = static_cast<std::size_t>(t);
            statuses[i] = r.status;
            bodies[i] = r.body;
            published[i] = r.status == 200 ? num(r.json, "operation.published_version")
                                           : num(r.json, "error.published_version");
        });
    }
    go = true;
    for (std::thread& t : threads) {
        t.join();
    }
    int won = 0;
    std::int64_t winner = 0;
    for (int t = 0; t < kThreads; ++t) {
        const auto i = static_cast<std::size_t>(t);
        if (statuses[i] == 200) {
            ++won;
            winner = published[i];
            EXPECT_EQ(winner, asked[i]) << bodies[i];
        }
    }
    ASSERT_EQ(won, 1);
    for (int t = 0; t < kThreads; ++t) {
        const auto i = static_cast<std::size_t>(t);
        if (statuses[i] != 200) {
            EXPECT_EQ(statuses[i], 409) << bodies[i];
            EXPECT_TRUE(contains(bodies[i], R"("conflict")"));
            EXPECT_EQ(published[i], winner) << bodies[i];
        }
    }
    const Answer after = getOp(id);
    EXPECT_EQ(num(after.json, "operation.published_version"), winner) << after.describe();
    EXPECT_EQ(num(after.json, "published.version"), winner) << after.describe();
    // Version N has max_items N.
    EXPECT_EQ(num(callOk(port_, "race_pub", R"({"items": -1})"), "item_count"), winner);
}

TEST_F(AdminApi, ConcurrentCreatesOfOneNameHaveExactlyOneWinner) {
    constexpr int kThreads = 8;
    std::atomic<bool> go{false};
    std::vector<int> statuses(kThreads, 0);
    std::vector<std::string> bodies(kThreads);
    std::vector<std::thread> threads;
    threads.reserve(kThreads);
    for (int t = 0; t < kThreads; ++t) {
        threads.emplace_back([&, t] {
            const std::string body = createBody(syntheticOp("same_name", kWindow));
            while (!go.load()) {
                std::this_thread::yield();
            }
            const Answer r = admin().post("/admin/api/operations", body);
            statuses[static_cast<std::size_t>(t)] = r.status;
            bodies[static_cast<std::size_t>(t)] = r.body;
        });
    }
    go = true;
    for (std::thread& t : threads) {
        t.join();
    }
    EXPECT_EQ(std::count(statuses.begin(), statuses.end(), 201), 1);
    EXPECT_EQ(std::count(statuses.begin(), statuses.end(), 409), kThreads - 1);
    for (int t = 0; t < kThreads; ++t) {
        const auto i = static_cast<std::size_t>(t);
        if (statuses[i] != 201) {
            EXPECT_TRUE(contains(bodies[i], R"("path":"name")")) << bodies[i];
        }
    }
    const Answer list = admin().get("/admin/api/operations?source=admin");
    const auto names = opNames(list);
    EXPECT_EQ(std::count(names.begin(), names.end(), "same_name"), 1) << list.describe();
}

TEST_F(AdminApi, ConcurrentPublishesOfClashingToolsHaveExactlyOneWinner) {
    // Two drafts whose tools would clash: "race_tools" publishes race_tools_start, ...
    const std::string session = create(syntheticOp("race_tools", kSession));
    const std::string unary = create(syntheticOp("race_tools_start", kUnary));
    ASSERT_FALSE(session.empty());
    ASSERT_FALSE(unary.empty());
    for (int round = 0; round < 3; ++round) {
        std::atomic<bool> go{false};
        int statuses[2] = {0, 0};
        std::thread a([&] {
            while (!go.load()) {
                std::this_thread::yield();
            }
            statuses[0] = publish(session, 1).status;
        });
        std::thread b([&] {
            while (!go.load()) {
                std::this_thread::yield();
            }
            statuses[1] = publish(unary, 1).status;
        });
        go = true;
        a.join();
        b.join();
        if (round == 0) {
            // Exactly one is served; the other was refused.
            EXPECT_TRUE((statuses[0] == 200) != (statuses[1] == 200))
                << statuses[0] << " " << statuses[1];
            EXPECT_TRUE(statuses[0] == 422 || statuses[1] == 422)
                << statuses[0] << " " << statuses[1];
        }
        const auto tools = toolNames(port_);
        const bool sessionServed = tools.count("race_tools_poll") == 1;
        EXPECT_EQ(tools.count("race_tools_start"), 1U);
        // Whoever won keeps its tools: the winner's poll tool is there exactly when it won.
        EXPECT_EQ(sessionServed, str(getOp(session).json, "operation.status") == "published");
        EXPECT_NE(str(getOp(session).json, "operation.status") == "published",
                  str(getOp(unary).json, "operation.status") == "published");
    }
}

// --- versions, diff, publish, rollback ----------------------------------------------------------

TEST_F(AdminApi, VersionsAreKeptNewestFirstAndDiffed) {
    const std::string v1 = syntheticOp("versioned",
                                       R"("mode": "window", "transport_behavior": "server_stream",
            "max_items": 5, "redacted_paths": ["secret"])",
                                       R"(, "title": "First")");
    const std::string v2 =
        R"({"name": "versioned", "description": "changed", "protocol": "synthetic",
            "input_schema": )" +
        std::string(kInputSchema) + R"(, "config": )" + kSyntheticConfig +
        R"(, "execution": {"mode": "window", "transport_behavior": "server_stream",
            "max_items": 7, "redacted_paths": ["secret", "token"], "drop_duplicates": true}})";
    const std::string id = create(v1, "one");
    ASSERT_FALSE(id.empty());
    ASSERT_EQ(update(id, v2, 1, "raise max_items"), 2);
    ASSERT_EQ(update(id, v1, 2, "back"), 3);

    const Answer all = admin().get("/admin/api/operations/" + id + "/versions");
    ASSERT_EQ(all.status, 200) << all.describe();
    EXPECT_EQ(versionNumbers(all), (std::vector<std::int64_t>{3, 2, 1}));
    for (const rapidjson::Value* v : elements(all.json, "versions")) {
        EXPECT_EQ(str(*v, "state"), "draft");
        EXPECT_GT(num(*v, "created_at"), 0);
        EXPECT_EQ(str(*v, "created_by"), "admin") << jsonOf(*v);
    }
    EXPECT_EQ(str(all.json, "versions.1.comment"), "raise max_items");
    const Answer two = admin().get("/admin/api/operations/" + id + "/versions?limit=2");
    EXPECT_EQ(versionNumbers(two), (std::vector<std::int64_t>{3, 2})) << two.describe();
    for (const char* bad : {"0", "1001", "x", "-1"}) {
        EXPECT_EQ(admin().get("/admin/api/operations/" + id + "/versions?limit=" + bad).status, 400)
            << bad;
    }

    const Answer one = admin().get("/admin/api/operations/" + id + "/versions/2");
    ASSERT_EQ(one.status, 200) << one.describe();
    EXPECT_EQ(num(one.json, "version.version"), 2);
    EXPECT_EQ(str(one.json, "version.comment"), "raise max_items");
    EXPECT_EQ(num(one.json, "version.config.execution.max_items"), 7);
    EXPECT_EQ(str(one.json, "version.config.description"), "changed");
    const Answer first = admin().get("/admin/api/operations/" + id + "/versions/1");
    EXPECT_EQ(str(first.json, "version.config.title"), "First") << first.describe();
    EXPECT_EQ(admin().get("/admin/api/operations/" + id + "/versions/99").status, 404);
    EXPECT_EQ(admin().get("/admin/api/operations/op_nope/versions/1").status, 404);
    const int word = admin().get("/admin/api/operations/" + id + "/versions/two").status;
    EXPECT_TRUE(word == 400 || word == 404) << word;

    const Answer diff = admin().get("/admin/api/operations/" + id + "/diff?from=1&to=2");
    ASSERT_EQ(diff.status, 200) << diff.describe();
    EXPECT_EQ(num(diff.json, "from"), 1);
    EXPECT_EQ(num(diff.json, "to"), 2);
    const rapidjson::Value* maxItems = changeAt(diff, "execution.max_items");
    ASSERT_NE(maxItems, nullptr) << diff.describe();
    EXPECT_EQ(str(*maxItems, "change"), "changed");
    EXPECT_EQ(num(*maxItems, "from"), 5);
    EXPECT_EQ(num(*maxItems, "to"), 7);
    const rapidjson::Value* description = changeAt(diff, "description");
    ASSERT_NE(description, nullptr) << diff.describe();
    EXPECT_EQ(str(*description, "change"), "changed");
    EXPECT_EQ(str(*description, "to"), "changed");
    const rapidjson::Value* title = changeAt(diff, "title");
    ASSERT_NE(title, nullptr) << diff.describe();
    EXPECT_EQ(str(*title, "change"), "removed");
    EXPECT_EQ(str(*title, "from"), "First");
    const rapidjson::Value* dedup = changeAt(diff, "execution.drop_duplicates");
    ASSERT_NE(dedup, nullptr) << diff.describe();
    EXPECT_EQ(str(*dedup, "change"), "added");
    EXPECT_EQ(flag(*dedup, "to"), true);
    // Arrays compare as whole values.
    const rapidjson::Value* redacted = changeAt(diff, "execution.redacted_paths");
    ASSERT_NE(redacted, nullptr) << diff.describe();
    EXPECT_EQ(str(*redacted, "change"), "changed");
    EXPECT_EQ(textAt(*redacted, "from"), R"(["secret"])");
    EXPECT_EQ(textAt(*redacted, "to"), R"(["secret","token"])");
    EXPECT_EQ(changeAt(diff, "execution.redacted_paths.1"), nullptr) << diff.describe();
    // Nothing else changed.
    EXPECT_EQ(changeAt(diff, "name"), nullptr);
    EXPECT_EQ(changeAt(diff, "config"), nullptr);
    EXPECT_EQ(changeAt(diff, "execution.mode"), nullptr);
    EXPECT_EQ(count(diff.json, "changes"), 5) << diff.describe();

    // The other way round, and a version against itself.
    const Answer back = admin().get("/admin/api/operations/" + id + "/diff?from=2&to=1");
    ASSERT_EQ(back.status, 200) << back.describe();
    const rapidjson::Value* titleBack = changeAt(back, "title");
    ASSERT_NE(titleBack, nullptr) << back.describe();
    EXPECT_EQ(str(*titleBack, "change"), "added");
    EXPECT_EQ(str(*titleBack, "to"), "First");
    const Answer same = admin().get("/admin/api/operations/" + id + "/diff?from=1&to=3");
    ASSERT_EQ(same.status, 200) << same.describe();
    EXPECT_EQ(count(same.json, "changes"), 0) << same.describe();
    // Bad diffs.
    EXPECT_EQ(admin().get("/admin/api/operations/" + id + "/diff?from=1&to=99").status, 404);
    EXPECT_EQ(admin().get("/admin/api/operations/" + id + "/diff?from=x&to=2").status, 400);
    EXPECT_EQ(admin().get("/admin/api/operations/" + id + "/diff?from=1").status, 400);
}

TEST_F(AdminApi, PublishServesTheToolsAndAnnouncesThem) {
    McpClient watcher(port_);
    ASSERT_TRUE(watcher.open());
    SseReader stream(port_, "GET",
                     {{"Accept", "text/event-stream"}, {"Mcp-Session-Id", watcher.session()}});
    ASSERT_TRUE(stream.next());  // priming

    const std::string id = create(syntheticOp("pub_window", kWindow));
    ASSERT_FALSE(id.empty());
    EXPECT_EQ(toolNames(watcher).count("pub_window"), 0U) << "a draft serves nothing";

    const Answer published = publish(id, 1, std::nullopt);
    ASSERT_EQ(published.status, 200) << published.describe();
    EXPECT_EQ(strings(published.json, "tools"), std::vector<std::string>{"pub_window"});
    EXPECT_EQ(str(published.json, "operation.status"), "published");
    EXPECT_EQ(num(published.json, "operation.published_version"), 1);
    const auto e = stream.next();
    ASSERT_TRUE(e) << "no notification on the GET stream";
    EXPECT_EQ(e->data, R"({"jsonrpc":"2.0","method":"notifications/tools/list_changed"})");
    EXPECT_EQ(toolNames(watcher).count("pub_window"), 1U);
    EXPECT_EQ(num(callOk(port_, "pub_window", R"({"items": -1})"), "item_count"), 5);

    const Answer one = getOp(id);
    EXPECT_EQ(num(one.json, "published.version"), 1) << one.describe();
    EXPECT_EQ(str(one.json, "published.state"), "published");
    EXPECT_EQ(strings(one.json, "operation.tools"), std::vector<std::string>{"pub_window"});

    // A new draft changes nothing until it is published.
    ASSERT_EQ(update(id, syntheticOp("pub_window", R"("mode": "window", "transport_behavior":
                         "server_stream", "max_items": 2)"),
                     1),
              2);
    EXPECT_EQ(num(callOk(port_, "pub_window", R"({"items": -1})"), "item_count"), 5);
    const Answer second = publish(id, 2, 1);
    ASSERT_EQ(second.status, 200) << second.describe();
    EXPECT_EQ(num(callOk(port_, "pub_window", R"({"items": -1})"), "item_count"), 2);
    const Answer states = admin().get("/admin/api/operations/" + id + "/versions");
    EXPECT_EQ(str(states.json, "versions.0.state"), "published") << states.describe();
    EXPECT_EQ(str(states.json, "versions.1.state"), "archived") << states.describe();

    // Unknown versions and bodies without one.
    EXPECT_EQ(publish(id, 99).status, 404);
    const Answer noVersion = admin().post("/admin/api/operations/" + id + "/publish", "{}");
    EXPECT_TRUE(noVersion.status == 400 || noVersion.status == 422) << noVersion.describe();
    EXPECT_EQ(num(getOp(id).json, "operation.published_version"), 2);
}

TEST_F(AdminApi, PublishingAVersionThatNoLongerCompilesIs422) {
    // A draft named like the _start tool of a session operation that does not exist yet.
    const std::string late = create(syntheticOp("late_start", kUnary));
    ASSERT_FALSE(late.empty());
    // A draft publishes nothing, so a session operation whose tools take that name is fine...
    const std::string session = create(syntheticOp("late", kSession));
    ASSERT_FALSE(session.empty());
    const Answer first = publish(session, 1);
    ASSERT_EQ(first.status, 200) << first.describe();
    const auto tools = strings(first.json, "tools");
    EXPECT_EQ(std::set<std::string>(tools.begin(), tools.end()),
              (std::set<std::string>{"late_start", "late_poll", "late_stop"}));
    // ...and the draft cannot be published any more: its tool would clash.
    const Answer clash = publish(late, 1);
    EXPECT_EQ(clash.status, 422) << clash.describe();
    EXPECT_EQ(clash.code(), "invalid");
    EXPECT_TRUE(clash.field("name").has_value()) << clash.describe();
    EXPECT_TRUE(contains(clash.body, "late_start"));
    const Answer after = getOp(late);
    EXPECT_TRUE(isNull(after.json, "operation.published_version")) << after.describe();
    EXPECT_EQ(str(after.json, "operation.status"), "draft");
    // The session operation still serves its tools.
    const auto served = toolNames(port_);
    EXPECT_EQ(served.count("late_start"), 1U);
    EXPECT_EQ(served.count("late_poll"), 1U);
}

TEST_F(AdminApi, ChangingTheModeChangesTheToolsOnPublish) {
    const std::string id = create(syntheticOp("shifting", kWindow));
    ASSERT_FALSE(id.empty());
    ASSERT_EQ(publish(id, 1).status, 200);
    ASSERT_EQ(update(id, syntheticOp("shifting", kSession), 1), 2);
    // mode and protocol are the latest version's; the published one still serves.
    const Answer draft = getOp(id);
    EXPECT_EQ(str(draft.json, "operation.mode"), "session") << draft.describe();
    EXPECT_EQ(str(draft.json, "published.config.execution.mode"), "window") << draft.describe();
    EXPECT_EQ(str(draft.json, "latest.config.execution.mode"), "session") << draft.describe();
    EXPECT_EQ(toolNames(port_).count("shifting"), 1U);
    EXPECT_EQ(toolNames(port_).count("shifting_start"), 0U);

    const Answer published = publish(id, 2, 1);
    ASSERT_EQ(published.status, 200) << published.describe();
    const auto tools = strings(published.json, "tools");
    EXPECT_EQ(std::set<std::string>(tools.begin(), tools.end()),
              (std::set<std::string>{"shifting_start", "shifting_poll", "shifting_stop"}));
    const auto served = toolNames(port_);
    EXPECT_EQ(served.count("shifting"), 0U);
    EXPECT_EQ(served.count("shifting_start"), 1U);
    EXPECT_EQ(served.count("shifting_stop"), 1U);
    const rapidjson::Document started = callOk(port_, "shifting_start", R"({"items": 2})");
    const std::string session = str(started, "session_id");
    ASSERT_NE(session, kAbsent) << jsonOf(started);
    callOk(port_, "shifting_stop", R"({"session_id": )" + quote(session) + "}");
    // And back.
    ASSERT_EQ(admin().post("/admin/api/operations/" + id + "/rollback", "{}").status, 200);
    EXPECT_EQ(toolNames(port_).count("shifting"), 1U);
    EXPECT_EQ(toolNames(port_).count("shifting_start"), 0U);
}

TEST_F(AdminApi, RollbackRepublishesAnArchivedVersion) {
    const auto op = [](int maxItems) {
        return syntheticOp("rolling", R"("mode": "window", "transport_behavior": "server_stream",
            "max_items": )" + std::to_string(maxItems));
    };
    const std::string id = create(op(1));
    ASSERT_FALSE(id.empty());
    ASSERT_EQ(update(id, op(2), 1), 2);
    ASSERT_EQ(update(id, op(3), 2), 3);
    ASSERT_EQ(update(id, op(4), 3), 4);
    for (std::int64_t v = 1; v <= 3; ++v) {
        ASSERT_EQ(publish(id, v).status, 200) << v;
    }
    const auto items = [&] {
        return num(callOk(port_, "rolling", R"({"items": -1})"), "item_count");
    };
    EXPECT_EQ(items(), 3);

    // Without a version: the one published before the current one.
    const Answer previous = admin().post("/admin/api/operations/" + id + "/rollback", "{}");
    ASSERT_EQ(previous.status, 200) << previous.describe();
    EXPECT_EQ(num(previous.json, "operation.published_version"), 2);
    EXPECT_EQ(items(), 2);
    // An archived version.
    const Answer toFirst =
        admin().post("/admin/api/operations/" + id + "/rollback", R"({"version": 1})");
    ASSERT_EQ(toFirst.status, 200) << toFirst.describe();
    EXPECT_EQ(num(toFirst.json, "operation.published_version"), 1);
    EXPECT_EQ(strings(toFirst.json, "tools"), std::vector<std::string>{"rolling"});
    EXPECT_EQ(items(), 1);
    // A version never published is no rollback target, nor one that does not exist.
    const Answer draft =
        admin().post("/admin/api/operations/" + id + "/rollback", R"({"version": 4})");
    EXPECT_TRUE(draft.status == 409 || draft.status == 422) << draft.describe();
    const Answer missing =
        admin().post("/admin/api/operations/" + id + "/rollback", R"({"version": 40})");
    EXPECT_EQ(missing.status, 404) << missing.describe();
    EXPECT_EQ(items(), 1);

    const Answer versions = admin().get("/admin/api/operations/" + id + "/versions");
    std::map<std::int64_t, std::string> states;
    for (const rapidjson::Value* v : elements(versions.json, "versions")) {
        states[num(*v, "version")] = str(*v, "state");
    }
    EXPECT_EQ(states, (std::map<std::int64_t, std::string>{
                          {1, "published"}, {2, "archived"}, {3, "archived"}, {4, "draft"}}))
        << versions.describe();

    const Answer audited =
        admin().get("/admin/api/audit?action=operation.rollback&operation=rolling&limit=100");
    EXPECT_EQ(count(audited.json, "events"), 2) << audited.describe();
    // An operation never published has nothing to roll back to.
    const std::string fresh = create(syntheticOp("never_published", kWindow));
    const Answer nothing = admin().post("/admin/api/operations/" + fresh + "/rollback", "{}");
    EXPECT_TRUE(nothing.status == 409 || nothing.status == 422 || nothing.status == 404)
        << nothing.describe();
}

TEST_F(AdminApi, APublishFromAStaleViewIsAConflict) {
    const std::string id = create(syntheticOp("stale_pub", kWindow));
    ASSERT_FALSE(id.empty());
    ASSERT_EQ(update(id, syntheticOp("stale_pub", kWindow, R"(, "title": "two")"), 1), 2);
    // expected_published null: the caller saw nothing published. True the first time only.
    const Answer first = admin().post("/admin/api/operations/" + id + "/publish",
                                      R"({"version": 1, "expected_published": null})");
    ASSERT_EQ(first.status, 200) << first.describe();
    const Answer second = admin().post("/admin/api/operations/" + id + "/publish",
                                       R"({"version": 2, "expected_published": null})");
    EXPECT_EQ(second.status, 409) << second.describe();
    EXPECT_EQ(num(second.json, "error.published_version"), 1) << second.describe();
    ASSERT_EQ(publish(id, 2, 1).status, 200);
    // Someone who still saw version 1 published.
    const Answer stale = publish(id, 1, 1);
    EXPECT_EQ(stale.status, 409) << stale.describe();
    EXPECT_EQ(stale.code(), "conflict");
    EXPECT_EQ(num(stale.json, "error.published_version"), 2) << stale.describe();
    EXPECT_EQ(num(getOp(id).json, "operation.published_version"), 2);
}

// --- test runs ----------------------------------------------------------------------------------

TEST_F(AdminApi, AWindowTestRunIsCutByMaxItems) {
    const Answer r = testRun(R"({"config": )" + syntheticOp("tr_window", kWindow) +
                             R"(, "arguments": {"items": -1}})");
    ASSERT_EQ(r.status, 200) << r.describe();
    EXPECT_EQ(str(r.json, "mode"), "window");
    EXPECT_EQ(str(r.json, "operation"), "tr_window");
    EXPECT_EQ(str(r.json, "outcome"), "ok");
    EXPECT_EQ(flag(r.json, "is_error"), false);
    EXPECT_EQ(flag(r.json, "contract.truncated"), true) << r.describe();
    EXPECT_EQ(str(r.json, "contract.stop_reason"), "max_items") << r.describe();
    EXPECT_EQ(flag(r.json, "contract.has_more"), true);
    EXPECT_EQ(flag(r.json, "contract.window_complete"), false);
    EXPECT_EQ(num(r.json, "result.item_count"), 5) << r.describe();
    EXPECT_EQ(count(r.json, "result.items"), 5) << r.describe();
    EXPECT_EQ(str(r.json, "result.stop_reason"), "max_items");
    bool truncated = false;
    for (const rapidjson::Value* w : elements(r.json, "warnings")) {
        if (str(*w, "code") == "truncated") {
            truncated = true;
            EXPECT_TRUE(contains(str(*w, "message"), "max_items")) << jsonOf(*w);
        }
    }
    EXPECT_TRUE(truncated) << r.describe();
    ASSERT_EQ(count(r.json, "steps"), 1) << r.describe();
    EXPECT_EQ(str(r.json, "steps.0.tool"), "tr_window");
    EXPECT_EQ(num(r.json, "steps.0.arguments.items"), -1);
    EXPECT_EQ(flag(r.json, "steps.0.is_error"), false);
    // The one step is the main one: its result is the answer's `result`, not repeated, and the
    // text rendering is left out when there is a structured result (docs/admin-api.md).
    EXPECT_EQ(flag(r.json, "steps.0.main"), true) << r.describe();
    EXPECT_TRUE(at(r.json, "steps.0.result") != nullptr && at(r.json, "steps.0.result")->IsNull())
        << r.describe();
    EXPECT_EQ(str(r.json, "text"), "") << r.describe();
    EXPECT_EQ(num(r.json, "result.item_count"), 5) << r.describe();
    EXPECT_GE(num(r.json, "elapsed_ms"), 0);
    // A test run publishes nothing.
    EXPECT_EQ(toolNames(port_).count("tr_window"), 0U);
}

TEST_F(AdminApi, ASilentUpstreamGivesATimeoutWarning) {
    const Answer r = testRun(R"({"config": )" +
                             syntheticOp("tr_silent", R"("mode": "window", "transport_behavior":
                    "server_stream", "max_items": 5, "upstream_timeout_ms": 400,
                    "window_duration_ms": 5000)") +
                             R"(, "arguments": {"items": -1, "hang": true}})");
    ASSERT_EQ(r.status, 200) << r.describe();
    EXPECT_EQ(str(r.json, "contract.stop_reason"), "upstream_timeout") << r.describe();
    bool timeout = false;
    for (const rapidjson::Value* w : elements(r.json, "warnings")) {
        timeout = timeout || str(*w, "code") == "timeout";
    }
    EXPECT_TRUE(timeout) << r.describe();
    EXPECT_LT(num(r.json, "elapsed_ms"), 4000) << r.describe();
}

TEST_F(AdminApi, AWindowLongerThanTheTestRunIsCutAtItsBound) {
    // test_run_timeout_ms is 8000; the window would collect for a minute.
    const auto before = std::chrono::steady_clock::now();
    const Answer r = testRun(
        R"({"config": )" + syntheticOp("tr_long_window", R"("mode": "window", "transport_behavior":
                    "server_stream", "max_items": 100000, "window_duration_ms": 60000)") +
        R"(, "arguments": {"items": -1, "rate": 5}})");
    ASSERT_EQ(r.status, 200) << r.describe();
    EXPECT_LT(std::chrono::steady_clock::now() - before, 15s);
    EXPECT_EQ(str(r.json, "outcome"), "timeout") << r.describe();
    bool timeout = false;
    for (const rapidjson::Value* w : elements(r.json, "warnings")) {
        timeout = timeout || str(*w, "code") == "timeout";
    }
    EXPECT_TRUE(timeout) << r.describe();
    // crankd answers at once afterwards: the run's place is free.
    EXPECT_EQ(testRun(R"({"config": )" + syntheticOp("tr_after_long", kWindow) +
                      R"(, "arguments": {"items": 1}})")
                  .status,
              200);
}

TEST_F(AdminApi, AUnaryTestRunCallsTheRestUpstream) {
    const Answer r = testRun(R"({"config": )" + restOp("tr_rest", fixturePort_, "/json?n=3") +
                             R"(, "arguments": {}})");
    ASSERT_EQ(r.status, 200) << r.describe();
    EXPECT_EQ(str(r.json, "mode"), "unary");
    EXPECT_EQ(str(r.json, "outcome"), "ok") << r.describe();
    EXPECT_EQ(flag(r.json, "is_error"), false);
    EXPECT_EQ(num(r.json, "result.n"), 3) << r.describe();
    EXPECT_EQ(count(r.json, "result.items"), 3) << r.describe();
    EXPECT_EQ(str(r.json, "result.items.2.name"), "item-2");
    EXPECT_EQ(count(r.json, "warnings"), 0) << r.describe();
    ASSERT_EQ(count(r.json, "steps"), 1) << r.describe();
    EXPECT_EQ(str(r.json, "steps.0.tool"), "tr_rest");
    EXPECT_GE(num(r.json, "steps.0.elapsed_ms"), 0);
    // The step is the main one (its result is `result` above).
    EXPECT_EQ(flag(r.json, "steps.0.main"), true) << r.describe();

    // The upstream failing: still 200, the run says how it went.
    const Answer failed =
        testRun(R"({"config": )" + restOp("tr_rest_500", fixturePort_, "/status/500") + "}");
    ASSERT_EQ(failed.status, 200) << failed.describe();
    EXPECT_EQ(str(failed.json, "outcome"), "error") << failed.describe();
    EXPECT_EQ(flag(failed.json, "is_error"), true);
    bool upstream = false;
    for (const rapidjson::Value* w : elements(failed.json, "warnings")) {
        upstream = upstream || str(*w, "code") == "upstream_error";
    }
    EXPECT_TRUE(upstream) << failed.describe();
    EXPECT_TRUE(contains(failed.body, "500")) << failed.describe();
}

TEST_F(AdminApi, ASessionTestRunStartsPollsAndStops) {
    const std::string id = create(syntheticOp("tr_session", kSession));
    ASSERT_FALSE(id.empty());
    const Answer r = testRun(R"({"operation_id": )" + quote(id) +
                             R"(, "arguments": {"items": -1, "rate": 50}, "polls": 3,
                                 "poll_interval_ms": 100})");
    ASSERT_EQ(r.status, 200) << r.describe();
    EXPECT_EQ(str(r.json, "mode"), "session");
    EXPECT_EQ(str(r.json, "outcome"), "ok") << r.describe();
    std::vector<std::string> tools;
    for (const rapidjson::Value* step : elements(r.json, "steps")) {
        tools.push_back(str(*step, "tool"));
        EXPECT_EQ(flag(*step, "is_error"), false) << jsonOf(*step);
    }
    EXPECT_EQ(tools,
              (std::vector<std::string>{"tr_session_start", "tr_session_poll", "tr_session_poll",
                                        "tr_session_poll", "tr_session_stop"}))
        << r.describe();
    const std::string session = str(r.json, "steps.0.result.session_id");
    ASSERT_NE(session, kAbsent) << r.describe();
    EXPECT_EQ(str(r.json, "steps.1.arguments.session_id"), session);
    // The result is the last poll: that step is the main one.
    EXPECT_TRUE(at(r.json, "result.items") != nullptr) << r.describe();
    EXPECT_EQ(flag(r.json, "steps.3.main"), true) << r.describe();
    EXPECT_EQ(flag(r.json, "steps.2.main"), false) << r.describe();
    // Each poll goes on from the cursor of the one before.
    EXPECT_EQ(str(r.json, "steps.2.arguments.cursor"), str(r.json, "steps.1.result.cursor"))
        << r.describe();
    EXPECT_EQ(str(r.json, "steps.4.result.status"), "stopped");
    // The session is over.
    const Answer s = admin().get("/admin/api/sessions/" + session);
    ASSERT_EQ(s.status, 200) << s.describe();
    const std::string status = str(s.json, "session.status");
    EXPECT_TRUE(status == "closed" || status == "stopped") << s.describe();
    EXPECT_EQ(str(s.json, "session.agent_id"), "admin") << s.describe();
    EXPECT_EQ(toolNames(port_).count("tr_session_start"), 0U);

    // polls is 1 to 20.
    for (const char* polls : {"0", "21"}) {
        const Answer bad = testRun(R"({"operation_id": )" + quote(id) + R"(, "polls": )" + polls +
                                   R"(, "arguments": {"items": 1}})");
        EXPECT_TRUE(bad.status == 400 || bad.status == 422) << polls << ": " << bad.describe();
    }
}

TEST_F(AdminApi, AnAsyncJobTestRunWaitsForTheResult) {
    const Answer r = testRun(R"({"config": )" + syntheticOp("tr_job", kJob) +
                             R"(, "arguments": {"items": 3, "delay_ms": 200},
                                 "poll_interval_ms": 100})");
    ASSERT_EQ(r.status, 200) << r.describe();
    EXPECT_EQ(str(r.json, "mode"), "async_job");
    EXPECT_EQ(str(r.json, "outcome"), "ok") << r.describe();
    // The result is _result's structuredContent: {ready, result: the operation's result}.
    EXPECT_EQ(flag(r.json, "result.ready"), true) << r.describe();
    EXPECT_EQ(count(r.json, "result.result.items"), 3) << r.describe();
    EXPECT_EQ(str(r.json, "contract.status"), "succeeded") << r.describe();
    std::vector<std::string> tools;
    for (const rapidjson::Value* step : elements(r.json, "steps")) {
        tools.push_back(str(*step, "tool"));
    }
    ASSERT_GE(tools.size(), 3U) << r.describe();
    EXPECT_EQ(tools.front(), "tr_job_start");
    EXPECT_EQ(tools.back(), "tr_job_result");
    EXPECT_NE(std::find(tools.begin(), tools.end(), "tr_job_status"), tools.end());
    const std::string job = str(r.json, "steps.0.result.job_id");
    ASSERT_NE(job, kAbsent) << r.describe();
    const Answer j = admin().get("/admin/api/jobs/" + job);
    ASSERT_EQ(j.status, 200) << j.describe();
    EXPECT_EQ(str(j.json, "job.status"), "succeeded");
}

TEST_F(AdminApi, AJobStillRunningAtTheEndOfATestRunIsCancelled) {
    // test_run_timeout_ms is 8000; the job would take a minute.
    const auto before = std::chrono::steady_clock::now();
    const Answer r = testRun(R"({"config": )" + syntheticOp("tr_slow_job", kJob) +
                             R"(, "arguments": {"items": 1, "delay_ms": 60000},
                                 "poll_interval_ms": 200})");
    ASSERT_EQ(r.status, 200) << r.describe();
    EXPECT_LT(std::chrono::steady_clock::now() - before, 20s);
    EXPECT_EQ(str(r.json, "outcome"), "timeout") << r.describe();
    std::set<std::string> codes;
    for (const rapidjson::Value* w : elements(r.json, "warnings")) {
        codes.insert(str(*w, "code"));
    }
    EXPECT_EQ(codes.count("cancelled"), 1U) << r.describe();
    EXPECT_EQ(codes.count("timeout"), 1U) << r.describe();
    const std::string job = str(r.json, "steps.0.result.job_id");
    ASSERT_NE(job, kAbsent) << r.describe();
    const Answer j = admin().get("/admin/api/jobs/" + job);
    EXPECT_EQ(str(j.json, "job.status"), "cancelled") << j.describe();
}

TEST_F(AdminApi, ATestRunOfADraftPublishesNothing) {
    const std::string id = create(syntheticOp("tr_draft", kWindow));
    ASSERT_FALSE(id.empty());
    const std::set<std::string> before = toolNames(port_);
    const Answer r =
        testRun(R"({"operation_id": )" + quote(id) + R"(, "arguments": {"items": 2}})");
    ASSERT_EQ(r.status, 200) << r.describe();
    EXPECT_EQ(str(r.json, "outcome"), "ok");
    EXPECT_EQ(num(r.json, "result.item_count"), 2) << r.describe();
    EXPECT_EQ(toolNames(port_), before);
    const Answer after = getOp(id);
    EXPECT_EQ(str(after.json, "operation.status"), "draft");
    EXPECT_TRUE(isNull(after.json, "operation.published_version"));
}

TEST_F(AdminApi, ATestRunRunsTheVersionAskedFor) {
    const std::string id = create(syntheticOp("tr_versions", kWindow));  // max_items 5
    ASSERT_FALSE(id.empty());
    ASSERT_EQ(update(id, syntheticOp("tr_versions", R"("mode": "window", "transport_behavior":
                         "server_stream", "max_items": 2)"),
                     1),
              2);
    const std::string base = R"({"operation_id": )" + quote(id);
    const Answer latest = testRun(base + R"(, "arguments": {"items": -1}})");
    EXPECT_EQ(num(latest.json, "result.item_count"), 2) << latest.describe();
    const Answer first = testRun(base + R"(, "version": 1, "arguments": {"items": -1}})");
    EXPECT_EQ(num(first.json, "result.item_count"), 5) << first.describe();
    EXPECT_EQ(testRun(base + R"(, "version": 9, "arguments": {}})").status, 404);
    EXPECT_EQ(testRun(R"({"operation_id": "op_nope", "arguments": {}})").status, 404);
}

TEST_F(AdminApi, ATestRunOfAnInvalidOperationIs422WithFields) {
    const Answer r = testRun(
        R"({"config": )" +
        syntheticOp("tr_invalid", R"("mode": "window", "transport_behavior": "server_stream",
            "max_items": 0)") +
        R"(, "arguments": {"items": 1}})");
    EXPECT_EQ(r.status, 422) << r.describe();
    EXPECT_EQ(r.code(), "invalid");
    EXPECT_TRUE(r.field("execution.max_items").has_value()) << r.describe();
    const Answer rest = testRun(
        R"({"config": {"name": "tr_bad_rest", "description": "x", "protocol": "rest",
            "config": {"url": "ftp://127.0.0.1/x"}, "execution": {"mode": "unary"}}})");
    EXPECT_EQ(rest.status, 422) << rest.describe();
    EXPECT_TRUE(rest.field("config.url").has_value()) << rest.describe();
    // Neither config nor operation_id; arguments that are not an object.
    const Answer empty = testRun(R"({"arguments": {}})");
    EXPECT_TRUE(empty.status == 400 || empty.status == 422) << empty.describe();
    const Answer array =
        testRun(R"({"config": )" + syntheticOp("tr_array", kWindow) + R"(, "arguments": [1, 2]})");
    EXPECT_TRUE(array.status == 400 || array.status == 422) << array.describe();
    // Input that the operation's input_schema refuses: the run is an error naming the path.
    const Answer input = testRun(R"({"config": )" + syntheticOp("tr_input", kWindow) +
                                 R"(, "arguments": {"items": "many"}})");
    ASSERT_EQ(input.status, 200) << input.describe();
    EXPECT_EQ(flag(input.json, "is_error"), true) << input.describe();
    EXPECT_EQ(str(input.json, "outcome"), "error");
    EXPECT_TRUE(contains(input.body, "input.items")) << input.describe();
}

TEST_F(AdminApi, TestRunsBeyondMaxTestRunsAre429) {
    // max_test_runs is 2; each of these runs holds its place for 1.5 s.
    const std::string body =
        R"({"config": )" +
        syntheticOp("tr_busy", R"("mode": "window", "transport_behavior": "server_stream",
            "max_items": 100000, "window_duration_ms": 1500)") +
        R"(, "arguments": {"items": -1, "rate": 10}})";
    constexpr int kThreads = 3;
    std::vector<int> statuses(kThreads, 0);
    std::vector<std::string> codes(kThreads);
    std::atomic<bool> go{false};
    std::vector<std::thread> threads;
    threads.reserve(kThreads);
    for (int t = 0; t < kThreads; ++t) {
        threads.emplace_back([&, t] {
            while (!go.load()) {
                std::this_thread::yield();
            }
            const Answer r = testRun(body);
            statuses[static_cast<std::size_t>(t)] = r.status;
            codes[static_cast<std::size_t>(t)] = r.code();
        });
    }
    go = true;
    for (std::thread& t : threads) {
        t.join();
    }
    EXPECT_EQ(std::count(statuses.begin(), statuses.end(), 200), 2);
    EXPECT_EQ(std::count(statuses.begin(), statuses.end(), 429), 1);
    EXPECT_EQ(std::count(codes.begin(), codes.end(), "busy"), 1);
    // The places are free again.
    EXPECT_EQ(testRun(R"({"config": )" + syntheticOp("tr_after_busy", kWindow) +
                      R"(, "arguments": {"items": 1}})")
                  .status,
              200);
}

// --- plugins, meta, auth profiles ---------------------------------------------------------------

TEST_F(AdminApi, PluginsShowTheirAdaptersAndSchemas) {
    const Answer r = admin().get("/admin/api/plugins");
    ASSERT_EQ(r.status, 200) << r.describe();
    EXPECT_EQ(flag(r.json, "all_loaded"), true) << r.describe();
    const rapidjson::Value* synthetic = nullptr;
    const rapidjson::Value* rest = nullptr;
    const rapidjson::Value* aggregators = nullptr;
    for (const rapidjson::Value* p : elements(r.json, "plugins")) {
        EXPECT_NE(str(*p, "status"), kAbsent) << jsonOf(*p);
        if (str(*p, "name") == "synthetic") {
            synthetic = p;
        } else if (str(*p, "name") == "rest") {
            rest = p;
        } else if (count(*p, "aggregators") > 0) {
            aggregators = p;
        }
    }
    ASSERT_NE(synthetic, nullptr) << r.describe();
    ASSERT_NE(rest, nullptr) << r.describe();
    ASSERT_NE(aggregators, nullptr) << r.describe();
    EXPECT_EQ(str(*synthetic, "status"), "loaded");
    EXPECT_EQ(str(*synthetic, "version"), "1.0.0");
    EXPECT_NE(str(*synthetic, "abi"), kAbsent) << jsonOf(*synthetic);
    EXPECT_TRUE(contains(str(*synthetic, "path"), "synthetic"));
    ASSERT_EQ(count(*synthetic, "adapters"), 1) << jsonOf(*synthetic);
    EXPECT_EQ(str(*synthetic, "adapters.0.name"), "synthetic");
    const auto modes = strings(*synthetic, "adapters.0.modes");
    EXPECT_EQ(std::set<std::string>(modes.begin(), modes.end()),
              (std::set<std::string>{"unary", "window", "session", "async_job"}));
    const auto capabilities = strings(*synthetic, "adapters.0.capabilities");
    EXPECT_NE(std::find(capabilities.begin(), capabilities.end(), "server_stream"),
              capabilities.end())
        << jsonOf(*synthetic);
    EXPECT_TRUE(isObject(*synthetic, "adapters.0.config_schema.properties.items"))
        << jsonOf(*synthetic);
    EXPECT_EQ(str(*rest, "status"), "loaded");
    EXPECT_EQ(str(*rest, "adapters.0.name"), "rest");
    EXPECT_TRUE(isObject(*rest, "adapters.0.config_schema.properties.url")) << jsonOf(*rest);
    for (const rapidjson::Value* agg : elements(*aggregators, "aggregators")) {
        EXPECT_NE(str(*agg, "name"), kAbsent);
        EXPECT_TRUE(isObject(*agg, "config_schema")) << jsonOf(*agg);
        EXPECT_TRUE(isObject(*agg, "output_schema")) << jsonOf(*agg);
    }
}

TEST_F(AdminApi, MetaDescribesDefaultsProtocolsAndWorkspaces) {
    const Answer r = admin().get("/admin/api/meta");
    ASSERT_EQ(r.status, 200) << r.describe();
    EXPECT_FALSE(str(r.json, "version").empty());
    EXPECT_NE(str(r.json, "version"), kAbsent);
    EXPECT_EQ(num(r.json, "execution_defaults.window_duration_ms"), 10000) << r.describe();
    EXPECT_EQ(num(r.json, "execution_defaults.max_items"), 100) << r.describe();
    EXPECT_EQ(num(r.json, "execution_defaults.max_bytes"), 262144) << r.describe();
    const auto modes = strings(r.json, "modes");
    EXPECT_EQ(std::set<std::string>(modes.begin(), modes.end()),
              (std::set<std::string>{"unary", "window", "session", "async_job"}));
    const auto aggregations = strings(r.json, "aggregation_modes");
    for (const char* a : {"raw_items", "summary_only", "stats", "latest_state"}) {
        EXPECT_NE(std::find(aggregations.begin(), aggregations.end(), a), aggregations.end()) << a;
    }
    std::set<std::string> protocols;
    for (const rapidjson::Value* p : elements(r.json, "protocols")) {
        protocols.insert(str(*p, "name"));
        EXPECT_TRUE(isObject(*p, "config_schema")) << jsonOf(*p);
        EXPECT_GT(count(*p, "modes"), 0) << jsonOf(*p);
    }
    EXPECT_EQ(protocols.count("synthetic"), 1U) << r.describe();
    EXPECT_EQ(protocols.count("rest"), 1U) << r.describe();
    std::map<std::string, std::string> workspaces;
    for (const rapidjson::Value* w : elements(r.json, "workspaces")) {
        workspaces[str(*w, "id")] = str(*w, "description");
        EXPECT_TRUE(isObject(*w, "limits")) << jsonOf(*w);
    }
    EXPECT_EQ(workspaces.count("default"), 1U) << r.describe();
    EXPECT_EQ(workspaces["team"], "the team's tools") << r.describe();
    EXPECT_EQ(strings(r.json, "auth_profiles"), std::vector<std::string>{"bearer_p"});
}

TEST_F(AdminApi, AuthProfilesNeverShowASecret) {
    const Answer r = admin().get("/admin/api/auth-profiles");
    ASSERT_EQ(r.status, 200) << r.describe();
    EXPECT_TRUE(lacks(r.body, kBearerSecret));
    EXPECT_TRUE(lacks(r.body, "S3cret"));
    ASSERT_EQ(count(r.json, "auth_profiles"), 1) << r.describe();
    EXPECT_EQ(str(r.json, "auth_profiles.0.name"), "bearer_p");
    EXPECT_EQ(str(r.json, "auth_profiles.0.type"), "bearer");
    EXPECT_EQ(str(r.json, "auth_profiles.0.headers.X-Tenant"), "acme") << r.describe();
    EXPECT_EQ(flag(r.json, "auth_profiles.0.secrets.token.set"), true) << r.describe();
    EXPECT_EQ(str(r.json, "auth_profiles.0.secrets.token.source"), "env:CRANK_ADMIN_TEST_BEARER")
        << r.describe();
    // Nor anywhere else.
    EXPECT_TRUE(lacks(admin().get("/admin/api/meta").body, kBearerSecret));
    const Answer op = getOp("config:default:cfg_window");
    EXPECT_TRUE(lacks(op.body, kBearerSecret));
}

// --- sessions and jobs --------------------------------------------------------------------------

TEST_F(AdminApi, LiveSessionsAreListedAndCanBeStopped) {
    McpClient agent(port_);
    ASSERT_TRUE(agent.open());
    const rapidjson::Document started =
        agent.callTool("cfg_session_start", R"({"items": -1, "rate": 20})");
    const std::string id = str(started, "structuredContent.session_id");
    ASSERT_NE(id, kAbsent) << jsonOf(started);

    const Answer one = admin().get("/admin/api/sessions/" + id);
    ASSERT_EQ(one.status, 200) << one.describe();
    const rapidjson::Value* found = at(one.json, "session");
    ASSERT_TRUE(found != nullptr && found->IsObject()) << one.describe();
    const rapidjson::Value& s = *found;
    EXPECT_EQ(str(s, "id"), id);
    EXPECT_EQ(str(s, "workspace_id"), "default");
    EXPECT_EQ(str(s, "agent_id"), "anonymous");
    EXPECT_EQ(str(s, "protocol"), "synthetic");
    EXPECT_EQ(str(s, "mode"), "session");
    EXPECT_EQ(str(s, "status"), "active");
    EXPECT_GT(num(s, "expires_at"), nowMs());
    EXPECT_GT(num(s, "created_at"), 0);
    EXPECT_TRUE(isNull(s, "closed_at")) << one.describe();
    EXPECT_TRUE(contains(str(s, "operation_id"), "cfg_session")) << one.describe();
    EXPECT_NE(str(s, "owner_node"), kAbsent) << one.describe();
    const std::string operation = str(s, "operation_id");

    const auto has = [&](const std::string& query) {
        const Answer list = admin().get("/admin/api/sessions" + query);
        EXPECT_EQ(list.status, 200) << query << ": " << list.describe();
        for (const rapidjson::Value* x : elements(list.json, "sessions")) {
            if (str(*x, "id") == id) {
                return true;
            }
        }
        return false;
    };
    EXPECT_TRUE(has(""));
    EXPECT_TRUE(has("?status=active,paused"));
    EXPECT_TRUE(has("?workspace=default&agent=anonymous&operation=" + operation));
    EXPECT_FALSE(has("?workspace=team"));
    EXPECT_FALSE(has("?agent=somebody_else"));
    EXPECT_FALSE(has("?operation=cfg_window"));
    EXPECT_FALSE(has("?status=closed,expired,failed"));
    // Newest first.
    const Answer all = admin().get("/admin/api/sessions?limit=1000");
    std::vector<std::int64_t> created;
    for (const rapidjson::Value* x : elements(all.json, "sessions")) {
        created.push_back(num(*x, "created_at"));
    }
    EXPECT_TRUE(std::is_sorted(created.rbegin(), created.rend())) << all.describe();
    EXPECT_EQ(count(admin().get("/admin/api/sessions?limit=1").json, "sessions"), 1);
    EXPECT_EQ(admin().get("/admin/api/sessions?limit=0").status, 400);
    EXPECT_EQ(admin().get("/admin/api/sessions?limit=1001").status, 400);
    EXPECT_EQ(admin().get("/admin/api/sessions?status=sleeping").status, 400);
    EXPECT_EQ(admin().get("/admin/api/sessions?limit=ten").status, 400);

    // The operator stops it; the agent sees it stopped.
    const Answer stopped = admin().post("/admin/api/sessions/" + id + "/stop", "");
    ASSERT_EQ(stopped.status, 200) << stopped.describe();
    const std::string status = str(stopped.json, "session.status");
    EXPECT_TRUE(status == "closed" || status == "stopped") << stopped.describe();
    EXPECT_FALSE(isNull(stopped.json, "session.closed_at")) << stopped.describe();
    const rapidjson::Document poll =
        agent.callTool("cfg_session_poll", R"({"session_id": )" + quote(id) + "}");
    EXPECT_EQ(str(poll, "structuredContent.status"), "stopped") << jsonOf(poll);
    EXPECT_FALSE(has("?status=active,paused"));
    // Not live any more: 409. Unknown: 404.
    const Answer again = admin().post("/admin/api/sessions/" + id + "/stop", "");
    EXPECT_EQ(again.status, 409) << again.describe();
    EXPECT_EQ(again.code(), "conflict");
    EXPECT_EQ(admin().get("/admin/api/sessions/ses_nope").status, 404);
    const Answer unknown = admin().post("/admin/api/sessions/ses_nope/stop", "");
    EXPECT_EQ(unknown.status, 404) << unknown.describe();
    EXPECT_EQ(unknown.code(), "not_found");
}

TEST_F(AdminApi, RunningJobsAreListedAndCanBeCancelled) {
    McpClient agent(port_);
    ASSERT_TRUE(agent.open());
    const rapidjson::Document started =
        agent.callTool("cfg_job_start", R"({"items": 1, "delay_ms": 30000})");
    const std::string id = str(started, "structuredContent.job_id");
    ASSERT_NE(id, kAbsent) << jsonOf(started);
    const rapidjson::Document quick = agent.callTool("cfg_job_start", R"({"items": 2})");
    const std::string done = str(quick, "structuredContent.job_id");
    ASSERT_NE(done, kAbsent) << jsonOf(quick);

    const Answer one = admin().get("/admin/api/jobs/" + id);
    ASSERT_EQ(one.status, 200) << one.describe();
    EXPECT_EQ(str(one.json, "job.id"), id);
    EXPECT_EQ(str(one.json, "job.workspace_id"), "default");
    EXPECT_EQ(str(one.json, "job.agent_id"), "anonymous");
    EXPECT_TRUE(contains(str(one.json, "job.operation_id"), "cfg_job")) << one.describe();
    const std::string status = str(one.json, "job.status");
    EXPECT_TRUE(status == "queued" || status == "running") << one.describe();
    EXPECT_EQ(num(one.json, "job.input.delay_ms"), 30000) << one.describe();
    EXPECT_TRUE(isNull(one.json, "job.finished_at")) << one.describe();
    const std::string operation = str(one.json, "job.operation_id");

    const auto has = [&](const std::string& query, const std::string& job) {
        const Answer list = admin().get("/admin/api/jobs" + query);
        EXPECT_EQ(list.status, 200) << query << ": " << list.describe();
        for (const rapidjson::Value* x : elements(list.json, "jobs")) {
            if (str(*x, "id") == job) {
                return true;
            }
        }
        return false;
    };
    EXPECT_TRUE(has("", id));
    EXPECT_TRUE(has("?status=queued,running", id));
    EXPECT_TRUE(has("?workspace=default&agent=anonymous&operation=" + operation, id));
    EXPECT_FALSE(has("?workspace=team", id));
    EXPECT_FALSE(has("?agent=somebody_else", id));
    EXPECT_FALSE(has("?status=succeeded", id));
    ASSERT_TRUE(eventually(
        [&] {
            return str(admin().get("/admin/api/jobs/" + done).json, "job.status") == "succeeded";
        },
        10s));
    EXPECT_TRUE(has("?status=succeeded", done));
    EXPECT_FALSE(has("?status=queued,running", done));
    EXPECT_EQ(admin().get("/admin/api/jobs?status=finished").status, 400);
    EXPECT_EQ(admin().get("/admin/api/jobs?limit=0").status, 400);

    const Answer cancelled = admin().post("/admin/api/jobs/" + id + "/cancel", "");
    ASSERT_EQ(cancelled.status, 200) << cancelled.describe();
    EXPECT_EQ(str(cancelled.json, "job.status"), "cancelled") << cancelled.describe();
    const rapidjson::Document seen =
        agent.callTool("cfg_job_status", R"({"job_id": )" + quote(id) + "}");
    EXPECT_EQ(str(seen, "structuredContent.status"), "cancelled") << jsonOf(seen);
    // Ended already: 409, cancelled or succeeded. Unknown: 404.
    const Answer again = admin().post("/admin/api/jobs/" + id + "/cancel", "");
    EXPECT_EQ(again.status, 409) << again.describe();
    EXPECT_EQ(again.code(), "conflict");
    const Answer finished = admin().post("/admin/api/jobs/" + done + "/cancel", "");
    EXPECT_EQ(finished.status, 409) << finished.describe();
    EXPECT_EQ(str(admin().get("/admin/api/jobs/" + done).json, "job.status"), "succeeded");
    EXPECT_EQ(admin().get("/admin/api/jobs/job_nope").status, 404);
    EXPECT_EQ(admin().post("/admin/api/jobs/job_nope/cancel", "").status, 404);
}

// --- audit --------------------------------------------------------------------------------------

TEST_F(AdminApi, AdminActionsAreAudited) {
    const std::int64_t before = nowMs() - 1;
    const std::string id = create(syntheticOp("audited", kWindow));
    ASSERT_FALSE(id.empty());
    ASSERT_EQ(update(id, syntheticOp("audited", kWindow, R"(, "title": "t")"), 1), 2);
    ASSERT_EQ(publish(id, 2).status, 200);
    ASSERT_EQ(
        testRun(R"({"operation_id": )" + quote(id) + R"(, "arguments": {"items": 1}})").status,
        200);
    ASSERT_EQ(admin().del("/admin/api/operations/" + id).status, 200);
    std::this_thread::sleep_for(5ms);
    const std::int64_t after = nowMs() + 1;

    // By operation: as the events name it (its id, else its name).
    Answer mine = admin().get("/admin/api/audit?operation=" + id + "&limit=1000");
    ASSERT_EQ(mine.status, 200) << mine.describe();
    std::string operation = id;
    if (events(mine).empty()) {
        operation = "audited";
        mine = admin().get("/admin/api/audit?operation=audited&limit=1000");
    }
    std::multiset<std::string> actions;
    for (const rapidjson::Value* e : events(mine)) {
        actions.insert(str(*e, "action"));
        EXPECT_EQ(str(*e, "operation_id"), operation) << jsonOf(*e);
        EXPECT_EQ(str(*e, "agent_id"), "admin") << jsonOf(*e);
        EXPECT_EQ(str(*e, "outcome"), "ok") << jsonOf(*e);
        EXPECT_GE(num(*e, "ts"), before);
        EXPECT_LE(num(*e, "ts"), after);
        EXPECT_GT(num(*e, "id"), 0);
    }
    for (const char* action : {"operation.create", "operation.update", "operation.publish",
                               "test_run", "operation.delete"}) {
        EXPECT_EQ(actions.count(action), 1U) << action << " in " << mine.describe();
    }
    // Newest first by default; oldest first when asked.
    const auto order = [](const Answer& a) {
        std::vector<std::int64_t> ids;
        for (const rapidjson::Value* e : elements(a.json, "events")) {
            ids.push_back(num(*e, "id"));
        }
        return ids;
    };
    const auto newest = order(mine);
    EXPECT_TRUE(std::is_sorted(newest.rbegin(), newest.rend())) << mine.describe();
    ASSERT_FALSE(newest.empty());
    const Answer oldest =
        admin().get("/admin/api/audit?operation=" + operation + "&order=oldest_first&limit=1000");
    ASSERT_EQ(oldest.status, 200) << oldest.describe();
    EXPECT_EQ(order(oldest), std::vector<std::int64_t>(newest.rbegin(), newest.rend()));
    EXPECT_EQ(str(*events(mine).front(), "action"), "operation.delete");

    // By action, with the time range.
    const Answer creates =
        admin().get("/admin/api/audit?action=operation.create&from=" + std::to_string(before) +
                    "&to=" + std::to_string(after));
    ASSERT_EQ(creates.status, 200) << creates.describe();
    bool found = false;
    for (const rapidjson::Value* e : events(creates)) {
        EXPECT_EQ(str(*e, "action"), "operation.create");
        EXPECT_GE(num(*e, "ts"), before);
        EXPECT_LT(num(*e, "ts"), after);
        found = found || str(*e, "operation_id") == operation;
    }
    EXPECT_TRUE(found) << creates.describe();
    const Answer later =
        admin().get("/admin/api/audit?operation=" + operation + "&from=" + std::to_string(after));
    EXPECT_EQ(count(later.json, "events"), 0) << later.describe();
    const Answer earlier =
        admin().get("/admin/api/audit?operation=" + operation + "&to=" + std::to_string(before));
    EXPECT_EQ(count(earlier.json, "events"), 0) << earlier.describe();
    const Answer runs = admin().get("/admin/api/audit?action=test_run&limit=1000");
    EXPECT_GE(count(runs.json, "events"), 1) << runs.describe();
    for (const rapidjson::Value* e : events(runs)) {
        EXPECT_EQ(str(*e, "action"), "test_run");
        EXPECT_EQ(str(*e, "agent_id"), "admin") << jsonOf(*e);
    }
    EXPECT_EQ(count(admin().get("/admin/api/audit?limit=2").json, "events"), 2);
    // By workspace.
    const std::string team =
        create(syntheticOp("audited_team", kWindow, R"(, "workspace": "team")"));
    ASSERT_FALSE(team.empty());
    const Answer teamEvents =
        admin().get("/admin/api/audit?workspace=team&action=operation.create&limit=1000");
    ASSERT_EQ(teamEvents.status, 200) << teamEvents.describe();
    bool teamCreate = false;
    for (const rapidjson::Value* e : events(teamEvents)) {
        EXPECT_EQ(str(*e, "workspace_id"), "team") << jsonOf(*e);
        teamCreate = teamCreate || contains(jsonOf(*e), "audited_team");
    }
    EXPECT_TRUE(teamCreate) << teamEvents.describe();
    const Answer defaultEvents =
        admin().get("/admin/api/audit?workspace=default&action=operation.create&limit=1000");
    EXPECT_TRUE(lacks(defaultEvents.body, "audited_team"));
    // Agents' own actions are there too.
    EXPECT_EQ(admin().get("/admin/api/audit?agent=anonymous&action=session.start").status, 200);
}

TEST_F(AdminApi, AuditQueriesAreChecked) {
    const AdminClient a = admin();
    const Answer backwards = a.get("/admin/api/audit?from=2000&to=1000");
    EXPECT_EQ(backwards.status, 400) << backwards.describe();
    EXPECT_EQ(backwards.code(), "bad_request");
    EXPECT_TRUE(contains(backwards.message(), "from")) << backwards.describe();
    for (const char* query : {"?from=yesterday", "?to=1.5", "?limit=0", "?limit=1001", "?limit=ten",
                              "?order=sideways"}) {
        const Answer r = a.get(std::string("/admin/api/audit") + query);
        EXPECT_EQ(r.status, 400) << query << ": " << r.describe();
        EXPECT_EQ(r.code(), "bad_request") << query;
    }
    EXPECT_EQ(a.get("/admin/api/audit?from=1000&to=1000").status, 200);
    EXPECT_EQ(count(a.get("/admin/api/audit?from=1000&to=1000").json, "events"), 0);
}

// --- other crankd processes ---------------------------------------------------------------------

TEST_F(AdminApi, PublishedOperationsSurviveARestart) {
    TempDir dir;
    const std::string token = "restart-token-0123456789";
    const std::string tokenFile = dir.write("admin.token", token + "\n");
    const std::string members = R"("admin": {"token": {"file": )" + quote(tokenFile) + "}}";
    std::uint16_t port = 0;
    auto crankd = launch(dir, members, {}, port);
    ASSERT_NE(port, 0) << crankd->stderrText();
    const AdminClient a(port, token);
    const Answer kept =
        a.post("/admin/api/operations", createBody(syntheticOp("kept", kWindow), "kept"));
    ASSERT_EQ(kept.status, 201) << kept.describe();
    const std::string id = str(kept.json, "operation.id");
    ASSERT_EQ(a.post("/admin/api/operations/" + id + "/publish", publishBody(1)).status, 200);
    const Answer draft =
        a.post("/admin/api/operations", createBody(syntheticOp("only_draft", kWindow)));
    ASSERT_EQ(draft.status, 201) << draft.describe();
    ASSERT_EQ(toolNames(port).count("kept"), 1U);
    stop(crankd);

    crankd = launch(dir, members, {}, port);
    ASSERT_NE(port, 0) << crankd->stderrText();
    const AdminClient b(port, token);
    const auto tools = toolNames(port);
    EXPECT_EQ(tools.count("kept"), 1U);
    EXPECT_EQ(tools.count("only_draft"), 0U);
    EXPECT_EQ(num(callOk(port, "kept", R"({"items": -1})"), "item_count"), 5);
    const Answer after = b.get("/admin/api/operations/" + id);
    ASSERT_EQ(after.status, 200) << after.describe();
    EXPECT_EQ(str(after.json, "operation.status"), "published");
    EXPECT_EQ(num(after.json, "operation.published_version"), 1);
    const Answer list = b.get("/admin/api/operations?source=admin");
    EXPECT_TRUE(listed(list, "only_draft")) << list.describe();
    EXPECT_EQ(b.request("GET", "/admin/api/operations", "", {}, false).status, 401);
    // A REST operation published now, and crankd restarted without the rest plugin: its
    // published version no longer compiles, so it is in error and serves nothing.
    const Answer rest =
        b.post("/admin/api/operations", createBody(restOp("kept_rest", 9, "/json?n=1")));
    ASSERT_EQ(rest.status, 201) << rest.describe();
    const std::string restId = str(rest.json, "operation.id");
    ASSERT_EQ(b.post("/admin/api/operations/" + restId + "/publish", publishBody(1)).status, 200);
    EXPECT_EQ(toolNames(port).count("kept_rest"), 1U);
    stop(crankd);

    crankd = launch(dir, members, {}, port, R"(["synthetic", "aggregators"])");
    ASSERT_NE(port, 0) << crankd->stderrText();
    const AdminClient c(port, token);
    const auto without = toolNames(port);
    EXPECT_EQ(without.count("kept"), 1U);
    EXPECT_EQ(without.count("kept_rest"), 0U);
    const Answer broken = c.get("/admin/api/operations/" + restId);
    ASSERT_EQ(broken.status, 200) << broken.describe();
    EXPECT_EQ(str(broken.json, "operation.status"), "error") << broken.describe();
    EXPECT_TRUE(contains(str(broken.json, "operation.error"), "rest")) << broken.describe();
    EXPECT_EQ(num(broken.json, "operation.published_version"), 1);
    EXPECT_EQ(str(c.get("/admin/api/operations/" + id).json, "operation.status"), "published");
    // Publishing it again is refused with the reason.
    const Answer again = c.post("/admin/api/operations/" + restId + "/publish", publishBody(1));
    EXPECT_EQ(again.status, 422) << again.describe();
    EXPECT_TRUE(again.field("protocol").has_value()) << again.describe();
    // Its published version still holds its tool's name: another operation that would publish a
    // tool of that name is refused, although nothing serves it on this node.
    const Answer taker =
        c.post("/admin/api/operations",
               createBody(syntheticOp("taker",
                                      std::string(R"("start_tool_name": "kept_rest", )") + kJob)));
    ASSERT_EQ(taker.status, 201) << taker.describe();
    const Answer taken = c.post(
        "/admin/api/operations/" + str(taker.json, "operation.id") + "/publish", publishBody(1));
    EXPECT_EQ(taken.status, 422) << taken.describe();
    EXPECT_TRUE(contains(taken.field("name").value_or(""), "kept_rest")) << taken.describe();
    stop(crankd);
}

// A job of an operation published through the admin API is followed again after a restart, as
// a config operation's is: the catalog serves the operation before the job workers recover.
TEST_F(AdminApi, AJobOfAnAdminOperationIsFollowedAfterARestart) {
    TempDir dir;
    const std::string token = "restart-job-token-0123456789";
    const std::string members =
        R"("admin": {"token": {"file": )" + quote(dir.write("admin.token", token)) + "}}";
    std::uint16_t port = 0;
    auto crankd = launch(dir, members, {}, port);
    ASSERT_NE(port, 0) << crankd->stderrText();
    const AdminClient a(port, token);
    // A REST job against crank-rest-fixture (which keeps running): its cursor is the upstream
    // job's status URL, so it can be followed again after the restart.
    const std::string op =
        R"({"name": "slow_feed", "description": "a resumable job", "protocol": "rest",
            "config": {"method": "POST", "url": "http://127.0.0.1:)" +
        std::to_string(fixturePort_) + R"(/jobs",
                       "body": {"duration_ms": 3000, "steps": 6, "result": {"n": 1}},
                       "job": {"status_url_path": "$.status_url", "poll_interval_ms": 100,
                               "result_url_path": "$.result_url"}},
            "execution": {"mode": "async_job", "upstream_timeout_ms": 60000}})";
    const Answer created = a.post("/admin/api/operations", createBody(op));
    ASSERT_EQ(created.status, 201) << created.describe();
    const std::string opId = str(created.json, "operation.id");
    ASSERT_EQ(a.post("/admin/api/operations/" + opId + "/publish", publishBody(1)).status, 200);

    std::string jobId;
    {
        McpClient agent(port);
        ASSERT_TRUE(agent.open());
        const rapidjson::Document started = agent.callTool("slow_feed_start", "{}");
        jobId = str(started, "structuredContent.job_id");
        ASSERT_NE(jobId, kAbsent) << jsonOf(started);
    }
    // Running, with a cursor, when crankd stops.
    bool resumable = false;
    for (int i = 0; i < 100 && !resumable; ++i) {
        const Answer job = a.get("/admin/api/jobs/" + jobId);
        resumable = str(job.json, "job.status") == "running" &&
                    at(job.json, "job.cursor") != nullptr && at(job.json, "job.cursor")->IsString();
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    ASSERT_TRUE(resumable) << "the job never ran with a cursor";
    stop(crankd);

    crankd = launch(dir, members, {}, port);
    ASSERT_NE(port, 0) << crankd->stderrText();
    const AdminClient b(port, token);
    std::string status;
    Answer job;
    for (int i = 0; i < 200 && status != "succeeded" && status != "failed" &&
                    status != "interrupted" && status != "cancelled";
         ++i) {
        job = b.get("/admin/api/jobs/" + jobId);
        status = str(job.json, "job.status");
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    EXPECT_EQ(status, "succeeded") << job.describe() << crankd->stderrText();
    EXPECT_EQ(job.body.find("no longer exists"), std::string::npos) << job.describe();
    stop(crankd);
}

// Two crankd nodes sharing one store: what one publishes, edits and deletes, the other serves
// and withdraws within its admin.sync_interval_ms.
TEST_F(AdminApi, ANodeServesWhatAnotherNodePublishes) {
    TempDir dir;
    const std::string token = "two-nodes-token-0123456789";
    const std::string tokenFile = dir.write("admin.token", token);
    const auto members = [&](const std::string& node) {
        return R"("admin": {"token": {"file": )" + quote(tokenFile) +
               R"(}, "sync_interval_ms": 200}, "server": {"node_id": )" + quote(node) + "}";
    };
    std::uint16_t portA = 0;
    std::uint16_t portB = 0;
    auto nodeA = launch(dir, members("node-a"), {}, portA);
    ASSERT_NE(portA, 0) << nodeA->stderrText();
    auto nodeB = launch(dir, members("node-b"), {}, portB);
    ASSERT_NE(portB, 0) << nodeB->stderrText();
    const AdminClient a(portA, token);
    const AdminClient b(portB, token);
    const auto servedOnB = [&](const std::string& id) -> std::int64_t {
        for (int i = 0; i < 100; ++i) {  // 10 s at most
            const Answer got = b.get("/admin/api/operations/" + id);
            if (at(got.json, "operation.served_version") != nullptr &&
                at(got.json, "operation.served_version")->IsInt64()) {
                return at(got.json, "operation.served_version")->GetInt64();
            }
            std::this_thread::sleep_for(100ms);
        }
        return 0;
    };

    const std::string id =
        str(a.post("/admin/api/operations", createBody(syntheticOp("shared", kWindow))).json,
            "operation.id");
    ASSERT_NE(id, kAbsent);
    ASSERT_EQ(a.post("/admin/api/operations/" + id + "/publish", publishBody(1)).status, 200);
    EXPECT_EQ(servedOnB(id), 1);
    EXPECT_EQ(toolNames(portB).count("shared"), 1U);
    EXPECT_EQ(num(callOk(portB, "shared", R"({"items": -1})"), "item_count"), 5);

    // A new version published on A: B serves it (max_items 5 -> 2).
    std::string v2 = syntheticOp("shared", kWindow);
    v2.replace(v2.find(R"("max_items": 5)"), std::string(R"("max_items": 5)").size(),
               R"("max_items": 2)");
    ASSERT_EQ(a.put("/admin/api/operations/" + id, putBody(v2, 1)).status, 201);
    ASSERT_EQ(a.post("/admin/api/operations/" + id + "/publish", publishBody(2)).status, 200);
    for (int i = 0; i < 100 && servedOnB(id) != 2; ++i) {
        std::this_thread::sleep_for(100ms);
    }
    EXPECT_EQ(servedOnB(id), 2);
    EXPECT_EQ(num(callOk(portB, "shared", R"({"items": -1})"), "item_count"), 2);

    // Deleted on A: withdrawn on B.
    ASSERT_EQ(a.del("/admin/api/operations/" + id).status, 200);
    bool gone = false;
    for (int i = 0; i < 100 && !gone; ++i) {
        gone = toolNames(portB).count("shared") == 0;
        std::this_thread::sleep_for(100ms);
    }
    EXPECT_TRUE(gone) << "node B still serves a deleted operation";
    stop(nodeB);
    stop(nodeA);
}

TEST_F(AdminApi, WithoutAnAdminBlockTheApiIsDisabled) {
    TempDir dir;
    std::uint16_t port = 0;
    auto crankd = launch(dir, R"("operations": [)" + syntheticOp("plain", kWindow) + "]",
                         {{"CRANK_ADMIN_TOKEN", kAdminToken}}, port);
    ASSERT_NE(port, 0) << crankd->stderrText();
    const AdminClient a(port, kAdminToken);
    for (const auto& [method, path] :
         std::vector<std::pair<std::string, std::string>>{{"GET", "/admin/api/operations"},
                                                          {"GET", "/admin/api/plugins"},
                                                          {"POST", "/admin/api/operations"},
                                                          {"POST", "/admin/api/test-runs"}}) {
        const Answer r = a.request(method, path, method == "POST" ? "{}" : "");
        EXPECT_EQ(r.status, 404) << method << " " << path << ": " << r.describe();
        EXPECT_EQ(r.code(), "admin_disabled") << r.describe();
        const Answer anonymous = a.request(method, path, "", {}, false);
        EXPECT_EQ(anonymous.status, 404) << anonymous.describe();
        EXPECT_EQ(anonymous.code(), "admin_disabled") << anonymous.describe();
    }
    EXPECT_EQ(toolNames(port).count("plain"), 1U);
    stop(crankd);
}

TEST_F(AdminApi, TheTokenMayBeGivenAsItsDigest) {
    TempDir dir;
    // SHA-256 of "hashed-admin-token-42".
    const std::string members =
        R"("admin": {"token": {"sha256": )"
        R"("e6c2f282ee859c5601aa7fe71f7b1e2420c85c8bd68a2e17683455ba878fe507"}})";
    std::uint16_t port = 0;
    auto crankd = launch(dir, members, {}, port);
    ASSERT_NE(port, 0) << crankd->stderrText();
    EXPECT_EQ(AdminClient(port, "hashed-admin-token-42").get("/admin/api/meta").status, 200);
    const Answer digest =
        AdminClient(port, "e6c2f282ee859c5601aa7fe71f7b1e2420c85c8bd68a2e17683455ba878fe507")
            .get("/admin/api/meta");
    EXPECT_EQ(digest.status, 401) << "the digest itself is no token: " << digest.describe();
    stop(crankd);
}

TEST_F(AdminApi, AnAdminBlockWithoutATokenLeavesTheApiOff) {
    TempDir dir;
    std::uint16_t port = 0;
    auto crankd = launch(dir, R"("admin": {"ui": false})", {}, port);
    ASSERT_NE(port, 0) << crankd->stderrText();
    const Answer r = AdminClient(port, kAdminToken).get("/admin/api/operations");
    EXPECT_EQ(r.status, 404) << r.describe();
    EXPECT_EQ(r.code(), "admin_disabled") << r.describe();
    stop(crankd);
}

// --- and after all that -------------------------------------------------------------------------

TEST_F(AdminApi, ZzCrankdStillServes) {
    EXPECT_FALSE(crankd_->waitForExit(0ms).has_value()) << crankd_->stderrText();
    EXPECT_EQ(crank::testing::exchange(port_, "GET", "/healthz", {}).status, 200);
    EXPECT_EQ(admin().get("/admin/api/operations").status, 200);
    EXPECT_EQ(num(callOk(port_, "cfg_window", R"({"items": 2})"), "item_count"), 2);
}

}  // namespace
