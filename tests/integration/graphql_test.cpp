// The GraphQL plugin through the real crankd, against the loopback GraphQL server
// tests/e2e/graphql-fixture.mjs (graphql-js on node:http): input schemas derived from the
// operation's variables and the introspected schema, variables of every kind reaching the upstream
// as sent, nested input objects, partial data and errors, the upstream's validation errors, HTTP
// errors and an auth profile, timeouts, mutations and @oneOf, a window over a list, a window and a
// session paging through a Relay-style connection (itemsPage) by its cursors, an async job,
// the configurations crankd --check refuses, a schema that changes under crankd, import-graphql
// against the live server, schema files, and an upstream that is down when the config loads.
// One fixture process and one crankd serve most of the suite (one ctest entry); the schema-change
// test has its own fixture so that the shared one keeps schema version 1. The fixture's GET /stats
// shows what the upstream saw: request count, the last request's headers and body, and the bodies
// of the last 32 requests.

#include <signal.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <Poco/Net/ServerSocket.h>
#include <Poco/Net/SocketAddress.h>
#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include "child_process.h"
#include "mcp_http_client.h"
#include "temp_dir.h"
#include "test_json.h"
#include <crank/sdk/json.hpp>

namespace {

using crank::sdk::jsonQuote;
using crank::testing::ChildProcess;
using crank::testing::contains;
using crank::testing::eventually;
using crank::testing::exchange;
using crank::testing::lacks;
using crank::testing::McpClient;
using crank::testing::msBetween;
using crank::testing::TempDir;
using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

// The fixture's bearer token (/secure/graphql); it reaches crankd through its environment only.
constexpr const char* kToken = "fixture-token";

std::string text(const rapidjson::Value& v) {
    return crank::testing::jsonText(v);
}

rapidjson::Document parse(const std::string& body) {
    return crank::testing::parseJsonOrFail(body);
}

/// A graphql operation without a description (the plugin describes it); `config` is the rest of
/// the config object after endpoint and document (", ..."), `extra` more members of the operation.
std::string operation(const std::string& name, const std::string& endpoint,
                      const std::string& document, const std::string& config = "",
                      const std::string& extra = "") {
    return R"({"name": ")" + name + R"(", "protocol": "graphql", "config": {"endpoint": )" +
           jsonQuote(endpoint) + R"(, "document": )" + jsonQuote(document) + config + "}" + extra +
           "}";
}

std::string joined(const std::vector<std::string>& ops) {
    std::string out;
    for (const std::string& op : ops) {
        out += (out.empty() ? "" : ",\n") + op;
    }
    return out;
}

/// The "listening on" port of a child, or 0 (after ADD_FAILURE).
std::uint16_t portOf(ChildProcess& child) {
    const auto port = child.waitForListeningPort(20s);
    if (!port) {
        ADD_FAILURE() << "no listening line: " << child.stderrText();
        return 0;
    }
    return *port;
}

ChildProcess* startFixture() {
    return new ChildProcess(
        std::vector<std::string>{CRANK_NODE_PATH, CRANK_GRAPHQL_FIXTURE_PATH, "0"});
}

void stopChild(ChildProcess*& child) {
    if (child != nullptr) {
        child->signal(SIGTERM);
        EXPECT_EQ(child->waitForExit(20s), 0) << child->stderrText();
        delete child;
        child = nullptr;
    }
}

std::string member(const rapidjson::Value& object, const char* name) {
    if (!object.IsObject() || !object.HasMember(name)) {
        return "(absent)";
    }
    return object[name].IsString() ? object[name].GetString() : text(object[name]);
}

bool isError(const rapidjson::Value& result) {
    return result.IsObject() && result.HasMember("isError") && result["isError"].IsBool() &&
           result["isError"].GetBool();
}

std::string firstText(const rapidjson::Value& result) {
    if (result.IsObject() && result.HasMember("content") && result["content"].IsArray() &&
        !result["content"].Empty() && result["content"][0].HasMember("text")) {
        return result["content"][0]["text"].GetString();
    }
    return text(result);
}

rapidjson::Document structured(const rapidjson::Value& result) {
    rapidjson::Document out;
    if (result.IsObject() && result.HasMember("structuredContent")) {
        out.CopyFrom(result["structuredContent"], out.GetAllocator());
    } else {
        ADD_FAILURE() << "no structuredContent: " << text(result);
        out.SetObject();
    }
    return out;
}

/// The value at a dotted path of members ("a.b.c"); nullptr when it is not there.
const rapidjson::Value* at(const rapidjson::Value& root, const std::string& path) {
    const rapidjson::Value* v = &root;
    std::size_t start = 0;
    while (start <= path.size()) {
        const std::size_t dot = path.find('.', start);
        const std::string name =
            path.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
        if (v->IsArray() && !name.empty() &&
            name.find_first_not_of("0123456789") == std::string::npos) {
            const auto index = static_cast<rapidjson::SizeType>(std::stoul(name));
            if (index >= v->Size()) {
                return nullptr;
            }
            v = &(*v)[index];
        } else if (!v->IsObject() || !v->HasMember(name.c_str())) {
            return nullptr;
        } else {
            v = &(*v)[name.c_str()];
        }
        if (dot == std::string::npos) {
            break;
        }
        start = dot + 1;
    }
    return v;
}

/// JSON text of the value at `path` (members and array indexes, dot-separated), "(absent)" when
/// there is none.
std::string textAt(const rapidjson::Value& root, const std::string& path) {
    const rapidjson::Value* v = at(root, path);
    return v == nullptr ? "(absent)" : text(*v);
}

/// The `id` of each object in the array at `path`, in order (ADD_FAILURE when there is no array).
std::vector<std::string> idsAt(const rapidjson::Value& root, const std::string& path) {
    std::vector<std::string> out;
    const rapidjson::Value* list = at(root, path);
    if (list == nullptr || !list->IsArray()) {
        ADD_FAILURE() << "no array at " << path << ": " << text(root);
        return out;
    }
    for (const auto& item : list->GetArray()) {
        out.push_back(member(item, "id"));
    }
    return out;
}

/// The result object of a tool call, error or not: its structuredContent, else its text parsed.
rapidjson::Document resultObject(const rapidjson::Value& result) {
    if (result.IsObject() && result.HasMember("structuredContent")) {
        return structured(result);
    }
    return parse(firstText(result));
}

/// The tools of a tools/list answer, by name.
std::map<std::string, rapidjson::Document> toolsOf(const McpClient& client) {
    std::map<std::string, rapidjson::Document> out;
    const crank::testing::Reply reply =
        client.post(R"({"jsonrpc":"2.0","id":3,"method":"tools/list"})");
    EXPECT_EQ(reply.status, 200) << reply.body;
    const rapidjson::Document doc = parse(reply.body);
    const rapidjson::Value* tools = at(doc, "result.tools");
    if (tools == nullptr || !tools->IsArray()) {
        ADD_FAILURE() << "no tools: " << reply.body;
        return out;
    }
    for (const auto& tool : tools->GetArray()) {
        rapidjson::Document copy;
        copy.CopyFrom(tool, copy.GetAllocator());
        out.emplace(member(tool, "name"), std::move(copy));
    }
    return out;
}

/// Runs `crankd --check` on a config file; its exit status and output (stdout and stderr).
std::pair<int, std::string> checkConfig(const std::string& path) {
    ChildProcess process(std::vector<std::string>{CRANKD_PATH, "--check", "--config", path});
    const std::optional<int> status = process.waitForExit(60s);
    EXPECT_TRUE(status.has_value()) << "crankd --check did not end";
    return {status.value_or(-1), process.stdoutText() + process.stderrText()};
}

/// A config of `operations` (with a store in `dir` when `store` names one, and the auth profile
/// "gql" when `withAuth`: its token comes from CRANK_TEST_GQL_TOKEN).
std::string configText(const TempDir& dir, const std::string& operations,
                       const std::string& store = "", bool withAuth = false) {
    return std::string("{") +
           (store.empty() ? "" : R"("store": {"path": ")" + dir.file(store) + R"("}, )") +
           (withAuth ? R"("auth_profiles": {"gql": {"type": "bearer",
                "token": {"env": "CRANK_TEST_GQL_TOKEN"}}}, )"
                     : "") +
           R"("plugins": {"directories": [")" CRANK_PLUGIN_DIR R"("]}, "operations": [)" +
           operations + "]}";
}

// The fixture's seed items (tests/e2e/graphql-fixture.mjs, SEED): id, colour, tags, price
// (negative: none).
struct SeedItem {
    std::string id;
    std::string name;
    std::string color;
    std::vector<std::string> tags;
    double price;
};

