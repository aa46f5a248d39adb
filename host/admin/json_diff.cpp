#include "admin/json_diff.h"

#include <string_view>

#include <rapidjson/document.h>

#include "config/json_reader.h"

namespace crank::admin {
namespace {

void diffInto(const rapidjson::Value& from, const rapidjson::Value& to, const std::string& path,
              std::vector<JsonChange>& out) {
    if (!from.IsObject() || !to.IsObject()) {
        if (from != to) {
            out.push_back({path, JsonChange::Kind::changed, &from, &to});
        }
        return;
    }
    for (const auto& m : to.GetObject()) {
        const std::string key(m.name.GetString(), m.name.GetStringLength());
        const std::string at = config::detail::memberPath(path, key);
        const auto old = from.FindMember(m.name);
        if (old == from.MemberEnd()) {
            out.push_back({at, JsonChange::Kind::added, nullptr, &m.value});
        } else {
            diffInto(old->value, m.value, at, out);
        }
    }
    for (const auto& m : from.GetObject()) {
        if (!to.HasMember(m.name)) {
            const std::string key(m.name.GetString(), m.name.GetStringLength());
            out.push_back({config::detail::memberPath(path, key), JsonChange::Kind::removed,
                           &m.value, nullptr});
        }
    }
}

}  // namespace

std::vector<JsonChange> diffJson(const rapidjson::Value& from, const rapidjson::Value& to) {
    std::vector<JsonChange> out;
    diffInto(from, to, "", out);
    return out;
}

const char* changeName(JsonChange::Kind kind) {
    switch (kind) {
        case JsonChange::Kind::added:
            return "added";
        case JsonChange::Kind::removed:
            return "removed";
        case JsonChange::Kind::changed:
            return "changed";
    }
    return "changed";
}

}  // namespace crank::admin
