#pragma once

// One crankd per test suite (tests/integration): its config written to a temporary directory with
// a store file and the plugin directories, started on a free loopback port, stopped with SIGTERM
// at the end (it must exit with status 0).

#include <signal.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "child_process.h"
#include "temp_dir.h"

namespace crank::testing {

/// One crankd per test suite: the config (a JSON object's members after the store and plugin
/// directories) written to a temporary directory, started on a free loopback port, stopped with
/// SIGTERM at the end, when it must exit with status 0 even with sessions still open.
template <typename Suite>
class CrankdSuite : public ::testing::Test {
protected:
    /// `before_start` (when given) gets the store file's path before crankd starts, e.g. to seed
    /// the store.
    static void startCrankd(const std::string& members,
                            const std::map<std::string, std::string>& env = {},
                            const std::function<void(const std::string&)>& before_start = {}) {
        dir_ = new TempDir();
        if (before_start) {
            before_start(dir_->file("crank.db"));
        }
        const std::string config = dir_->write("crank.json", configText(members));
        process_ = new ChildProcess(
            std::vector<std::string>{CRANKD_PATH, "--config", config, "--listen", "127.0.0.1:0"},
            env);
        const auto port = process_->waitForListeningPort(std::chrono::seconds(20));
        ASSERT_TRUE(port) << process_->stderrText();
        port_ = *port;
    }

    /// Rewrites the config file as startCrankd() wrote it, with `members` (before a reload).
    static void rewriteConfig(const std::string& members) {
        dir_->write("crank.json", configText(members));
    }

    /// The config file's text: the store and the plugin directories, then `members`.
    static std::string configText(const std::string& members) {
        return R"({"store": {"path": ")" + dir_->file("crank.db") +
               R"("}, "plugins": {"directories": [")" CRANK_PLUGIN_DIR
               R"(", ")" CRANK_TEST_PLUGIN_DIR R"("]}, )" +
               members + "}";
    }

    static void TearDownTestSuite() {
        if (process_ != nullptr) {
            process_->signal(SIGTERM);
            EXPECT_EQ(process_->waitForExit(std::chrono::seconds(20)), 0) << process_->stderrText();
            delete process_;
            process_ = nullptr;
        }
        delete dir_;
        dir_ = nullptr;
    }

    static std::string storePath() { return dir_->file("crank.db"); }

    static inline TempDir* dir_ = nullptr;
    static inline ChildProcess* process_ = nullptr;
    static inline std::uint16_t port_ = 0;
};

}  // namespace crank::testing
