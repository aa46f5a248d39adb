#include "store/sqlite_memory.h"

#include <sqlite3.h>

namespace crank::store {

std::int64_t sqliteMemoryUsed() {
    return sqlite3_memory_used();
}

}  // namespace crank::store
