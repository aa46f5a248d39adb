// A tool's input schema from a protobuf request message, in the proto3 JSON mapping.
//
// Mapping (each property also gets a "description" naming the proto type, the oneof it belongs
// to and the field's leading comment when the descriptors carry source info):
//   int32, sint32, sfixed32      integer within the int32 bounds
//   uint32, fixed32              integer within the uint32 bounds
//   int64, sint64, sfixed64      "type": ["string", "integer"], a digits "pattern" for the string
//   uint64, fixed64              the same, unsigned
//   float, double                number, or one of the strings "NaN", "Infinity", "-Infinity"
//   bool, string                 boolean, string
//   bytes                        string, "contentEncoding": "base64"
//   enum                         one of the value names, or one of the value numbers
//   google.protobuf.NullValue    null
//   repeated T                   array of T
//   map<K, V>                    object of V; integer and bool keys are checked by pattern
//   message                      object, "additionalProperties": false, inlined, except:
//                                recursive messages (and messages nested deeper than
//                                inline_depth_limit) go to the root's "$defs" under their full
//                                name, referred to as "#/$defs/<full.name>"; the root message
//                                itself is "#".
//   oneof members                plain properties; the description says only one may be set
//                                (JSON Schema could say it with allOf/not/required, at the cost
//                                of a schema that clients and models read far less easily)
//   well-known types             their JSON forms: Timestamp a date-time string, Duration a
//                                "1.5s" string, Struct an object, Value anything, ListValue an
//                                array, wrappers the scalar or null, Any an object with "@type",
//                                FieldMask a string, Empty an empty object
// No "required": proto3 fields are all optional.
//
// The output stays within what host/json/json_schema.cpp compiles (keywords, $ref forms, nesting
// depth, size). A message graph that would inline into a huge schema is written again with every
// message in $defs; one too large even then becomes a permissive object schema.
#include "input_schema.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <map>
#include <set>
#include <string_view>
#include <utility>
#include <vector>

#include <google/protobuf/descriptor.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

