// OperationCatalog's share of a config reload (docs/operations.md, "Reload"): the config file's
// operations, replaced by the reloaded ones.

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <fmt/core.h>

#include "admin/operation_catalog.h"
#include "runtime/operation_runner.h"

namespace crank::admin {

using runtime::OperationPtr;

namespace {

/// An operation is the same when its text and its auth (resolved: a rotated key counts) are.
bool same(const OperationPtr& a, const OperationPtr& b) {
    return a->config.source_json == b->config.source_json && a->auth_json == b->auth_json;
}

using Key = std::pair<std::string, std::string>;  // workspace, name

Key keyOf(const OperationPtr& op) {
    return {op->config.workspace, op->config.name};
}

}  // namespace

std::vector<OperationPtr> OperationCatalog::configOperations() const {
    const std::lock_guard lock(mutex_);
    return deps_.config_operations;
}

OperationCatalog::ConfigReload OperationCatalog::reloadConfigOperations(
    std::vector<OperationPtr> next) {
    const std::lock_guard publishing(publish_mutex_);
    ConfigReload out;
    const std::vector<OperationPtr> before = configOperations();
    std::map<Key, OperationPtr> old;
    std::set<std::pair<std::string, std::string>> oldTools;  // workspace, tool
    for (const OperationPtr& op : before) {
        old[keyOf(op)] = op;
        for (const std::string& tool : op->config.toolNames()) {
            oldTools.insert({op->config.workspace, tool});
        }
    }
    // What changes, and whether its tools are free: a tool already published, by something
    // else than the file's operations, refuses the whole reload.
    std::vector<OperationPtr> changed;
    std::set<Key> kept;
    for (const OperationPtr& op : next) {
        kept.insert(keyOf(op));
        const auto was = old.find(keyOf(op));
        if (was != old.end() && same(was->second, op)) {
            continue;
        }
        changed.push_back(op);
        const auto registry = deps_.tools.find(op->config.workspace);
        if (registry == deps_.tools.end()) {
            continue;  // the reload refuses a new workspace before this
        }
        for (const std::string& tool : op->config.toolNames()) {
            if (oldTools.count({op->config.workspace, tool}) == 0 && registry->second->find(tool)) {
                out.errors.push_back(
                    {op->path + ".name",
                     fmt::format("tool \"{}\" is published already in workspace \"{}\" (by an "
                                 "admin API operation or an upstream)",
                                 tool, op->config.workspace)});
            }
        }
    }
    if (!out.errors.empty()) {
        return out;
    }
    std::vector<OperationPtr> removed;
    for (const OperationPtr& op : before) {
        if (kept.count(keyOf(op)) == 0) {
            removed.push_back(op);
        }
    }
    // One replace per workspace: the old tools out and the new in, under one lock of the
    // registry (no moment in which a changed operation's tool is unknown).
    std::map<std::string, std::pair<std::vector<std::string>, runtime::OperationTools>>
        perWorkspace;
    for (const OperationPtr& op : changed) {
        auto& [remove, add] = perWorkspace[op->config.workspace];
        if (const auto was = old.find(keyOf(op)); was != old.end()) {
            const std::vector<std::string> tools = was->second->config.toolNames();
            remove.insert(remove.end(), tools.begin(), tools.end());
        }
        for (auto& tool : runtime::operationTools(op, *deps_.runner)) {
            add.push_back(std::move(tool));
        }
        out.changes.push_back(fmt::format("operations[{}] in workspace {}: {}", op->config.name,
                                          op->config.workspace,
                                          old.count(keyOf(op)) != 0 ? "changed" : "added"));
    }
    for (const OperationPtr& op : removed) {
        const std::vector<std::string> tools = op->config.toolNames();
        auto& remove = perWorkspace[op->config.workspace].first;
        remove.insert(remove.end(), tools.begin(), tools.end());
        out.changes.push_back(
            fmt::format("operations[{}] in workspace {}: removed (running sessions and jobs of it "
                        "go on)",
                        op->config.name, op->config.workspace));
    }
    for (auto& [workspace, change] : perWorkspace) {
        deps_.tools.at(workspace)->replace(change.first, std::move(change.second));
    }
    // Jobs: a new or changed async_job operation replaces its entry at once; one that is gone
    // (or no longer a job) leaves the registry. Jobs that run keep the operation they hold.
    for (const OperationPtr& op : changed) {
        const auto was = old.find(keyOf(op));
        if (op->config.execution.mode == config::ExecutionMode::async_job) {
            deps_.runner->addJobOperation(op);
        } else if (was != old.end() &&
                   was->second->config.execution.mode == config::ExecutionMode::async_job) {
            deps_.runner->removeJobOperation(was->second);
        }
    }
    for (const OperationPtr& op : removed) {
        if (op->config.execution.mode == config::ExecutionMode::async_job) {
            deps_.runner->removeJobOperation(op);
        }
    }
    const std::lock_guard lock(mutex_);
    deps_.config_operations = std::move(next);
    return out;
}

}  // namespace crank::admin
