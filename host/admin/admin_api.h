#pragma once

#include <atomic>
#include <memory>
#include <string>

#include "config/config.h"
#include "http/origin_policy.h"
#include "http/router.h"

namespace crank::admin {

class OperationCatalog;
class ConfigReloadTarget;
class AgentCatalog;
class UpstreamCatalog;
class UpstreamDirectory;

/// The admin API under `/admin/api/` and the web UI under `/ui/` (docs/admin-api.md).
///
/// THREADING: requests are handled concurrently on the HTTP server's worker threads; the state
/// lives in the catalog and the store. A test run blocks its worker for at most
/// admin.test_run_timeout_ms (plus one step's own bound); admin.max_test_runs bounds how many.
class AdminApi {
public:
    /// `ui_directory`: where the UI's files are (admin.ui_directory, or the default next to
    /// crankd). `version`: crankd's, shown by /admin/api/meta.
    AdminApi(OperationCatalog& catalog, const config::Config& config, std::string ui_directory,
             std::string version);
    ~AdminApi();
    AdminApi(const AdminApi&) = delete;
    AdminApi& operator=(const AdminApi&) = delete;

    /// Where /admin/api/upstreams reads the upstreams' live status and controls them, and
    /// `catalog` the upstreams the API manages (null: none can be); both must outlive the API.
    /// Call before serving.
    void serveUpstreams(UpstreamDirectory& upstreams, UpstreamCatalog* catalog = nullptr);
    /// The agents /admin/api/agents manages; it must outlive the API. Call before serving.
    void serveAgents(AgentCatalog& agents);
    /// What POST /admin/api/reload reloads; it must outlive the API. Unset: 503.
    void serveReload(ConfigReloadTarget& target);

    /// Registers `/admin/api/` and, when admin.ui is on, `/ui` and `/ui/`.
    void addRoutes(http::Router& router);
    /// crankd is stopping: running test runs end at once (their session stopped, their job
    /// cancelled), so that the drain is bounded by the grace period, not by a test run.
    void stop();

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

/// `<directory of the running executable>/../share/crank/ui`: where the UI is installed.
std::string defaultUiDirectory();

}  // namespace crank::admin
