#include "mcp/modern/routing_headers.h"

#include <sstream>
#include <utility>
#include <vector>

#include <Poco/Base64Decoder.h>
#include <Poco/Net/NameValueCollection.h>
#include <rapidjson/document.h>

#include "json/json_number.h"
#include "json/json_scanner.h"
#include "mcp/endpoint_http.h"
#include "mcp/wire/method_registry.h"

namespace crank::mcp {
namespace {

constexpr std::string_view kBase64Prefix = "=?base64?";
constexpr std::string_view kBase64Suffix = "?=";

bool isOws(char c) {
    return c == ' ' || c == '\t';
}

std::string_view trimmed(std::string_view value) {
    while (!value.empty() && isOws(value.front())) {
        value.remove_prefix(1);
    }
    while (!value.empty() && isOws(value.back())) {
        value.remove_suffix(1);
    }
    return value;
}

bool isBase64Char(char c) {
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '+' ||
           c == '/';
}

/// Strict RFC 4648 base64 (padded, the standard alphabet), decoded; nullopt when malformed.
std::optional<std::string> decodeBase64(std::string_view text) {
    if (text.size() % 4 != 0) {
        return std::nullopt;
    }
    std::size_t padding = 0;
    for (std::size_t i = 0; i < text.size(); ++i) {
        if (text[i] == '=') {
            ++padding;
        } else if (padding > 0 || !isBase64Char(text[i])) {
            return std::nullopt;  // a character after padding, or outside the alphabet
        }
    }
    if (padding > 2) {
        return std::nullopt;
    }
    std::istringstream in{std::string(text)};
    Poco::Base64Decoder decoder(in);
    std::string out;
    char c = 0;
    while (decoder.get(c)) {
        out.push_back(c);
    }
    return out;
}

EraRefusal mismatch(std::string message) {
    return EraRefusal{400, kHeaderMismatch, std::move(message), {}};
}

/// A header value for a message: the client's bytes, quoted and cut.
std::string shown(std::string_view value) {
    return json::scan::describeString(value);
}

/// True when `value` (trimmed) has the =?base64?...?= form.
bool isBase64Form(std::string_view value) {
    return value.size() >= kBase64Prefix.size() + kBase64Suffix.size() &&
           value.substr(0, kBase64Prefix.size()) == kBase64Prefix &&
           value.substr(value.size() - kBase64Suffix.size()) == kBase64Suffix;
}

/// True when `value` is plain visible ASCII (tabs and spaces included), as a header carries
/// without encoding.
bool isPlain(std::string_view value) {
    for (const char c : value) {
        const auto byte = static_cast<unsigned char>(c);
        if ((byte < 0x20 && c != '\t') || byte >= 0x7f) {
            return false;
        }
    }
    return true;
}

/// The one decoded value of header `name`, read where the request holds it: absent, a refusal
/// when it is there twice or malformed, or its value (decoded into `decoded` when base64).
class HeaderRead {
public:
    HeaderRead(const Poco::Net::NameValueCollection& headers, std::string_view name,
               bool literal = false) {
        const HeaderLookup found = findHeader(headers, name);
        if (found.count == 0) {
            return;
        }
        if (found.count > 1) {
            refusal = mismatch(std::string(name) + " is sent " + std::to_string(found.count) +
                               " times; send it once");
            return;
        }
        raw_ = trimmed(*found.first);
        if (!isBase64Form(raw_)) {
            if (!isPlain(raw_)) {
                refusal = malformed(name, *found.first);
                return;
            }
            present_ = true;
            return;
        }
        std::optional<std::string> decoded = decodeHeaderValue(raw_);
        if (!decoded) {
            refusal = malformed(name, *found.first);
            return;
        }
        if (literal) {
            refusal = mismatch(std::string(name) + " " + shown(*found.first) +
                               " must be the method name itself: it is never base64-encoded");
            return;
        }
        decoded_ = std::move(*decoded);
        base64_ = true;
        present_ = true;
    }
    HeaderRead(const HeaderRead&) = delete;
    HeaderRead& operator=(const HeaderRead&) = delete;

    std::optional<EraRefusal> refusal;
    /// Sent once and well-formed.
    bool present() const { return present_; }
    /// Its decoded value (valid while the request's headers and this live).
    std::string_view value() const { return base64_ ? std::string_view(decoded_) : raw_; }

private:
    static EraRefusal malformed(std::string_view name, std::string_view sent) {
        return mismatch(std::string(name) + " " + shown(sent) +
                        " is malformed: a value that is not plain visible ASCII goes as "
                        "=?base64?{base64 of its UTF-8}?=");
    }

