#include "admin/agent_catalog.h"

#include <algorithm>
#include <map>
#include <utility>

#include <fmt/core.h>
#include <rapidjson/document.h>

#include "config/config_loader.h"
#include "config/operation_config.h"
#include "json/json_parse.h"
#include "json/json_text.h"
#include "log/log.h"
#include "util/random.h"
#include "util/sha256.h"

namespace crank::admin {
namespace {

/// What a key starts with: it tells a leaked key for a Crank agent key (secret scanners).
constexpr std::string_view kKeyPrefix = "crank_ak_";
/// The characters of a key kept to tell keys apart in lists: the prefix and 4 of 64 hex digits.
constexpr std::size_t kShownKeyChars = kKeyPrefix.size() + 4;

ApiError invalidField(const std::string& path, std::string message) {
    return ApiError{422, "invalid", message, {{path, message}}, {}, {}};
}

ApiError fromStore(const Error& e) {
    return storeError(e);
}

/// `limits` read as an agent's limits object: its JSON text, or the 422 naming its fields
/// ("limits.rate.burst").
std::optional<ApiError> limitsText(const rapidjson::Value& limits, std::string& text) {
    config::LimitsLoadResult loaded = config::loadAgentLimits(limits);
    if (!loaded.limits) {
        for (config::ConfigError& e : loaded.errors) {
            e.path = "limits" + (e.path.empty() ? "" : "." + e.path);
        }
        return ApiError{
            422, "invalid", "the agent's limits are not valid", std::move(loaded.errors), {}, {}};
    }
    text = json::toJsonText(limits);
    return std::nullopt;
}

/// Every row a paged list gives, page after page from the first (`fetch(after)` lists those
/// after the id `after`; `idOf` gives a row's id); nullopt, after logging `what`, when a page
/// cannot be read.
template <typename Row, typename Fetch, typename IdOf>
std::optional<std::vector<Row>> allPages(Fetch fetch, IdOf idOf, const char* what) {
    std::vector<Row> rows;
    for (std::string after;;) {
        auto page = fetch(after);
        if (!page) {
            log::warn("admin: cannot read {}: {}", what, page.error().message);
            return std::nullopt;
        }
        rows.insert(rows.end(), page->begin(), page->end());
        if (page->size() < static_cast<std::size_t>(store::kMaxListLimit)) {
            return rows;
        }
        after = idOf(page->back());
    }
}

}  // namespace

AgentCatalog::AgentCatalog(const config::Config& config, std::shared_ptr<store::Store> store,
                           Apply apply, FileAgents file_agents)
    : config_(config),
      store_(std::move(store)),
      apply_(std::move(apply)),
      file_agents_(std::move(file_agents)) {}

bool AgentCatalog::fileDefines(std::string_view id) const {
    for (const config::Agent& a : file_agents_()) {
        if (a.id == id) {
            return true;
        }
    }
    return false;
}

AgentCatalog::~AgentCatalog() {
    stop();
}

void AgentCatalog::start(std::chrono::milliseconds interval) {
    sync();
    thread_ = std::thread([this, interval] { loop(interval); });
}

void AgentCatalog::stop() {
    {
        const std::lock_guard lock(loop_mutex_);
        stopping_ = true;
    }
    loop_wake_.notify_all();
    if (thread_.joinable()) {
        thread_.join();
    }
}

void AgentCatalog::loop(std::chrono::milliseconds interval) {
    std::unique_lock lock(loop_mutex_);
    while (!loop_wake_.wait_for(lock, interval, [this] { return stopping_; })) {
        lock.unlock();
        sync();
        lock.lock();
    }
}

void AgentCatalog::sync() {
    const std::lock_guard lock(change_mutex_);
    syncLocked();
}

void AgentCatalog::syncLocked() {
    // Every live agent and key, page by page (ids only grow in the order they are listed).
    std::optional<std::vector<store::AgentRecord>> agents = allPages<store::AgentRecord>(
        [this](const std::string& after) {
            return store_->listAgents(false, store::kMaxListLimit, after);
        },
        [](const store::AgentRecord& a) { return a.id; }, "the agents");
    std::optional<std::vector<store::AgentKeyRecord>> keys = allPages<store::AgentKeyRecord>(
        [this](const std::string& after) {
            return store_->listAgentKeys("", false, store::kMaxListLimit, after);
        },
        [](const store::AgentKeyRecord& k) { return k.id; }, "the agents' keys");
    if (!agents || !keys) {
        return;
    }
    std::map<std::string, std::vector<std::string>, std::less<>> digests;  // by agent id
    for (store::AgentKeyRecord& k : *keys) {
        digests[k.agent_id].push_back(std::move(k.digest));
    }
    std::string fingerprint;
    std::vector<config::Agent> out;
    out.reserve(agents->size());
    for (const store::AgentRecord& r : *agents) {
        config::Agent a;
        a.id = std::string(kApiAgentPrefix) + r.id;
        a.workspace = r.workspace_id;
        json::Document doc;
        if (json::parseJson(r.limits_json, doc, "").ok()) {
            if (auto loaded = config::loadAgentLimits(doc); loaded.limits) {
                a.limits = *loaded.limits;
            } else {
                log::warn(
                    "admin: agent {} has limits that no longer read ({}); it runs on the "
                    "defaults",
                    r.id, loaded.errors.empty() ? "" : loaded.errors.front().toString());
            }
        }
        fingerprint += r.id + '\n' + r.workspace_id + '\n' + r.limits_json + '\n';
        if (auto it = digests.find(r.id); it != digests.end()) {
            for (const std::string& digest : it->second) {
                fingerprint += digest + '\n';
            }
            a.key_digests = std::move(it->second);
        }
        out.push_back(std::move(a));
    }
    if (fingerprint == applied_) {
        return;
    }
    apply_(std::move(out));
    applied_ = std::move(fingerprint);
    log::info("admin: {} agent{} of the admin API admitted", agents->size(),
              agents->size() == 1 ? "" : "s");
}

std::optional<ApiError> AgentCatalog::find(const std::string& id, store::AgentRecord& agent) const {
    auto found = store_->getAgent(id);
    if (!found) {
        if (found.error().code == ErrorCode::not_found && fileDefines(id)) {
            return ApiError{
                409,
                "read_only",
                "agent " + id + " comes from the config file; change it there (and reload)",
                {},
                {},
                {}};
        }
        return fromStore(found.error());
    }
    agent = std::move(*found);
    return std::nullopt;
}

std::optional<ApiError> AgentCatalog::create(const std::string& id, const std::string& workspace,
                                             const rapidjson::Value* limits,
                                             store::AgentRecord& agent, NewKey& key) {
    if (id.empty() || id.size() > 64 || !config::isToolName(id) ||
        id.find_first_not_of('.') == std::string::npos) {
        return invalidField("id",
                            "an agent id has 1 to 64 letters, digits, '_', '-' or '.', not only "
                            "dots");
    }
    const bool known = std::any_of(config_.auth.workspaces.begin(), config_.auth.workspaces.end(),
                                   [&](const config::Workspace& w) { return w.id == workspace; });
    if (!known) {
        return invalidField("workspace",
                            "no workspace \"" + workspace + "\" is defined in auth.workspaces");
    }
    std::string limits_json = "{}";
    if (limits != nullptr) {
        if (auto e = limitsText(*limits, limits_json)) {
            return e;
        }
    }
    if (fileDefines(id)) {
        return ApiError{409,
                        "conflict",
                        "the config file defines an agent \"" + id + "\"; choose another id",
                        {{"id", "taken by the config file"}},
                        {},
                        {}};
    }
    const std::lock_guard lock(change_mutex_);
    store::AgentRecord record;
    record.id = id;
    record.workspace_id = workspace;
    record.limits_json = limits_json;
    auto created = store_->createAgent(record);
    if (!created) {
        ApiError e = fromStore(created.error());
        if (e.status == 409) {
            e.fields.push_back({"id", "taken: an agent id is never reused"});
        }
        return e;
    }
    if (auto e = newKey(id, key)) {
        (void)store_->deleteAgent(id);  // no agent without a key
        return e;
    }
    agent = std::move(*created);
    syncLocked();
    return std::nullopt;
}

std::optional<ApiError> AgentCatalog::newKey(const std::string& id, NewKey& key) {
    auto live = store_->listAgentKeys(id, false, static_cast<int>(kMaxKeysPerAgent) + 1);
    if (!live) {
        return fromStore(live.error());
    }
    if (live->size() >= kMaxKeysPerAgent) {
        return ApiError{409,
                        "conflict",
                        fmt::format("agent {} holds {} live keys already; revoke one first", id,
                                    kMaxKeysPerAgent),
                        {},
                        {},
                        {}};
    }
    std::string secret = std::string(kKeyPrefix) + randomHex(32);
    store::AgentKeyRecord record;
    record.agent_id = id;
    record.digest = sha256Hex(secret);
    record.prefix = secret.substr(0, kShownKeyChars);
    auto added = store_->addAgentKey(record);
    if (!added) {
        return fromStore(added.error());
    }
    key.record = std::move(*added);
    key.secret = std::move(secret);
    return std::nullopt;
}

std::optional<ApiError> AgentCatalog::addKey(const std::string& id, NewKey& key) {
    store::AgentRecord agent;
    if (auto e = find(id, agent)) {
        return e;
    }
    if (agent.deleted()) {
        return ApiError{404, "not_found", "agent " + id + " is deleted", {}, {}, {}};
    }
    const std::lock_guard lock(change_mutex_);
    if (auto e = newKey(id, key)) {
        return e;
    }
    syncLocked();
    return std::nullopt;
}

std::optional<ApiError> AgentCatalog::revokeKey(const std::string& id, const std::string& key_id,
                                                store::AgentKeyRecord& key) {
    store::AgentRecord agent;
    if (auto e = find(id, agent)) {
        return e;
    }
    const std::lock_guard lock(change_mutex_);
    auto revoked = store_->revokeAgentKey(id, key_id);
    if (!revoked) {
        return fromStore(revoked.error());
    }
    key = std::move(*revoked);
    syncLocked();
    return std::nullopt;
}

std::optional<ApiError> AgentCatalog::setLimits(const std::string& id,
                                                const rapidjson::Value& limits) {
    store::AgentRecord agent;
    if (auto e = find(id, agent)) {
        return e;
    }
    std::string text;
    if (auto e = limitsText(limits, text)) {
        return e;
    }
    const std::lock_guard lock(change_mutex_);
    if (auto done = store_->setAgentLimits(id, text); !done) {
        return fromStore(done.error());
    }
    syncLocked();
    return std::nullopt;
}

std::optional<ApiError> AgentCatalog::remove(const std::string& id) {
    store::AgentRecord agent;
    if (auto e = find(id, agent)) {
        return e;
    }
    const std::lock_guard lock(change_mutex_);
    if (auto done = store_->deleteAgent(id); !done) {
        return fromStore(done.error());
    }
    syncLocked();
    return std::nullopt;
}

}  // namespace crank::admin
