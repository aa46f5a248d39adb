#include "mcp/wire/trace_context.h"

#include <algorithm>
#include <cstddef>
#include <vector>

#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "json/json_members.h"

namespace crank::mcp {
namespace {

constexpr std::size_t kTraceparentLength = 55;  // 2 + 1 + 32 + 1 + 16 + 1 + 2
constexpr std::size_t kMaxTracestateMembers = 32;

bool isLowerHex(char c) {
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
}

/// `text` is `length` lowercase hex digits, not all zeros when `nonzero`.
bool hexField(std::string_view text, bool nonzero) {
    if (!std::all_of(text.begin(), text.end(), isLowerHex)) {
        return false;
    }
    return !nonzero || text.find_first_not_of('0') != std::string_view::npos;
}

std::string_view trimmed(std::string_view text) {
    const std::size_t first = text.find_first_not_of(" \t");
    if (first == std::string_view::npos) {
        return {};
    }
    return text.substr(first, text.find_last_not_of(" \t") - first + 1);
}

std::string checkedTracestate(std::string_view tracestate) {
    std::vector<std::string_view> members;
    std::size_t at = 0;
    while (at <= tracestate.size() && members.size() < kMaxTracestateMembers) {
        const std::size_t comma = std::min(tracestate.find(',', at), tracestate.size());
        const std::string_view member = trimmed(tracestate.substr(at, comma - at));
        const bool printable = std::all_of(member.begin(), member.end(),
                                           [](char c) { return c >= 0x20 && c <= 0x7e; });
        if (!member.empty() && printable && member.find('=') != std::string_view::npos) {
            members.push_back(member);
        }
        at = comma + 1;
    }
    std::string out;
    for (const std::string_view member : members) {
        if (out.size() + (out.empty() ? 0 : 1) + member.size() > kMaxTracestateBytes) {
            break;  // the rest is dropped whole, from the end
        }
        if (!out.empty()) {
            out += ',';
        }
        out += member;
    }
    return out;
}

}  // namespace

TraceContext checkedTraceContext(std::string_view traceparent, std::string_view tracestate) {
    traceparent = trimmed(traceparent);
    if (traceparent.size() < kTraceparentLength) {
        return {};
    }
    const std::string_view version = traceparent.substr(0, 2);
    if (!hexField(version, false) || version == "ff") {
        return {};
    }
    if (version == "00"
            ? traceparent.size() != kTraceparentLength
            : traceparent.size() > kTraceparentLength && traceparent[kTraceparentLength] != '-') {
        return {};
    }
    const std::string_view head = traceparent.substr(0, kTraceparentLength);
    if (head[2] != '-' || head[35] != '-' || head[52] != '-' ||
        !hexField(head.substr(3, 32), true) || !hexField(head.substr(36, 16), true) ||
        !hexField(head.substr(53, 2), false)) {
        return {};
    }
    return TraceContext{std::string(head), checkedTracestate(tracestate)};
}

TraceContext requestTraceContext(std::string_view meta_traceparent,
                                 std::string_view meta_tracestate, const HeaderTrace& headers) {
    if (!meta_traceparent.empty()) {
        return checkedTraceContext(meta_traceparent, meta_tracestate);
    }
    return checkedTraceContext(headers.traceparent, headers.tracestate);
}

std::string withTraceContext(std::string_view params_json, const TraceContext& trace) {
    const bool mentions = params_json.find("traceparent") != std::string_view::npos ||
                          params_json.find("tracestate") != std::string_view::npos;
    if (trace.empty() && !mentions) {
        return std::string(params_json);
    }
    json::Document doc;
    if (!json::parseObject(params_json, doc)) {
        return std::string(params_json);
    }
    auto& a = doc.GetAllocator();
    if (!doc.HasMember("_meta")) {
        if (trace.empty()) {
            return std::string(params_json);
        }
        doc.AddMember("_meta", rapidjson::Value(rapidjson::kObjectType), a);
    }
    rapidjson::Value& meta = doc["_meta"];
    if (!meta.IsObject()) {
        return std::string(params_json);
    }
    meta.RemoveMember("traceparent");
    meta.RemoveMember("tracestate");
    if (!trace.empty()) {
        meta.AddMember("traceparent", rapidjson::Value(trace.traceparent.c_str(), a), a);
        if (!trace.tracestate.empty()) {
            meta.AddMember("tracestate", rapidjson::Value(trace.tracestate.c_str(), a), a);
        }
    }
    rapidjson::StringBuffer out;
    rapidjson::Writer<rapidjson::StringBuffer> writer(out);
    doc.Accept(writer);
    return std::string(out.GetString(), out.GetSize());
}

}  // namespace crank::mcp
