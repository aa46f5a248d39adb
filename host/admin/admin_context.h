#pragma once

// What the admin API's resources share (docs/admin-api.md): the operation catalog (and through
// it the store, the runner and the plugins), the config, crankd's version, and the bound on test
// runs. Each resource is a class over AdminResource, in a file of its own (resources.h).
//
// THREADING: resources handle requests concurrently; the state lives in the catalog and the
// store, and the counters here are atomic.

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "admin/config_reload_target.h"
#include "admin/operation_catalog.h"
#include "admin/upstream_directory.h"
#include "config/config.h"
#include "json/json_value.h"

namespace Poco::Net {
class HTTPServerRequest;
}  // namespace Poco::Net

namespace crank::admin {

class AgentCatalog;
class UpstreamCatalog;

struct AdminContext {
    AdminContext(OperationCatalog& c, const config::Config& cfg, std::string version)
        : catalog(c), config(cfg), crank_version(std::move(version)) {}

    OperationCatalog& catalog;
    const config::Config& config;
    std::string crank_version;               ///< shown by /admin/api/meta
    std::atomic<int> test_runs{0};           ///< running now, at most admin.max_test_runs
    std::atomic<bool> stopping{false};       ///< crankd is stopping: test runs end at once
    UpstreamDirectory* upstreams = nullptr;  ///< set before serving; null: no upstreams
    ConfigReloadTarget* reload = nullptr;    ///< set before serving; null: no reload
    /// The admin API's own upstreams; set before serving; null: none can be managed.
    UpstreamCatalog* upstream_catalog = nullptr;
    /// The admin API's own agents; set before serving; null: none can be managed.
    AgentCatalog* agent_catalog = nullptr;
};

/// The base of a resource: the context's catalog and config under the names its handlers use, a
/// request's body read within server.max_request_body_bytes, and the admin's audit entries.
class AdminResource {
public:
    explicit AdminResource(AdminContext& context)
        : catalog(context.catalog), config(context.config), context_(context) {}
    virtual ~AdminResource() = default;
    AdminResource(const AdminResource&) = delete;
    AdminResource& operator=(const AdminResource&) = delete;

protected:
    AdminContext& context() const { return context_; }

    /// The request body as a JSON object (api::readJsonBody).
    std::optional<ApiError> body(Poco::Net::HTTPServerRequest& request, json::Document& doc) const;

    /// One of admin.max_test_runs (a test run, a test connection), given back when the holder
    /// is destroyed; null, and `busy` set to the 429 to answer, when every one is taken.
    std::shared_ptr<void> takeTestRun(std::optional<ApiError>& busy) const;

    /// An audit entry of the admin ("admin" as its agent); a store that refuses it is logged.
    void audit(const std::string& workspace, const std::string& operation, std::string action,
               std::string outcome, const std::string& detail_json) const;

    OperationCatalog& catalog;
    const config::Config& config;

private:
    AdminContext& context_;
};

}  // namespace crank::admin