const std::vector<SeedItem>& seed() {
    static const std::vector<SeedItem> items{
        {"i1", "Red Apple", "RED", {"fruit", "fresh"}, 1.25},
        {"i2", "Green Pear", "GREEN", {"fruit", "fresh", "sale"}, 0.99},
        {"i3", "Blue Mug", "BLUE", {"kitchen", "gift"}, 7.5},
        {"i4", "Red Kettle", "RED", {"kitchen", "sale"}, 24},
        {"i5", "Purple Scarf", "PURPLE", {"clothing", "gift"}, 15},
        {"i6", "Green Tea", "GREEN", {"food", "eco"}, 4.2},
        {"i7", "Blue Jeans", "BLUE", {"clothing"}, 49.9},
        {"i8", "Red Chair", "RED", {"furniture", "heavy"}, 89},
        {"i9", "Green Lamp", "GREEN", {"furniture", "eco", "sale"}, 35.5},
        {"i10", "Blue Pen", "BLUE", {"office", "small"}, -1},
        {"i11", "Red Notebook", "RED", {"office", "small", "gift"}, 3.1},
        {"i12", "Green Bottle", "GREEN", {"kitchen", "eco"}, 12},
        {"i13", "Blue Desk", "BLUE", {"furniture", "office", "heavy"}, 210},
        {"i14", "Red Socks", "RED", {"clothing", "small", "sale"}, 5},
        {"i15", "Green Plant", "GREEN", {"eco", "gift"}, 18.75},
        {"i16", "Blue Rug", "BLUE", {"furniture"}, -1},
        {"i17", "Red Hat", "RED", {"clothing"}, 22},
        {"i18", "Green Soap", "GREEN", {"eco", "small", "fresh"}, 2.5},
        {"i19", "Blue Umbrella", "BLUE", {"gift", "sale"}, 14},
        {"i20", "Red Sofa", "RED", {"furniture", "heavy", "sale"}, 499.99},
    };
    return items;
}

/// The ids of the seed items that `keep` accepts, in the fixture's order (by id number).
std::vector<std::string> seedIds(const std::function<bool(const SeedItem&)>& keep) {
    std::vector<std::string> out;
    for (const SeedItem& item : seed()) {
        if (keep(item)) {
            out.push_back(item.id);
        }
    }
    return out;
}

bool hasTag(const SeedItem& item, const std::string& tag) {
    return std::find(item.tags.begin(), item.tags.end(), tag) != item.tags.end();
}

class GraphqlTest : public ::testing::Test {
protected:
    static void SetUpTestSuite() {
        dir_ = new TempDir();
        fixture_ = startFixture();
        fixturePort_ = portOf(*fixture_);
        ASSERT_NE(fixturePort_, 0);
        {
            // A port that was bound and closed again: connecting to it is refused.
            Poco::Net::ServerSocket probe(Poco::Net::SocketAddress("127.0.0.1", 0));
            refusedPort_ = probe.address().port();
            probe.close();
        }
        // The schema as files, for schema_file (taken before crankd loads its config).
        const crank::testing::Reply sdl = exchange(fixturePort_, "GET", "/schema.graphql", {});
        ASSERT_EQ(sdl.status, 200) << sdl.body;
        ASSERT_TRUE(contains(sdl.body, "input OwnerRef @oneOf"));
        dir_->write("schema.graphql", sdl.body);
        const crank::testing::Reply json = exchange(fixturePort_, "GET", "/introspection.json", {});
        ASSERT_EQ(json.status, 200) << json.body;
        ASSERT_TRUE(contains(json.body, "\"__schema\""));
        dir_->write("introspection.json", json.body);

        const std::string gql = base() + "/graphql";
        const std::string noIntrospection = R"(, "introspection": false)";
        const std::string sdlFile =
            R"(, "introspection": false, "schema_file": ")" + dir_->file("schema.graphql") + "\"";
        const std::string jsonFile = R"(, "introspection": false, "schema_file": ")" +
                                     dir_->file("introspection.json") + "\"";
        const std::string echoDocument =
            "query Echo($int: Int, $float: Float, $string: String, $bool: Boolean, $id: ID, "
            "$color: Color, $colors: [Color!], $matrix: [[Int]], $filter: ItemFilter, "
            "$when: DateTime) { echo(int: $int, float: $float, string: $string, bool: $bool, "
            "id: $id, color: $color, colors: $colors, matrix: $matrix, filter: $filter, "
            "when: $when) }";
        const std::string createDocument =
            "mutation Create($input: NewItem!) { createItem(input: $input) { id name color tags "
            "price owner { id name } } }";
        const std::string itemDocument =
            "query Item($id: ID!) { item(id: $id) { id name color price } }";
        // A Relay-style connection, paged by the host: the cursor goes into $after.
        const std::string pageDocument =
            "query Page($first: Int!, $after: String, $filter: ItemFilter) { itemsPage(first: "
            "$first, after: $after, filter: $filter) { nodes { id name } pageInfo { endCursor "
            "hasNextPage } totalCount } }";
        const std::string paged =
            R"(, "data_path": "itemsPage", "cursor_variable": "after",
                 "has_next_path": "itemsPage.pageInfo.hasNextPage")";
        const auto pagedExecution = [](const std::string& mode, int maxItems) {
            return R"(, "execution": {"mode": ")" + mode +
                   R"(", "items_path": "data.nodes", "cursor_path": "data.pageInfo.endCursor",
                       "done_path": "last_page", "poll_interval_ms": 10, "max_items": )" +
                   std::to_string(maxItems) + "}";
        };
        const std::vector<std::string> ops{
            operation("echo", gql, echoDocument),
            operation("echo_sdl", gql, echoDocument, sdlFile),
            operation("echo_json", gql, echoDocument, jsonFile),
            operation("item", gql, itemDocument),
            operation("items", gql,
                      "query Items($filter: ItemFilter, $first: Int = 20, $order: Order = ASC) { "
                      "items(filter: $filter, first: $first, order: $order) { id name color tags "
                      "price } }"),
            operation("partial", gql,
                      "query Partial($ids: [ID!]!) { partial(ids: $ids) { id name } }"),
            operation("fail", gql,
                      "query Fail($message: String!) { fail(message: $message) { id } }"),
            operation("wrong_type", gql, "query WrongType($id: String!) { item(id: $id) { id } }"),
            operation("status_500", base() + "/status/500", "{ now }", noIntrospection),
            operation("secure_anonymous", base() + "/secure/graphql", "{ whoami }",
                      noIntrospection),
            operation("secure", base() + "/secure/graphql", "query WhoAmI { whoami }",
                      noIntrospection, R"(, "auth_profile": "gql")"),
            operation("slow", base() + "/slow/graphql?ms=3000", "{ now }", noIntrospection,
                      R"(, "execution": {"upstream_timeout_ms": 500})"),
            operation("slow_total", base() + "/slow/graphql?ms=3000", "{ now }",
                      noIntrospection + R"(, "timeouts": {"total_ms": 500})",
                      R"(, "execution": {"upstream_timeout_ms": 5000})"),
            operation("create", gql, createDocument),
            operation("create_sdl", gql, createDocument, sdlFile),
            operation("create_json", gql, createDocument, jsonFile),
            operation("big", gql, "query Big($count: Int!) { bigList(count: $count) { id price } }",
                      R"(, "data_path": "bigList")",
                      R"(, "execution": {"mode": "window", "items_path": "data",
                          "done_path": "data", "max_items": 100, "aggregation_mode": "stats",
                          "aggregation": {"numeric_paths": ["price"]}})"),
            operation("page", gql, pageDocument),
            operation("pages", gql, pageDocument, paged, pagedExecution("window", 1000)),
            operation("pages_few", gql, pageDocument, paged, pagedExecution("window", 4)),
            operation("pages_session", gql, pageDocument, paged, pagedExecution("session", 1000)),
            operation("job", gql, itemDocument, "",
                      R"(, "execution": {"mode": "async_job", "upstream_timeout_ms": 10000})"),
            operation("down", "http://127.0.0.1:" + std::to_string(refusedPort_) + "/graphql",
                      "query Down($id: ID!, $filter: ItemFilter) { items(filter: $filter) { id } "
                      "item(id: $id) { id } }"),
        };
        const std::string config =
            dir_->write("crank.json", configText(*dir_, joined(ops), "crank.db", true));
        crankd_ = new ChildProcess(
            std::vector<std::string>{CRANKD_PATH, "--config", config, "--listen", "127.0.0.1:0"},
            {{"CRANK_TEST_GQL_TOKEN", kToken}});
        const auto port = crankd_->waitForListeningPort(30s);
        ASSERT_TRUE(port) << crankd_->stderrText();
        port_ = *port;
    }

    static void TearDownTestSuite() {
        stopChild(crankd_);
        stopChild(fixture_);
        delete dir_;
        dir_ = nullptr;
    }

    void SetUp() override {
        ASSERT_NE(port_, 0);
        drain();
        client_.emplace(port_);
        ASSERT_TRUE(client_->open());
    }

    /// Reads what the children wrote so far, so that no pipe fills up.
    static void drain() {
        crankd_->waitForStderrLine("\x01 never printed", 20ms);
        fixture_->waitForStderrLine("\x01 never printed", 2ms);
    }

    /// tools/call; returns the `result` object and sets elapsedMs_.
    rapidjson::Document call(const std::string& tool, const std::string& arguments = "{}") {
        const auto start = Clock::now();
        rapidjson::Document result = client_->callTool(tool, arguments);
        elapsedMs_ = msBetween(start, Clock::now());
        return result;
    }

    /// The structuredContent of a call that must succeed (not isError).
    rapidjson::Document ok(const std::string& tool, const std::string& arguments = "{}") {
        const rapidjson::Document result = call(tool, arguments);
        EXPECT_FALSE(isError(result)) << tool << " " << arguments << ": " << text(result);
        return structured(result);
    }

    /// The text of a call that must fail (isError).
    std::string failed(const std::string& tool, const std::string& arguments = "{}") {
        const rapidjson::Document result = call(tool, arguments);
        EXPECT_TRUE(isError(result)) << tool << " " << arguments << ": " << text(result);
        return firstText(result);
    }

    /// The inputSchema of a published tool ({} after ADD_FAILURE).
    rapidjson::Document inputSchema(const std::string& tool) {
        auto tools = toolsOf(*client_);
        rapidjson::Document out;
        out.SetObject();
        const auto it = tools.find(tool);
        if (it == tools.end() || !it->second.HasMember("inputSchema")) {
            ADD_FAILURE() << "no tool " << tool;
            return out;
        }
        out.CopyFrom(it->second["inputSchema"], out.GetAllocator());
        return out;
    }

    static rapidjson::Document stats() {
        return parse(exchange(fixturePort_, "GET", "/stats", {}).body);
    }

    static std::int64_t requests() {
        const rapidjson::Document s = stats();
        if (!s.IsObject() || !s.HasMember("requests") || !s["requests"].IsInt64()) {
            ADD_FAILURE() << "no requests in /stats: " << text(s);
            return -1;
        }
        return s["requests"].GetInt64();
    }

    /// POST /admin/reset: the seed items only (other tests add items), counters at zero.
    static void resetFixture() {
        const crank::testing::Reply reply = exchange(fixturePort_, "POST", "/admin/reset", {});
        ASSERT_EQ(reply.status, 200) << reply.body;
    }

    /// The bodies of the last `n` GraphQL requests the fixture received, oldest first (/stats
    /// recent_bodies holds up to 32).
    static std::vector<rapidjson::Document> recentBodies(std::size_t n) {
        std::vector<rapidjson::Document> out;
        const rapidjson::Document s = stats();
        const rapidjson::Value* recent = at(s, "recent_bodies");
        if (recent == nullptr || !recent->IsArray() || recent->Size() < n) {
            ADD_FAILURE() << "fewer than " << n << " recent_bodies in /stats: " << text(s);
            return out;
        }
        for (rapidjson::SizeType i = recent->Size() - static_cast<rapidjson::SizeType>(n);
             i < recent->Size(); ++i) {
            rapidjson::Document copy;
            copy.CopyFrom((*recent)[i], copy.GetAllocator());
            out.push_back(std::move(copy));
        }
        return out;
    }

    struct Pages {
        std::vector<std::string> ids;         // every node, in order
        std::vector<std::string> endCursors;  // one per page
    };

    /// Pages through itemsPage by hand with the unary "page" tool (`first` per page, `filter` a
    /// JSON object or empty), each request carrying the previous page's endCursor.
    Pages pageByHand(int first, const std::string& filter = "") {
        Pages out;
        std::string after;
        for (int page = 0; page < 100; ++page) {
            const auto r =
                ok("page", R"({"first": )" + std::to_string(first) +
                               (filter.empty() ? "" : R"(, "filter": )" + filter) +
                               (after.empty() ? "" : R"(, "after": )" + jsonQuote(after)) + "}");
            const rapidjson::Value* nodes = at(r, "data.itemsPage.nodes");
            const rapidjson::Value* cursor = at(r, "data.itemsPage.pageInfo.endCursor");
            const rapidjson::Value* next = at(r, "data.itemsPage.pageInfo.hasNextPage");
            if (nodes == nullptr || !nodes->IsArray() || cursor == nullptr || next == nullptr ||
                !next->IsBool()) {
                ADD_FAILURE() << "not a page: " << text(r);
                return out;
            }
            for (const auto& node : nodes->GetArray()) {
                out.ids.push_back(member(node, "id"));
            }
            out.endCursors.push_back(cursor->IsString() ? cursor->GetString() : "");
            if (!next->GetBool()) {
                return out;
            }
            after = out.endCursors.back();
        }
        ADD_FAILURE() << "more than 100 pages";
        return out;
    }

    /// Checks that `bodies` are the requests of one paged read: operation Page, `first` and
    /// `filter` as given, no $after on the first request, then each one's $after the endCursor of
    /// the page before.
    static void expectPagedRequests(const std::vector<rapidjson::Document>& bodies, int first,
                                    const std::vector<std::string>& endCursors,
                                    const std::string& filter = "") {
        for (std::size_t i = 0; i < bodies.size(); ++i) {
            const rapidjson::Value& body = bodies[i];
            EXPECT_EQ(textAt(body, "operationName"), R"("Page")") << i << ": " << text(body);
            EXPECT_EQ(textAt(body, "variables.first"), std::to_string(first))
                << i << ": " << text(body);
            if (filter.empty()) {
                EXPECT_EQ(at(body, "variables.filter"), nullptr) << i << ": " << text(body);
            } else {
                const rapidjson::Value* sent = at(body, "variables.filter");
                EXPECT_TRUE(sent != nullptr && *sent == parse(filter)) << i << ": " << text(body);
            }
            if (i == 0) {
                EXPECT_EQ(at(body, "variables.after"), nullptr)
                    << "the first request carries no cursor: " << text(body);
            } else if (i - 1 < endCursors.size()) {
                EXPECT_EQ(textAt(body, "variables.after"), jsonQuote(endCursors[i - 1]))
                    << "request " << i << " does not carry page " << i - 1
                    << "'s endCursor: " << text(body);
            }
        }
    }

    static std::string base() { return "http://127.0.0.1:" + std::to_string(fixturePort_); }

    static inline TempDir* dir_ = nullptr;
    static inline ChildProcess* fixture_ = nullptr;
    static inline ChildProcess* crankd_ = nullptr;
    static inline std::uint16_t port_ = 0;
    static inline std::uint16_t fixturePort_ = 0;
    static inline std::uint16_t refusedPort_ = 0;
    std::optional<McpClient> client_;
    std::int64_t elapsedMs_ = 0;
};

