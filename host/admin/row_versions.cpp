#include "admin/row_versions.h"

#include <utility>

#include <fmt/core.h>

#include "log/log.h"

namespace crank::admin {

std::optional<store::OperationVersion> newestVersion(store::Store& store, const std::string& id) {
    auto versions = store.listOperationVersions(id, 1);
    if (!versions || versions->empty()) {
        return std::nullopt;
    }
    return std::move(versions->front());
}

std::optional<ApiError> createRow(store::Store& store, const store::OperationRecord& record,
                                  std::string config_json, std::string comment,
                                  store::OperationRecord& created,
                                  store::OperationVersion& version) {
    auto row = store.createOperation(record);
    if (!row) {
        ApiError e = storeError(row.error());
        if (e.status == 409) {
            e.fields.push_back({"name", "taken: choose another name"});
        }
        return e;
    }
    store::OperationVersionDraft draft;
    draft.config_json = std::move(config_json);
    draft.created_by = "admin";
    draft.comment = std::move(comment);
    draft.expected_latest = 0;
    auto first = store.addOperationVersion(row->id, draft);
    if (!first) {
        // No row without a version: it would hold the name and take no edit.
        if (auto undone = store.deleteOperation(row->id); !undone) {
            log::warn("admin: cannot remove {} after its first version failed: {}", row->id,
                      undone.error().message);
        }
        return storeError(first.error());
    }
    created = std::move(*row);
    version = std::move(*first);
    return std::nullopt;
}

std::optional<ApiError> addRowVersion(store::Store& store, const std::string& id,
                                      std::string config_json, std::string comment,
                                      std::int64_t base_version, store::OperationVersion& version) {
    store::OperationVersionDraft draft;
    draft.config_json = std::move(config_json);
    draft.created_by = "admin";
    draft.comment = std::move(comment);
    draft.expected_latest = base_version;
    auto saved = store.addOperationVersion(id, draft);
    if (!saved) {
        ApiError e = storeError(saved.error());
        if (e.status == 409) {
            if (const auto latest = newestVersion(store, id)) {
                e.latest_version = latest->version;
                e.message = fmt::format(
                    "version {} was saved since you loaded version {}; reload it, apply your "
                    "change again and save",
                    latest->version, base_version);
            }
        }
        return e;
    }
    version = std::move(*saved);
    return std::nullopt;
}

}  // namespace crank::admin
