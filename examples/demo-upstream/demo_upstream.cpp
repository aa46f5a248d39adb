// crank-demo-upstream: the project's own demo upstream, so that the demo (scripts/run.sh) and
// tests have a real HTTP API behind Crank. Loopback only by default; everything is bounded.
//
//   crank-demo-upstream [--listen 127.0.0.1:9000]
//
//   GET  /health                          {"status":"ok"}
//   GET  /items?limit=N&cursor=C          a page of the item catalogue: items, next_cursor, done
//   GET  /items/ID                        one item, or 404 {"error": ...}
//   POST /echo                            the JSON body back (at most 1 MiB)
//   GET  /logs/stream?count=N&rate=R      SSE: `event: log` items, N of them (default 100, at
//                                         most 100000; 0 = until the client leaves), R per second
//                                         (default 20, at most 100000; 0 = unpaced)
//   GET  /metrics/stream?count=N&rate=R   SSE: `event: metrics` samples
//   GET  /events/poll?cursor=C&wait_ms=W  long-poll over a feed that grows by 5 events a second:
//                                         the events after C, waiting up to W ms (max 30000)
//   POST /reports {"rows": N}             starts a sales report over N rows (1..100000, default
//                                         1000): 202 {"report_id","status_url"}. It takes
//                                         2 s + N/5 ms, at most 10 s
//   GET  /reports/ID                      {"report_id","status":"running"|"done"|"cancelled",
//                                         "rows_done","rows","message"}
//   GET  /reports/ID/download             the finished report (409 while it runs)
//   DELETE /reports/ID                    cancels a running report
//
// SIGTERM or SIGINT stops it; it prints "listening on http://HOST:PORT" on stderr when ready.

#include <signal.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <iostream>
#include <map>
#include <mutex>
#include <optional>
#include <sstream>
#include <string>
#include <thread>

#include <Poco/Net/HTTPRequestHandler.h>
#include <Poco/Net/HTTPRequestHandlerFactory.h>
#include <Poco/Net/HTTPServer.h>
#include <Poco/Net/HTTPServerParams.h>
#include <Poco/Net/HTTPServerRequest.h>
#include <Poco/Net/HTTPServerResponse.h>
#include <Poco/Net/ServerSocket.h>
#include <Poco/Net/SocketAddress.h>
#include <Poco/StreamCopier.h>
#include <Poco/URI.h>
#include <rapidjson/document.h>

namespace {

using Poco::Net::HTTPResponse;
using Poco::Net::HTTPServerRequest;
using Poco::Net::HTTPServerResponse;
using Clock = std::chrono::steady_clock;

constexpr std::int64_t kCatalogueSize = 1000;
constexpr std::int64_t kMaxPage = 100;
constexpr std::int64_t kMaxStreamCount = 100'000;
constexpr std::int64_t kMaxWaitMs = 30'000;
constexpr std::size_t kMaxBody = std::size_t{1024} * 1024;
constexpr std::int64_t kMaxReportRows = 100'000;
constexpr std::int64_t kReportBaseMs = 2'000;  // a report takes this plus rows / 5 ms
constexpr std::int64_t kReportMaxMs = 10'000;
constexpr std::size_t kMaxReports = 1'000;  // the oldest goes first

std::atomic<bool> stopping{false};
const Clock::time_point started = Clock::now();

/// The value of query parameter `name` as an integer within [min, max], or `fallback`.
std::int64_t queryInt(const Poco::URI& uri, const std::string& name, std::int64_t fallback,
                      std::int64_t min, std::int64_t max) {
    for (const auto& [key, value] : uri.getQueryParameters()) {
        if (key == name) {
            char* end = nullptr;
            const long long parsed = std::strtoll(value.c_str(), &end, 10);
            if (end != value.c_str() && *end == '\0') {
                return std::clamp<std::int64_t>(parsed, min, max);
            }
        }
    }
    return fallback;
}

std::string itemJson(std::int64_t id) {
    static const char* const kNames[] = {"bolt", "nut", "gear", "spring", "valve", "pump"};
    std::ostringstream out;
    out << R"({"id":)" << id << R"(,"name":")" << kNames[id % 6] << "-" << id << R"(","price":)"
        << static_cast<double>(id * 37 % 1000) / 10.0 << R"(,"in_stock":)"
        << ((id % 3 != 0) ? "true" : "false") << "}";
    return out.str();
}

void sendJson(HTTPServerResponse& response, HTTPResponse::HTTPStatus status,
              const std::string& body) {
    response.setStatusAndReason(status);
    response.setContentType("application/json");
    response.setContentLength(static_cast<std::streamsize>(body.size()));
    response.send() << body;
}

/// The feed of the long-poll endpoint: event n exists once n/5 seconds have passed.
std::int64_t feedLength() {
    const auto ms =
        std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - started).count();
    return ms / 200;
}

