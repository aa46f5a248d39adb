#include "store/open_store.h"

#include <string>
#include <utility>

#include "store/sqlite_store.h"

namespace crank::store {

Result<std::unique_ptr<Store>> openStore(const StoreOptions& options) {
    if (options.backend == "sqlite") {
        auto opened = SqliteStore::open(options);
        if (!opened) {
            return opened.error();
        }
        return std::unique_ptr<Store>(std::move(opened).value());
    }
    return Error{ErrorCode::invalid_argument, "store.backend: unknown backend '" + options.backend +
                                                  "'; the only backend is 'sqlite'"};
}

}  // namespace crank::store
