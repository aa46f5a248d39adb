#include "plugins/diagnostics_call.h"

#include <string>

#include <rapidjson/document.h>

#include "json/json_members.h"

namespace crank::plugins {
namespace {

std::string pathOf(std::string_view details_json) {
    if (details_json.empty()) {
        return {};
    }
    json::Document details;
    if (!json::parseObject(details_json, details)) {
        return {};
    }
    if (!details.HasMember("path") || !details["path"].IsString()) {
        return {};
    }
    const rapidjson::Value& path = details["path"];
    return {path.GetString(), path.GetStringLength()};
}

}  // namespace

crank_emit_result DiagnosticsCall::emit(std::string_view /*item_json*/) noexcept {
    return CRANK_EMIT_CANCELLED;
}

void DiagnosticsCall::setError(crank_error_code /*code*/, std::string_view message,
                               std::string_view details_json) noexcept {
    try {
        Diagnostic diagnostic{pathOf(details_json), std::string(message.substr(0, 4096))};
        const std::lock_guard lock(mutex_);
        diagnostics_.push_back(std::move(diagnostic));
    } catch (...) {  // NOLINT(bugprone-empty-catch): out of memory; finish() still reports failure
    }
}

std::vector<Diagnostic> DiagnosticsCall::finish(crank_status status) {
    const std::lock_guard lock(mutex_);
    if (status != CRANK_OK && diagnostics_.empty()) {
        diagnostics_.push_back({"", "the plugin refused this config without saying why"});
    }
    return std::move(diagnostics_);
}

}  // namespace crank::plugins