/// One report job: it runs from `started` for `duration` unless cancelled.
struct Report {
    std::int64_t rows = 0;
    Clock::time_point started;
    std::chrono::milliseconds duration{0};
    std::optional<Clock::time_point> cancelled;

    const char* state(Clock::time_point now) const {
        if (cancelled) {
            return "cancelled";
        }
        return now >= started + duration ? "done" : "running";
    }
    std::int64_t rowsDone(Clock::time_point now) const {
        const Clock::time_point at = std::min(now, cancelled.value_or(now));
        if (at >= started + duration) {
            return rows;
        }
        const auto elapsed =
            std::chrono::duration_cast<std::chrono::milliseconds>(at - started).count();
        return elapsed * rows / duration.count();
    }
};

/// The reports by id, their ids oldest first, and the next id (under `mutex`).
struct Reports {
    std::mutex mutex;
    std::map<std::string, Report> byId;
    std::deque<std::string> order;
    std::int64_t next = 1;
};

Reports& reports() {
    static Reports all;
    return all;
}

/// The finished report: deterministic figures over `rows` sales rows.
std::string reportJson(const std::string& id, const Report& report) {
    static const char* const kRegions[] = {"north", "south", "east", "west"};
    std::int64_t orders[4] = {0, 0, 0, 0};
    std::int64_t cents[4] = {0, 0, 0, 0};
    for (std::int64_t row = 1; row <= report.rows; ++row) {
        orders[row % 4] += 1;
        cents[row % 4] += 500 + row * 7919 % 20'000;
    }
    std::ostringstream out;
    std::int64_t totalCents = 0;
    out << R"({"report_id":")" << id << R"(","rows":)" << report.rows << R"(,"by_region":[)";
    for (int r = 0; r < 4; ++r) {
        totalCents += cents[r];
        out << (r == 0 ? "" : ",") << R"({"region":")" << kRegions[r] << R"(","orders":)"
            << orders[r] << R"(,"revenue":)" << cents[r] / 100 << "." << (cents[r] % 100) / 10
            << (cents[r] % 10) << "}";
    }
    out << R"(],"total_revenue":)" << totalCents / 100 << "." << (totalCents % 100) / 10
        << (totalCents % 10) << R"(,"took_ms":)" << report.duration.count() << "}";
    return out.str();
}

class DemoHandler final : public Poco::Net::HTTPRequestHandler {
public:
    void handleRequest(HTTPServerRequest& request, HTTPServerResponse& response) override {
        const Poco::URI uri(request.getURI());
        const std::string& path = uri.getPath();
        const bool get = request.getMethod() == "GET";
        if (get && path == "/health") {
            sendJson(response, HTTPResponse::HTTP_OK, R"({"status":"ok"})");
        } else if (get && path == "/items") {
            items(uri, response);
        } else if (get && path.rfind("/items/", 0) == 0) {
            item(path.substr(7), response);
        } else if (request.getMethod() == "POST" && path == "/echo") {
            echo(request, response);
        } else if (get && path == "/logs/stream") {
            stream(uri, response, "log");
        } else if (get && path == "/metrics/stream") {
            stream(uri, response, "metrics");
        } else if (get && path == "/events/poll") {
            poll(uri, response);
        } else if (request.getMethod() == "POST" && path == "/reports") {
            startReport(request, response);
        } else if (path.rfind("/reports/", 0) == 0) {
            report(request.getMethod(), path.substr(9), response);
        } else {
            sendJson(response, HTTPResponse::HTTP_NOT_FOUND,
                     R"({"error":"no such endpoint; see GET /health, /items, /logs/stream"})");
        }
    }

private:
    static void items(const Poco::URI& uri, HTTPServerResponse& response) {
        const std::int64_t limit = queryInt(uri, "limit", 10, 1, kMaxPage);
        const std::int64_t from = queryInt(uri, "cursor", 0, 0, kCatalogueSize);
        const std::int64_t to = std::min(from + limit, kCatalogueSize);
        std::string body = R"({"items":[)";
        for (std::int64_t id = from; id < to; ++id) {
            body += (id == from ? "" : ",") + itemJson(id + 1);
        }
        body += R"(],"next_cursor":")" + std::to_string(to) + R"(","done":)" +
                (to >= kCatalogueSize ? "true" : "false") + R"(,"total":)" +
                std::to_string(kCatalogueSize) + "}";
        sendJson(response, HTTPResponse::HTTP_OK, body);
    }

