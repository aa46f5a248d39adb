#include "app/readiness.h"

#include "util/json_string.h"

namespace crank::app {

Readiness::Report Readiness::run() const {
    Report report;
    report.ready = !draining_.load();
    std::string checks;
    for (const auto& [name, check] : checks_) {
        Result<void> result =
            check ? check() : Result<void>(Error{ErrorCode::internal, "no check"});
        checks += checks.empty() ? "" : ",";
        appendJsonString(checks, name);
        checks += ':';
        if (result) {
            checks += R"("ok")";
        } else {
            report.ready = false;
            checks += R"({"error":)";
            appendJsonString(checks, result.error().message);
            checks += '}';
        }
    }
    const char* status = draining_.load() ? "draining" : (report.ready ? "ready" : "not_ready");
    report.json = std::string(R"({"status":")") + status + R"(","checks":{)" + checks + "}}";
    return report;
}

}  // namespace crank::app
