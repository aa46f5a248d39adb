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

// A Thompson simulation over the template's tokens, not backtracking: each character of the URI
// advances only the states still alive (at most two per token, in practice a handful), so the
// time is the URI's length times that, whatever either text holds (a backtracking match of
// "{a}{b}{c}x" against a long URI takes time to the power of the expressions).
bool matchesUriTemplate(std::string_view tmpl, std::string_view uri) {
    if (tmpl.size() > kMaxTemplateBytes || uri.size() > kMaxMatchedUriBytes) {
        return false;
    }
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
    // A state: token `i` is next (i == k: the whole template is matched), or (inside) within
    // expression `i`, at least one character taken, so that token i + 1 may come next.
    struct Live {
        std::vector<std::size_t> before;
        std::vector<std::size_t> inside;
    };
    Live now;
    Live next;
    // Each state once per step: the step it was last added in, per state.
    std::vector<std::size_t> addedBefore(k + 1, 0);
    std::vector<std::size_t> addedInside(k, 0);
    now.before.push_back(0);
    std::size_t step = 0;
    for (const char c : uri) {
        ++step;
        next.before.clear();
        next.inside.clear();
        const auto addBefore = [&](std::size_t i) {
            if (addedBefore[i] != step) {
                addedBefore[i] = step;
                next.before.push_back(i);
            }
        };
        const auto addInside = [&](std::size_t i) {
            if (addedInside[i] != step) {
                addedInside[i] = step;
                next.inside.push_back(i);
                addBefore(i + 1);  // the expression may end here
            }
        };
        for (const std::size_t i : now.before) {
            if (i == k) {
                continue;  // matched already: a character more ends that
            }
            const Token& t = tokens[i];
            if (!t.expression && t.literal == c) {
                addBefore(i + 1);
            } else if (t.expression && fits(t, c)) {
                addInside(i);
            }
        }
        for (const std::size_t i : now.inside) {
            if (fits(tokens[i], c)) {
                addInside(i);
            }
        }
        if (next.before.empty() && next.inside.empty()) {
            return false;
        }
        std::swap(now, next);
    }
    return std::find(now.before.begin(), now.before.end(), k) != now.before.end();
}

}  // namespace crank::federation
