// The admin API's agents and their keys in SQLite (store/agent_record.h). Plain SQL that
// PostgreSQL runs unchanged.

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <Poco/Data/Session.h>

#include "store/sqlite_rows.h"
#include "store/sqlite_sql.h"
#include "store/sqlite_store.h"
#include "store/sqlite_store_impl.h"
#include "util/clock.h"
#include "util/random.h"

namespace crank::store {

using Poco::Data::Session;
using Poco::Data::Keywords::into;
using sqlite::clampLimit;
using sqlite::execute;
using sqlite::optionalOf;
using sqlite::queryInt;
using sqlite::select;

namespace {

constexpr std::string_view kAgentColumns = "id, workspace_id, limits_json, created_at, deleted_at";
constexpr std::string_view kKeyColumns = "id, agent_id, digest, prefix, created_at, revoked_at";

struct AgentRows {
    std::vector<std::string> id, workspace_id, limits_json;
    std::vector<std::int64_t> created_at;
    std::vector<Poco::Nullable<std::int64_t>> deleted_at;

    void attach(Poco::Data::Statement& statement) {
        statement.addExtract(into(id));
        statement.addExtract(into(workspace_id));
        statement.addExtract(into(limits_json));
        statement.addExtract(into(created_at));
        statement.addExtract(into(deleted_at));
    }

    Result<std::vector<AgentRecord>> records() const {
        std::vector<AgentRecord> out;
        out.reserve(id.size());
        for (std::size_t i = 0; i < id.size(); ++i) {
            out.push_back(AgentRecord{id[i], workspace_id[i], limits_json[i], created_at[i],
                                      optionalOf(deleted_at[i])});
        }
        return out;
    }
};

struct KeyRows {
    std::vector<std::string> id, agent_id, digest, prefix;
    std::vector<std::int64_t> created_at;
    std::vector<Poco::Nullable<std::int64_t>> revoked_at;

    void attach(Poco::Data::Statement& statement) {
        statement.addExtract(into(id));
        statement.addExtract(into(agent_id));
        statement.addExtract(into(digest));
        statement.addExtract(into(prefix));
        statement.addExtract(into(created_at));
        statement.addExtract(into(revoked_at));
    }

