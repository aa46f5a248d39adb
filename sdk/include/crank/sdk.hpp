// Crank plugin SDK: the header-only C++ layer over <crank/plugin.h>.
//
// C++17, standard library only. Everything is in namespace crank::sdk. A plugin library:
//   - implements crank::sdk::Adapter (protocol adapters) and/or crank::sdk::Aggregator,
//   - registers them in a `void registerPlugin(crank::sdk::Registrar&)`,
//   - declares itself once with CRANK_PLUGIN("name", "1.0.0", "description", registerPlugin);
// The layer turns every exception into an error report at the C boundary (see Error), keeps the
// registered objects alive until shutdown, and drives streams (see ThreadedStream).
// The guide is sdk/README.md.
#pragma once

#include "crank/sdk/adapter.hpp"
#include "crank/sdk/aggregator.hpp"
#include "crank/sdk/base64.hpp"
#include "crank/sdk/call.hpp"
#include "crank/sdk/diagnostics.hpp"
#include "crank/sdk/entry.hpp"
#include "crank/sdk/error.hpp"
#include "crank/sdk/host.hpp"
#include "crank/sdk/json.hpp"
#include "crank/sdk/path.hpp"
#include "crank/sdk/registrar.hpp"
#include "crank/sdk/request.hpp"
#include "crank/sdk/stream.hpp"
#include "crank/sdk/threaded_stream.hpp"
#include "crank/sdk/types.hpp"
#include "crank/sdk/upstream.hpp"
#include "crank/sdk/writer.hpp"
#include <crank/plugin.h>