namespace crank::grpc_plugin {
namespace {

namespace pb = google::protobuf;
using JsonWriter = rapidjson::Writer<rapidjson::StringBuffer>;

/// Schema nesting beyond which a message is referred to rather than inlined. The host refuses
/// schemas nested deeper than 64; a message level costs one or two levels, a leaf up to two.
constexpr std::size_t inline_depth_limit = 32;
/// Inlining copies a message at each use: past this size, every message goes to $defs instead.
constexpr std::size_t inline_budget_bytes = std::size_t{256} * 1024;
/// The host refuses schemas over 1 MiB.
constexpr std::size_t max_schema_bytes = std::size_t{900} * 1024;
/// Field comments copied into descriptions, at most.
constexpr std::size_t max_comment_bytes = 400;

constexpr std::string_view int64_pattern = "^-?[0-9]{1,19}$";
constexpr std::string_view uint64_pattern = "^[0-9]{1,20}$";
constexpr std::string_view duration_pattern = "^-?[0-9]+(\\.[0-9]{1,9})?s$";

enum class Mode { inline_messages, all_definitions };

/// Thrown inside the generator when the output passes its budget.
struct TooLarge {};

void key(JsonWriter& w, std::string_view k) {
    w.Key(k.data(), static_cast<rapidjson::SizeType>(k.size()));
}

void string(JsonWriter& w, std::string_view s) {
    w.String(s.data(), static_cast<rapidjson::SizeType>(s.size()));
}

void stringMember(JsonWriter& w, std::string_view k, std::string_view v) {
    key(w, k);
    string(w, v);
}

/// "type": [names...] or "type": name.
void typeMember(JsonWriter& w, std::initializer_list<std::string_view> names) {
    key(w, "type");
    if (names.size() == 1) {
        string(w, *names.begin());
        return;
    }
    w.StartArray();
    for (std::string_view n : names) {
        string(w, n);
    }
    w.EndArray();
}

bool isWrapper(std::string_view name) {
    return name == "google.protobuf.DoubleValue" || name == "google.protobuf.FloatValue" ||
           name == "google.protobuf.Int64Value" || name == "google.protobuf.UInt64Value" ||
           name == "google.protobuf.Int32Value" || name == "google.protobuf.UInt32Value" ||
           name == "google.protobuf.BoolValue" || name == "google.protobuf.StringValue" ||
           name == "google.protobuf.BytesValue";
}

/// Messages with their own JSON form (protobuf's json_util treats them specially).
bool isWellKnown(const pb::Descriptor& message) {
    const std::string& n = message.full_name();
    return n == "google.protobuf.Timestamp" || n == "google.protobuf.Duration" ||
           n == "google.protobuf.Struct" || n == "google.protobuf.Value" ||
           n == "google.protobuf.ListValue" || n == "google.protobuf.Any" ||
           n == "google.protobuf.FieldMask" || n == "google.protobuf.Empty" || isWrapper(n);
}

/// The message a field leads to in the schema: its type, or a map's value type.
const pb::Descriptor* childMessage(const pb::FieldDescriptor& field) {
    if (field.is_map()) {
        const pb::FieldDescriptor* value = field.message_type()->map_value();
        return value->message_type();  // nullptr for a scalar value
    }
    return field.message_type();
}

/// The leading comment of an element, on one line and bounded, when the descriptors carry source
/// info (descriptor sets made with --include_source_info, some reflection servers).
template <class D>
std::string comment(const D& element) {
    pb::SourceLocation location;
    if (!element.GetSourceLocation(&location)) {
        return {};
    }
    std::string out;
    bool space = false;
    for (char c : location.leading_comments) {
        if (c == '\n' || c == '\r' || c == '\t' || c == ' ') {
            space = !out.empty();
            continue;
        }
        if (space) {
            out.push_back(' ');
            space = false;
        }
        out.push_back(c);
        if (out.size() >= max_comment_bytes) {
            out += "...";
            break;
        }
    }
    return out;
}

/// Messages that can contain themselves (Tarjan's strongly connected components, iteratively:
/// a hostile descriptor set may chain thousands of messages).
std::set<const pb::Descriptor*> recursiveMessages(const pb::Descriptor& root) {
    struct State {
        std::size_t index = 0;
        std::size_t low = 0;
        bool on_stack = false;
    };
    std::map<const pb::Descriptor*, State> states;
    std::vector<const pb::Descriptor*> stack;
    std::set<const pb::Descriptor*> out;
    std::size_t next_index = 0;

    auto children = [](const pb::Descriptor* m) {
        std::vector<const pb::Descriptor*> out_children;
        if (isWellKnown(*m)) {
            return out_children;  // a leaf of the schema
        }
        for (int i = 0; i < m->field_count(); ++i) {
            const pb::Descriptor* child = childMessage(*m->field(i));
            if (child != nullptr && !isWellKnown(*child)) {
                out_children.push_back(child);
            }
        }
        return out_children;
    };

    struct Frame {
        const pb::Descriptor* message;
        std::vector<const pb::Descriptor*> children;
        std::size_t next = 0;
    };
    std::vector<Frame> frames;
    auto visit = [&](const pb::Descriptor* m) {
        State& s = states[m];
        s.index = s.low = next_index++;
        s.on_stack = true;
        stack.push_back(m);
        frames.push_back({m, children(m), 0});
    };
    visit(&root);
    while (!frames.empty()) {
        Frame& frame = frames.back();
        if (frame.next < frame.children.size()) {
            const pb::Descriptor* child = frame.children[frame.next++];
            auto found = states.find(child);
            if (found == states.end()) {
                visit(child);  // invalidates `frame`
            } else if (found->second.on_stack) {
                State& s = states[frame.message];
                s.low = std::min(s.low, found->second.index);
            }
            continue;
        }
        const pb::Descriptor* m = frame.message;
        bool self_loop = false;
        for (const pb::Descriptor* c : frame.children) {
            self_loop = self_loop || c == m;
        }
        const State done = states[m];
        frames.pop_back();
        if (!frames.empty()) {
            State& parent = states[frames.back().message];
            parent.low = std::min(parent.low, done.low);
        }
        if (done.low == done.index) {
            std::vector<const pb::Descriptor*> component;
            const pb::Descriptor* popped = nullptr;
            do {
                popped = stack.back();
                stack.pop_back();
                states[popped].on_stack = false;
                component.push_back(popped);
            } while (popped != m);
            if (component.size() > 1 || self_loop) {
                out.insert(component.begin(), component.end());
            }
        }
    }
    return out;
}

class Generator {
public:
    Generator(const pb::Descriptor& root, Mode mode, std::size_t budget)
        : root_(root), mode_(mode), budget_(budget), recursive_(recursiveMessages(root)) {}

