#include "util/suggest.h"

#include <algorithm>
#include <vector>

namespace crank {

std::size_t editDistance(std::string_view a, std::string_view b) {
    // Optimal string alignment distance; three rows are enough for the transposition case.
    const std::size_t n = a.size();
    const std::size_t m = b.size();
    std::vector<std::size_t> prev2(m + 1);
    std::vector<std::size_t> prev(m + 1);
    std::vector<std::size_t> cur(m + 1);
    for (std::size_t j = 0; j <= m; ++j) {
        prev[j] = j;
    }
    for (std::size_t i = 1; i <= n; ++i) {
        cur[0] = i;
        for (std::size_t j = 1; j <= m; ++j) {
            const std::size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
            cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost});
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) {
                cur[j] = std::min(cur[j], prev2[j - 2] + 1);
            }
        }
        std::swap(prev2, prev);
        std::swap(prev, cur);
    }
    return prev[m];
}

std::optional<std::string> closestMatch(std::string_view word,
                                        std::span<const std::string_view> candidates) {
    const std::size_t limit = std::max<std::size_t>(1, word.size() / 3);
    std::optional<std::string> best;
    std::size_t bestDistance = limit + 1;
    for (std::string_view candidate : candidates) {
        // The distance is at least the difference in length: skip the quadratic work when that
        // alone rules the candidate out (a hostile multi-megabyte key, say).
        const std::size_t lengthGap = word.size() > candidate.size()
                                          ? word.size() - candidate.size()
                                          : candidate.size() - word.size();
        if (lengthGap >= bestDistance) {
            continue;
        }
        const std::size_t d = editDistance(word, candidate);
        if (d < bestDistance) {
            bestDistance = d;
            best = std::string(candidate);
        }
    }
    return best;
}

}  // namespace crank
