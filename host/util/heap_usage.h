#pragma once

#include <cstdint>

namespace crank::util {

/// What the C library's allocator holds for this process, in bytes: what live allocations use
/// (`in_use`) and what it has taken from the system for them (`taken`: every arena's pages and
/// the separately mapped large blocks). The difference is free space the allocator keeps: freed
/// blocks inside pages that still hold live ones, and what a trim has not handed back yet. A leak
/// grows `in_use`; fragmentation grows only `taken` (bench/README.md, "Soak").
struct HeapUsage {
    bool known = false;  // false where the C library cannot tell (not glibc): both are 0
    std::uint64_t in_use = 0;
    std::uint64_t taken = 0;
};

/// glibc's mallinfo2(): walks every arena under its lock, so it costs microseconds per arena. For
/// a scrape, not for a request path.
HeapUsage heapUsage();

}  // namespace crank::util
