#include "compiled_path.h"

#include <cstring>
#include <utility>

namespace crank::aggregators {

CompiledPath::CompiledPath(std::string text, const sdk::Path& path) : text_(std::move(text)) {
    steps_.reserve(path.segments.size());
    for (const sdk::PathSegment& segment : path.segments) {
        Step step;
        if (segment.kind == sdk::PathSegment::Kind::wildcard) {
            step.wildcard = true;
            has_wildcard_ = true;
        } else {
            step.name = segment.name;
            if (auto index = segment.index()) {
                step.index = *index;
            }
        }
        steps_.push_back(std::move(step));
    }
}

const rapidjson::Value* CompiledPath::child(const rapidjson::Value& value, const Step& step) {
    if (value.IsObject()) {
        // A linear scan comparing lengths first: items are small objects, and this avoids the
        // strlen and the temporary name value of RapidJSON's FindMember(const char*).
        for (const auto& member : value.GetObject()) {
            if (member.name.GetStringLength() == step.name.size() &&
                std::memcmp(member.name.GetString(), step.name.data(), step.name.size()) == 0) {
                return &member.value;
            }
        }
        return nullptr;
    }
    if (value.IsArray() && step.index < value.Size()) {
        return &value[static_cast<rapidjson::SizeType>(step.index)];
    }
    return nullptr;
}

const rapidjson::Value* CompiledPath::findFirst(const rapidjson::Value& root) const {
    if (!has_wildcard_) {
        const rapidjson::Value* value = &root;
        for (const Step& step : steps_) {
            value = child(*value, step);
            if (value == nullptr) {
                return nullptr;
            }
        }
        return value;
    }
    const rapidjson::Value* found = nullptr;
    // Wildcards: the first match in document order. Stops visiting once one is found.
    auto visit = [&found](const rapidjson::Value& value) {
        if (found == nullptr) {
            found = &value;
        }
    };
    walk(root, 0, visit);
    return found;
}

}  // namespace crank::aggregators