// --- input schemas -----------------------------------------------------------------------------

TEST_F(GraphqlTest, ToolsListPublishesInputSchemasDerivedFromTheVariables) {
    auto tools = toolsOf(*client_);
    for (const char* name : {"echo", "item", "items", "create", "big", "job_start", "down"}) {
        EXPECT_TRUE(tools.contains(name)) << name;
    }
    ASSERT_TRUE(tools.contains("echo") && tools.contains("item") && tools.contains("items"));

    // Descriptions: the root field's, from the schema.
    EXPECT_EQ(member(tools["item"], "description"), "Looks up one item by its id.");
    EXPECT_EQ(member(tools["echo"], "description"),
              "JSON.stringify of the arguments as they arrived, after coercion (absent ones are "
              "left out).");
    EXPECT_EQ(member(tools["create"], "description"),
              "Adds an item (the store holds at most 10000) and returns it.");

    // A non-null variable without a default is required; ID is a string or an integer.
    const rapidjson::Value& item = tools["item"]["inputSchema"];
    EXPECT_EQ(textAt(item, "required"), R"(["id"])") << text(item);
    EXPECT_EQ(textAt(item, "additionalProperties"), "false");
    EXPECT_EQ(textAt(item, "properties.id.type"), R"(["string","integer"])") << text(item);
    EXPECT_EQ(textAt(item, "properties.id.description"), R"("The item id.")");

    // Defaults are there and not required; enums list their values.
    const rapidjson::Value& items = tools["items"]["inputSchema"];
    EXPECT_EQ(at(items, "required"), nullptr) << text(items);
    EXPECT_EQ(textAt(items, "properties.first.default"), "20") << text(items);
    EXPECT_EQ(textAt(items, "properties.first.type"), R"("integer")");
    EXPECT_EQ(textAt(items, "properties.order.default"), R"("ASC")");
    EXPECT_EQ(textAt(items, "properties.order.enum"), R"(["ASC","DESC"])");
    EXPECT_EQ(textAt(items, "properties.filter.$ref"), R"("#/$defs/ItemFilter")");

    const rapidjson::Value& echo = tools["echo"]["inputSchema"];
    EXPECT_EQ(at(echo, "required"), nullptr) << text(echo);
    EXPECT_EQ(textAt(echo, "additionalProperties"), "false");
    // Int: a 32-bit integer; Float: number; String; Boolean.
    EXPECT_EQ(textAt(echo, "properties.int.type"), R"("integer")");
    EXPECT_EQ(textAt(echo, "properties.int.minimum"), "-2147483648");
    EXPECT_EQ(textAt(echo, "properties.int.maximum"), "2147483647");
    EXPECT_EQ(textAt(echo, "properties.int.description"), R"("An Int.")");
    EXPECT_EQ(textAt(echo, "properties.float.type"), R"("number")");
    EXPECT_EQ(textAt(echo, "properties.string.type"), R"("string")");
    EXPECT_EQ(textAt(echo, "properties.bool.type"), R"("boolean")");
    EXPECT_EQ(textAt(echo, "properties.id.type"), R"(["string","integer"])");
    // Enums, lists of enums, nested lists.
    EXPECT_EQ(textAt(echo, "properties.color.type"), R"("string")");
    EXPECT_EQ(textAt(echo, "properties.color.enum"), R"(["RED","GREEN","BLUE","PURPLE"])");
    EXPECT_EQ(textAt(echo, "properties.colors.type"), R"("array")");
    EXPECT_EQ(textAt(echo, "properties.colors.items.enum"), R"(["RED","GREEN","BLUE","PURPLE"])");
    EXPECT_EQ(textAt(echo, "properties.matrix.type"), R"("array")");
    // [[Int]]: the inner lists and their items may be null.
    EXPECT_EQ(textAt(echo, "properties.matrix.items.anyOf.0.type"), R"("array")");
    EXPECT_EQ(textAt(echo, "properties.matrix.items.anyOf.1.type"), R"("null")");
    EXPECT_EQ(textAt(echo, "properties.matrix.items.anyOf.0.items.anyOf.0.type"), R"("integer")");
    EXPECT_EQ(textAt(echo, "properties.matrix.items.anyOf.0.items.anyOf.1.type"), R"("null")");
    // A custom scalar is a string, and its description names it.
    EXPECT_EQ(textAt(echo, "properties.when.type"), R"("string")");
    EXPECT_TRUE(contains(textAt(echo, "properties.when.description"), "GraphQL scalar DateTime"));
    EXPECT_TRUE(contains(textAt(echo, "properties.when.description"), "A custom scalar."));

    // Input objects in $defs, closed, recursive through `and`; Range requires max only.
    EXPECT_EQ(textAt(echo, "properties.filter.$ref"), R"("#/$defs/ItemFilter")");
    const rapidjson::Value* filter = at(echo, "$defs.ItemFilter");
    ASSERT_NE(filter, nullptr) << text(echo);
    EXPECT_EQ(textAt(*filter, "type"), R"("object")");
    EXPECT_EQ(textAt(*filter, "additionalProperties"), "false");
    EXPECT_EQ(at(*filter, "required"), nullptr) << text(*filter);
    EXPECT_EQ(textAt(*filter, "properties.and.type"), R"("array")");
    EXPECT_EQ(textAt(*filter, "properties.and.items.$ref"), R"("#/$defs/ItemFilter")");
    EXPECT_EQ(textAt(*filter, "properties.price.$ref"), R"("#/$defs/Range")");
    EXPECT_EQ(textAt(*filter, "properties.color.enum"), R"(["RED","GREEN","BLUE","PURPLE"])");
    EXPECT_EQ(textAt(*filter, "properties.tags.items.type"), R"("string")");
    EXPECT_EQ(textAt(*filter, "properties.createdAfter.type"), R"("string")");
    EXPECT_EQ(textAt(*filter, "properties.nameContains.default"), R"("")");
    const rapidjson::Value* range = at(echo, "$defs.Range");
    ASSERT_NE(range, nullptr) << text(echo);
    EXPECT_EQ(textAt(*range, "required"), R"(["max"])");
    EXPECT_EQ(textAt(*range, "additionalProperties"), "false");
    EXPECT_EQ(textAt(*range, "properties.min.maximum"), "2147483647");

    // A mutation's input object with a default-carrying non-null field: not required.
    const rapidjson::Value& create = tools["create"]["inputSchema"];
    EXPECT_EQ(textAt(create, "required"), R"(["input"])") << text(create);
    EXPECT_EQ(textAt(create, "$defs.NewItem.required"), R"(["name","owner"])") << text(create);
    EXPECT_EQ(textAt(create, "$defs.NewItem.properties.color.default"), R"("RED")");
    EXPECT_EQ(textAt(create, "$defs.NewItem.properties.tags.default"), "[]");
    EXPECT_EQ(textAt(create, "$defs.OwnerRef.additionalProperties"), "false");
}

TEST_F(GraphqlTest, InputOutsideTheDerivedSchemaIsRefusedBeforeTheUpstream) {
    const std::int64_t before = requests();
    EXPECT_TRUE(contains(failed("echo", R"({"color": "YELLOW"})"),
                         "invalid input:\n- input.color: must be one of \"RED\", \"GREEN\", "
                         "\"BLUE\", \"PURPLE\", got \"YELLOW\""));
    EXPECT_TRUE(contains(failed("echo", R"({"int": 2147483648})"),
                         "input.int: must be an integer ≤ 2147483647"));
    EXPECT_TRUE(contains(failed("echo", R"({"nope": 1})"),
                         "input.nope: is not allowed (unknown property)"));
    EXPECT_TRUE(contains(failed("echo", R"({"filter": {"price": {"min": 1}}})"),
                         "input.filter.price.max: is required"));
    EXPECT_TRUE(contains(failed("echo", R"({"filter": {"and": [{"colour": "RED"}]}})"),
                         "input.filter.and[0].colour: is not allowed"));
    EXPECT_TRUE(contains(failed("item", "{}"), "input.id: is required"));
    EXPECT_EQ(requests(), before) << "a refused input reached the upstream";
}

// --- variables ---------------------------------------------------------------------------------

TEST_F(GraphqlTest, VariablesOfEveryKindReachTheUpstreamExactly) {
    const std::string input =
        R"({"int": -2147483648, "float": 1.5, "string": "h\u00e9llo \u2603 \ud834\udd1e \"q\"",
            "bool": true, "id": 42, "color": "GREEN", "colors": ["RED", "BLUE", "RED"],
            "matrix": [[1, 3], [2], []],
            "filter": {"and": [{"price": {"min": 1, "max": 3}}, {"tags": ["fresh"]}],
                       "color": "RED", "createdAfter": "2024-01-01T00:00:00Z"},
            "when": "2024-01-05T23:00:00+01:00"})";
    const auto r = ok("echo", input);
    // What the server received: the variables as sent.
    const rapidjson::Document s = stats();
    const rapidjson::Value* sent = at(s, "last_body.variables");
    ASSERT_NE(sent, nullptr) << text(s);
    EXPECT_TRUE(*sent == parse(input)) << text(*sent);
    EXPECT_EQ(textAt(s, "last_body.operationName"), R"("Echo")");
    EXPECT_TRUE(contains(textAt(s, "last_headers.accept"), "application/graphql-response+json"));
    EXPECT_TRUE(contains(textAt(s, "last_headers.content-type"), "application/json"));

    // What the resolver got after coercion: ID as a string, input-field defaults filled in,
    // DateTime normalized to UTC.
    const rapidjson::Value* echoed = at(r, "data.echo");
    ASSERT_TRUE(echoed != nullptr && echoed->IsString()) << text(r);
    const rapidjson::Document got = parse(echoed->GetString());
    const rapidjson::Document expected = parse(
        R"({"int": -2147483648, "float": 1.5, "string": "h\u00e9llo \u2603 \ud834\udd1e \"q\"",
            "bool": true, "id": "42", "color": "GREEN", "colors": ["RED", "BLUE", "RED"],
            "matrix": [[1, 3], [2], []],
            "filter": {"color": "RED", "createdAfter": "2024-01-01T00:00:00.000Z",
                       "and": [{"price": {"min": 1, "max": 3}, "nameContains": ""},
                               {"tags": ["fresh"], "nameContains": ""}],
                       "nameContains": ""},
            "when": "2024-01-05T22:00:00.000Z"})");
    EXPECT_TRUE(got == expected) << echoed->GetString();

    // An ID given as a string; absent variables are not sent at all.
    const auto byString = ok("echo", R"({"id": "i-\u00fc", "float": 2})");
    EXPECT_EQ(textAt(byString, "data.echo"), R"("{\"float\":2,\"id\":\"i-ü\"}")") << text(byString);
    EXPECT_EQ(textAt(stats(), "last_body.variables"), R"({"id":"i-ü","float":2})");
    const auto none = ok("echo");
    EXPECT_EQ(textAt(none, "data.echo"), R"("{}")") << text(none);
    EXPECT_EQ(textAt(stats(), "last_body.variables"), "{}");
}

TEST_F(GraphqlTest, NullItemsOfANullableListReachTheUpstream) {
    // [[Int]]: the inner items are nullable, so [[1, null], [2]] is a valid value.
    const rapidjson::Document result = call("echo", R"({"matrix": [[1, null], [2]]})");
    ASSERT_FALSE(isError(result)) << text(result);
    EXPECT_EQ(textAt(structured(result), "data.echo"), R"("{\"matrix\":[[1,null],[2]]}")");
    EXPECT_EQ(textAt(stats(), "last_body.variables"), R"({"matrix":[[1,null],[2]]})");
}

TEST_F(GraphqlTest, NestedInputObjectsSelectExactlyTheMatchingItems) {
    const auto idsOf = [](const rapidjson::Value& r) {
        std::vector<std::string> out;
        const rapidjson::Value* list = at(r, "data.items");
        if (list == nullptr || !list->IsArray()) {
            ADD_FAILURE() << "no data.items: " << text(r);
            return out;
        }
        for (const auto& item : list->GetArray()) {
            out.push_back(member(item, "id"));
        }
        return out;
    };
    const auto giftFrom5To20 = [](const SeedItem& i) {
        return i.price >= 5 && i.price <= 20 && hasTag(i, "gift");
    };
    const std::string andFilter =
        R"("and": [{"price": {"min": 5, "max": 20}}, {"tags": ["gift"]}])";

    const auto all = ok("items", R"({"filter": {)" + andFilter + "}}");
    EXPECT_EQ(idsOf(all), seedIds(giftFrom5To20)) << text(all);
    EXPECT_EQ(idsOf(all).size(), 4U);

    const auto blue = ok("items", R"({"filter": {)" + andFilter + R"(, "color": "BLUE"}})");
    EXPECT_EQ(idsOf(blue),
              seedIds([&](const SeedItem& i) { return giftFrom5To20(i) && i.color == "BLUE"; }))
        << text(blue);
    ASSERT_FALSE(at(blue, "data.items")->Empty());
    EXPECT_EQ(textAt((*at(blue, "data.items"))[0], "name"), R"("Blue Mug")");

    // Nested deeper, with a max only, a default overridden and the order reversed.
    const auto deep = ok("items", R"({"filter": {"and": [{"and": [{"price": {"max": 10}}]},
                                          {"tags": ["small"]}]},
                        "order": "DESC", "first": 2})");
    std::vector<std::string> small = seedIds(
        [](const SeedItem& i) { return i.price >= 0 && i.price <= 10 && hasTag(i, "small"); });
    std::reverse(small.begin(), small.end());
    small.resize(std::min<std::size_t>(small.size(), 2));
    EXPECT_EQ(idsOf(deep), small) << text(deep);
    EXPECT_EQ(small.size(), 2U);
}

