#include "json/instance_path.h"

#include <algorithm>

#include <fmt/core.h>

namespace crank::json {
namespace {

bool isIdentifierChar(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
           c == '-' || c == '$';
}

bool isIdentifier(std::string_view key) {
    return !key.empty() && !(key.front() >= '0' && key.front() <= '9') &&
           std::all_of(key.begin(), key.end(), isIdentifierChar);
}

}  // namespace

void appendMemberPath(std::string& path, std::string_view key) {
    if (isIdentifier(key)) {
        if (!path.empty()) {
            path.push_back('.');
        }
        path.append(key);
        return;
    }
    path += "[\"";
    for (char c : key) {
        if (c == '"' || c == '\\') {
            path.push_back('\\');
            path.push_back(c);
        } else if (static_cast<unsigned char>(c) < 0x20) {
            path += fmt::format("\\u{:04x}", static_cast<unsigned>(c));
        } else {
            path.push_back(c);
        }
    }
    path += "\"]";
}

void appendIndexPath(std::string& path, std::size_t index) {
    path.push_back('[');
    path += std::to_string(index);
    path.push_back(']');
}

std::string memberPath(std::string_view parent, std::string_view key) {
    std::string path(parent);
    appendMemberPath(path, key);
    return path;
}

std::string indexPath(std::string_view parent, std::size_t index) {
    std::string path(parent);
    appendIndexPath(path, index);
    return path;
}

}  // namespace crank::json
