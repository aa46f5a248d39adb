#pragma once

// Which upstream serves a URI that no upstream lists: the first whose resource template matches.
//
// THREADING: pure.

#include <cstddef>
#include <string_view>

namespace crank::federation {

/// Templates longer than this match nothing (a resource they would serve is still found when its
/// upstream lists it).
inline constexpr std::size_t kMaxTemplateBytes = 1024;
/// URIs longer than this match no template (the same).
inline constexpr std::size_t kMaxMatchedUriBytes = 8192;

/// Does `uri` match the RFC 6570 template `tmpl`? Each expression ({x}, {+x}, {/x}, ...) matches a
/// non-empty run of characters; simple ones ({x}) stop at '/', '?' and '#'. Bounded: at most 32
/// expressions are followed (a template with more matches nothing), and the bytes above; the time
/// is the URI's length times the states alive, which stay few.
bool matchesUriTemplate(std::string_view tmpl, std::string_view uri);

}  // namespace crank::federation