// --- results and errors ------------------------------------------------------------------------

TEST_F(GraphqlTest, PartialDataComesWithItsErrors) {
    const rapidjson::Document result = call("partial", R"({"ids": ["i1", "bad1", "i2", "nope"]})");
    EXPECT_FALSE(isError(result)) << text(result);
    const auto r = structured(result);
    EXPECT_EQ(textAt(r, "partial"), "true") << text(r);
    EXPECT_EQ(textAt(r, "data.partial"),
              R"([{"id":"i1","name":"Red Apple"},null,{"id":"i2","name":"Green Pear"},null])");
    const rapidjson::Value* errors = at(r, "errors");
    ASSERT_TRUE(errors != nullptr && errors->IsArray() && errors->Size() == 1) << text(r);
    EXPECT_EQ(member((*errors)[0], "message"), "cannot load item bad1");
    EXPECT_EQ(textAt((*errors)[0], "path"), R"(["partial",1])");
    EXPECT_EQ(at(r, "errors_omitted"), nullptr);
}

TEST_F(GraphqlTest, ErrorsWithoutDataAreAToolError) {
    const std::string message = failed("fail", R"({"message": "the fail \u00e9 boom"})");
    EXPECT_TRUE(contains(message, "upstream error: POST " + base() +
                                      "/graphql: GraphQL errors: the fail é boom (at fail)"));
    EXPECT_TRUE(contains(message, "(upstream)"));
    EXPECT_TRUE(contains(message, R"("http_status":200)"));
    EXPECT_TRUE(contains(message, R"("code":"FIXTURE_FAILURE")"));
    EXPECT_TRUE(contains(message, R"("path":["fail"])"));
}

