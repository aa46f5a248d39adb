#include "openapi/openapi_support.h"

#include <algorithm>
#include <optional>

#include <fmt/core.h>
#include <rapidjson/document.h>

#include "json/json_text.h"

namespace crank::openapi::detail {
namespace {

int hexDigit(char c) {
    if (c >= '0' && c <= '9') {
        return c - '0';
    }
    if (c >= 'a' && c <= 'f') {
        return c - 'a' + 10;
    }
    if (c >= 'A' && c <= 'F') {
        return c - 'A' + 10;
    }
    return -1;
}

/// A URI fragment's percent-decoding; nullopt on a bad escape.
std::optional<std::string> percentDecode(std::string_view text) {
    std::string out;
    out.reserve(text.size());
    for (std::size_t i = 0; i < text.size(); ++i) {
        if (text[i] != '%') {
            out.push_back(text[i]);
            continue;
        }
        if (i + 2 >= text.size()) {
            return std::nullopt;
        }
        const int hi = hexDigit(text[i + 1]);
        const int lo = hexDigit(text[i + 2]);
        if (hi < 0 || lo < 0) {
            return std::nullopt;
        }
        out.push_back(static_cast<char>(hi * 16 + lo));
        i += 2;
    }
    return out;
}

/// One RFC 6901 reference token, unescaped; nullopt on a bad `~` escape.
std::optional<std::string> unescapeToken(std::string_view token) {
    std::string out;
    out.reserve(token.size());
    for (std::size_t i = 0; i < token.size(); ++i) {
        if (token[i] != '~') {
            out.push_back(token[i]);
            continue;
        }
        if (i + 1 < token.size() && token[i + 1] == '0') {
            out.push_back('~');
        } else if (i + 1 < token.size() && token[i + 1] == '1') {
            out.push_back('/');
        } else {
            return std::nullopt;
        }
        ++i;
    }
    return out;
}

/// The array index `token` stands for (decimal, no leading zeros), or nullopt.
std::optional<rapidjson::SizeType> arrayIndex(std::string_view token) {
    if (token.empty() || token.size() > 9 || (token.size() > 1 && token[0] == '0')) {
        return std::nullopt;
    }
    rapidjson::SizeType value = 0;
    for (char c : token) {
        if (c < '0' || c > '9') {
            return std::nullopt;
        }
        value = value * 10 + static_cast<rapidjson::SizeType>(c - '0');
    }
    return value;
}

}  // namespace

std::string childPointer(std::string_view parent, std::string_view token) {
    std::string out(parent);
    out.reserve(parent.size() + token.size() + 1);
    out.push_back('/');
    for (char c : token) {
        if (c == '~') {
            out += "~0";
        } else if (c == '/') {
            out += "~1";
        } else {
            out.push_back(c);
        }
    }
    return out;
}

std::string childPointer(std::string_view parent, std::size_t index) {
    return fmt::format("{}/{}", parent, index);
}

Error documentError(std::string_view pointer, std::string_view message) {
    return Error{ErrorCode::invalid_argument,
                 pointer.empty() ? std::string(message) : fmt::format("{}: {}", pointer, message)};
}

void Warnings::add(std::string_view pointer, std::string_view message) {
    std::string text =
        pointer.empty() ? std::string(message) : fmt::format("{}: {}", pointer, message);
    if (std::find(kept_.begin(), kept_.end(), text) != kept_.end()) {
        return;
    }
    if (kept_.size() >= max_) {
        ++dropped_;
        return;
    }
    kept_.push_back(std::move(text));
}

std::vector<std::string> Warnings::take() {
    std::vector<std::string> out = std::move(kept_);
    if (dropped_ > 0) {
        out.push_back(fmt::format("... {} more warning{}", dropped_, dropped_ == 1 ? "" : "s"));
    }
    kept_.clear();
    dropped_ = 0;
    return out;
}

Error documentTooLarge() {
    return Error{ErrorCode::invalid_argument,
                 fmt::format("the generated operations would hold more than {} JSON values "
                             "($refs inlined); import a smaller part of the document",
                             Budget::document_values)};
}

Result<RefTarget> resolveRef(const json::Value& root, const json::Value& ref,
                             std::string_view where) {
    if (!ref.IsString()) {
        return documentError(where,
                             fmt::format("must be a string, got {}", json::describeValue(ref)));
    }
    const std::string_view text(ref.GetString(), ref.GetStringLength());
    if (text.empty() || text[0] != '#') {
        return documentError(
            where, fmt::format("{} is not a reference inside this document; only local "
                               "references (\"#/components/...\") are supported: bundle the "
                               "document into one file first",
                               json::describeText(text)));
    }
    std::optional<std::string> fragment = percentDecode(text.substr(1));
    if (!fragment || (!fragment->empty() && (*fragment)[0] != '/')) {
        return documentError(where, fmt::format("{} is not a JSON pointer (\"#/components/...\")",
                                                json::describeText(text)));
    }
    const json::Value* at = &root;
    std::string pointer;
    std::size_t start = 1;
    while (start <= fragment->size() && !fragment->empty()) {
        std::size_t end = fragment->find('/', start);
        if (end == std::string::npos) {
            end = fragment->size();
        }
        std::optional<std::string> token =
            unescapeToken(std::string_view(*fragment).substr(start, end - start));
        if (!token) {
            return documentError(
                where, fmt::format("{} has a bad \"~\" escape", json::describeText(text)));
        }
        const json::Value* next = nullptr;
        if (at->IsObject()) {
            next = findMember(*at, *token);
        } else if (at->IsArray()) {
            const std::optional<rapidjson::SizeType> index = arrayIndex(*token);
            if (index && *index < at->Size()) {
                next = &(*at)[*index];
            }
        }
        if (next == nullptr) {
            return documentError(where,
                                 fmt::format("{} points to nothing: the document has no {}",
                                             json::describeText(text),
                                             json::describeText(childPointer(pointer, *token))));
        }
        pointer = childPointer(pointer, *token);
        at = next;
        start = end + 1;
    }
    return RefTarget{at, pointer};
}

Result<RefTarget> resolveObject(const json::Value& root, const json::Value& value,
                                std::string pointer, std::string_view what) {
    RefTarget target{&value, std::move(pointer)};
    for (std::size_t hops = 0;; ++hops) {
        if (!target.value->IsObject()) {
            return documentError(target.pointer, fmt::format("{} must be an object, got {}", what,
                                                             json::describeValue(*target.value)));
        }
        const json::Value* ref = findMember(*target.value, "$ref");
        if (ref == nullptr) {
            return target;
        }
        const std::string where = childPointer(target.pointer, "$ref");
        if (hops >= kMaxRefChain) {
            return documentError(
                where, fmt::format("more than {} $refs in a row (a cycle?)", kMaxRefChain));
        }
        Result<RefTarget> next = resolveRef(root, *ref, where);
        if (!next) {
            return next.error();
        }
        target = std::move(*next);
    }
}

const json::Value* findMember(const json::Value& object, std::string_view key) {
    if (!object.IsObject()) {
        return nullptr;
    }
    // A Value, not a StringRef: FindMember(StringRef) would convert to const char* and strlen().
    const json::Value name(
        rapidjson::StringRef(key.data(), static_cast<rapidjson::SizeType>(key.size())));
    const auto it = object.FindMember(name);
    const auto end = object.MemberEnd();
    return it == end ? nullptr : &it->value;
}

json::Value* findMember(json::Value& object, std::string_view key) {
    const json::Value& constant = object;
    return const_cast<json::Value*>(findMember(constant, key));  // NOLINT: same object
}

bool isToolNameChar(char c) {
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' ||
           c == '-' || c == '.';
}

std::string truncateUtf8(std::string_view text, std::size_t max_bytes) {
    if (text.size() <= max_bytes) {
        return std::string(text);
    }
    constexpr std::string_view ellipsis = "\xE2\x80\xA6";  // …
    std::size_t cut = max_bytes >= ellipsis.size() ? max_bytes - ellipsis.size() : 0;
    while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0U) == 0x80U) {
        --cut;
    }
    std::string out(text.substr(0, cut));
    if (max_bytes >= ellipsis.size()) {
        out += ellipsis;
    }
    return out;
}

}  // namespace crank::openapi::detail
