#pragma once

#include <memory>

#include "store/store.h"
#include "store/store_options.h"
#include "util/error.h"

namespace crank::store {

/// Opens the store that `options.backend` names ("sqlite"), applying pending schema migrations.
/// Errors: invalid_argument for an unknown backend or out-of-range options; io when the database
/// cannot be opened (missing directory, not a database file), with the path in the message;
/// conflict when the database's schema is newer than this build knows.
Result<std::unique_ptr<Store>> openStore(const StoreOptions& options);

}  // namespace crank::store