TEST_F(GraphqlTest, TheUpstreamsValidationErrorsAnswer400) {
    // Valid syntax and root field, but the variable's type does not fit the argument.
    const std::string wrongType = failed("wrong_type", R"({"id": "i1"})");
    EXPECT_TRUE(contains(wrongType,
                         "answered 400 with GraphQL errors: Variable \"$id\" of type \"String!\" "
                         "used in position expecting type \"ID!\"."));
    EXPECT_TRUE(contains(wrongType, R"("http_status":400)"));
    // A value crankd lets through (any string for DateTime) that the server refuses.
    const std::string badDate = failed("echo", R"({"when": "yesterday"})");
    EXPECT_TRUE(contains(badDate, "answered 400 with GraphQL errors: Variable \"$when\""));
    EXPECT_TRUE(contains(badDate, "DateTime cannot represent \\\"yesterday\\\"") ||
                contains(badDate, "DateTime cannot represent \"yesterday\""));
}

TEST_F(GraphqlTest, TheClientsTraceContextIsSentAsHeaders) {
    const rapidjson::Document result = client_->callTool(
        "secure", "{}", nullptr,
        R"({"traceparent":"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",)"
        R"("tracestate":"rojo=00f067aa0ba902b7"})");
    EXPECT_FALSE(isError(result)) << text(result);
    const rapidjson::Document s = stats();
    EXPECT_EQ(textAt(s, "last_headers.traceparent"),
              R"("00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01")")
        << text(s);
    EXPECT_EQ(textAt(s, "last_headers.tracestate"), R"("rojo=00f067aa0ba902b7")") << text(s);
    drain();
}

TEST_F(GraphqlTest, HttpErrorsAndAnAuthProfile) {
    const std::string status = failed("status_500");
    EXPECT_TRUE(contains(status, "POST " + base() + "/status/500: answered 500"));
    EXPECT_TRUE(contains(status, "fixture status 500"));
    EXPECT_TRUE(contains(status, R"("http_status":500)"));

    const std::string anonymous = failed("secure_anonymous");
    EXPECT_TRUE(contains(anonymous, "answered 401"));
    EXPECT_TRUE(contains(anonymous, "unauthorized"));

    const rapidjson::Document result = call("secure");
    ASSERT_FALSE(isError(result)) << text(result);
    // The fixture saw "Bearer fixture-token" and returned it; crankd redacted the secret.
    EXPECT_EQ(textAt(structured(result), "data.whoami"), R"("Bearer [redacted]")");
    EXPECT_TRUE(lacks(text(result), kToken));
    EXPECT_EQ(textAt(stats(), "last_headers.authorization"),
              std::string("\"Bearer ") + kToken + "\"");
    drain();
    EXPECT_TRUE(lacks(crankd_->stderrText(), kToken)) << "a secret in crankd's log";
}

TEST_F(GraphqlTest, ASlowUpstreamTimesOut) {
    const std::string message = failed("slow");
    EXPECT_LT(elapsedMs_, 2500) << message;
    EXPECT_TRUE(contains(message, "(timeout)"));
    EXPECT_TRUE(contains(message, "POST " + base() + "/slow/graphql"));
    // The fixture saw the request go away before it answered.
    EXPECT_TRUE(eventually(
        [] {
            const rapidjson::Document s = stats();
            return s.HasMember("slow_aborted") && s["slow_aborted"].GetInt() >= 1;
        },
        3s))
        << text(stats());
    // The plugin's own bound, timeouts.total_ms, is named.
    const std::string total = failed("slow_total");
    EXPECT_LT(elapsedMs_, 2500) << total;
    EXPECT_TRUE(contains(total, "within 500 ms (timeouts.total_ms)"));
    EXPECT_TRUE(contains(total, "(timeout)"));
}

TEST_F(GraphqlTest, ATimeoutNamesUpstreamTimeoutMs) {
    const std::string message = failed("slow");
    EXPECT_LT(elapsedMs_, 2500) << message;
    EXPECT_TRUE(contains(message, "500 ms"));
    EXPECT_TRUE(contains(message, "upstream_timeout_ms"));
}

// --- mutations and @oneOf ----------------------------------------------------------------------

TEST_F(GraphqlTest, AMutationCreatesAnItemAndOneOfTakesExactlyOneMember) {
    const auto byId = ok("create", R"({"input": {"name": "Test Kettle", "tags": ["made-by-test"],
                                                  "price": 9.5, "owner": {"id": "u2"}}})");
    const rapidjson::Value* created = at(byId, "data.createItem");
    ASSERT_NE(created, nullptr) << text(byId);
    EXPECT_EQ(member(*created, "name"), "Test Kettle");
    EXPECT_EQ(member(*created, "color"), "RED") << "the input field's default";
    EXPECT_EQ(textAt(*created, "tags"), R"(["made-by-test"])");
    EXPECT_EQ(textAt(*created, "price"), "9.5");
    EXPECT_EQ(textAt(*created, "owner"), R"({"id":"u2","name":"Brian Kernighan"})");
    EXPECT_TRUE(contains(member(*created, "id"), "i"));
    // Then found by the query.
    const auto found = ok("item", R"({"id": ")" + member(*created, "id") + R"("})");
    EXPECT_EQ(textAt(found, "data.item.name"), R"("Test Kettle")") << text(found);

    const auto byEmail = ok("create_sdl", R"({"input": {"name": "Test Pen", "color": "BLUE",
                                       "owner": {"email": "ada@example.test"}}})");
    EXPECT_EQ(textAt(byEmail, "data.createItem.owner.name"), R"("Ada Lovelace")") << text(byEmail);
    EXPECT_EQ(textAt(byEmail, "data.createItem.tags"), "[]");

    // Both members of OwnerRef, or none: crankd refuses before the upstream (schema files).
    const std::int64_t before = requests();
    for (const char* tool : {"create_sdl", "create_json"}) {
        const std::string both =
            failed(tool, R"({"input": {"name": "x", "owner": {"id": "u1", "email": "a@b"}}})");
        EXPECT_TRUE(contains(both, "invalid input:\n- input.input.owner")) << tool;
        const std::string none = failed(tool, R"({"input": {"name": "x", "owner": {}}})");
        EXPECT_TRUE(contains(none, "invalid input:\n- input.input.owner")) << tool;
    }
    EXPECT_EQ(requests(), before) << "a refused oneOf input reached the upstream";
}