    std::string run() {
        if (isWellKnown(root_)) {
            writeWellKnown(root_, describeMessage(root_));
        } else {
            w_.StartObject();
            writeMessageMembers(root_, 0, describeMessage(root_));
            if (!definitions_.empty()) {
                key(w_, "$defs");
                w_.StartObject();
                // Writing a definition may need more definitions: they join the queue.
                for (std::size_t i = 0; i < definitions_.size(); ++i) {
                    const pb::Descriptor* message = definitions_[i];
                    key(w_, message->full_name());
                    w_.StartObject();
                    writeMessageMembers(*message, 1, describeMessage(*message));
                    w_.EndObject();
                }
                w_.EndObject();
            }
            w_.EndObject();
        }
        return {buffer_.GetString(), buffer_.GetSize()};
    }

private:
    static std::string describeMessage(const pb::Descriptor& message) {
        std::string out = "message " + message.full_name() + " (protobuf JSON mapping)";
        std::string text = comment(message);
        if (!text.empty()) {
            out += ". " + text;
        }
        return out;
    }

    /// What a single value of `field` is, e.g. "int64 (as a string or integer)".
    static std::string kindPhrase(const pb::FieldDescriptor& field) {
        switch (field.type()) {
            case pb::FieldDescriptor::TYPE_INT64:
            case pb::FieldDescriptor::TYPE_SINT64:
            case pb::FieldDescriptor::TYPE_SFIXED64:
            case pb::FieldDescriptor::TYPE_UINT64:
            case pb::FieldDescriptor::TYPE_FIXED64:
                return std::string(field.type_name()) + " (as a string or integer)";
            case pb::FieldDescriptor::TYPE_DOUBLE:
            case pb::FieldDescriptor::TYPE_FLOAT:
                return std::string(field.type_name()) +
                       " (a number, or \"NaN\", \"Infinity\", \"-Infinity\")";
            case pb::FieldDescriptor::TYPE_BYTES:
                return "bytes (base64)";
            case pb::FieldDescriptor::TYPE_ENUM:
                return "enum " + field.enum_type()->full_name();
            case pb::FieldDescriptor::TYPE_MESSAGE:
            case pb::FieldDescriptor::TYPE_GROUP:
                return wellKnownPhrase(*field.message_type());
            default:
                return field.type_name();
        }
    }

    static std::string wellKnownPhrase(const pb::Descriptor& message) {
        const std::string& n = message.full_name();
        if (n == "google.protobuf.Timestamp") {
            return n + " (an RFC 3339 date-time string, e.g. \"2024-01-02T03:04:05.5Z\")";
        }
        if (n == "google.protobuf.Duration") {
            return n + " (seconds with an \"s\" suffix, e.g. \"1.5s\")";
        }
        if (n == "google.protobuf.Struct") {
            return n + " (any JSON object)";
        }
        if (n == "google.protobuf.Value") {
            return n + " (any JSON value)";
        }
        if (n == "google.protobuf.ListValue") {
            return n + " (any JSON array)";
        }
        if (n == "google.protobuf.Any") {
            return n +
                   " (an object with \"@type\": \"type.googleapis.com/<message name>\" and "
                   "that message's fields)";
        }
        if (n == "google.protobuf.FieldMask") {
            return n + " (comma-separated lowerCamel field paths, e.g. \"name,inner.label\")";
        }
        if (n == "google.protobuf.Empty") {
            return n + " (an empty object)";
        }
        if (isWrapper(n)) {
            return n + " (the value itself, or null)";
        }
        return "message " + n;
    }

    static std::string describeField(const pb::FieldDescriptor& field) {
        std::string out;
        if (field.is_map()) {
            const pb::FieldDescriptor* k = field.message_type()->map_key();
            const pb::FieldDescriptor* v = field.message_type()->map_value();
            out = "map<" + std::string(k->type_name()) + ", " + kindPhrase(*v) + ">";
            if (k->cpp_type() == pb::FieldDescriptor::CPPTYPE_BOOL) {
                out += " (an object; keys \"true\" or \"false\")";
            } else if (k->cpp_type() != pb::FieldDescriptor::CPPTYPE_STRING) {
                out += " (an object; keys are decimal integers)";
            }
        } else if (field.is_repeated()) {
            out = "repeated " + kindPhrase(field);
        } else {
            out = kindPhrase(field);
        }
        if (const pb::OneofDescriptor* oneof = field.real_containing_oneof(); oneof != nullptr) {
            out += ". Oneof " + oneof->name() + ": set at most one of ";
            for (int i = 0; i < oneof->field_count(); ++i) {
                out += (i == 0 ? "" : ", ") + oneof->field(i)->json_name();
            }
        }
        std::string text = comment(field);
        if (!text.empty()) {
            out += ". " + text;
        }
        return out;
    }

