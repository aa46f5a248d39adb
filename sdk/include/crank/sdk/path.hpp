// Crank SDK: the path syntax that operations use to point into JSON items
// (`items_path`, `redacted_paths`, an aggregator's `numeric_paths`, ...).
//
// Header-only, standard library only: the host and every plugin parse paths with this one
// parser, so that a path means the same thing everywhere. Evaluating a path over a JSON document
// is left to whoever owns the document (the host and the in-tree plugins use RapidJSON).
//
// Syntax:
//   path     := [ "$" ] [ "." ] segment { "." segment }     e.g.  data.items   $.a.b   *.token
//   segment  := "*"                 every member of an object / every element of an array
//             | name                an object member; on an array, a decimal index ("0", "12")
//   In a name, "\." "\*" "\\" stand for a literal ".", "*", "\". A name may not be empty.
//   "$" alone (or "") is the whole item.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace crank::sdk {

/// One step of a path.
struct PathSegment {
    enum class Kind { name, wildcard };
    Kind kind = Kind::name;
    std::string name;  ///< for Kind::name: the member name (unescaped), or an array index

    /// The array index this name stands for, when it is a decimal number without sign or leading
    /// zeros (and small enough); nullopt otherwise.
    std::optional<std::size_t> index() const {
        if (kind != Kind::name || name.empty() || name.size() > 9 ||
            (name.size() > 1 && name[0] == '0')) {
            return std::nullopt;
        }
        std::size_t value = 0;
        for (char c : name) {
            if (c < '0' || c > '9') {
                return std::nullopt;
            }
            value = value * 10 + static_cast<std::size_t>(c - '0');
        }
        return value;
    }
};

/// A parsed path. An empty segment list is the whole item.
struct Path {
    std::vector<PathSegment> segments;
    bool hasWildcard() const {
        for (const PathSegment& s : segments) {
            if (s.kind == PathSegment::Kind::wildcard) {
                return true;
            }
        }
        return false;
    }
};

/// Why a path text does not parse: `offset` is the byte where the problem is.
struct PathError {
    std::size_t offset = 0;
    std::string message;
};

/// Parses `text`. On failure returns nullopt and fills `*error` (when given).
inline std::optional<Path> parsePath(std::string_view text, PathError* error = nullptr) {
    auto fail = [&](std::size_t offset, std::string message) -> std::optional<Path> {
        if (error != nullptr) {
            error->offset = offset;
            error->message = std::move(message);
        }
        return std::nullopt;
    };
    Path path;
    std::size_t i = 0;
    if (i < text.size() && text[i] == '$') {
        ++i;
        if (i == text.size()) {
            return path;
        }
        if (text[i] != '.') {
            return fail(i, "expected \".\" after \"$\"");
        }
        ++i;
    } else if (i < text.size() && text[i] == '.') {
        ++i;
    }
    if (i == text.size()) {
        if (text.empty()) {
            return path;
        }
        return fail(i, "expected a member name after \".\"");
    }
    while (true) {
        PathSegment segment;
        const std::size_t start = i;
        bool escaped_any = false;
        while (i < text.size() && text[i] != '.') {
            char c = text[i];
            if (c == '\\') {
                if (i + 1 == text.size()) {
                    return fail(i, "a path may not end with \"\\\"");
                }
                char next = text[i + 1];
                if (next != '.' && next != '*' && next != '\\') {
                    return fail(i, "\"\\\" may only escape \".\", \"*\" or \"\\\"");
                }
                segment.name.push_back(next);
                escaped_any = true;
                i += 2;
                continue;
            }
            if (c == '*' && !(i == start && (i + 1 == text.size() || text[i + 1] == '.'))) {
                return fail(i, "\"*\" must be a whole segment (write \"\\*\" for a literal star)");
            }
            segment.name.push_back(c);
            ++i;
        }
        if (segment.name.empty()) {
            return fail(start, "empty member name (two dots in a row, or a trailing dot)");
        }
        if (!escaped_any && segment.name == "*") {
            segment.kind = PathSegment::Kind::wildcard;
            segment.name.clear();
        }
        path.segments.push_back(std::move(segment));
        if (i == text.size()) {
            return path;
        }
        ++i;  // the '.'
        if (i == text.size()) {
            return fail(i, "expected a member name after \".\"");
        }
    }
}

}  // namespace crank::sdk