TEST_F(GraphqlTest, OneOfFromIntrospectionTakesExactlyOneMember) {
    const std::int64_t before = requests();
    const rapidjson::Document result =
        call("create", R"({"input": {"name": "x", "owner": {"id": "u1", "email": "a@b"}}})");
    const rapidjson::Document schema = inputSchema("create");
    EXPECT_TRUE(isError(result)) << text(result);
    EXPECT_TRUE(contains(firstText(result), "invalid input:\n- input.input.owner"));
    EXPECT_EQ(requests(), before) << "a refused oneOf input reached the upstream";
    EXPECT_EQ(textAt(schema, "$defs.OwnerRef.maxProperties"), "1") << text(schema);
}

// --- windows and jobs --------------------------------------------------------------------------

TEST_F(GraphqlTest, AListReadOnceIsAWindow) {
    const auto many = ok("big", R"({"count": 500})");
    EXPECT_EQ(textAt(many, "item_count"), "100") << text(many);
    EXPECT_EQ(member(many, "stop_reason"), "max_items") << text(many);
    EXPECT_EQ(textAt(many, "has_more"), "true");
    EXPECT_EQ(textAt(many, "stats.count"), "100");
    EXPECT_EQ(textAt(many, "stats.numeric.price.count"), "100");
    EXPECT_EQ(textAt(many, "stats.numeric.price.min"), "0.0");
    EXPECT_EQ(textAt(many, "stats.numeric.price.max"), "0.99");
    const rapidjson::Value* sum = at(many, "stats.numeric.price.sum");
    ASSERT_TRUE(sum != nullptr && sum->IsNumber()) << text(many);
    EXPECT_NEAR(sum->GetDouble(), 49.5, 1e-9);  // b0..b99: (0 + ... + 99) / 100
    EXPECT_EQ(textAt(stats(), "last_body.variables"), R"({"count":500})");

    const std::int64_t before = requests();
    const auto few = ok("big", R"({"count": 50})");
    EXPECT_EQ(textAt(few, "item_count"), "50") << text(few);
    EXPECT_EQ(member(few, "stop_reason"), "upstream_end") << text(few);
    EXPECT_EQ(textAt(few, "has_more"), "false");
    EXPECT_EQ(textAt(few, "window_complete"), "true");
    EXPECT_EQ(textAt(few, "stats.numeric.price.max"), "0.49");
    EXPECT_EQ(requests(), before + 1) << "done_path ends the window after one request";
}

// A Relay-style connection (itemsPage) paged by the host: cursor_variable gets the previous page's
// endCursor (execution.cursor_path), has_next_path becomes last_page, which done_path reads.

TEST_F(GraphqlTest, AWindowPagesThroughAConnection) {
    resetFixture();  // the seed items only: other tests create items
    const std::vector<std::string> all = seedIds([](const SeedItem&) { return true; });
    const std::size_t pages = (all.size() + 2) / 3;
    ASSERT_EQ(pages, 7U);
    const std::int64_t before = requests();
    const auto r = ok("pages", R"({"first": 3})");
    const std::int64_t sent = requests() - before;
    const std::vector<rapidjson::Document> bodies = recentBodies(pages);

    EXPECT_EQ(textAt(r, "item_count"), std::to_string(all.size())) << text(r);
    const std::vector<std::string> ids = idsAt(r, "items");
    EXPECT_EQ(ids, all) << "every seed item once, in id order: " << text(r);
    EXPECT_EQ(std::set<std::string>(ids.begin(), ids.end()).size(), ids.size()) << "duplicates";
    EXPECT_EQ(member(r, "stop_reason"), "upstream_end") << text(r);
    EXPECT_EQ(textAt(r, "has_more"), "false");
    EXPECT_EQ(textAt(r, "window_complete"), "true");
    EXPECT_EQ(sent, static_cast<std::int64_t>(pages)) << "one request per page of 3";

    // The same pages read by hand: the window's requests carried their endCursors in turn.
    const Pages byHand = pageByHand(3);
    EXPECT_EQ(byHand.ids, all);
    ASSERT_EQ(byHand.endCursors.size(), pages);
    EXPECT_EQ(std::set<std::string>(byHand.endCursors.begin(), byHand.endCursors.end()).size(),
              pages)
        << "a cursor repeated";
    expectPagedRequests(bodies, 3, byHand.endCursors);
    EXPECT_EQ(textAt(r, "cursor"), jsonQuote(byHand.endCursors.back())) << text(r);
}

TEST_F(GraphqlTest, AWindowPagesThroughAFilteredConnection) {
    resetFixture();
    const std::vector<std::string> gifts =
        seedIds([](const SeedItem& i) { return hasTag(i, "gift"); });
    ASSERT_EQ(gifts.size(), 5U);
    const std::string filter = R"({"tags": ["gift"]})";
    const std::int64_t before = requests();
    const auto r = ok("pages", R"({"first": 3, "filter": )" + filter + "}");
    const std::int64_t sent = requests() - before;
    const std::vector<rapidjson::Document> bodies = recentBodies(2);

    EXPECT_EQ(textAt(r, "item_count"), "5") << text(r);
    EXPECT_EQ(idsAt(r, "items"), gifts) << text(r);
    EXPECT_EQ(member(r, "stop_reason"), "upstream_end") << text(r);
    EXPECT_EQ(sent, 2) << "two pages: 3 items, then 2";
    const Pages byHand = pageByHand(3, filter);
    EXPECT_EQ(byHand.ids, gifts);
    ASSERT_EQ(byHand.endCursors.size(), 2U);
    expectPagedRequests(bodies, 3, byHand.endCursors, filter);

    // No item matches: one empty page, whose endCursor is null, ends the window.
    const std::int64_t beforeNone = requests();
    const auto none = ok("pages", R"({"first": 3, "filter": {"tags": ["no-such-tag"]}})");
    EXPECT_EQ(textAt(none, "item_count"), "0") << text(none);
    EXPECT_EQ(member(none, "stop_reason"), "upstream_end") << text(none);
    EXPECT_EQ(textAt(none, "has_more"), "false") << text(none);
    EXPECT_EQ(requests() - beforeNone, 1);
}

TEST_F(GraphqlTest, AWindowOverAConnectionStopsAtMaxItems) {
    resetFixture();
    const std::int64_t before = requests();
    const auto r = ok("pages_few", R"({"first": 3})");
    const std::int64_t sent = requests() - before;
    const std::vector<rapidjson::Document> bodies = recentBodies(2);

    EXPECT_EQ(textAt(r, "item_count"), "4") << text(r);
    EXPECT_EQ(idsAt(r, "items"), (std::vector<std::string>{"i1", "i2", "i3", "i4"})) << text(r);
    EXPECT_EQ(member(r, "stop_reason"), "max_items") << text(r);
    EXPECT_EQ(textAt(r, "has_more"), "true");
    EXPECT_EQ(sent, 2) << "max_items 4 is reached on the second page of 3";
    const Pages byHand = pageByHand(3);
    ASSERT_FALSE(byHand.endCursors.empty());
    expectPagedRequests(bodies, 3, byHand.endCursors);
}

TEST_F(GraphqlTest, ASessionPagesThroughAConnection) {
    resetFixture();
    const std::vector<std::string> all = seedIds([](const SeedItem&) { return true; });
    const std::size_t pages = (all.size() + 2) / 3;
    const std::int64_t before = requests();
    const auto started = ok("pages_session_start", R"({"first": 3})");
    ASSERT_TRUE(started.HasMember("session_id")) << text(started);
    const std::string session = R"({"session_id": ")" + member(started, "session_id") + "\"";

    std::vector<std::string> ids;
    std::string cursor;
    std::string status;
    rapidjson::Document last;
    const auto deadline = Clock::now() + 15s;
    while (Clock::now() < deadline) {
        last = ok("pages_session_poll",
                  session + (cursor.empty() ? "" : R"(, "cursor": )" + jsonQuote(cursor)) + "}");
        for (const std::string& id : idsAt(last, "items")) {
            ids.push_back(id);
        }
        const rapidjson::Value* next = at(last, "cursor");
        if (next != nullptr && next->IsString()) {
            cursor = next->GetString();
        }
        status = member(last, "status");
        if (status != "active" && textAt(last, "has_more") != "true") {
            break;
        }
        std::this_thread::sleep_for(20ms);
    }
    EXPECT_EQ(status, "completed") << text(last);
    EXPECT_EQ(ids, all) << "every seed item once, in id order; last poll: " << text(last);
    EXPECT_EQ(textAt(last, "item_count"), std::to_string(all.size())) << text(last);
    EXPECT_EQ(requests() - before, static_cast<std::int64_t>(pages)) << "one request per page";
    const std::vector<rapidjson::Document> bodies = recentBodies(pages);
    expectPagedRequests(bodies, 3, pageByHand(3).endCursors);
}

