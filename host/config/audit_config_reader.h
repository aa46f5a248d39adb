#pragma once

// Internal to host/config: reads the `audit` section (AuditConfig) for the loader.

#include "config/config.h"
#include "config/config_error.h"
#include "config/json_reader.h"

namespace crank::config::detail {

/// The `audit` section; `value` null (absent) gives the defaults. Problems go into `errors`,
/// each with its JSON path (`audit.max_age_days: ...`).
AuditConfig readAuditConfig(const Json* value, ConfigErrors& errors);

}  // namespace crank::config::detail
