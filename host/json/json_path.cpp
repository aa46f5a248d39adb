#include "json/json_path.h"

#include <fmt/core.h>
#include <rapidjson/document.h>

#include "json/json_text.h"

namespace crank::json {
namespace {

using Segments = std::vector<sdk::PathSegment>;

/// The member `name` of `object`: the first one, when keys repeat.
template <typename V>
V* member(V& object, const std::string& name) {
    auto it = object.MemberBegin();
    for (rapidjson::SizeType n = object.MemberCount(); n > 0; --n, ++it) {
        if (it->name.GetStringLength() == name.size() &&
            std::string_view(it->name.GetString(), it->name.GetStringLength()) == name) {
            return &it->value;
        }
    }
    return nullptr;
}

/// The child a name segment selects, or nullptr.
template <typename V>
V* child(V& value, const sdk::PathSegment& segment) {
    if (value.IsObject()) {
        return member(value, segment.name);
    }
    if (value.IsArray()) {
        const std::optional<std::size_t> index = segment.index();
        if (index && *index < value.Size()) {
            return &value[static_cast<rapidjson::SizeType>(*index)];
        }
    }
    return nullptr;
}

template <typename V, typename Visit>
std::size_t walk(V& value, const Segments& segments, std::size_t at, Visit& visit) {
    // Name segments in a row need no recursion.
    V* current = &value;
    while (at < segments.size() && segments[at].kind == sdk::PathSegment::Kind::name) {
        current = child(*current, segments[at]);
        if (current == nullptr) {
            return 0;
        }
        ++at;
    }
    if (at == segments.size()) {
        visit(*current);
        return 1;
    }
    std::size_t count = 0;
    if (current->IsObject()) {
        auto it = current->MemberBegin();
        for (rapidjson::SizeType n = current->MemberCount(); n > 0; --n, ++it) {
            count += walk(it->value, segments, at + 1, visit);
        }
    } else if (current->IsArray()) {
        for (auto it = current->Begin(); it != current->End(); ++it) {
            count += walk(*it, segments, at + 1, visit);
        }
    }
    return count;
}

template <typename V>
V* findFirst(V& value, const Segments& segments, std::size_t at) {
    V* current = &value;
    while (at < segments.size() && segments[at].kind == sdk::PathSegment::Kind::name) {
        current = child(*current, segments[at]);
        if (current == nullptr) {
            return nullptr;
        }
        ++at;
    }
    if (at == segments.size()) {
        return current;
    }
    if (current->IsObject()) {
        auto it = current->MemberBegin();
        for (rapidjson::SizeType n = current->MemberCount(); n > 0; --n, ++it) {
            if (V* found = findFirst(it->value, segments, at + 1)) {
                return found;
            }
        }
    } else if (current->IsArray()) {
        for (auto it = current->Begin(); it != current->End(); ++it) {
            if (V* found = findFirst(*it, segments, at + 1)) {
                return found;
            }
        }
    }
    return nullptr;
}

}  // namespace

const Value* find(const Value& root, const sdk::Path& path) {
    return findFirst(root, path.segments, 0);
}

Value* findMutable(Value& root, const sdk::Path& path) {
    return findFirst(root, path.segments, 0);
}

std::size_t forEach(const Value& root, const sdk::Path& path,
                    FunctionRef<void(const Value&)> visit) {
    return walk(root, path.segments, 0, visit);
}

std::size_t forEachMutable(Value& root, const sdk::Path& path, FunctionRef<void(Value&)> visit) {
    return walk(root, path.segments, 0, visit);
}

Result<sdk::Path> compilePath(std::string_view text, std::string_view where) {
    sdk::PathError error;
    std::optional<sdk::Path> path = sdk::parsePath(text, &error);
    if (!path) {
        std::string message =
            fmt::format("{}: {} at byte {}", describeText(text), error.message, error.offset);
        return Error{ErrorCode::invalid_argument,
                     where.empty() ? message : fmt::format("{}: {}", where, message)};
    }
    return std::move(*path);
}

}  // namespace crank::json
