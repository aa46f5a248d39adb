// OperationCatalog::reloadAuthProfiles(): a reload's auth profiles reach the admin API's
// operations (the config file's are compiled again by the reload itself).
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <fmt/core.h>

#include "admin/operation_catalog.h"
#include "log/log.h"

namespace crank::admin {
namespace {

bool sameSecret(const std::optional<config::Secret>& a, const std::optional<config::Secret>& b) {
    return a.has_value() == b.has_value() && (!a || a->reveal() == b->reveal());
}

bool sameProfile(const config::AuthProfile& a, const config::AuthProfile& b) {
    return a.type == b.type && sameSecret(a.token, b.token) && a.username == b.username &&
           sameSecret(a.password, b.password) && a.placement == b.placement &&
           a.key_name == b.key_name && sameSecret(a.key, b.key) && a.headers == b.headers;
}

}  // namespace

std::shared_ptr<const config::Config> OperationCatalog::compileConfig() const {
    const std::lock_guard lock(mutex_);
    if (reloaded_) {
        return reloaded_;
    }
    // Not owned: deps_.config outlives the catalog.
    return {std::shared_ptr<const config::Config>(), deps_.config};
}

OperationCatalog::ConfigReload OperationCatalog::reloadAuthProfiles(const config::Config& next) {
    ConfigReload out;
    const std::lock_guard publishing(publish_mutex_);
    const std::shared_ptr<const config::Config> before = compileConfig();
    std::set<std::string> changed;
    for (const auto& [name, profile] : before->auth_profiles) {
        const auto now = next.auth_profiles.find(name);
        if (now == next.auth_profiles.end() || !sameProfile(profile, now->second)) {
            changed.insert(name);
        }
    }
    for (const auto& [name, profile] : next.auth_profiles) {
        if (before->auth_profiles.count(name) == 0) {
            changed.insert(name);
        }
    }
    {
        const std::lock_guard lock(mutex_);
        reloaded_ = std::make_shared<const config::Config>(next);
    }
    if (changed.empty()) {
        return out;
    }
    std::vector<std::pair<std::string, Entry>> affected;
    {
        const std::lock_guard lock(mutex_);
        for (const auto& [id, entry] : served_) {
            if (changed.count(entry.operation->config.auth_profile) != 0) {
                affected.emplace_back(id, entry);
            }
        }
    }
    for (const auto& [id, entry] : affected) {
        const config::OperationConfig& op = entry.operation->config;
        auto stored = deps_.store->getOperationVersion(id, entry.version);
        if (!stored) {
            out.errors.push_back({"operations[" + op.name + "]",
                                  "cannot read its version: " + stored.error().message});
            continue;
        }
        Checked checked = checkText(stored->config_json, id);
        if (!checked.operation) {
            const std::string why = checked.errors.empty() ? std::string("does not compile")
                                                           : checked.errors.front().toString();
            out.errors.push_back(
                {"admin operation " + op.name,
                 "keeps its old auth profile \"" + op.auth_profile + "\": " + why});
            log::warn("reload: admin operation {} ({}) keeps its old auth profile \"{}\": {}",
                      op.name, op.workspace, op.auth_profile, why);
            continue;
        }
        serve(id, checked.operation, entry.version);
        out.changes.push_back(fmt::format("admin operation {} ({}): auth profile \"{}\" applied",
                                          op.name, op.workspace, op.auth_profile));
    }
    return out;
}

}  // namespace crank::admin
