#pragma once

// The admin API's resources, one per file (docs/admin-api.md). Each add...Routes() adds its
// routes to the table and returns the resource, which must outlive the router's use.

#include <memory>

#include "admin/admin_context.h"
#include "admin/api_router.h"
#include "admin/versioned_rows.h"

namespace crank::admin {

/// /operations, /operations/{id}, /operations/validate (operations_resource.cpp).
std::unique_ptr<AdminResource> addOperationsRoutes(AdminContext& ctx, ApiRouter& router);
/// /{collection}/{key}/versions[/{n}], /diff, /publish, /rollback of `rows`
/// (versions_resource.cpp).
std::unique_ptr<AdminResource> addVersionsRoutes(AdminContext& ctx, ApiRouter& router,
                                                 std::unique_ptr<VersionedRows> rows);
/// The versions' routes of the admin operations, /operations/{id}/... (operation_rows.cpp).
std::unique_ptr<AdminResource> addOperationVersionsRoutes(AdminContext& ctx, ApiRouter& router);
/// The admin upstreams: POST /upstreams, PUT and DELETE /upstreams/{name}, /upstreams/validate,
/// /upstreams/{name}/definition, and their versions' routes (upstream_rows.cpp).
std::unique_ptr<AdminResource> addUpstreamDefinitionsRoutes(AdminContext& ctx, ApiRouter& router);
/// /test-runs (test_runs_resource.cpp).
std::unique_ptr<AdminResource> addTestRunsRoutes(AdminContext& ctx, ApiRouter& router);
/// /plugins, /meta, /auth-profiles (plugins_resource.cpp).
std::unique_ptr<AdminResource> addPluginsRoutes(AdminContext& ctx, ApiRouter& router);
/// /sessions, /jobs and their stop and cancel (runtime_resource.cpp).
std::unique_ptr<AdminResource> addRuntimeRoutes(AdminContext& ctx, ApiRouter& router);
/// /audit (audit_resource.cpp).
std::unique_ptr<AdminResource> addAuditRoutes(AdminContext& ctx, ApiRouter& router);
/// /upstreams, /upstreams/{name}: their live status, test, stop, start, restart
/// (upstreams_resource.cpp).
std::unique_ptr<AdminResource> addUpstreamsRoutes(AdminContext& ctx, ApiRouter& router);
/// /agents, /agents/{id}, their keys and limits, and /workspaces (agents_resource.cpp).
std::unique_ptr<AdminResource> addAgentsRoutes(AdminContext& ctx, ApiRouter& router);
/// /reload: the config file reloaded (reload_resource.cpp).
std::unique_ptr<AdminResource> addReloadRoutes(AdminContext& ctx, ApiRouter& router);

}  // namespace crank::admin
