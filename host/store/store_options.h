#pragma once

#include <string>

namespace crank::store {

/// How to open the store. The config layer maps the `store` section of the config file onto this
/// struct; every field has the default documented here.
struct StoreOptions {
    /// Which implementation openStore() builds. Only "sqlite" exists today.
    std::string backend = "sqlite";
    /// SQLite database file. Its directory must exist; the file is created when missing.
    /// ":memory:" opens a private in-memory database (tests): it lives as long as the Store and
    /// always uses exactly one connection, whatever pool_size says.
    std::string path = "./crank.db";
    /// How long a statement waits for a lock held by another connection or process before it
    /// fails with ErrorCode::unavailable; also how long a call waits for a free pooled connection.
    /// Milliseconds, 0..600000.
    int busy_timeout_ms = 5000;
    /// Connections kept open to the database, 1..64. Calls beyond this many wait (see
    /// busy_timeout_ms). SQLite allows one writer at a time; extra connections serve readers.
    int pool_size = 4;
    /// Page cache of each connection, KiB, 16..1048576 (SQLite's own default, 2000). The cache
    /// fills as the database grows and is then reused: the store holds up to about
    /// pool_size x cache_kib of memory for it.
    int cache_kib = 2000;
};

}  // namespace crank::store
