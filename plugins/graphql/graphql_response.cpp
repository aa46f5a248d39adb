#include "graphql_response.h"

#include <rapidjson/document.h>
#include <rapidjson/error/en.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <crank/sdk/error.hpp>
#include <crank/sdk/http/text.hpp>
#include <crank/sdk/json.hpp>

namespace crank::graphql {
namespace {

using Json = rapidjson::Value;
using sdk::Error;
using sdk::ErrorCode;

constexpr std::size_t kExcerpt = 512;
constexpr std::size_t kMessageExcerpt = 300;

/// Compact JSON text of `v`, valid UTF-8. RapidJSON decodes an escaped lone low surrogate
/// ("\udc00"; a lone high one does not parse) into the bytes ED B0..BF xx, which are not UTF-8:
/// written out as they are, the host would drop the item as malformed JSON. Each becomes U+FFFD
/// (three bytes too), as a UTF-16 decoder replaces an unpaired surrogate.
std::string compact(const Json& v) {
    rapidjson::StringBuffer buffer;
    rapidjson::Writer<rapidjson::StringBuffer> writer(buffer);
    v.Accept(writer);
    std::string out(buffer.GetString(), buffer.GetSize());
    for (std::size_t i = out.find('\xED'); i != std::string::npos && i + 2 < out.size();
         i = out.find('\xED', i + 1)) {
        if (static_cast<unsigned char>(out[i + 1]) >= 0xA0U) {
            out.replace(i, 3, "\xEF\xBF\xBD");
        }
    }
    return out;
}

const Json* at(const Json& root, const sdk::Path& path) {
    const Json* v = &root;
    for (const sdk::PathSegment& segment : path.segments) {
        if (v->IsObject()) {
            const auto it = v->FindMember(
                Json(segment.name.data(), static_cast<rapidjson::SizeType>(segment.name.size())));
            if (it == v->MemberEnd()) {
                return nullptr;
            }
            v = &it->value;
        } else if (v->IsArray()) {
            const std::optional<std::size_t> i = segment.index();
            if (!i || *i >= v->Size()) {
                return nullptr;
            }
            v = &(*v)[static_cast<rapidjson::SizeType>(*i)];
        } else {
            return nullptr;
        }
    }
    return v;
}

/// "item.owner" / "partial.1" from an error's `path`, "" when it has none.
std::string errorPath(const Json& error) {
    if (!error.IsObject()) {
        return {};
    }
    const auto path = error.FindMember("path");
    if (path == error.MemberEnd() || !path->value.IsArray()) {
        return {};
    }
    std::string out;
    for (const Json& step : path->value.GetArray()) {
        if (!out.empty()) {
            out.push_back('.');
        }
        if (step.IsString()) {
            out.append(step.GetString(), step.GetStringLength());
        } else if (step.IsUint64()) {
            out.append(std::to_string(step.GetUint64()));
        }
    }
    return out;
}

std::string errorMessage(const Json& error) {
    if (error.IsObject()) {
        const auto message = error.FindMember("message");
        if (message != error.MemberEnd() && message->value.IsString()) {
            return sdk::http::excerpt(
                std::string_view(message->value.GetString(), message->value.GetStringLength()),
                kMessageExcerpt);
        }
    }
    return "(an error without a message)";
}

/// "msg (at item.owner); msg2; ... (and 4 more)".
std::string messages(const Json& errors) {
    std::string out;
    std::size_t shown = 0;
    for (const Json& error : errors.GetArray()) {
        if (shown == ResponseLimits::max_messages) {
            break;
        }
        if (shown > 0) {
            out.append("; ");
        }
        out.append(errorMessage(error));
        const std::string path = errorPath(error);
        if (!path.empty()) {
            out.append(" (at ").append(sdk::http::excerpt(path, 200)).append(")");
        }
        ++shown;
    }
    if (errors.Size() > shown) {
        out.append(" (and ").append(std::to_string(errors.Size() - shown)).append(" more)");
    }
    return out;
}

/// The errors that fit in `max_bytes`, whole, as a JSON array; `omitted` counts the others.
std::string boundedErrors(const Json& errors, std::size_t max_bytes, std::size_t& omitted) {
    std::string out = "[";
    omitted = 0;
    for (const Json& error : errors.GetArray()) {
        const std::string text = compact(error);
        if (out.size() + text.size() + 2 > max_bytes) {
            ++omitted;
            continue;
        }
        if (out.size() > 1) {
            out.push_back(',');
        }
        out.append(text);
    }
    out.push_back(']');
    return out;
}

[[noreturn]] void failHttp(const sdk::http::FetchedResponse& r) {
    std::string message = r.prefix + "answered " + std::to_string(r.status);
    if (!r.body.empty()) {
        message.append(": ").append(sdk::http::excerpt(r.body, kExcerpt));
    }
    throw Error(ErrorCode::upstream, message, "{\"http_status\":" + std::to_string(r.status) + "}");
}

bool isJsonType(const std::string& type) {
    return type.empty() || type == "application/json" ||
           (type.size() > 5 && type.compare(type.size() - 5, 5, "+json") == 0);
}

}  // namespace

std::string graphqlItem(const sdk::http::FetchedResponse& r, const GraphqlConfig& config) {
    const bool ok = r.status >= 200 && r.status <= 299;
    if (!isJsonType(r.type)) {
        if (!ok) {
            failHttp(r);
        }
        throw Error(ErrorCode::protocol,
                    r.prefix + "the response type \"" + sdk::http::excerpt(r.type, 128) +
                        "\" is not JSON (a GraphQL server answers "
                        "application/graphql-response+json or application/json)");
    }
    if (sdk::http::jsonNestingDepth(r.body) > ResponseLimits::max_depth) {
        if (!ok) {
            failHttp(r);
        }
        throw Error(ErrorCode::protocol, r.prefix + "the response is nested deeper than " +
                                             std::to_string(ResponseLimits::max_depth) + " levels");
    }
    // Invalid UTF-8 (a server writing Latin-1, a cut character) is replaced by U+FFFD: RapidJSON
    // would otherwise copy the bytes into the item and the error details, which the host drops
    // as malformed JSON. The body is copied only when it needs the repair.
    rapidjson::Document doc;
    constexpr unsigned kFlags =
        rapidjson::kParseIterativeFlag | rapidjson::kParseValidateEncodingFlag;
    doc.Parse<kFlags>(r.body.data(), r.body.size());
    std::string repaired;
    if (doc.HasParseError() && doc.GetParseError() == rapidjson::kParseErrorStringInvalidEncoding) {
        repaired = sdk::http::validUtf8(r.body);
        doc.Parse<kFlags>(repaired.data(), repaired.size());
    }
    if (doc.HasParseError() || !doc.IsObject()) {
        if (!ok) {
            failHttp(r);
        }
        throw Error(
            ErrorCode::protocol,
            r.prefix + (doc.HasParseError() ? std::string("the response is not JSON: ") +
                                                  rapidjson::GetParseError_En(doc.GetParseError()) +
                                                  " at byte " + std::to_string(doc.GetErrorOffset())
                                            : std::string("the response is not a JSON object")));
    }
    const Json& root = doc;  // const iterators on both sides of != (C++20 reversed operators)
    const auto data = root.FindMember("data");
    const auto errors = root.FindMember("errors");
    const bool hasData = data != root.MemberEnd() && !data->value.IsNull();
    const bool hasErrors =
        errors != root.MemberEnd() && errors->value.IsArray() && !errors->value.Empty();
    if (!hasData && !hasErrors) {
        if (!ok) {
            failHttp(r);
        }
        throw Error(ErrorCode::protocol,
                    r.prefix + "not a GraphQL response: it has neither data nor errors");
    }
    // GraphQL over HTTP: a response with data is a 2xx one; anything else at another status
    // (an intermediary's, a server's that failed on the way) is not trusted as a result.
    if (!ok && !hasErrors) {
        failHttp(r);
    }
    if (!hasData || !ok) {
        std::size_t omitted = 0;
        std::string details =
            "{\"http_status\":" + std::to_string(r.status) + ",\"errors\":" +
            boundedErrors(errors->value, ResponseLimits::max_detail_bytes, omitted) + "}";
        throw Error(ErrorCode::upstream,
                    r.prefix +
                        (ok ? std::string() : "answered " + std::to_string(r.status) + " with ") +
                        "GraphQL errors: " + messages(errors->value),
                    std::move(details));
    }
    if (!data->value.IsObject()) {
        throw Error(ErrorCode::protocol,
                    r.prefix + "not a GraphQL response: its data is not an object");
    }
    const Json* selected =
        config.data_path.set() ? at(data->value, config.data_path.path) : &data->value;
    std::string item = "{\"data\":";
    item.append(selected == nullptr ? std::string("null") : compact(*selected));
    if (config.has_next_path.set()) {
        const Json* more = at(data->value, config.has_next_path.path);
        // A page that does not say so is the last one: a window never loops on it.
        const bool last = more == nullptr || !more->IsBool() || !more->GetBool();
        item.append(",\"last_page\":").append(last ? "true" : "false");
    }
    if (hasErrors) {
        std::size_t omitted = 0;
        item.append(",\"errors\":")
            .append(boundedErrors(errors->value, ResponseLimits::max_error_bytes, omitted))
            .append(",\"partial\":true");
        if (omitted > 0) {
            item.append(",\"errors_omitted\":").append(std::to_string(omitted));
        }
    }
    item.push_back('}');
    return item;
}

}  // namespace crank::graphql
