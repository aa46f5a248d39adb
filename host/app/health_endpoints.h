#pragma once

#include <memory>

#include "app/readiness.h"
#include "http/router.h"

namespace crank::app {

/// Adds GET/HEAD /healthz (200 while the process serves) and GET/HEAD /readyz (200 when every
/// readiness check passes, 503 otherwise, with the failing checks named in the body).
void addHealthEndpoints(http::Router& router, const std::shared_ptr<const Readiness>& readiness);

}  // namespace crank::app
