#pragma once

// Whether this test binary runs under a sanitizer (scripts/sanitizers.sh, the fuzzing tree): those
// slow the code down several times over, so throughput floors do not hold there. Tests still run
// the work (the sanitizers check it) and only leave the floor out.

namespace crank::testing {

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
inline constexpr bool kSanitized = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || \
    __has_feature(memory_sanitizer)
inline constexpr bool kSanitized = true;
#else
inline constexpr bool kSanitized = false;
#endif
#else
inline constexpr bool kSanitized = false;
#endif

}  // namespace crank::testing