    bool present_ = false;
    bool base64_ = false;
    std::string_view raw_;
    std::string decoded_;
};

/// True when a header can carry `v`: a string, a number or a boolean.
bool carriable(const json::scan::RawValue& v) {
    return v.type == json::scan::ValueType::string || v.type == json::scan::ValueType::integer ||
           v.type == json::scan::ValueType::number || v.type == json::scan::ValueType::boolean;
}

/// True when header text `header` carries the argument `v`: the same text for a string, the
/// same number for a number (compared by exact value, whatever either's spelling: 7, 7.0 and 7e0
/// agree, 2^64 and 2^64+1 do not), the same word for a boolean.
bool carries(std::string_view header, std::string_view arguments_json,
             const json::scan::RawValue& v) {
    const std::string_view raw = arguments_json.substr(v.start, v.end - v.start);
    switch (v.type) {
        case json::scan::ValueType::string:
            return header == v.text;
        case json::scan::ValueType::integer:
        case json::scan::ValueType::number: {
            const std::optional<std::string> sent = json::canonicalNumber(header);
            return sent && sent == json::canonicalNumber(raw);
        }
        case json::scan::ValueType::boolean:
            return header == raw;
        default:
            return false;
    }
}

}  // namespace

std::optional<std::string> decodeHeaderValue(std::string_view raw) {
    const std::string_view value = trimmed(raw);
    if (isBase64Form(value)) {
        return decodeBase64(value.substr(
            kBase64Prefix.size(), value.size() - kBase64Prefix.size() - kBase64Suffix.size()));
    }
    if (!isPlain(value)) {
        return std::nullopt;
    }
    return std::string(value);
}

std::string_view nameMemberOf(std::string_view method) {
    const MethodInfo* info = findMethod(method);
    return info != nullptr ? info->name_member : std::string_view();
}

std::optional<EraRefusal> checkStandardHeaders(const Poco::Net::NameValueCollection& headers,
                                               const JsonRpcMessage& message,
                                               const std::optional<std::string_view>& target) {
    const bool request = message.kind == JsonRpcKind::request;
    const HeaderRead method(headers, "Mcp-Method", /*literal=*/true);
    if (method.refusal) {
        return method.refusal;
    }
    if (!method.present()) {
        if (request) {
            return mismatch("the Mcp-Method header is required, equal to the body's method " +
                            shown(message.method));
        }
    } else if (method.value() != message.method) {
        return mismatch("Mcp-Method " + shown(method.value()) + " differs from the body's method " +
                        shown(message.method) + " (values are case-sensitive)");
    }
    const std::string_view member = nameMemberOf(message.method);
    if (member.empty()) {
        return std::nullopt;
    }
    const HeaderRead name(headers, "Mcp-Name");
    if (name.refusal) {
        return name.refusal;
    }
    std::optional<std::string_view> body = target;
    std::optional<json::scan::RawEntry> params;  // read here only when the scan did not
    const auto named = [&](const std::vector<json::scan::RawMember>& members) {
        const json::scan::RawValue* v = json::scan::findMember(members, member);
        if (v != nullptr && v->type == json::scan::ValueType::string) {
            body = v->text;
        }
    };
    if (!body && message.params_scan) {
        named(message.params_scan->members);  // read by the body's scan already
    } else if (!body && !message.params_json.empty()) {
        if (auto read = json::scan::readObject(message.params_json)) {
            params = std::move(*read);
            named(params->members);
        }
    }
    const auto where = [&] { return "params." + std::string(member); };
    if (!name.present()) {
        if (body && request) {
            return mismatch("the Mcp-Name header is required on " + message.method + ", equal to " +
                            where() + " " + shown(*body));
        }
        return std::nullopt;
    }
    if (!body) {
        return mismatch("Mcp-Name " + shown(name.value()) + " is sent but " + where() +
                        " is not a string");
    }
    if (name.value() != *body) {
        return mismatch("Mcp-Name " + shown(name.value()) + " differs from " + where() + " " +
                        shown(*body));
    }
    return std::nullopt;
}

std::optional<EraRefusal> checkParamHeaders(const Poco::Net::NameValueCollection& headers,
                                            const std::vector<ParamHeader>& declared,
                                            std::string_view arguments_json) {
    if (declared.empty()) {
        return std::nullopt;
    }
    std::vector<json::scan::RawMember> arguments;
    if (!arguments_json.empty()) {
        if (auto read = json::scan::readObject(arguments_json)) {
            arguments = std::move(read->members);
        }
    }
    for (const ParamHeader& param : declared) {
        const std::string& key = param.property;
        const std::string& header = param.header;
        const HeaderRead sent(headers, header);
        if (sent.refusal) {
            return sent.refusal;
        }
        const json::scan::RawValue* v = json::scan::findMember(arguments, key);
        const bool valued = v != nullptr && v->type != json::scan::ValueType::null;
        std::string what = "arguments." + key;
        if (valued && !carriable(*v)) {
            std::string message = what;
            message.append(" is ")
                .append(json::scan::describe(arguments_json, *v))
                .append(", which no ")
                .append(header)
                .append(" header can carry: ")
                .append(key)
                .append(" declares x-mcp-header, so it must be a string, a number or a boolean");
            return mismatch(std::move(message));
        }
        if (!sent.present()) {
            if (valued) {
                return mismatch("the " + header +
                                " header is required: " + what.append(" has a value"));
            }
            continue;
        }
        std::string message = header;
        message.append(" ").append(shown(sent.value()));
        if (!valued) {
            message.append(" is sent but ")
                .append(what)
                .append(v == nullptr ? " is absent" : " is null");
            return mismatch(std::move(message));
        }
        if (!carries(sent.value(), arguments_json, *v)) {
            message.append(" differs from ")
                .append(what)
                .append(" ")
                .append(json::scan::describe(arguments_json, *v));
            return mismatch(std::move(message));
        }
    }
    return std::nullopt;
}

}  // namespace crank::mcp
