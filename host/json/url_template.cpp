#include "json/url_template.h"

#include <rapidjson/document.h>

namespace crank::json {
namespace {

bool isUnreserved(unsigned char u) {
    return (u >= 'A' && u <= 'Z') || (u >= 'a' && u <= 'z') || (u >= '0' && u <= '9') || u == '-' ||
           u == '.' || u == '_' || u == '~';
}

void appendEncoded(std::string& out, std::string_view text, bool authority) {
    static constexpr char hex[] = "0123456789ABCDEF";
    for (char c : text) {
        const auto u = static_cast<unsigned char>(c);
        if (isUnreserved(u) || (authority && (u == ':' || u == '[' || u == ']'))) {
            out.push_back(c);
        } else {
            out.push_back('%');
            out.push_back(hex[u >> 4U]);
            out.push_back(hex[u & 0x0FU]);
        }
    }
}

void collectUriMembers(const Value& schema, std::vector<std::string>& prefix,
                       std::vector<std::vector<std::string>>& out, int depth) {
    if (!schema.IsObject() || depth > 16) {
        return;
    }
    const auto properties = schema.FindMember("properties");
    if (properties == schema.MemberEnd() || !properties->value.IsObject()) {
        return;
    }
    for (const auto& p : properties->value.GetObject()) {
        prefix.emplace_back(p.name.GetString(), p.name.GetStringLength());
        const auto format = p.value.IsObject() ? p.value.FindMember("format") : p.value.MemberEnd();
        if (p.value.IsObject() && format != p.value.MemberEnd() && format->value.IsString() &&
            std::string_view(format->value.GetString(), format->value.GetStringLength()) == "uri") {
            out.push_back(prefix);
        }
        collectUriMembers(p.value, prefix, out, depth + 1);
        prefix.pop_back();
    }
}

}  // namespace

UrlPart urlPartAfter(std::string_view before) {
    const std::size_t scheme = before.find("://");
    std::string_view rest;
    if (scheme != std::string_view::npos) {
        rest = before.substr(scheme + 3);
    } else if (!before.empty() && (before.front() == '/' || before.front() == '?')) {
        rest = before;
    } else {
        return UrlPart::authority;
    }
    if (rest.find('#') != std::string_view::npos) {
        return UrlPart::fragment;
    }
    if (rest.find('?') != std::string_view::npos) {
        return UrlPart::query;
    }
    return rest.find('/') != std::string_view::npos ? UrlPart::path : UrlPart::authority;
}

void percentEncode(std::string& out, std::string_view text) {
    appendEncoded(out, text, false);
}

bool appendUrlValue(std::string& url, UrlPart part, std::string_view value, bool encoded,
                    std::optional<char> next) {
    std::string text;
    if (encoded) {
        text = value;
    } else {
        appendEncoded(text, value, part == UrlPart::authority);
    }
    if (part == UrlPart::path && (text == "." || text == "..")) {
        const bool starts = !url.empty() && url.back() == '/';
        const bool ends = !next || *next == '/' || *next == '?' || *next == '#';
        if (starts && ends) {
            return false;
        }
    }
    url += text;
    return true;
}

std::vector<std::vector<std::string>> uriMembers(const Value& schema) {
    std::vector<std::vector<std::string>> out;
    std::vector<std::string> prefix;
    collectUriMembers(schema, prefix, out, 0);
    return out;
}

}  // namespace crank::json
