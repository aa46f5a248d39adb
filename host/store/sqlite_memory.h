#pragma once

#include <cstdint>

namespace crank::store {

/// Bytes SQLite holds on the heap in this process (sqlite3_memory_used(): every connection's page
/// cache, prepared statements and schema). It is the whole process's figure, every store
/// connection's together: about store.pool_size × store.cache_kib at most once the caches are
/// full (docs/configuration.md, `store`).
std::int64_t sqliteMemoryUsed();

}  // namespace crank::store