    static void item(const std::string& id, HTTPServerResponse& response) {
        char* end = nullptr;
        const long long n = std::strtoll(id.c_str(), &end, 10);
        if (id.empty() || *end != '\0' || n < 1 || n > kCatalogueSize) {
            sendJson(response, HTTPResponse::HTTP_NOT_FOUND,
                     R"({"error":"no item with that id; ids run from 1 to 1000"})");
            return;
        }
        sendJson(response, HTTPResponse::HTTP_OK, itemJson(n));
    }

    static void echo(HTTPServerRequest& request, HTTPServerResponse& response) {
        std::string body;
        body.resize(kMaxBody + 1);
        request.stream().read(body.data(), static_cast<std::streamsize>(body.size()));
        body.resize(static_cast<std::size_t>(request.stream().gcount()));
        if (body.size() > kMaxBody) {
            sendJson(response, HTTPResponse::HTTP_REQUEST_ENTITY_TOO_LARGE,
                     R"({"error":"the body is larger than 1 MiB"})");
            return;
        }
        sendJson(response, HTTPResponse::HTTP_OK, body.empty() ? "{}" : body);
    }

    static void stream(const Poco::URI& uri, HTTPServerResponse& response,
                       const std::string& kind) {
        const std::int64_t count = queryInt(uri, "count", 100, 0, kMaxStreamCount);
        // rate=0: as fast as the connection takes them (benchmarks), flushed every 64 events.
        const std::int64_t rate = queryInt(uri, "rate", 20, 0, 100'000);
        response.setStatus(HTTPResponse::HTTP_OK);
        response.setContentType("text/event-stream");
        response.set("Cache-Control", "no-cache");
        response.setChunkedTransferEncoding(true);
        std::ostream& out = response.send();
        out << ": demo " << kind << " stream\n\n" << std::flush;
        static const char* const kLevels[] = {"info", "info", "info", "warn", "error"};
        const auto step = std::chrono::microseconds(rate == 0 ? 0 : 1'000'000 / rate);
        auto next = Clock::now();
        for (std::int64_t seq = 1; (count == 0 || seq <= count) && !stopping.load(); ++seq) {
            if (rate > 0) {
                next += step;
                std::this_thread::sleep_until(next);
            }
            if (kind == "log") {
                out << "event: log\nid: " << seq << "\ndata: {\"seq\":" << seq << ",\"level\":\""
                    << kLevels[seq % 5] << "\",\"message\":\"request " << seq
                    << " served\",\"latency_ms\":" << (seq * 7919 % 500) << "}\n\n";
            } else {
                out << "event: metrics\nid: " << seq << "\ndata: {\"seq\":" << seq
                    << ",\"cpu\":" << (seq * 13 % 100) << ",\"memory_mb\":" << (512 + seq % 64)
                    << "}\n\n";
            }
            if (rate > 0 || seq % 64 == 0) {
                out.flush();
            }
            if (!out.good()) {
                return;  // the client left
            }
        }
    }

    static void startReport(HTTPServerRequest& request, HTTPServerResponse& response) {
        std::string body;
        body.resize(kMaxBody + 1);
        request.stream().read(body.data(), static_cast<std::streamsize>(body.size()));
        body.resize(static_cast<std::size_t>(request.stream().gcount()));
        rapidjson::Document doc;
        doc.Parse<rapidjson::kParseIterativeFlag>(body.empty() ? "{}" : body.c_str());
        if (body.size() > kMaxBody || doc.HasParseError() || !doc.IsObject()) {
            sendJson(response, HTTPResponse::HTTP_BAD_REQUEST,
                     R"({"error":"send a JSON object such as {\"rows\": 1000}"})");
            return;
        }
        Report report;
        report.rows = 1000;
        const rapidjson::Value& root = doc;  // const lookups (C++20 iterator comparisons)
        if (const auto rows = root.FindMember("rows"); rows != root.MemberEnd()) {
            if (!rows->value.IsInt64() || rows->value.GetInt64() < 1 ||
                rows->value.GetInt64() > kMaxReportRows) {
                sendJson(response, HTTPResponse::HTTP_BAD_REQUEST,
                         R"({"error":"rows must be a whole number from 1 to 100000"})");
                return;
            }
            report.rows = rows->value.GetInt64();
        }
        report.started = Clock::now();
        report.duration =
            std::chrono::milliseconds(std::min(kReportBaseMs + report.rows / 5, kReportMaxMs));
        std::string id;
        {
            Reports& all = reports();
            const std::lock_guard<std::mutex> lock(all.mutex);
            id = "r-" + std::to_string(all.next++);
            while (all.order.size() >= kMaxReports) {
                all.byId.erase(all.order.front());
                all.order.pop_front();
            }
            all.order.push_back(id);
            all.byId.emplace(id, report);
        }
        response.set("Location", "/reports/" + id);
        sendJson(response, HTTPResponse::HTTP_ACCEPTED,
                 R"({"report_id":")" + id + R"(","status_url":"/reports/)" + id + R"("})");
    }

    static void report(const std::string& method, std::string rest, HTTPServerResponse& response) {
        std::string action;
        if (const std::size_t slash = rest.find('/'); slash != std::string::npos) {
            action = rest.substr(slash + 1);
            rest.resize(slash);
        }
        const auto now = Clock::now();
        Report report;
        {
            Reports& all = reports();
            const std::lock_guard<std::mutex> lock(all.mutex);
            const auto it = all.byId.find(rest);
            if (it == all.byId.end()) {
                sendJson(response, HTTPResponse::HTTP_NOT_FOUND,
                         R"({"error":"no report with that id; reports are kept in memory"})");
                return;
            }
            if (method == "DELETE" && action.empty() && !it->second.cancelled &&
                now < it->second.started + it->second.duration) {
                it->second.cancelled = now;
            }
            report = it->second;
        }
        const std::string state = report.state(now);
        if ((method == "GET" || method == "DELETE") && action.empty()) {
            const std::int64_t done = report.rowsDone(now);
            sendJson(response, HTTPResponse::HTTP_OK,
                     R"({"report_id":")" + rest + R"(","status":")" + state + R"(","rows_done":)" +
                         std::to_string(done) + R"(,"rows":)" + std::to_string(report.rows) +
                         R"(,"message":")" + std::to_string(done) + " of " +
                         std::to_string(report.rows) + R"( rows"})");
        } else if (method == "GET" && action == "download") {
            if (state != "done") {
                sendJson(
                    response, HTTPResponse::HTTP_CONFLICT,
                    R"({"error":"the report is )" + state + R"(","status":")" + state + R"("})");
                return;
            }
            sendJson(response, HTTPResponse::HTTP_OK, reportJson(rest, report));
        } else {
            sendJson(
                response, HTTPResponse::HTTP_METHOD_NOT_ALLOWED,
                R"({"error":"GET /reports/ID, GET /reports/ID/download, DELETE /reports/ID"})");
        }
    }

    static void poll(const Poco::URI& uri, HTTPServerResponse& response) {
        const std::int64_t cursor = queryInt(uri, "cursor", 0, 0, INT64_MAX / 2);
        const std::int64_t waitMs = queryInt(uri, "wait_ms", 5'000, 0, kMaxWaitMs);
        const auto deadline = Clock::now() + std::chrono::milliseconds(waitMs);
        while (feedLength() <= cursor && Clock::now() < deadline && !stopping.load()) {
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
        }
        const std::int64_t to = std::min(feedLength(), cursor + kMaxPage);
        std::string body = R"({"events":[)";
        for (std::int64_t n = cursor + 1; n <= to; ++n) {
            body += (n == cursor + 1 ? "" : ",") + std::string(R"({"n":)") + std::to_string(n) +
                    R"(,"kind":")" + (n % 4 == 0 ? "order" : "view") + R"("})";
        }
        body += R"(],"cursor":")" + std::to_string(std::max(cursor, to)) + R"("})";
        sendJson(response, HTTPResponse::HTTP_OK, body);
    }
};

