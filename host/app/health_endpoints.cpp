#include "app/health_endpoints.h"

#include <Poco/Net/HTTPServerRequest.h>
#include <Poco/Net/HTTPServerResponse.h>

#include "app/version.h"
#include "http/responses.h"

namespace crank::app {

void addHealthEndpoints(http::Router& router, const std::shared_ptr<const Readiness>& readiness) {
    router.add("/healthz", [](Poco::Net::HTTPServerRequest& request,
                              Poco::Net::HTTPServerResponse& response) {
        if (http::allowMethods(request, response, "GET,HEAD")) {
            http::sendJson(response, 200,
                           std::string(R"({"status":"ok","version":")") + kVersion + "\"}");
        }
    });
    router.add("/readyz", [readiness](Poco::Net::HTTPServerRequest& request,
                                      Poco::Net::HTTPServerResponse& response) {
        if (http::allowMethods(request, response, "GET,HEAD")) {
            const Readiness::Report report = readiness->run();
            http::sendJson(response, report.ready ? 200 : 503, report.json);
        }
    });
}

}  // namespace crank::app
