#pragma once

// What the operations' resources (operations, their versions, test runs) share: how one
// operation is shown (docs/admin-api.md, "Operations"), and finding an operation by id, from the
// config file or the store.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <rapidjson/fwd.h>

#include "admin/admin_context.h"
#include "admin/api_json.h"
#include "admin/operation_catalog.h"
#include "json/json_value.h"
#include "runtime/operation.h"
#include "store/store.h"

namespace crank::admin {

/// What a list or detail shows of one operation (docs/admin-api.md, "Operations").
struct OperationView {
    std::string id;
    std::string name;
    std::string workspace;
    bool from_config = false;
    std::string mode;
    std::string protocol;
    std::string title;
    std::string description;
    std::vector<std::string> tools;
    std::optional<std::int64_t> published_version;
    std::optional<std::int64_t> latest_version;
    std::optional<std::int64_t> served_version;
    std::string status;
    std::string error;
    std::int64_t created_at = 0;
    std::optional<std::int64_t> deleted_at;
};

/// The operation as an object of the operations' answers.
void writeView(api::Writer& w, const OperationView& v);

/// One stored version of an operation.
void writeVersion(api::Writer& w, const store::OperationVersion& v);

/// The base of the operations' resources.
class OperationResource : public AdminResource {
protected:
    using AdminResource::AdminResource;

    /// The config file operation of id "config:WORKSPACE:NAME"; null for any other id.
    runtime::OperationPtr configOperation(std::string_view id) const;

    /// The summary of a config file operation.
    static OperationView viewOf(const runtime::Operation& op);

    /// The summary of admin operation `r`; `latest` is its newest version when known.
    OperationView viewOf(const store::OperationRecord& r,
                         const std::optional<store::OperationVersion>& latest) const;

    /// The newest version of admin operation `id`; nullopt when it has none (or is unknown).
    std::optional<store::OperationVersion> latestOf(const std::string& id) const;

    /// The admin operation `id`, or the error to answer (read_only for a config operation).
    std::optional<ApiError> adminRecord(std::string_view id, store::OperationRecord& record) const;

    /// The `config` member of a request body, or an error.
    static const rapidjson::Value* operationOf(const json::Document& body,
                                               std::optional<ApiError>& error);

    /// The answer to an operation the catalog refused (409 for a name taken, 422 naming its
    /// fields); nullopt when it compiled.
    static std::optional<ApiError> checkedError(OperationCatalog::Checked& checked);

    /// `{"operation": ..., "version": ...}`: the answer to a create or an edit.
    std::string operationAndVersion(const store::OperationRecord& r,
                                    const store::OperationVersion& v) const;
};

}  // namespace crank::admin
