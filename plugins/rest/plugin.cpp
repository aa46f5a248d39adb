// The "rest" plugin library: one adapter, "rest" (see rest_adapter.h, README.md).
#include "rest_adapter.h"
#include <crank/sdk.hpp>

CRANK_PLUGIN("rest", "1.0.0",
             "REST upstreams: unary HTTP calls, long-poll and bounded server-sent event streams",
             crank::rest::registerRestPlugin);