    void checkBudget() const {
        if (buffer_.GetSize() > budget_) {
            throw TooLarge{};
        }
    }

    /// The members of a message's object schema (the caller opens and closes the object).
    void writeMessageMembers(const pb::Descriptor& message, std::size_t depth,
                             const std::string& description) {
        stringMember(w_, "description", description);
        typeMember(w_, {"object"});
        key(w_, "properties");
        w_.StartObject();
        for (int i = 0; i < message.field_count(); ++i) {
            const pb::FieldDescriptor& field = *message.field(i);
            key(w_, field.json_name());
            writeField(field, depth + 1);
            checkBudget();
        }
        w_.EndObject();
        key(w_, "additionalProperties");
        w_.Bool(false);
    }

    void writeField(const pb::FieldDescriptor& field, std::size_t depth) {
        const std::string description = describeField(field);
        if (field.is_map()) {
            const pb::FieldDescriptor& k = *field.message_type()->map_key();
            const pb::FieldDescriptor& v = *field.message_type()->map_value();
            w_.StartObject();
            stringMember(w_, "description", description);
            typeMember(w_, {"object"});
            if (k.cpp_type() == pb::FieldDescriptor::CPPTYPE_STRING) {
                key(w_, "additionalProperties");
                writeValue(v, depth + 1, {});
            } else {
                std::string_view pattern = "^-?[0-9]+$";
                if (k.cpp_type() == pb::FieldDescriptor::CPPTYPE_BOOL) {
                    pattern = "^(true|false)$";
                } else if (k.cpp_type() == pb::FieldDescriptor::CPPTYPE_UINT32 ||
                           k.cpp_type() == pb::FieldDescriptor::CPPTYPE_UINT64) {
                    pattern = "^[0-9]+$";
                }
                key(w_, "patternProperties");
                w_.StartObject();
                key(w_, pattern);
                writeValue(v, depth + 2, {});
                w_.EndObject();
                key(w_, "additionalProperties");
                w_.Bool(false);
            }
            w_.EndObject();
            return;
        }
        if (field.is_repeated()) {
            w_.StartObject();
            stringMember(w_, "description", description);
            typeMember(w_, {"array"});
            key(w_, "items");
            writeValue(field, depth + 1, {});
            w_.EndObject();
            return;
        }
        writeValue(field, depth, description);
    }

    /// The schema of one value of `field` (an element when it is repeated); `description` is
    /// empty for elements.
    void writeValue(const pb::FieldDescriptor& field, std::size_t depth,
                    const std::string& description) {
        if (field.cpp_type() == pb::FieldDescriptor::CPPTYPE_MESSAGE) {
            writeMessageUse(*field.message_type(), depth, description);
            return;
        }
        w_.StartObject();
        if (!description.empty()) {
            stringMember(w_, "description", description);
        }
        switch (field.cpp_type()) {
            case pb::FieldDescriptor::CPPTYPE_INT32:
                writeIntegerMembers(std::numeric_limits<std::int32_t>::min(),
                                    std::numeric_limits<std::int32_t>::max(), false);
                break;
            case pb::FieldDescriptor::CPPTYPE_UINT32:
                writeIntegerMembers(0, std::numeric_limits<std::uint32_t>::max(), false);
                break;
            case pb::FieldDescriptor::CPPTYPE_INT64:
                writeInt64Members(false, false);
                break;
            case pb::FieldDescriptor::CPPTYPE_UINT64:
                writeInt64Members(true, false);
                break;
            case pb::FieldDescriptor::CPPTYPE_DOUBLE:
            case pb::FieldDescriptor::CPPTYPE_FLOAT:
                writeFloatMembers(field.cpp_type() == pb::FieldDescriptor::CPPTYPE_FLOAT, false);
                break;
            case pb::FieldDescriptor::CPPTYPE_BOOL:
                typeMember(w_, {"boolean"});
                break;
            case pb::FieldDescriptor::CPPTYPE_STRING:
                typeMember(w_, {"string"});
                if (field.type() == pb::FieldDescriptor::TYPE_BYTES) {
                    stringMember(w_, "contentEncoding", "base64");
                }
                break;
            case pb::FieldDescriptor::CPPTYPE_ENUM:
                writeEnumMembers(*field.enum_type());
                break;
            case pb::FieldDescriptor::CPPTYPE_MESSAGE:
                break;  // handled above
        }
        w_.EndObject();
    }

