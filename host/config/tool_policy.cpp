#include "config/tool_policy.h"

#include <set>
#include <string_view>
#include <utility>

#include "config/json_reader.h"
namespace crank::config {

namespace {

const std::string* firstMatch(const std::vector<std::string>& patterns, const std::string& name) {
    for (const std::string& pattern : patterns) {
        if (globMatches(pattern, name)) {
            return &pattern;
        }
    }
    return nullptr;
}

std::vector<std::string> patterns(detail::ObjectReader& r, std::string_view key) {
    return r.stringArray(key, kMaxToolPatterns, [](const std::string& pattern) {
        if (pattern.empty() || pattern.size() > kMaxToolPatternLength) {
            return std::optional<std::string>("expected a glob pattern of 1 to 256 characters");
        }
        return std::optional<std::string>();
    });
}

}  // namespace

std::string UpstreamConfig::toolFiltered(const std::string& upstream_name) const {
    if (!tools.allow.empty() && firstMatch(tools.allow, upstream_name) == nullptr) {
        return "tool \"" + upstream_name + "\" is not published: upstreams[" + name +
               "].tools.allow matches none of its names";
    }
    if (const std::string* pattern = firstMatch(tools.deny, upstream_name)) {
        return "tool \"" + upstream_name + "\" is not published: upstreams[" + name +
               "].tools.deny has \"" + *pattern + "\"";
    }
    return {};
}

std::string UpstreamConfig::publishedToolName(const std::string& upstream_name) const {
    const auto renamed = tools.rename.find(upstream_name);
    return renamed != tools.rename.end() ? renamed->second : publishedName(upstream_name);
}

UpstreamConfig::ToolPolicy readToolPolicy(detail::ObjectReader& parent, std::string_view key) {
    UpstreamConfig::ToolPolicy policy;
    const detail::Json* value = parent.get(key);
    if (value == nullptr) {
        return policy;
    }
    detail::ObjectReader r(value, parent.pathOf(key), parent.errors());
    if (!r.present()) {
        return policy;
    }
    policy.allow = patterns(r, "allow");
    policy.deny = patterns(r, "deny");
    if (const detail::Json* rename = r.get("rename")) {
        const std::string path = r.pathOf("rename");
        if (!rename->IsObject()) {
            parent.errors().add(path,
                                "expected an object of {\"upstream's name\": \"published "
                                "name\"}, got " +
                                    detail::describe(*rename));
        } else if (rename->MemberCount() > kMaxToolRenames) {
            parent.errors().add(path, "at most 1024 renames");
        } else {
            std::set<std::string> published;
            for (const auto& m : rename->GetObject()) {
                const std::string from(m.name.GetString(), m.name.GetStringLength());
                const std::string at = detail::memberPath(path, from);
                if (!m.value.IsString()) {
                    parent.errors().add(
                        at, "expected the published name, got " + detail::describe(m.value));
                    continue;
                }
                std::string to(m.value.GetString(), m.value.GetStringLength());
                if (!isToolName(to)) {
                    parent.errors().add(at,
                                        "a tool name has 1 to 128 letters, digits, '_', '-' "
                                        "or '.', got " +
                                            detail::describeString(to));
                } else if (!published.insert(to).second) {
                    parent.errors().add(at, "\"" + to +
                                                "\" is the published name of another "
                                                "tool already");
                } else {
                    policy.rename.emplace(from, std::move(to));
                }
            }
        }
    }
    r.finish();
    return policy;
}

/// True when glob `pattern` matches `name`: `*` any run of bytes, `?` any one byte, every other
/// byte itself. Iterative, at most |pattern| x |name| steps whatever the input (a recursive
/// matcher such as fnmatch(3) backtracks exponentially in the stars, on names an upstream
/// chooses).
bool globMatches(std::string_view pattern, std::string_view name) {
    std::size_t p = 0;
    std::size_t n = 0;
    std::size_t star = std::string_view::npos;  // the last '*' seen, and where its run ends
    std::size_t resume = 0;
    while (n < name.size()) {
        if (p < pattern.size() && (pattern[p] == '?' || pattern[p] == name[n])) {
            ++p;
            ++n;
        } else if (p < pattern.size() && pattern[p] == '*') {
            star = p++;
            resume = n;
        } else if (star != std::string_view::npos) {
            p = star + 1;  // the star takes one byte more
            n = ++resume;
        } else {
            return false;
        }
    }
    while (p < pattern.size() && pattern[p] == '*') {
        ++p;
    }
    return p == pattern.size();
}

}  // namespace crank::config
