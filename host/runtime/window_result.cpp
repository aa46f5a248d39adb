#include "runtime/window_result.h"

#include <algorithm>
#include <array>
#include <vector>

#include <fmt/core.h>
#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "json/json_members.h"

namespace crank::runtime {
namespace {

using Writer = rapidjson::Writer<rapidjson::StringBuffer>;

// The contract's own members; an aggregator may not override them.
constexpr std::array<std::string_view, 10> kContractMembers{
    "item_count", "dropped_count", "bytes",       "truncated",  "window_complete",
    "has_more",   "cursor",        "stop_reason", "elapsed_ms", "error"};

bool isContractMember(std::string_view name) {
    return std::find(kContractMembers.begin(), kContractMembers.end(), name) !=
           kContractMembers.end();
}

void writeString(Writer& w, std::string_view s) {
    w.String(s.data(), static_cast<rapidjson::SizeType>(s.size()));
}

void writeKey(Writer& w, std::string_view s) {
    w.Key(s.data(), static_cast<rapidjson::SizeType>(s.size()));
}

std::string render(const WindowResult& r, const rapidjson::Value& aggregate, bool truncated) {
    rapidjson::StringBuffer out;
    Writer w(out);
    w.StartObject();
    writeKey(w, "item_count");
    w.Uint64(r.item_count);
    writeKey(w, "dropped_count");
    w.Uint64(r.dropped_count);
    writeKey(w, "bytes");
    w.Uint64(r.bytes);
    writeKey(w, "truncated");
    w.Bool(truncated);
    writeKey(w, "window_complete");
    w.Bool(windowComplete(r.stop_reason));
    writeKey(w, "has_more");
    w.Bool(r.stop_reason != StopReason::upstream_end);
    writeKey(w, "cursor");
    if (r.cursor) {
        writeString(w, *r.cursor);
    } else {
        w.Null();
    }
    writeKey(w, "stop_reason");
    writeString(w, toString(r.stop_reason));
    writeKey(w, "elapsed_ms");
    w.Int64(r.elapsed_ms);
    if (r.error) {
        writeKey(w, "error");
        w.StartObject();
        writeKey(w, "code");
        writeString(w, r.error->code);
        writeKey(w, "message");
        writeString(w, r.error->message);
        if (!r.error->details_json.empty()) {
            writeKey(w, "details");
            w.RawValue(r.error->details_json.data(), r.error->details_json.size(),
                       rapidjson::kObjectType);
        }
        w.EndObject();
    }
    for (auto it = aggregate.MemberBegin(); it != aggregate.MemberEnd(); ++it) {
        const std::string_view name(it->name.GetString(), it->name.GetStringLength());
        if (isContractMember(name)) {
            continue;
        }
        writeKey(w, name);
        it->value.Accept(w);
    }
    w.EndObject();
    return {out.GetString(), out.GetSize()};
}

}  // namespace

Result<RenderedResult> renderWindowResult(const WindowResult& result,
                                          std::size_t max_result_bytes) {
    json::Document aggregate;
    if (!json::parseValue(result.aggregate_json, aggregate) || !aggregate.IsObject()) {
        return Error{ErrorCode::internal, "the aggregator's snapshot is not a JSON object"};
    }
    bool truncated = cutByLimit(result.stop_reason);
    // Const lookups: RapidJSON's mutable member iterators compare ambiguously in C++20.
    const rapidjson::Value& snapshot = aggregate;
    if (auto it = snapshot.FindMember("truncated"); it != snapshot.MemberEnd()) {
        truncated = truncated || (it->value.IsBool() && it->value.GetBool());
    }
    std::string text = render(result, aggregate, truncated);
    if (text.size() <= max_result_bytes) {
        return RenderedResult{std::move(text), truncated};
    }
    // Too large: leave items out from the end. Each item's size is measured once, and as many
    // are cut in one step as the excess needs (plus a comma each), so a large result costs two
    // renderings, not one per item.
    if (snapshot.HasMember("items") && snapshot["items"].IsArray()) {
        rapidjson::Value& array = aggregate["items"];
        std::vector<std::size_t> sizes;
        sizes.reserve(array.Size());
        for (const auto& item : array.GetArray()) {
            rapidjson::StringBuffer buffer;
            Writer w(buffer);
            item.Accept(w);
            sizes.push_back(buffer.GetSize() + 1);
        }
        rapidjson::SizeType keep = array.Size();
        while (keep > 0 && text.size() > max_result_bytes) {
            // `truncated` may turn from false to true: 1 byte more.
            std::size_t excess = text.size() - max_result_bytes + 1;
            while (keep > 0 && excess > 0) {
                --keep;
                excess -= std::min(excess, sizes[keep]);
            }
            array.Erase(array.Begin() + keep, array.End());
            text = render(result, aggregate, true);
        }
        if (text.size() <= max_result_bytes) {
            return RenderedResult{std::move(text), true};
        }
    }
    return Error{ErrorCode::invalid_argument,
                 fmt::format("the result is {} bytes, more than max_result_bytes ({}) allows even "
                             "without items; raise max_result_bytes or lower the aggregator's caps",
                             text.size(), max_result_bytes)};
}

Result<std::string> windowOutputSchema(std::string_view aggregator_output_schema_json,
                                       std::string_view where) {
    json::Document agg;
    if (!json::parseValue(aggregator_output_schema_json, agg) || !agg.IsObject()) {
        return Error{ErrorCode::invalid_argument,
                     std::string(where) + ": the aggregator's output schema is not an object"};
    }
    json::Document schema;
    json::parseObject(R"schema({
        "type": "object",
        "properties": {
            "item_count": {"type": "integer", "minimum": 0,
                           "description": "items that reached the aggregator"},
            "dropped_count": {"type": "integer", "minimum": 0,
                              "description": "items read but dropped (duplicates, sampling, malformed)"},
            "bytes": {"type": "integer", "minimum": 0,
                      "description": "bytes of items read from the upstream"},
            "truncated": {"type": "boolean",
                          "description": "a limit cut the window or items were left out of the result"},
            "window_complete": {"type": "boolean",
                                "description": "the window ran its whole duration or the upstream ended"},
            "has_more": {"type": "boolean",
                         "description": "the upstream may have more items than were read"},
            "cursor": {"type": ["string", "null"],
                       "description": "where to resume reading from"},
            "stop_reason": {"type": "string",
                            "enum": ["duration", "max_items", "max_bytes", "upstream_end",
                                     "upstream_timeout", "upstream_error", "cancelled"]},
            "elapsed_ms": {"type": "integer", "minimum": 0},
            "error": {"type": "object",
                      "properties": {"code": {"type": "string"}, "message": {"type": "string"},
                                     "details": {"type": "object"}},
                      "required": ["code", "message"]}
        },
        "required": ["item_count", "dropped_count", "bytes", "truncated", "window_complete",
                     "has_more", "cursor", "stop_reason", "elapsed_ms"]
    })schema",
                      schema);
    auto& a = schema.GetAllocator();
    rapidjson::Value& properties = schema["properties"];
    rapidjson::Value& required = schema["required"];
    const rapidjson::Value& aggregator = agg;
    if (auto p = aggregator.FindMember("properties");
        p != aggregator.MemberEnd() && p->value.IsObject()) {
        for (auto it = p->value.MemberBegin(); it != p->value.MemberEnd(); ++it) {
            const std::string_view name(it->name.GetString(), it->name.GetStringLength());
            if (isContractMember(name)) {
                continue;
            }
            properties.AddMember(rapidjson::Value(it->name, a), rapidjson::Value(it->value, a), a);
        }
    }
    if (auto r = aggregator.FindMember("required");
        r != aggregator.MemberEnd() && r->value.IsArray()) {
        for (const auto& name : r->value.GetArray()) {
            if (name.IsString() && !isContractMember({name.GetString(), name.GetStringLength()})) {
                required.PushBack(rapidjson::Value(name, a), a);
            }
        }
    }
    rapidjson::StringBuffer out;
    Writer w(out);
    schema.Accept(w);
    return std::string(out.GetString(), out.GetSize());
}

}  // namespace crank::runtime
