// Window ingest benchmark: 200-byte JSON items pushed by the synthetic plugin through emit(), the
// safety stage and the stats aggregator, in the real runtime with the real loader. Prints items
// per second for the window and for a baseline (the same plugin stream into a host sink that only
// counts), and samples the process RSS while the window collects.
//
// Usage: crank-bench-window-ingest PLUGIN_DIR TEST_PLUGIN_DIR [ITEMS] [ITEM_BYTES]

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <fstream>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "config/config_loader.h"
#include "mcp/tool_registry.h"
#include "plugins/adapter_handle.h"
#include "plugins/plugin_call.h"
#include "plugins/plugin_registry.h"
#include "runtime/operation_compiler.h"
#include "runtime/operation_runner.h"
#include "runtime/prepared_request.h"

namespace {

using Clock = std::chrono::steady_clock;

long rssKiB() {
    std::ifstream status("/proc/self/status");
    std::string line;
    while (std::getline(status, line)) {
        if (line.rfind("VmRSS:", 0) == 0) {
            return std::stol(line.substr(6));
        }
    }
    return -1;
}

class QuietToolCall final : public crank::mcp::ToolCall {
public:
    bool cancelled() const override { return false; }
    void progress(double, std::optional<double>, std::string_view) override {}
    void log(crank::mcp::LogLevel, std::string_view, std::string_view) override {}
};

/// The baseline's host side: counts items and bytes, nothing else.
class CountingCall final : public crank::plugins::PluginCall {
public:
    crank_emit_result emit(std::string_view item) noexcept override {
        ++items_;
        bytes_ += item.size();
        return CRANK_EMIT_ACCEPTED;
    }
    crank_emit_result emitBatch(const crank_str* items, std::size_t count,
                                std::size_t* accepted) noexcept override {
        for (std::size_t i = 0; i < count; ++i) {
            bytes_ += items[i].len;
        }
        items_ += count;
        *accepted = count;
        return CRANK_EMIT_ACCEPTED;
    }
    void setError(crank_error_code, std::string_view, std::string_view) noexcept override {}
    bool isCancelled() const noexcept override { return false; }
    void complete(crank_status) noexcept override {
        std::lock_guard lock(mutex_);
        done_ = true;
        cv_.notify_all();
    }
    void wait() {
        std::unique_lock lock(mutex_);
        cv_.wait(lock, [this] { return done_; });
    }
    std::uint64_t items() const { return items_; }

private:
    std::uint64_t items_ = 0;
    std::uint64_t bytes_ = 0;
    std::mutex mutex_;
    std::condition_variable cv_;
    bool done_ = false;
};

}  // namespace

int main(int argc, char** argv) {
    if (argc < 3) {
        std::fprintf(stderr, "usage: %s PLUGIN_DIR TEST_PLUGIN_DIR [ITEMS] [ITEM_BYTES]\n",
                     argv[0]);
        return 2;
    }
    const long long items = argc > 3 ? std::stoll(argv[3]) : 10'000'000;
    const int itemBytes = argc > 4 ? std::stoi(argv[4]) : 200;

    // Two windows over the same stream: the safety stage validating only, and with redaction
    // configured (every item is then parsed into a DOM; none holds the path, so none is
    // rewritten).
    const auto operation = [&](const std::string& name, const std::string& safety) {
        return R"({"name": ")" + name + R"(", "description": "bench", "protocol": "synthetic",
            "config": {"items": )" +
               std::to_string(items) + R"(, "item_bytes": )" + std::to_string(itemBytes) +
               R"(, "batch": 256},
            "execution": {"mode": "window", "transport_behavior": "server_stream",
                "window_duration_ms": 3600000, "upstream_timeout_ms": 60000,
                "max_items": 1000000000, "max_bytes": 1099511627776,
                "aggregation_mode": "stats",
                "aggregation": {"numeric_paths": ["latency_ms"], "key_paths": ["level"]})" +
               safety + "}}";
    };
    const std::string config =
        R"({"plugins": {"directories": [")" + std::string(argv[1]) + R"(", ")" + argv[2] +
        R"("]}, "operations": [)" + operation("ingest", "") + "," +
        operation("ingest_redacting", R"(, "redacted_paths": ["secret"])") + "]}";
    crank::config::LoadResult loaded = crank::config::loadConfigText(config, "bench");
    if (!loaded.config) {
        std::fprintf(stderr, "config: %s\n", loaded.errors.front().toString().c_str());
        return 1;
    }
    crank::plugins::LoadPluginsOptions options;
    options.directories = loaded.config->plugins.directories;
    crank::plugins::PluginRegistry registry = crank::plugins::loadPlugins(options);
    crank::runtime::CompiledOperations compiled =
        crank::runtime::compileOperations(*loaded.config, registry);
    if (!compiled.errors.empty()) {
        std::fprintf(stderr, "operations: %s\n", compiled.errors.front().toString().c_str());
        return 1;
    }
    const crank::runtime::Operation& op = *compiled.operations.front();
    const crank::runtime::Operation& redacting = *compiled.operations.back();

    // Baseline: the plugin's stream into a sink that only counts.
    double baselineRate = 0;
    {
        CountingCall sink;
        crank::runtime::PreparedRequest request;
        request.request_json = op.config.config_json;
        request.input_json = "{}";
        const crank_request view = request.view(op);
        const auto start = Clock::now();
        crank_stream* stream = op.adapter->streamOpen(sink, view);
        if (stream == nullptr) {
            std::fprintf(stderr, "the synthetic stream did not open\n");
            return 1;
        }
        sink.wait();
        const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
        op.adapter->streamDestroy(stream);
        baselineRate = static_cast<double>(sink.items()) / seconds;
        std::printf("baseline (plugin -> counting sink): %llu items in %.2f s: %.0f items/s\n",
                    static_cast<unsigned long long>(sink.items()), seconds, baselineRate);
    }

    // The windows: emit -> limits -> safety -> stats, RSS sampled while they collect.
    crank::runtime::OperationRunner runner;
    bool failed = false;
    for (const crank::runtime::Operation* window : {&op, &redacting}) {
        std::atomic<bool> running{true};
        std::vector<long> samples;
        const long rssBefore = rssKiB();
        const auto start = Clock::now();
        std::thread sampler([&] {
            while (running.load()) {
                samples.push_back(rssKiB());
                std::this_thread::sleep_for(std::chrono::milliseconds(500));
            }
        });
        QuietToolCall call;
        const crank::mcp::ToolResult result = runner.run(*window, "{}", call);
        const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
        running.store(false);
        sampler.join();
        const double rate = static_cast<double>(items) / seconds;
        std::printf(
            "%-17s (emit -> safety -> stats): %lld items in %.2f s: %.0f items/s, "
            "%.2f of the baseline\n",
            window->config.name.c_str(), items, seconds, rate, rate / baselineRate);
        long peak = 0;
        std::printf("  RSS before: %ld KiB; every 0.5 s:", rssBefore);
        for (const long kib : samples) {
            std::printf(" %ld", kib);
            peak = std::max(peak, kib);
        }
        std::printf("\n  RSS peak: %ld KiB (+%ld KiB)\n", peak, peak - rssBefore);
        std::printf("  result (%zu bytes): %.160s...\n", result.structured_json.size(),
                    result.structured_json.c_str());
        failed = failed || result.is_error;
    }
    return failed ? 1 : 0;
}
