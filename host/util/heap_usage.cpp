#include "util/heap_usage.h"

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace crank::util {

HeapUsage heapUsage() {
    HeapUsage usage;
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 33))
    const struct mallinfo2 info = mallinfo2();
    usage.known = true;
    // arena: the arenas' pages (every arena's, summed); uordblks: the part of them in use;
    // hblkhd: blocks mapped on their own (large allocations), all of them in use.
    usage.in_use = info.uordblks + info.hblkhd;
    usage.taken = info.arena + info.hblkhd;
#endif
    return usage;
}

}  // namespace crank::util