    void writeIntegerMembers(std::int64_t min, std::int64_t max, bool nullable) {
        if (nullable) {
            typeMember(w_, {"integer", "null"});
        } else {
            typeMember(w_, {"integer"});
        }
        key(w_, "minimum");
        w_.Int64(min);
        key(w_, "maximum");
        w_.Int64(max);
    }

    /// 64-bit integers: JSON numbers lose precision past 2^53, so the mapping prints strings and
    /// accepts both.
    void writeInt64Members(bool is_unsigned, bool nullable) {
        if (nullable) {
            typeMember(w_, {"string", "integer", "null"});
        } else {
            typeMember(w_, {"string", "integer"});
        }
        stringMember(w_, "pattern", is_unsigned ? uint64_pattern : int64_pattern);
        key(w_, "minimum");
        if (is_unsigned) {
            w_.Int(0);
        } else {
            w_.Int64(std::numeric_limits<std::int64_t>::min());
        }
        key(w_, "maximum");
        if (is_unsigned) {
            w_.Uint64(std::numeric_limits<std::uint64_t>::max());
        } else {
            w_.Int64(std::numeric_limits<std::int64_t>::max());
        }
    }

    void writeFloatMembers(bool is_float, bool nullable) {
        key(w_, "anyOf");
        w_.StartArray();
        w_.StartObject();
        if (nullable) {
            typeMember(w_, {"number", "null"});
        } else {
            typeMember(w_, {"number"});
        }
        if (is_float) {
            key(w_, "minimum");
            w_.Double(-static_cast<double>(std::numeric_limits<float>::max()));
            key(w_, "maximum");
            w_.Double(static_cast<double>(std::numeric_limits<float>::max()));
        }
        w_.EndObject();
        w_.StartObject();
        typeMember(w_, {"string"});
        key(w_, "enum");
        w_.StartArray();
        string(w_, "NaN");
        string(w_, "Infinity");
        string(w_, "-Infinity");
        w_.EndArray();
        w_.EndObject();
        w_.EndArray();
    }

    void writeEnumMembers(const pb::EnumDescriptor& type) {
        if (type.full_name() == "google.protobuf.NullValue") {
            typeMember(w_, {"null"});
            return;
        }
        key(w_, "anyOf");
        w_.StartArray();
        w_.StartObject();
        typeMember(w_, {"string"});
        key(w_, "enum");
        w_.StartArray();
        for (int i = 0; i < type.value_count(); ++i) {
            string(w_, type.value(i)->name());
        }
        w_.EndArray();
        w_.EndObject();
        w_.StartObject();
        typeMember(w_, {"integer"});
        key(w_, "enum");
        w_.StartArray();
        std::set<int> numbers;  // aliases share a number
        for (int i = 0; i < type.value_count(); ++i) {
            if (numbers.insert(type.value(i)->number()).second) {
                w_.Int(type.value(i)->number());
            }
        }
        w_.EndArray();
        w_.EndObject();
        w_.EndArray();
    }

    void writeMessageUse(const pb::Descriptor& message, std::size_t depth,
                         const std::string& description) {
        if (isWellKnown(message)) {
            writeWellKnown(message, description);
            return;
        }
        if (&message == &root_) {
            writeRef("#", description);
            return;
        }
        if (mode_ == Mode::all_definitions || recursive_.count(&message) != 0 ||
            depth > inline_depth_limit) {
            if (defined_.insert(&message).second) {
                definitions_.push_back(&message);
            }
            writeRef("#/$defs/" + message.full_name(), description);
            return;
        }
        w_.StartObject();
        writeMessageMembers(message, depth,
                            description.empty() ? "message " + message.full_name() : description);
        w_.EndObject();
    }