    Result<std::vector<AgentKeyRecord>> records() const {
        std::vector<AgentKeyRecord> out;
        out.reserve(id.size());
        for (std::size_t i = 0; i < id.size(); ++i) {
            out.push_back(AgentKeyRecord{id[i], agent_id[i], digest[i], prefix[i], created_at[i],
                                         optionalOf(revoked_at[i])});
        }
        return out;
    }
};

/// The first problem with a text field: required and at most kMaxShortTextBytes.
std::optional<Error> badText(std::string_view entity, std::string_view field,
                             std::string_view value, bool required) {
    if ((required && value.empty()) || value.size() > kMaxShortTextBytes) {
        return Error{ErrorCode::invalid_argument,
                     std::string(entity) + "." + std::string(field) +
                         (required ? " is required and" : "") + " must be at most " +
                         std::to_string(kMaxShortTextBytes) + " bytes"};
    }
    return std::nullopt;
}

std::optional<AgentRecord> loadAgent(Session& s, std::string_view id) {
    auto rows = select<AgentRows>(
        s, "SELECT " + std::string(kAgentColumns) + " FROM agents WHERE id = ?", {std::string(id)});
    if (!rows || rows->empty()) {
        return std::nullopt;
    }
    return std::move(rows->front());
}

Error noAgent(std::string_view id) {
    return Error{ErrorCode::not_found, "store: no agent '" + std::string(id) + "'"};
}

}  // namespace

Result<AgentRecord> SqliteStore::createAgent(AgentRecord agent) {
    if (auto bad = badText("agent", "id", agent.id, true)) {
        return *bad;
    }
    if (auto bad = badText("agent", "workspace_id", agent.workspace_id, true)) {
        return *bad;
    }
    if (agent.limits_json.size() > kMaxLongTextBytes || agent.deleted_at) {
        return Error{ErrorCode::invalid_argument,
                     "agent: limits_json too long, or deleted_at set on create"};
    }
    if (agent.created_at == 0) {
        agent.created_at = nowUnixMs();
    }
    return impl_->write("store: cannot create agent", [&](Session& s) -> Result<AgentRecord> {
        if (queryInt(s, "SELECT count(*) FROM agents WHERE id = ?", {agent.id}).value_or(0) > 0) {
            return Error{ErrorCode::conflict,
                         "store: the agent id '" + agent.id + "' is taken (ids are never reused)"};
        }
        execute(s,
                "INSERT INTO agents (" + std::string(kAgentColumns) + ") VALUES (?, ?, ?, ?, NULL)",
                {agent.id, agent.workspace_id, agent.limits_json, agent.created_at});
        return agent;
    });
}

Result<AgentRecord> SqliteStore::getAgent(std::string_view id) {
    return impl_->read("store: cannot read agent", [&](Session& s) -> Result<AgentRecord> {
        auto agent = loadAgent(s, id);
        if (!agent) {
            return noAgent(id);
        }
        return std::move(*agent);
    });
}

Result<std::vector<AgentRecord>> SqliteStore::listAgents(bool include_deleted, int limit,
                                                         std::string_view after_id) {
    auto clamped = clampLimit(limit, kMaxListLimit, "agent list limit");
    if (!clamped) {
        return clamped.error();
    }
    std::string where = " WHERE id > ?";
    if (!include_deleted) {
        where += " AND deleted_at IS NULL";
    }
    return impl_->read("store: cannot list agents", [&](Session& s) {
        return select<AgentRows>(s,
                                 "SELECT " + std::string(kAgentColumns) + " FROM agents" + where +
                                     " ORDER BY id LIMIT ?",
                                 {std::string(after_id), std::int64_t{*clamped}});
    });
}

Result<void> SqliteStore::setAgentLimits(std::string_view id, std::string_view limits_json) {
    if (limits_json.size() > kMaxLongTextBytes) {
        return Error{ErrorCode::invalid_argument, "agent.limits_json is too long"};
    }
    return impl_->write("store: cannot set agent limits", [&](Session& s) -> Result<void> {
        if (execute(s, "UPDATE agents SET limits_json = ? WHERE id = ? AND deleted_at IS NULL",
                    {std::string(limits_json), std::string(id)}) == 0) {
            return noAgent(id);
        }
        return {};
    });
}

Result<void> SqliteStore::deleteAgent(std::string_view id) {
    const std::int64_t now = nowUnixMs();
    return impl_->write("store: cannot delete agent", [&](Session& s) -> Result<void> {
        if (execute(s, "UPDATE agents SET deleted_at = ? WHERE id = ? AND deleted_at IS NULL",
                    {now, std::string(id)}) == 0) {
            return noAgent(id);
        }
        execute(s, "UPDATE agent_keys SET revoked_at = ? WHERE agent_id = ? AND revoked_at IS NULL",
                {now, std::string(id)});
        return {};
    });
}

Result<AgentKeyRecord> SqliteStore::addAgentKey(AgentKeyRecord key) {
    if (key.id.empty()) {
        key.id = newId("key_");
    }
    for (const auto& [field, value] : {std::pair<std::string_view, std::string_view>{"id", key.id},
                                       {"agent_id", key.agent_id},
                                       {"digest", key.digest}}) {
        if (auto bad = badText("agent_key", field, value, true)) {
            return *bad;
        }
    }
    if (auto bad = badText("agent_key", "prefix", key.prefix, false)) {
        return *bad;
    }
    if (key.revoked_at) {
        return Error{ErrorCode::invalid_argument, "agent_key: a new key cannot be revoked"};
    }
    if (key.created_at == 0) {
        key.created_at = nowUnixMs();
    }
    return impl_->write("store: cannot add agent key", [&](Session& s) -> Result<AgentKeyRecord> {
        const auto agent = loadAgent(s, key.agent_id);
        if (!agent || agent->deleted()) {
            return noAgent(key.agent_id);
        }
        if (queryInt(s, "SELECT count(*) FROM agent_keys WHERE digest = ?", {key.digest})
                .value_or(0) > 0) {
            return Error{ErrorCode::conflict, "store: that key is taken"};
        }
        execute(s,
                "INSERT INTO agent_keys (" + std::string(kKeyColumns) +
                    ") VALUES (?, ?, ?, ?, ?, NULL)",
                {key.id, key.agent_id, key.digest, key.prefix, key.created_at});
        return key;
    });
}

Result<std::vector<AgentKeyRecord>> SqliteStore::listAgentKeys(std::string_view agent_id,
                                                               bool include_revoked, int limit,
                                                               std::string_view after_id) {
    auto clamped = clampLimit(limit, kMaxListLimit, "agent key list limit");
    if (!clamped) {
        return clamped.error();
    }
    std::string where = " WHERE id > ?";
    sqlite::SqlParams params{std::string(after_id)};
    if (!agent_id.empty()) {
        where += " AND agent_id = ?";
        params.emplace_back(std::string(agent_id));
    }
    if (!include_revoked) {
        where += " AND revoked_at IS NULL";
    }
    params.emplace_back(std::int64_t{*clamped});
    return impl_->read("store: cannot list agent keys", [&](Session& s) {
        return select<KeyRows>(s,
                               "SELECT " + std::string(kKeyColumns) + " FROM agent_keys" + where +
                                   " ORDER BY id LIMIT ?",
                               params);
    });
}

Result<AgentKeyRecord> SqliteStore::revokeAgentKey(std::string_view agent_id,
                                                   std::string_view key_id) {
    const std::int64_t now = nowUnixMs();
    return impl_->write(
        "store: cannot revoke agent key", [&](Session& s) -> Result<AgentKeyRecord> {
            execute(s,
                    "UPDATE agent_keys SET revoked_at = ? WHERE id = ? AND agent_id = ? AND "
                    "revoked_at IS NULL",
                    {now, std::string(key_id), std::string(agent_id)});
            auto rows = select<KeyRows>(s,
                                        "SELECT " + std::string(kKeyColumns) +
                                            " FROM agent_keys WHERE id = ? AND agent_id = ?",
                                        {std::string(key_id), std::string(agent_id)});
            if (!rows) {
                return rows.error();
            }
            if (rows->empty()) {
                return Error{ErrorCode::not_found, "store: agent '" + std::string(agent_id) +
                                                       "' has no key '" + std::string(key_id) +
                                                       "'"};
            }
            return std::move(rows->front());
        });
}

}  // namespace crank::store
