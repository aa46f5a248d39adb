#include <algorithm>
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <Poco/Net/HTTPServerRequest.h>
#include <fmt/core.h>
#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "admin/api_json.h"
#include "admin/api_request.h"
#include "admin/operation_views.h"
#include "admin/resources.h"
#include "admin/test_run.h"
#include "json/json_members.h"
#include "json/json_parse.h"
#include "json/json_text.h"
#include "util/json_string.h"

namespace crank::admin {
namespace {

using api::badRequest;
using api::invalid;
using api::notFound;
using Poco::Net::HTTPServerRequest;

/// A test run: one operation (a draft, a version, a config one) run once with the given
/// arguments, bounded and audited, nothing published (docs/admin-api.md, "Test runs").
class TestRunsResource final : public OperationResource {
public:
    using OperationResource::OperationResource;

    void addRoutes(ApiRouter& router) {
        router.add("POST", {"test-runs"}, [this](ApiCall& c) { return testRun(c.request, c.out); });
    }

private:
    std::optional<ApiError> testRun(HTTPServerRequest& request, std::string& out) {
        json::Document doc;
        if (auto e = body(request, doc)) {
            return e;
        }
        std::string operationId = json::stringMember(doc, "operation_id");
        std::string configText;
        if (auto c = std::as_const(doc).FindMember("config"); c != std::as_const(doc).MemberEnd()) {
            if (!c->value.IsObject()) {
                return invalid("the body's \"config\" must be the operation object",
                               {{"", "expected the operation object in \"config\""}});
            }
            configText = json::toJsonText(c->value);
        } else if (!operationId.empty()) {
            if (const runtime::OperationPtr op = configOperation(operationId)) {
                configText = op->config.source_json;
            } else {
                std::optional<store::OperationVersion> v;
                if (auto n = std::as_const(doc).FindMember("version");
                    n != std::as_const(doc).MemberEnd()) {
                    if (!n->value.IsInt64()) {
                        return badRequest("version must be a version number");
                    }
                    auto got =
                        catalog.store().getOperationVersion(operationId, n->value.GetInt64());
                    if (!got) {
                        return storeError(got.error());
                    }
                    v = std::move(*got);
                } else {
                    v = latestOf(operationId);
                    if (!v) {
                        return notFound("no operation " + operationId.substr(0, 80));
                    }
                }
                configText = v->config_json;
            }
        } else {
            return badRequest("config (an operation) or operation_id is required");
        }
        std::string arguments = "{}";
        if (auto a = std::as_const(doc).FindMember("arguments");
            a != std::as_const(doc).MemberEnd()) {
            if (!a->value.IsObject()) {
                return badRequest("arguments must be an object (the tool input), got " +
                                  json::describeValue(a->value));
            }
            arguments = json::toJsonText(a->value);
        }
        TestRunRequest run;
        run.arguments_json = arguments;
        run.timeout = std::chrono::milliseconds(config.admin.test_run_timeout_ms);
        run.stopping = &context().stopping;
        if (auto p = std::as_const(doc).FindMember("polls"); p != std::as_const(doc).MemberEnd()) {
            if (!p->value.IsInt() || p->value.GetInt() < 1 || p->value.GetInt() > 20) {
                return badRequest("polls must be 1 to 20");
            }
            run.polls = p->value.GetInt();
        }
        // The check that a test run asks for: the operation compiles. Its name may be taken (a
        // draft of a published operation, a copy of a config one): nothing is published.
        OperationCatalog::Checked checked =
            catalog.checkText(configText, operationId, OperationCatalog::NameCheck::ignored);
        if (auto e = checkedError(checked)) {
            return e;
        }
        run.operation = checked.operation;
        std::int64_t interval = checked.operation->config.execution.poll_interval_ms;
        if (auto i = std::as_const(doc).FindMember("poll_interval_ms");
            i != std::as_const(doc).MemberEnd()) {
            if (!i->value.IsInt64() || i->value.GetInt64() < kMinTestPollInterval.count() ||
                i->value.GetInt64() > 10'000) {
                return badRequest(fmt::format("poll_interval_ms must be {} to 10000",
                                              kMinTestPollInterval.count()));
            }
            interval = i->value.GetInt64();
        }
        run.poll_interval = std::chrono::milliseconds(std::min<std::int64_t>(interval, 10'000));
        std::optional<ApiError> busy;
        const auto slot = takeTestRun(busy);
        if (!slot) {
            return busy;
        }
        out = runTest(catalog.runner(), run);
        json::Document answer;
        std::string outcome = "ok";
        if (json::parseJson(out, answer, "").ok() && answer.IsObject() &&
            answer.HasMember("outcome") && answer["outcome"].IsString()) {
            outcome = answer["outcome"].GetString();
        }
        audit(run.operation->config.workspace, run.operation->config.name, "test_run", outcome,
              fmt::format(R"({{"id":{},"mode":{}}})", jsonString(operationId),
                          jsonString(config::toString(run.operation->config.execution.mode))));
        return std::nullopt;
    }
};

}  // namespace

std::unique_ptr<AdminResource> addTestRunsRoutes(AdminContext& ctx, ApiRouter& router) {
    auto resource = std::make_unique<TestRunsResource>(ctx);
    resource->addRoutes(router);
    return resource;
}

}  // namespace crank::admin