class DemoFactory final : public Poco::Net::HTTPRequestHandlerFactory {
public:
    Poco::Net::HTTPRequestHandler* createRequestHandler(const HTTPServerRequest&) override {
        return new DemoHandler;
    }
};

}  // namespace

int main(int argc, char** argv) {
    std::string listen = "127.0.0.1:9000";
    for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i];
        if (arg == "--listen" && i + 1 < argc) {
            listen = argv[++i];
        } else {
            std::fprintf(stderr, "usage: crank-demo-upstream [--listen HOST:PORT]\n");
            return 2;
        }
    }
    sigset_t signals;
    sigemptyset(&signals);
    sigaddset(&signals, SIGTERM);
    sigaddset(&signals, SIGINT);
    pthread_sigmask(SIG_BLOCK, &signals, nullptr);
    try {
        Poco::Net::ServerSocket socket{Poco::Net::SocketAddress(listen)};
        auto* params = new Poco::Net::HTTPServerParams;
        params->setMaxThreads(64);
        params->setMaxQueued(256);
        Poco::Net::HTTPServer server(new DemoFactory, socket, params);
        server.start();
        std::fprintf(stderr, "listening on http://%s\n", socket.address().toString().c_str());
        int sig = 0;
        sigwait(&signals, &sig);
        stopping.store(true);
        server.stopAll(true);
    } catch (const Poco::Exception& e) {
        std::fprintf(stderr, "crank-demo-upstream: %s\n", e.displayText().c_str());
        return 1;
    }
    return 0;
}
