#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace crank {

/// Edit distance (insertions, deletions, substitutions, adjacent transpositions) between a and b.
std::size_t editDistance(std::string_view a, std::string_view b);

/// The candidate closest to `word` when it is close enough to be a plausible typo (distance at
/// most max(1, size/3)), for "did you mean ..." hints. nullopt when nothing is close.
std::optional<std::string> closestMatch(std::string_view word,
                                        std::span<const std::string_view> candidates);

}  // namespace crank