TEST_F(GraphqlTest, ACursorTheUpstreamRefusesEndsTheWindowWithItsError) {
    resetFixture();
    // $after is declared, so the input's value goes out with the first request.
    const std::int64_t before = requests();
    const rapidjson::Document result = call("pages", R"({"first": 3, "after": "bogus"})");
    EXPECT_TRUE(isError(result)) << "no item before the error: " << text(result);
    const rapidjson::Document r = resultObject(result);
    EXPECT_EQ(member(r, "stop_reason"), "upstream_error") << text(r);
    EXPECT_EQ(textAt(r, "item_count"), "0") << text(r);
    const rapidjson::Value* error = at(r, "error.message");
    const std::string message = error != nullptr && error->IsString() ? error->GetString() : "";
    EXPECT_TRUE(contains(message, R"(GraphQL errors: invalid cursor "bogus" for itemsPage)"))
        << text(r);
    EXPECT_EQ(requests() - before, 1) << "no second request after the error";
    EXPECT_EQ(textAt(stats(), "last_body.variables.after"), R"("bogus")");

    // A real cursor that points past the end of a shorter (filtered) list is refused too.
    const Pages byHand = pageByHand(3);
    ASSERT_EQ(byHand.endCursors.size(), 7U);
    const std::string farCursor = byHand.endCursors[5];  // after the 18th item; 5 gifts
    const std::string far =
        failed("page", R"({"first": 3, "filter": {"tags": ["gift"]}, "after": )" +
                           jsonQuote(farCursor) + "}");
    EXPECT_TRUE(contains(far, "invalid cursor")) << far;

    // A session over the same operation fails with the same error.
    const auto started = ok("pages_session_start", R"({"first": 3, "after": "bogus"})");
    ASSERT_TRUE(started.HasMember("session_id")) << text(started);
    const std::string session = R"({"session_id": ")" + member(started, "session_id") + "\"}";
    rapidjson::Document poll;
    EXPECT_TRUE(eventually(
        [&] {
            poll = ok("pages_session_poll", session);
            return member(poll, "status") != "active";
        },
        10s))
        << text(poll);
    EXPECT_EQ(member(poll, "status"), "failed") << text(poll);
    EXPECT_TRUE(contains(text(poll), "invalid cursor")) << text(poll);
}

TEST_F(GraphqlTest, AnAsyncJobRunsTheQuery) {
    const auto started = ok("job_start", R"({"id": "i5"})");
    ASSERT_TRUE(started.HasMember("job_id")) << text(started);
    EXPECT_EQ(member(started, "status"), "queued");
    const std::string job = R"({"job_id": ")" + member(started, "job_id") + "\"}";
    rapidjson::Document status;
    ASSERT_TRUE(eventually(
        [&] {
            status = ok("job_status", job);
            const std::string s = member(status, "status");
            return s != "queued" && s != "running";
        },
        15s))
        << text(status);
    EXPECT_EQ(member(status, "status"), "succeeded") << text(status);
    const auto result = ok("job_result", job);
    EXPECT_EQ(textAt(result, "ready"), "true") << text(result);
    EXPECT_EQ(textAt(result, "result"),
              R"({"data":{"item":{"id":"i5","name":"Purple Scarf","color":"PURPLE","price":15}}})");
    // _start validates the input against the derived schema.
    EXPECT_TRUE(contains(failed("job_start", "{}"), "input.id: is required"));
}

// --- configurations crankd refuses -------------------------------------------------------------

TEST_F(GraphqlTest, CrankdCheckRefusesWhatCannotWork) {
    const std::string gql = base() + "/graphql";
    const std::string described = R"(, "description": "refused")";
    const std::vector<std::string> ops{
        operation("subscription", gql, "subscription Ticks { ticks }", "", described),
        operation("syntax", gql, "query Q {\n  item(id: \"i1\") { id\n}", "", described),
        operation("operation_name", gql, "query A { now } query B { now }",
                  R"(, "operation_name": "C")", described),
        operation("several", gql, "query A { now } query B { now }", "", described),
        operation("cursor", gql, "query Big($count: Int!) { bigList(count: $count) { id } }",
                  R"(, "cursor_variable": "after")", described),
        operation("template", gql, "query T { item(id: \"{{id}}\") { id } }", "", described),
        operation("unknown_field", gql, "query U($id: ID!) { itme(id: $id) { id } }", "",
                  described),
        operation("unknown_type", gql, "query V($f: ItemFiltr) { items(filter: $f) { id } }", "",
                  described),
        operation("output_type", gql, "query W($i: Item) { echo(string: \"x\") }", "", described),
    };
    const auto [status, out] =
        checkConfig(dir_->write("refused.json", configText(*dir_, joined(ops))));
    EXPECT_EQ(status, 3) << out;
    EXPECT_TRUE(contains(out,
                         "operations[0].config.document: operation \"Ticks\" is a subscription; "
                         "the GraphQL plugin runs queries and mutations only"));
    EXPECT_TRUE(contains(out, "operations[1].config.document: line 3, column 2:"));
    EXPECT_TRUE(contains(out,
                         "operations[2].config.operation_name: the document has no operation "
                         "\"C\" (it has A, B)"));
    EXPECT_TRUE(contains(out,
                         "operations[3].config.document: the document has 2 operations (A, B): "
                         "set operation_name"));
    EXPECT_TRUE(contains(out,
                         "operations[4].config.cursor_variable: the operation declares no "
                         "variable $after"));
    EXPECT_TRUE(contains(out, "operations[5].config.document: must not hold input templates"));
    EXPECT_TRUE(contains(out,
                         "operations[6].config.document: Query has no field \"itme\" (did you "
                         "mean \"item\"?)"));
    EXPECT_TRUE(contains(out,
                         "operations[7].config.document: variable $f: type ItemFiltr is not in "
                         "the schema (the schema of " +
                             gql + ", by introspection)"));
    EXPECT_TRUE(contains(out,
                         "operations[8].config.document: variable $i: type Item is an object "
                         "type, not an input type"));
    EXPECT_TRUE(contains(out, "9 configuration errors")) << "one per operation";
    EXPECT_TRUE(lacks(out, "operations[9]"));
    EXPECT_TRUE(lacks(out, "configuration is valid"));

    // The same intents written right pass.
    const std::vector<std::string> good{
        operation("query", gql, "query Q {\n  item(id: \"i1\") { id }\n}"),
        operation("named", gql, "query A { now } query B { now }", R"(, "operation_name": "B")"),
        operation("paged", gql, "query Paged($after: String) { echo(string: $after) }",
                  R"(, "cursor_variable": "after")"),
        operation("item", gql, "query U($id: ID!) { item(id: $id) { id } }"),
    };
    const auto [goodStatus, goodOut] =
        checkConfig(dir_->write("good.json", configText(*dir_, joined(good))));
    EXPECT_EQ(goodStatus, 0) << goodOut;
    EXPECT_TRUE(contains(goodOut, "configuration is valid (4 operations"));
}

// --- introspection -----------------------------------------------------------------------------

