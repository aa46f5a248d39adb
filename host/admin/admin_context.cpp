#include "admin/admin_context.h"

#include <atomic>
#include <cstddef>
#include <utility>

#include <fmt/core.h>

#include "admin/api_request.h"
#include "log/log.h"
#include "store/store.h"

namespace crank::admin {

std::optional<ApiError> AdminResource::body(Poco::Net::HTTPServerRequest& request,
                                            json::Document& doc) const {
    return api::readJsonBody(request,
                             static_cast<std::size_t>(config.server.max_request_body_bytes), doc);
}

std::shared_ptr<void> AdminResource::takeTestRun(std::optional<ApiError>& busy) const {
    std::atomic<int>& running = context_.test_runs;
    if (running.fetch_add(1) >= config.admin.max_test_runs) {
        running.fetch_sub(1);
        busy = ApiError{429,
                        "busy",
                        fmt::format("{} test runs are running (admin.max_test_runs); try again "
                                    "when one ends",
                                    config.admin.max_test_runs),
                        {},
                        {},
                        {}};
        return nullptr;
    }
    return {&running, [](std::atomic<int>* n) { n->fetch_sub(1); }};
}

void AdminResource::audit(const std::string& workspace, const std::string& operation,
                          std::string action, std::string outcome,
                          const std::string& detail_json) const {
    store::AuditEvent e;
    e.workspace_id = workspace;
    e.agent_id = "admin";
    e.operation_id = operation;
    e.action = std::move(action);
    e.outcome = std::move(outcome);
    e.detail_json = detail_json;
    if (auto r = catalog.store().appendAudit(std::move(e)); !r) {
        log::warn("admin: cannot append to the audit log: {}", r.error().message);
    }
}

}  // namespace crank::admin
