// The 2026-07-28 era's subscriptions/listen as the mcp plugin's federated upstream holds it
// (upstream_listen.cpp, mcp_upstream.cpp), against a raw server (raw_server.h): the filter asks
// for what the server's discovered capabilities offer and for the resources followed (2026 has no
// resources/subscribe: following one opens the listen again with it), notifications that carry
// another subscriptionId are dropped, and a server that ends every listen at once is not asked
// in a loop.
#include <atomic>
#include <chrono>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include "http_connection.h"
#include "mcp_upstream.h"
#include "raw_server.h"
#include "upstream_listen.h"

namespace crank::mcpc {
namespace {

using namespace std::chrono_literals;
using rawhttp::answer;
using rawhttp::RawReply;
using rawhttp::RawRequest;
using rawhttp::RawServer;
using rawhttp::sse;

constexpr const char* kDiscover =
    R"({"resultType":"complete","supportedVersions":["2026-07-28"],"capabilities":{"tools":{"listChanged":true},)"
    R"("resources":{"subscribe":true}},"serverInfo":{"name":"raw","version":"9"}})";

/// What the plugin told its host: peer notifications (method and params), in order.
struct Heard {
    std::mutex mutex;
    std::vector<std::string> notes;
    std::vector<std::string> snapshot() {
        const std::lock_guard lock(mutex);
        return notes;
    }
};
Heard* g_heard = nullptr;

void onPeerNotify(crank_peer* /*peer*/, crank_str method, crank_str params) {
    const std::lock_guard lock(g_heard->mutex);
    g_heard->notes.push_back(std::string(method.ptr, method.len) + " " +
                             std::string(params.ptr, params.len));
}
int notCancelled(const crank_call* /*call*/) {
    return 0;
}

/// A host table with what an upstream's requests and notifications use.
crank_host_api hostApi() {
    crank_host_api api{};
    api.struct_size = sizeof(crank_host_api);
    api.peer_notify = onPeerNotify;
    api.is_cancelled = notCancelled;
    return api;
}

std::string methodOf(const RawRequest& r) {
    rapidjson::Document doc;
    doc.Parse(r.body.data(), r.body.size());
    return doc.IsObject() && doc.HasMember("method") && doc["method"].IsString()
               ? doc["method"].GetString()
               : "";
}

std::string notification(const std::string& method, const std::string& params_without_brace,
                         const std::string& subscription) {
    return "data: {\"jsonrpc\":\"2.0\",\"method\":\"" + method + "\",\"params\":{" +
           params_without_brace + (params_without_brace.empty() ? "" : ",") +
           "\"_meta\":{\"io.modelcontextprotocol/subscriptionId\":" + subscription + "}}}\n\n";
}

McpUpstreamConfig configFor(const RawServer& server) {
    HttpOptions http;
    http.url = server.url();
    http.connect_timeout = 2s;
    McpUpstreamConfig c;
    c.options.transport = httpTransport(http);
    c.options.request_timeout = 5s;
    c.options.initialize_timeout = 5s;
    c.options.protocol_version = "2026-07-28";
    return c;
}

bool waitFor(const std::function<bool()>& done, std::chrono::milliseconds limit) {
    const auto end = std::chrono::steady_clock::now() + limit;
    while (std::chrono::steady_clock::now() < end) {
        if (done()) {
            return true;
        }
        std::this_thread::sleep_for(20ms);
    }
    return done();
}

TEST(ListenFilter, AsksForWhatTheServerOffersAndTheResourcesFollowed) {
    const char* caps = R"({"tools":{"listChanged":true},"resources":{"subscribe":true}})";
    EXPECT_EQ(listsFilterFor(caps).paramsJson(), R"({"notifications":{"toolsListChanged":true}})");
    EXPECT_EQ(resourcesFilterFor(caps, {"a://1"}).paramsJson(),
              R"({"notifications":{"resourceSubscriptions":["a://1"]}})");
    EXPECT_TRUE(listsFilterFor(R"({"tools":{},"resources":{}})").empty());
    EXPECT_TRUE(resourcesFilterFor(R"({"tools":{},"resources":{}})", {"a://1"}).empty());
    EXPECT_TRUE(listsFilterFor("not json").empty());
    const std::vector<std::string> many(kMaxListenedResources + 5, "a://x");
    EXPECT_EQ(resourcesFilterFor(R"({"resources":{"subscribe":true}})", many).resource_uris.size(),
              kMaxListenedResources);
}

TEST(ModernListen, HearsItsOwnSubscriptionOnlyAndFollowsResourcesThroughTheFilter) {
    Heard heard;
    g_heard = &heard;
    std::atomic<int> listens{0};
    std::mutex bodies_mutex;
    std::vector<std::string> listen_bodies;
    RawServer server([&](const RawRequest& r) -> RawReply {
        const std::string method = methodOf(r);
        if (method == "server/discover") {
            return answer(r, kDiscover);
        }
        if (method == "subscriptions/listen") {
            ++listens;
            {
                const std::lock_guard lock(bodies_mutex);
                listen_bodies.push_back(r.body);
            }
            const std::string id = r.id();
            const std::string other = std::to_string(std::stoll(id) + 1000);
            return sse(
                notification("notifications/subscriptions/acknowledged",
                             R"("notifications":{"toolsListChanged":true})", id) +
                    notification("notifications/resources/updated", R"("uri":"wrong://1")", other) +
                    notification("notifications/resources/updated", R"("uri":"wrong://2")",
                                 "\"" + id + "\"") +
                    notification("notifications/resources/updated", R"("uri":"right://1")", id),
                true);
        }
        return answer(r, R"({"tools":[]})");
    });
    const crank_host_api api = hostApi();
    auto upstream = std::make_unique<McpUpstream>(
        sdk::Host(&api, nullptr), sdk::Peer(&api, reinterpret_cast<crank_peer*>(&heard)), "u",
        configFor(server));
    crank_call* none = nullptr;
    sdk::Call call(&api, nullptr, none);
    EXPECT_EQ(upstream->request(call, "tools/list", "{}"), R"({"tools":[]})");  // connects

    const auto saw = [&](const std::string& what) {
        for (const std::string& n : heard.snapshot()) {
            if (n.find(what) != std::string::npos) {
                return true;
            }
        }
        return false;
    };
    ASSERT_TRUE(waitFor([&] { return saw("right://1"); }, 5s)) << [&] {
        std::string seen;
        for (const RawRequest& r : server.requests()) {
            seen += methodOf(r) + " ";
        }
        for (const std::string& n : heard.snapshot()) {
            seen += "| " + n;
        }
        return seen;
    }();
    EXPECT_FALSE(saw("wrong://"));

    // Following a resource is no request upstream in 2026: the listen opens again with it.
    EXPECT_EQ(upstream->request(call, "resources/subscribe", R"({"uri":"file:///a"})"), "{}");
    ASSERT_TRUE(waitFor(
        [&] {
            const std::lock_guard lock(bodies_mutex);
            return !listen_bodies.empty() &&
                   listen_bodies.back().find(R"("resourceSubscriptions":["file:///a"])") !=
                       std::string::npos;
        },
        5s));
    for (const RawRequest& r : server.requests()) {
        EXPECT_NE(methodOf(r), "resources/subscribe");
    }

    // A client following and leaving resources in a loop: the listen of resources is opened at
    // most once a second, and the list changes' listen (and the lists) are left alone.
    const auto count = [&](const std::string& what) {
        std::size_t n = 0;
        for (const std::string& note : heard.snapshot()) {
            n += note.find(what) != std::string::npos ? 1 : 0;
        }
        return n;
    };
    // The lists' listen opened on its own thread, and its opening refetches the lists: counted
    // once that has settled (no new refetch for a second), not while it may still come.
    std::size_t refetches = count("notifications/tools/list_changed");
    for (int quiet = 0, waited = 0; quiet < 10 && waited < 100; ++waited) {
        std::this_thread::sleep_for(100ms);
        const std::size_t now = count("notifications/tools/list_changed");
        quiet = now == refetches ? quiet + 1 : 0;
        refetches = now;
    }
    const std::size_t opened = [&] {
        const std::lock_guard lock(bodies_mutex);
        return listen_bodies.size();
    }();
    for (int i = 0; i < 40; ++i) {
        upstream->request(call, i % 2 == 0 ? "resources/subscribe" : "resources/unsubscribe",
                          R"({"uri":"file:///churn"})");
    }
    std::this_thread::sleep_for(1500ms);
    {
        const std::lock_guard lock(bodies_mutex);
        EXPECT_LE(listen_bodies.size() - opened, 3U);
    }
    EXPECT_EQ(count("notifications/tools/list_changed"), refetches);
    upstream.reset();
    g_heard = nullptr;
}

TEST(ModernListen, AServerThatEndsEveryListenAtOnceIsNotAskedInALoop) {
    Heard heard;
    g_heard = &heard;
    std::atomic<int> listens{0};
    RawServer server([&](const RawRequest& r) -> RawReply {
        const std::string method = methodOf(r);
        if (method == "server/discover") {
            return answer(r, kDiscover);
        }
        if (method == "subscriptions/listen") {
            ++listens;
            return answer(r, R"({"resultType":"complete"})");
        }
        return answer(r, R"({"tools":[]})");
    });
    const crank_host_api api = hostApi();
    auto upstream = std::make_unique<McpUpstream>(
        sdk::Host(&api, nullptr), sdk::Peer(&api, reinterpret_cast<crank_peer*>(&heard)), "u",
        configFor(server));
    crank_call* none = nullptr;
    sdk::Call call(&api, nullptr, none);
    upstream->request(call, "tools/list", "{}");
    ASSERT_TRUE(waitFor([&] { return listens.load() >= 1; }, 5s));
    std::this_thread::sleep_for(2500ms);
    // Backoff 1 s, then 2 s: at most three listens in 2.5 s, not hundreds.
    EXPECT_LE(listens.load(), 3);
    upstream.reset();
    g_heard = nullptr;
}

}  // namespace
}  // namespace crank::mcpc
