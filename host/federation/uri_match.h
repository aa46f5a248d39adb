#pragma once

// Which upstream serves a URI that no upstream lists: the first whose resource template matches.
//
// THREADING: pure.

#include <string_view>

namespace crank::federation {

/// Does `uri` match the RFC 6570 template `tmpl`? Each expression ({x}, {+x}, {/x}, ...) matches a
/// non-empty run of characters; simple ones ({x}) stop at '/', '?' and '#'. Bounded: at most 32
/// expressions are followed, a template with more matches nothing.
bool matchesUriTemplate(std::string_view tmpl, std::string_view uri);

}  // namespace crank::federation
