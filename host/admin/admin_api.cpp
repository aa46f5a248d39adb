#include "admin/admin_api.h"

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <Poco/Exception.h>
#include <Poco/Net/HTTPServerRequest.h>
#include <Poco/Net/HTTPServerResponse.h>
#include <Poco/URI.h>

#include "admin/admin_context.h"
#include "admin/api_json.h"
#include "admin/api_request.h"
#include "admin/api_router.h"
#include "admin/resources.h"
#include "admin/static_files.h"
#include "http/responses.h"
#include "util/sha256.h"

// The admin API's front door: the Host and Origin policy, the admin token, the path and query
// read once, then the route table of the resources (resources.h) answers.

namespace crank::admin {
namespace {

using api::errorBody;
using api::Params;
using Poco::Net::HTTPServerRequest;
using Poco::Net::HTTPServerResponse;

constexpr std::string_view kApiPrefix = "/admin/api/";

}  // namespace

struct AdminApi::Impl {
    AdminContext context;
    StaticFiles files;
    http::OriginPolicy origins;
    ApiRouter router;
    std::vector<std::unique_ptr<AdminResource>> resources;

    Impl(OperationCatalog& c, const config::Config& cfg, std::string ui, std::string v)
        : context(c, cfg, std::move(v)),
          files(std::move(ui)),
          origins(cfg.server.allowed_hosts, cfg.server.allowed_origins) {
        // Order matters where patterns overlap: /operations/validate before /operations/{id}.
        for (auto add :
             {addOperationsRoutes, addOperationVersionsRoutes, addTestRunsRoutes, addPluginsRoutes,
              addRuntimeRoutes, addAuditRoutes, addUpstreamDefinitionsRoutes, addUpstreamsRoutes,
              addAgentsRoutes, addReloadRoutes}) {
            resources.push_back(add(context, router));
        }
    }

    void handle(HTTPServerRequest& request, HTTPServerResponse& response) {
        const std::string origin = request.get("Origin", "");
        if (!origins.hostAllowed(request.getHost())) {
            http::sendError(response, 403, "forbidden_host",
                            "this Host may not use the admin API (server.allowed_hosts)");
            return;
        }
        if (!origins.originAllowed(origin)) {
            http::sendError(response, 403, "forbidden_origin",
                            "this Origin may not use the admin API (server.allowed_origins)");
            return;
        }
        if (!context.config.admin.token) {
            http::sendError(response, 404, "admin_disabled",
                            "the admin API is off: set admin.token in the config");
            return;
        }
        if (!bearerMatchesDigest(request.get("Authorization", ""),
                                 context.config.admin.token->reveal())) {
            response.set("WWW-Authenticate", R"(Bearer realm="crank-admin")");
            http::sendError(response, 401, "unauthorized",
                            "the admin token is required: Authorization: Bearer TOKEN");
            return;
        }
        std::optional<Poco::URI> parsedUri;
        try {
            parsedUri.emplace(request.getURI());
            (void)parsedUri->getQueryParameters();
        } catch (const Poco::SyntaxException&) {
            http::sendError(response, 400, "bad_request",
                            "the request's path or query has a malformed %-escape");
            return;
        }
        const Poco::URI& uri = *parsedUri;
        std::vector<std::string> parts;
        {
            const std::string& path = uri.getPath();
            std::string_view rest = std::string_view(path).substr(kApiPrefix.size());
            while (!rest.empty()) {
                const std::size_t slash = std::min(rest.find('/'), rest.size());
                parts.emplace_back(rest.substr(0, slash));  // getPath() decoded it already
                rest.remove_prefix(std::min(slash + 1, rest.size()));
            }
        }
        Params params;
        for (const auto& [k, v] : uri.getQueryParameters()) {
            params[k] = v;
        }
        ApiCall call{request, parts, params, 200, {}};
        std::optional<ApiError> error = router.dispatch(call);
        if (error) {
            if (error->status == 405) {
                response.set("Allow", error->message);
                error->message = "allowed methods: " + error->message;
            }
            http::sendJson(response, error->status, errorBody(*error));
            return;
        }
        http::sendJson(response, call.status, call.out);
    }
};

AdminApi::AdminApi(OperationCatalog& catalog, const config::Config& config,
                   std::string ui_directory, std::string version)
    : impl_(std::make_unique<Impl>(catalog, config, std::move(ui_directory), std::move(version))) {}

AdminApi::~AdminApi() = default;

void AdminApi::serveReload(ConfigReloadTarget& target) {
    impl_->context.reload = &target;
}

void AdminApi::serveUpstreams(UpstreamDirectory& upstreams, UpstreamCatalog* catalog) {
    impl_->context.upstreams = &upstreams;
    impl_->context.upstream_catalog = catalog;
}

void AdminApi::serveAgents(AgentCatalog& agents) {
    impl_->context.agent_catalog = &agents;
}

void AdminApi::stop() {
    impl_->context.stopping.store(true);
}

void AdminApi::addRoutes(http::Router& router) {
    Impl* impl = impl_.get();
    router.addPrefix(std::string(kApiPrefix),
                     [impl](HTTPServerRequest& request, HTTPServerResponse& response) {
                         impl->handle(request, response);
                     });
    if (impl->context.config.admin.ui) {
        const auto files = [impl](HTTPServerRequest& request, HTTPServerResponse& response) {
            impl->files.serve(request, response);
        };
        router.add("/ui", files);
        router.addPrefix("/ui/", files);
    }
}

}  // namespace crank::admin
