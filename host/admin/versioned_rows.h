#pragma once

// What the versions' routes (versions_resource.cpp) need of the rows whose versions they serve:
// admin operations (operation_rows.cpp) or admin upstreams (upstream_rows.cpp). Both are rows of
// the store's operations table, told apart by their kind (store/operation_kind.h).

#include <cstdint>
#include <optional>
#include <string>

#include "admin/operation_catalog.h"
#include "json/json_value.h"
#include "store/store.h"

namespace crank::admin {

class VersionedRows {
public:
    virtual ~VersionedRows() = default;
    VersionedRows() = default;
    VersionedRows(const VersionedRows&) = delete;
    VersionedRows& operator=(const VersionedRows&) = delete;

    /// The routes' first segment: "operations", "upstreams".
    virtual const char* collection() const = 0;
    /// One row, in messages, answers and audit actions: "operation", "upstream".
    virtual const char* noun() const = 0;
    /// The row that `key` (the routes' second segment: an id, a name) names, of this kind; or
    /// the error to answer (404; 409 read_only for the config file's).
    virtual std::optional<ApiError> find(const std::string& key,
                                         store::OperationRecord& record) const = 0;
    /// Publishes `version` of `record`, optimistic against `expected` (nullopt: what is published
    /// now), and serves it on this node. `extra` gets members to append to the answer
    /// (`,"tools":[...]`).
    virtual std::optional<ApiError> publish(const store::OperationRecord& record,
                                            std::int64_t version,
                                            std::optional<std::optional<std::int64_t>> expected,
                                            std::string& extra) = 0;
    /// The row's summary object, as the collection's answers show it.
    virtual std::string summary(const store::OperationRecord& record) const = 0;
    /// A version's config as answers show it (secrets hidden); as stored by default.
    virtual std::string shown(const std::string& config_json) const { return config_json; }
    /// Two versions' configs as a diff compares them (secrets hidden, a changed one marked).
    virtual void shownPair(json::Document& /*from*/, json::Document& /*to*/) const {}
};

}  // namespace crank::admin
