#include "federation/uri_match.h"

#include <algorithm>
#include <cstddef>
#include <vector>

namespace crank::federation {
namespace {

/// One step of a template: a literal character, or an expression (a non-empty run of
/// characters; a simple one stops at '/', '?' and '#').
struct Token {
    bool expression = false;
    bool reserved = false;  ///< {+x}, {#x}, {/x}: any character
    char literal = 0;
};

constexpr int kMaxExpressions = 32;

bool fits(const Token& t, char c) {
    return t.reserved || (c != '/' && c != '?' && c != '#');
}

}  // namespace

// A Thompson simulation over the template's tokens, not backtracking: the time is the template's
// length times the URI's, whatever either holds (a backtracking match of "{a}{b}{c}x" against a
// long URI takes time to the power of the expressions).
bool matchesUriTemplate(std::string_view tmpl, std::string_view uri) {
    std::vector<Token> tokens;
    int expressions = 0;
    for (std::size_t i = 0; i < tmpl.size();) {
        if (tmpl[i] != '{') {
            tokens.push_back(Token{false, false, tmpl[i]});
            ++i;
            continue;
        }
        const std::size_t close = tmpl.find('}', i);
        if (close == std::string_view::npos || ++expressions > kMaxExpressions) {
            return false;
        }
        const bool reserved =
            close > i + 1 && (tmpl[i + 1] == '+' || tmpl[i + 1] == '#' || tmpl[i + 1] == '/');
        tokens.push_back(Token{true, reserved, 0});
        i = close + 1;
    }
    const std::size_t k = tokens.size();
    // before[i]: token i is next (before[k]: matched). inside[i]: within expression i, at least
    // one character taken, so that token i + 1 may come next.
    std::vector<char> before(k + 1, 0);
    std::vector<char> inside(k, 0);
    std::vector<char> nextBefore(k + 1, 0);
    std::vector<char> nextInside(k, 0);
    before[0] = 1;
    for (const char c : uri) {
        std::fill(nextBefore.begin(), nextBefore.end(), 0);
        std::fill(nextInside.begin(), nextInside.end(), 0);
        bool any = false;
        for (std::size_t i = 0; i < k; ++i) {
            const Token& t = tokens[i];
            if (before[i] != 0) {
                if (!t.expression && t.literal == c) {
                    nextBefore[i + 1] = 1;
                    any = true;
                } else if (t.expression && fits(t, c)) {
                    nextInside[i] = 1;
                    any = true;
                }
            }
            if (inside[i] != 0 && fits(t, c)) {
                nextInside[i] = 1;
                any = true;
            }
        }
        if (!any) {
            return false;
        }
        for (std::size_t i = 0; i < k; ++i) {
            if (nextInside[i] != 0) {
                nextBefore[i + 1] = 1;  // the expression may end here
            }
        }
        before.swap(nextBefore);
        inside.swap(nextInside);
    }
    return before[k] != 0;
}

}  // namespace crank::federation
