#pragma once

// A task as each era of MCP writes it, for a task that crosses eras through crankd: a 2026-07-28
// upstream's task (the Tasks extension's flat object: `ttlMs`, `pollIntervalMs`, its result or
// error inlined by tasks/get) shown to a 2025-11-25 session as a Task (`ttl`, `pollInterval`,
// the result fetched by tasks/result).
//
// THREADING: pure functions.

#include <cstdint>
#include <string>
#include <string_view>

#include "json/json_value.h"

namespace crank::federation {

/// The 2025-11-25 Task object of `flat` (a 2026 task as created or as tasks/get answers it,
/// already read): taskId, status, statusMessage, createdAt, lastUpdatedAt, `ttl` (from ttlMs)
/// and `pollInterval` (from pollIntervalMs). What the 2025 Task requires is always there: a
/// timestamp missing (or not a string) is `now_ms`, a ttl missing (or not a count) is null;
/// statusMessage and pollInterval only when given right. What the 2025 Task has not
/// (resultType, result, error, inputRequests, _meta) is left out.
std::string legacyTaskJson(const json::Value& flat, std::int64_t now_ms);

/// The members (without braces) of the 2026 flat task of `legacy` (a 2025 Task, already read):
/// taskId, status, statusMessage, createdAt, lastUpdatedAt, `ttlMs` (from ttl, null when
/// unknown) and `pollIntervalMs` (from pollInterval), timestamps missing given as `now_ms`.
std::string modernTaskMembers(const json::Value& legacy, std::int64_t now_ms);

/// `result` (a 2025 tasks/result answer, read) without its related-task `_meta` member (the
/// extension inlines a result without it), as JSON text.
std::string withoutRelatedTask(json::Value& result);

/// The Task object of a completed task crankd settled itself (UpstreamTasks::settle), in the
/// era asked: `modern`, the 2026 flat task with `result_json` inlined as its `result` (tasks/get);
/// else the 2025 Task (whose result tasks/result gives).
std::string settledTaskJson(std::string_view task_id, std::int64_t created_ms, bool modern,
                            std::string_view result_json = {});

/// `result_json` (a CallToolResult object) with the related-task `_meta` of `task_id`, as a
/// 2025 tasks/result answers; unchanged when it cannot be read as an object.
std::string withRelatedTask(std::string_view result_json, std::string_view task_id);

}  // namespace crank::federation