    void writeRef(const std::string& ref, const std::string& description) {
        w_.StartObject();
        if (!description.empty()) {
            stringMember(w_, "description", description);
        }
        stringMember(w_, "$ref", ref);
        w_.EndObject();
    }

    void writeWellKnown(const pb::Descriptor& message, const std::string& description) {
        const std::string& n = message.full_name();
        w_.StartObject();
        if (!description.empty()) {
            stringMember(w_, "description", description);
        }
        if (n == "google.protobuf.Timestamp") {
            typeMember(w_, {"string"});
            stringMember(w_, "format", "date-time");
        } else if (n == "google.protobuf.Duration") {
            typeMember(w_, {"string"});
            stringMember(w_, "pattern", duration_pattern);
        } else if (n == "google.protobuf.Struct") {
            typeMember(w_, {"object"});
        } else if (n == "google.protobuf.Value") {
            // Any JSON value: no "type".
        } else if (n == "google.protobuf.ListValue") {
            typeMember(w_, {"array"});
        } else if (n == "google.protobuf.Any") {
            typeMember(w_, {"object"});
            key(w_, "properties");
            w_.StartObject();
            key(w_, "@type");
            w_.StartObject();
            typeMember(w_, {"string"});
            stringMember(w_, "description",
                         "the type URL of the packed message, "
                         "\"type.googleapis.com/<full message name>\"");
            w_.EndObject();
            w_.EndObject();
            key(w_, "required");
            w_.StartArray();
            string(w_, "@type");
            w_.EndArray();
        } else if (n == "google.protobuf.FieldMask") {
            typeMember(w_, {"string"});
        } else if (n == "google.protobuf.Empty") {
            typeMember(w_, {"object"});
            key(w_, "properties");
            w_.StartObject();
            w_.EndObject();
            key(w_, "additionalProperties");
            w_.Bool(false);
        } else {
            writeWrapperMembers(n);
        }
        w_.EndObject();
    }

    void writeWrapperMembers(const std::string& n) {
        if (n == "google.protobuf.DoubleValue" || n == "google.protobuf.FloatValue") {
            writeFloatMembers(n == "google.protobuf.FloatValue", true);
        } else if (n == "google.protobuf.Int64Value" || n == "google.protobuf.UInt64Value") {
            writeInt64Members(n == "google.protobuf.UInt64Value", true);
        } else if (n == "google.protobuf.Int32Value") {
            writeIntegerMembers(std::numeric_limits<std::int32_t>::min(),
                                std::numeric_limits<std::int32_t>::max(), true);
        } else if (n == "google.protobuf.UInt32Value") {
            writeIntegerMembers(0, std::numeric_limits<std::uint32_t>::max(), true);
        } else if (n == "google.protobuf.BoolValue") {
            typeMember(w_, {"boolean", "null"});
        } else if (n == "google.protobuf.StringValue") {
            typeMember(w_, {"string", "null"});
        } else if (n == "google.protobuf.BytesValue") {
            typeMember(w_, {"string", "null"});
            stringMember(w_, "contentEncoding", "base64");
        }
    }

    const pb::Descriptor& root_;
    Mode mode_;
    std::size_t budget_;
    std::set<const pb::Descriptor*> recursive_;
    std::vector<const pb::Descriptor*> definitions_;  ///< in order of first use
    std::set<const pb::Descriptor*> defined_;
    rapidjson::StringBuffer buffer_;
    JsonWriter w_{buffer_};
};

}  // namespace

std::string inputSchemaJson(const google::protobuf::Descriptor& message) {
    try {
        return Generator(message, Mode::inline_messages, inline_budget_bytes).run();
    } catch (const TooLarge&) {
        // Shared messages inline once per use: refer to them instead.
    }
    try {
        return Generator(message, Mode::all_definitions, max_schema_bytes).run();
    } catch (const TooLarge&) {
        // Thousands of fields: a schema the host would refuse. Accept any object; the upstream
        // still checks the input against the message when it is converted.
    }
    rapidjson::StringBuffer buffer;
    JsonWriter w(buffer);
    w.StartObject();
    stringMember(w, "description",
                 "message " + message.full_name() +
                     " (protobuf JSON mapping; too large to describe as a JSON Schema)");
    typeMember(w, {"object"});
    w.EndObject();
    return {buffer.GetString(), buffer.GetSize()};
}

}  // namespace crank::grpc_plugin