TEST_F(GraphqlTest, SchemaFilesPublishTheSameInputSchemaAsIntrospection) {
    auto tools = toolsOf(*client_);
    ASSERT_TRUE(tools.contains("echo") && tools.contains("echo_sdl") &&
                tools.contains("echo_json"));
    const rapidjson::Value& introspected = tools["echo"]["inputSchema"];
    EXPECT_TRUE(contains(text(introspected), "#/$defs/ItemFilter"));
    for (const char* name : {"echo_sdl", "echo_json"}) {
        EXPECT_EQ(text(tools[name]["inputSchema"]), text(introspected)) << name;
        EXPECT_EQ(member(tools[name], "description"), member(tools["echo"], "description")) << name;
    }
    // The schema files name OwnerRef @oneOf: exactly one member.
    for (const char* name : {"create_sdl", "create_json"}) {
        const rapidjson::Value& schema = tools[name]["inputSchema"];
        EXPECT_EQ(textAt(schema, "$defs.OwnerRef.minProperties"), "1") << name << text(schema);
        EXPECT_EQ(textAt(schema, "$defs.OwnerRef.maxProperties"), "1") << name << text(schema);
    }
    EXPECT_EQ(text(tools["create_sdl"]["inputSchema"]), text(tools["create_json"]["inputSchema"]));
    // A tool described from a schema file runs like any other.
    const auto r = ok("echo_sdl", R"({"color": "BLUE"})");
    EXPECT_EQ(textAt(r, "data.echo"), R"("{\"color\":\"BLUE\"}")");
}

TEST_F(GraphqlTest, AnUpstreamDownAtLoadStillPublishesTheTool) {
    // The shared crankd loaded with it, and logged why the schema is missing.
    drain();
    EXPECT_TRUE(contains(crankd_->stderrText(), "graphql: no schema for \"http://127.0.0.1:" +
                                                    std::to_string(refusedPort_) + "/graphql\""));
    const rapidjson::Document schema = inputSchema("down");
    // Built-in scalars keep their types; the document's input types are left open.
    EXPECT_EQ(textAt(schema, "required"), R"(["id"])") << text(schema);
    EXPECT_EQ(textAt(schema, "properties.id.type"), R"(["string","integer"])") << text(schema);
    EXPECT_TRUE(contains(textAt(schema, "properties.filter.description"),
                         "GraphQL type ItemFilter (the schema was not available)"));
    EXPECT_EQ(at(schema, "properties.filter.type"), nullptr) << text(schema);

    const std::string message = failed("down", R"({"id": "i1", "filter": {"any": 1}})");
    EXPECT_TRUE(
        contains(message, "connection refused by 127.0.0.1:" + std::to_string(refusedPort_)));
    EXPECT_TRUE(contains(message, "(unavailable)"));
    EXPECT_LT(elapsedMs_, 5000);

    const auto [status, out] = checkConfig(dir_->write(
        "down.json",
        configText(*dir_, operation("down",
                                    "http://127.0.0.1:" + std::to_string(refusedPort_) + "/graphql",
                                    "query Down($id: ID!) { item(id: $id) { id } }"))));
    EXPECT_EQ(status, 0) << out;
    EXPECT_TRUE(contains(out, "configuration is valid (1 operation"));
}

TEST_F(GraphqlTest, ImportGraphqlFromTheLiveServerMakesWorkingTools) {
    ChildProcess import(std::vector<std::string>{CRANKD_PATH, "import-graphql", base() + "/graphql",
                                                 "--prefix", "gq_"});
    ASSERT_EQ(import.waitForExit(30s), 0) << import.stderrText();
    const std::string printed = import.stdoutText();
    EXPECT_TRUE(contains(import.stderrText(), "13 operations (11 queries, 2 mutations)"));
    EXPECT_TRUE(contains(import.stderrText(), "subscriptions (Subscription) are not imported"));
    const rapidjson::Document doc = parse(printed);
    const rapidjson::Value* ops = at(doc, "operations");
    ASSERT_TRUE(ops != nullptr && ops->IsArray()) << printed;
    std::set<std::string> names;
    for (const auto& op : ops->GetArray()) {
        names.insert(member(op, "name"));
        EXPECT_EQ(member(op, "protocol"), "graphql") << text(op);
        EXPECT_EQ(textAt(op, "config.endpoint"), "\"" + base() + "/graphql\"");
    }
    for (const char* name : {"gq_item", "gq_items", "gq_items_page", "gq_big_list", "gq_echo",
                             "gq_create_item", "gq_delete_item", "gq_whoami"}) {
        EXPECT_TRUE(names.contains(name)) << name << " not imported: " << printed;
    }
    EXPECT_FALSE(names.contains("gq_ticks"));

    const std::string operations =
        printed.substr(printed.find('[') + 1, printed.rfind(']') - printed.find('[') - 1);
    const std::string config =
        dir_->write("imported.json", configText(*dir_, operations, "imported.db"));
    const auto [status, out] = checkConfig(config);
    ASSERT_EQ(status, 0) << out;
    EXPECT_TRUE(contains(out, "configuration is valid (13 operations"));

    ChildProcess crankd(
        std::vector<std::string>{CRANKD_PATH, "--config", config, "--listen", "127.0.0.1:0"});
    const std::uint16_t port = portOf(crankd);
    ASSERT_NE(port, 0);
    McpClient client(port);
    ASSERT_TRUE(client.open());
    const rapidjson::Document result = client.callTool("gq_item", R"({"id": "i3"})");
    ASSERT_FALSE(isError(result)) << text(result);
    const auto r = structured(result);
    EXPECT_EQ(textAt(r, "data.item.name"), R"("Blue Mug")") << text(r);
    EXPECT_EQ(textAt(r, "data.item.owner.name"), R"("Brian Kernighan")") << text(r);
    EXPECT_EQ(textAt(r, "data.item.createdAt"), R"("2024-02-02T10:00:00.000Z")") << text(r);
    const rapidjson::Document echo = client.callTool("gq_echo", R"({"colors": ["PURPLE"]})");
    ASSERT_FALSE(isError(echo)) << text(echo);
    EXPECT_EQ(textAt(structured(echo), "data.echo"), R"("{\"colors\":[\"PURPLE\"]}")");
    const rapidjson::Document page = client.callTool("gq_items_page", R"({"first": 2})");
    ASSERT_FALSE(isError(page)) << text(page);
    EXPECT_EQ(idsAt(structured(page), "data.itemsPage.nodes"),
              (std::vector<std::string>{"i1", "i2"}));
    EXPECT_EQ(textAt(structured(page), "data.itemsPage.pageInfo.hasNextPage"), "true");
    crankd.signal(SIGTERM);
    EXPECT_EQ(crankd.waitForExit(20s), 0) << crankd.stderrText();
}

// --- a schema that changes ---------------------------------------------------------------------

TEST_F(GraphqlTest, ASchemaThatChangesIsSeenByTheUpstreamThenAtTheNextLoad) {
    std::unique_ptr<ChildProcess> fixture(startFixture());
    const std::uint16_t fixturePort = portOf(*fixture);
    ASSERT_NE(fixturePort, 0);
    const std::string gql = "http://127.0.0.1:" + std::to_string(fixturePort) + "/graphql";
    const std::string colorDocument =
        "query Colors($color: Color, $filter: ItemFilter) { "
        "echo(color: $color, filter: $filter) }";
    const std::string v1 =
        dir_->write("v1.json", configText(*dir_,
                                          operation("item", gql,
                                                    "query Item($id: ID!) { item(id: $id) { id "
                                                    "name } }"),
                                          "v1.db"));
    auto crankd = std::make_unique<ChildProcess>(
        std::vector<std::string>{CRANKD_PATH, "--config", v1, "--listen", "127.0.0.1:0"});
    const std::uint16_t port = portOf(*crankd);
    ASSERT_NE(port, 0);
    McpClient client(port);
    ASSERT_TRUE(client.open());
    const rapidjson::Document before = client.callTool("item", R"({"id": "i2"})");
    ASSERT_FALSE(isError(before)) << text(before);
    EXPECT_EQ(textAt(structured(before), "data.item.name"), R"("Green Pear")");

    const crank::testing::Reply switched =
        exchange(fixturePort, "POST", "/admin/schema", {{"Content-Type", "application/json"}},
                 R"({"version": 2})");
    ASSERT_EQ(switched.status, 200) << switched.body;

    // crankd still runs the document; the upstream's own validation answers.
    const rapidjson::Document after = client.callTool("item", R"({"id": "i2"})");
    EXPECT_TRUE(isError(after)) << text(after);
    EXPECT_TRUE(contains(firstText(after),
                         "answered 400 with GraphQL errors: Cannot query field \"item\" on type "
                         "\"Query\"."));
    crankd->signal(SIGTERM);
    EXPECT_EQ(crankd->waitForExit(20s), 0) << crankd->stderrText();

    // The next load sees the new schema.
    const auto [status, out] = checkConfig(v1);
    EXPECT_NE(status, 0) << out;
    EXPECT_TRUE(contains(out, "operations[0].config.document: Query has no field \"item\""));

    const std::string v2 = dir_->write(
        "v2.json", configText(*dir_,
                              operation("item", gql,
                                        "query Item($id: ID!) { itemById(id: $id) { id name } }") +
                                  ",\n" + operation("colors", gql, colorDocument),
                              "v2.db"));
    const auto [v2Status, v2Out] = checkConfig(v2);
    EXPECT_EQ(v2Status, 0) << v2Out;
    crankd = std::make_unique<ChildProcess>(
        std::vector<std::string>{CRANKD_PATH, "--config", v2, "--listen", "127.0.0.1:0"});
    const std::uint16_t port2 = portOf(*crankd);
    ASSERT_NE(port2, 0);
    McpClient client2(port2);
    ASSERT_TRUE(client2.open());
    auto tools = toolsOf(client2);
    ASSERT_TRUE(tools.contains("colors"));
    const rapidjson::Value& schema = tools["colors"]["inputSchema"];
    EXPECT_EQ(textAt(schema, "properties.color.enum"),
              R"(["RED","GREEN","BLUE","PURPLE","YELLOW"])")
        << text(schema);
    EXPECT_EQ(textAt(schema, "$defs.ItemFilter.properties.owner.type"), R"(["string","integer"])")
        << text(schema);
    const rapidjson::Document yellow = client2.callTool("colors", R"({"color": "YELLOW"})");
    ASSERT_FALSE(isError(yellow)) << text(yellow);
    EXPECT_EQ(textAt(structured(yellow), "data.echo"), R"("{\"color\":\"YELLOW\"}")");
    const rapidjson::Document byId = client2.callTool("item", R"({"id": "i2"})");
    ASSERT_FALSE(isError(byId)) << text(byId);
    EXPECT_EQ(textAt(structured(byId), "data.itemById.name"), R"("Green Pear")");
    crankd->signal(SIGTERM);
    EXPECT_EQ(crankd->waitForExit(20s), 0) << crankd->stderrText();
    fixture->signal(SIGTERM);
    EXPECT_EQ(fixture->waitForExit(20s), 0) << fixture->stderrText();
}

// --- and after all that ------------------------------------------------------------------------

TEST_F(GraphqlTest, ZzCrankdStillServes) {
    EXPECT_FALSE(crankd_->waitForExit(0ms).has_value()) << crankd_->stderrText();
    EXPECT_EQ(exchange(port_, "GET", "/healthz", {}).status, 200);
    EXPECT_EQ(textAt(ok("item", R"({"id": "i7"})"), "data.item.name"), R"("Blue Jeans")");
}

}  // namespace
