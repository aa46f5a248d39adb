#include "mcp/json_rpc.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

#include <rapidjson/error/en.h>
#include <rapidjson/memorystream.h>
#include <rapidjson/reader.h>

#include "util/json_string.h"

namespace crank::mcp {
namespace {

// How the parsing works, and why.
//
// A SAX handler (Scanner) reads the body with RapidJSON's iterative reader, which uses no
// recursion, and builds no DOM. It records, for each message, its top-level members (and those
// of "error"): the type, the byte span in the body, and the value of scalars. Nested values are
// only walked through (to check depth and duplicate keys) and later cut out of the body by their
// span. So params keep their numbers and escapes exactly as the sender wrote them (a gateway must
// not turn 12345678901234567890123 into 1.2345678901234568e22), a 10 MB string argument is not
// copied into a tree, and hostile nesting stops at the limit without using stack or memory.
//
// The spans come from the stream position inside the callbacks: the iterative reader calls
// StartObject/StartArray and EndObject/EndArray with the stream AT the bracket, and the scalar
// and Key callbacks right AFTER the token. That requires the reader to work on our stream and
// not on a local copy of it:
static_assert(rapidjson::StreamTraits<rapidjson::MemoryStream>::copyOptimization == 0,
              "the scanner reads the stream position inside callbacks");

constexpr unsigned kParseFlags =
    rapidjson::kParseIterativeFlag | rapidjson::kParseValidateEncodingFlag;

/// How much of the sender's text an error message quotes.
constexpr std::size_t kMaxQuotedBytes = 40;

enum class ValueType { null, boolean, integer, number, string, object, array };

/// One recorded value: its type, where it is in the text, and the value of a scalar.
struct RawValue {
    ValueType type = ValueType::null;
    std::size_t start = 0;     ///< first byte in the text
    std::size_t end = 0;       ///< one past the last byte
    std::int64_t integer = 0;  ///< when type == integer (a whole number within 64 bits)
    std::string text;          ///< when type == string: the decoded text
};

struct RawMember {
    std::string name;
    RawValue value;
};

/// One message (or one object, for extractMember) as the scanner saw it.
struct RawEntry {
    bool is_object = false;
    RawValue value;                        ///< the entry as a whole
    std::vector<RawMember> members;        ///< when is_object, in text order
    std::vector<RawMember> error_members;  ///< of "error" when it is an object (envelopes)
    std::string duplicate;                 ///< the first duplicate member found, described
    bool duplicate_id = false;             ///< that duplicate is the message's "id"
};

/// How many bytes of `text` an error message quotes: at most kMaxQuotedBytes, on a UTF-8
/// boundary.
std::size_t quotedLength(std::string_view text) {
    if (text.size() <= kMaxQuotedBytes) {
        return text.size();
    }
    std::size_t n = kMaxQuotedBytes;
    while (n > 0 && (static_cast<unsigned char>(text[n]) & 0xC0U) == 0x80U) {
        --n;  // do not split a UTF-8 sequence
    }
    return n;
}

/// The sender's JSON text (a number, true, false, null) for a message: cut, "..." marking the cut.
std::string cut(std::string_view text) {
    const std::size_t n = quotedLength(text);
    return n == text.size() ? std::string(text) : std::string(text.substr(0, n)) + "...";
}

/// A string of the sender's for a message: quoted, escaped, cut, "..." marking the cut.
std::string describeString(std::string_view text) {
    const std::size_t n = quotedLength(text);
    return jsonString(text.substr(0, n)) + (n == text.size() ? "" : "...");
}

/// A recorded value for "got ...": strings quoted, numbers as written, containers by kind.
std::string describe(std::string_view text, const RawValue& value) {
    switch (value.type) {
        case ValueType::object:
            return "an object";
        case ValueType::array:
            return "an array";
        case ValueType::string:
            return describeString(value.text);
        case ValueType::null:
        case ValueType::boolean:
        case ValueType::integer:
        case ValueType::number:
            break;
    }
    return cut(text.substr(value.start, value.end - value.start));
}

/// Valid JSON text without the whitespace between tokens.
std::string minify(std::string_view json) {
    std::string out;
    out.reserve(json.size());
    bool inString = false;
    bool escaped = false;
    for (const char c : json) {
        if (inString) {
            if (escaped) {
                escaped = false;
            } else if (c == '\\') {
                escaped = true;
            } else if (c == '"') {
                inString = false;
            }
        } else if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
            continue;
        } else if (c == '"') {
            inString = true;
        }
        out.push_back(c);
    }
    return out;
}

/// Compact JSON text of a recorded value.
std::string jsonText(std::string_view text, const RawValue& value) {
    const std::string_view span = text.substr(value.start, value.end - value.start);
    if (value.type == ValueType::object || value.type == ValueType::array) {
        return minify(span);
    }
    return std::string(span);  // a scalar token has no whitespace outside its string
}

/// The SAX handler described at the top of this file.
class Scanner {
public:
    struct Options {
        std::size_t max_depth = std::numeric_limits<std::size_t>::max();
        std::size_t max_batch_size = 0;
        bool allow_batch = false;  ///< a root array is a batch of entries (else one entry)
        bool envelopes = false;    ///< entries are JSON-RPC messages: read "error" members too
    };

    Scanner(std::string_view text, Options options)
        : text_(text), options_(options), in_(text.data(), text.size()) {}

    /// Reads the whole text. False when it is not valid JSON or breaks a limit: see error(),
    /// tooDeep(), tooManyEntries().
    bool run() {
        if (text_.size() >= std::numeric_limits<rapidjson::SizeType>::max()) {
            return fail(0, "a JSON text of 4 GiB or more is not accepted");
        }
        // The reader takes a NUL byte for the end of the text: "{...} NUL garbage" would pass.
        if (const auto nul = text_.find('\0'); nul != std::string_view::npos) {
            return fail(nul, "a NUL byte is not allowed");
        }
        rapidjson::Reader reader;
        reader.Parse<kParseFlags>(in_, *this);
        if (!reader.HasParseError()) {
            return true;
        }
        if (surrogateAt_) {
            return fail(*surrogateAt_, "a \\u escape encodes a lone UTF-16 surrogate");
        }
        if (tooDeep_) {
            return fail(reader.GetErrorOffset(),
                        "nesting deeper than " + std::to_string(options_.max_depth) + " levels");
        }
        if (tooBig_) {
            return fail(reader.GetErrorOffset(),
                        rapidjson::GetParseError_En(rapidjson::kParseErrorNumberTooBig));
        }
        return fail(reader.GetErrorOffset(),
                    rapidjson::GetParseError_En(reader.GetParseErrorCode()));
    }

    const std::string& error() const { return error_; }
    bool tooDeep() const { return tooDeep_; }
    bool tooManyEntries() const { return tooManyEntries_; }
    bool batch() const { return batch_; }
    std::vector<RawEntry>& entries() { return entries_; }

    // The SAX handler interface of rapidjson::Reader. RapidJSON fixes these names.
    // NOLINTBEGIN(readability-identifier-naming)
    bool Null() { return scalarEvent(ValueType::null); }
    bool Bool(bool /*value*/) { return scalarEvent(ValueType::boolean); }
    bool Int(int value) { return integer(value); }
    bool Uint(unsigned value) { return integer(value); }
    bool Int64(std::int64_t value) { return integer(value); }
    bool Uint64(std::uint64_t value) {
        if (value <= static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
            return integer(static_cast<std::int64_t>(value));
        }
        return scalarEvent(ValueType::number);  // beyond int64: not an integer for JSON-RPC
    }
    bool Double(double value) {
        // The reader refuses 1e400 but reads 7e308 (past the largest double) as infinity.
        if (!std::isfinite(value)) {
            tooBig_ = true;
            return false;
        }
        return scalarEvent(ValueType::number);
    }
    bool RawNumber(const char* /*text*/, rapidjson::SizeType /*length*/, bool /*copy*/) {
        return scalarEvent(ValueType::number);  // only with kParseNumbersAsStringsFlag
    }
    bool String(const char* text, rapidjson::SizeType length, bool /*copy*/) {
        if (!validText({text, length})) {
            return false;
        }
        if (RawValue* value = scalar(ValueType::string)) {
            value->text.assign(text, length);
        }
        return ok();
    }
    bool Key(const char* text, rapidjson::SizeType length, bool /*copy*/) {
        if (!validText({text, length})) {
            return false;
        }
        keys_.emplace_back(keyText_.size(), length);
        keyText_.append(text, length);
        end_ = in_.Tell();
        return true;
    }
    bool StartObject() { return open(ValueType::object); }
    bool EndObject(rapidjson::SizeType /*members*/) { return close(); }
    bool StartArray() { return open(ValueType::array); }
    bool EndArray(rapidjson::SizeType /*elements*/) { return close(); }
    // NOLINTEND(readability-identifier-naming)

private:
    enum class FrameKind {
        batch,         ///< the root array of a batch
        envelope,      ///< an entry that is an object: its members are recorded
        error_object,  ///< the "error" object of an envelope: its members are recorded
        other,         ///< inside a recorded value: only walked through
    };
    struct Frame {
        FrameKind kind = FrameKind::other;
        std::size_t first_key = 0;  ///< index in keys_ of this object's first key
        /// The record this container fills (its end is set on close); null inside recorded
        /// values. Stable while the frame is open: records are only added to vectors whose
        /// owner is the innermost recording frame.
        RawValue* value = nullptr;
    };
    /// Where a value that starts goes.
    struct Placement {
        RawValue* value = nullptr;  ///< the record to fill; null when not recorded
        FrameKind kind = FrameKind::other;
    };

    bool ok() const { return !tooManyEntries_; }

    /// False for a decoded string that is not UTF-8. The reader validates the bytes of the text
    /// and refuses a lone high surrogate escape ("\ud800"), but decodes a lone low one
    /// ("\udc00") into the bytes ED B0 80, which are not UTF-8 and would reach ids, method names
    /// and logs. Such a string can only come from that escape: ED followed by A0..BF.
    bool validText(std::string_view text) {
        for (auto at = text.find('\xED'); at != std::string_view::npos;
             at = text.find('\xED', at + 1)) {
            if (at + 1 < text.size() && static_cast<unsigned char>(text[at + 1]) >= 0xA0U) {
                surrogateAt_ = skipSeparators(end_);  // where the string starts
                return false;
            }
        }
        return true;
    }

    bool fail(std::size_t offset, std::string_view what) {
        error_ = "invalid JSON at byte " + std::to_string(offset) + ": " + std::string(what);
        return false;
    }

    std::string_view keyAt(std::size_t index) const {
        const auto& [offset, length] = keys_[index];
        return std::string_view(keyText_).substr(offset, length);
    }

    /// The first byte of a value whose first token the reader has just passed: what lies between
    /// the previous token and it can only be whitespace, ':' or ','.
    std::size_t skipSeparators(std::size_t pos) const {
        while (pos < text_.size() &&
               (text_[pos] == ' ' || text_[pos] == '\t' || text_[pos] == '\n' ||
                text_[pos] == '\r' || text_[pos] == ':' || text_[pos] == ',')) {
            ++pos;
        }
        return pos;
    }

    /// Called at the first event of every value, before its container (if any) is opened.
    Placement place(ValueType type, std::size_t start) {
        if (skipping_) {
            return {};
        }
        Placement placement;
        if (frames_.empty() || frames_.back().kind == FrameKind::batch) {
            if (frames_.empty() && type == ValueType::array && options_.allow_batch) {
                batch_ = true;
                return {nullptr, FrameKind::batch};
            }
            if (!frames_.empty() && entries_.size() >= options_.max_batch_size) {
                tooManyEntries_ = true;
                return {};
            }
            RawEntry& entry = entries_.emplace_back();
            entry.is_object = type == ValueType::object;
            placement = {&entry.value, entry.is_object ? FrameKind::envelope : FrameKind::other};
        } else if (frames_.back().kind == FrameKind::envelope) {
            member_ = keyAt(keys_.size() - 1);
            RawMember& member = entries_.back().members.emplace_back(RawMember{member_, {}});
            const bool descend =
                options_.envelopes && type == ValueType::object && member_ == "error";
            placement = {&member.value, descend ? FrameKind::error_object : FrameKind::other};
        } else if (frames_.back().kind == FrameKind::error_object) {
            RawMember& member = entries_.back().error_members.emplace_back(
                RawMember{std::string(keyAt(keys_.size() - 1)), {}});
            placement = {&member.value, FrameKind::other};
        } else {
            return {};  // unreachable: "other" frames exist only while skipping
        }
        placement.value->type = type;
        placement.value->start = start;
        return placement;
    }

    RawValue* scalar(ValueType type) {
        const std::size_t end = in_.Tell();  // the reader has just passed the token
        RawValue* value = place(type, skipSeparators(end_)).value;
        if (value != nullptr) {
            value->end = end;
        }
        end_ = end;
        return value;
    }

    bool scalarEvent(ValueType type) {
        scalar(type);
        return ok();
    }

    bool integer(std::int64_t number) {
        if (RawValue* value = scalar(ValueType::integer)) {
            value->integer = number;
        }
        return ok();
    }

    bool open(ValueType type) {
        const std::size_t start = in_.Tell();  // the reader is at the bracket
        if (frames_.size() >= options_.max_depth) {
            tooDeep_ = true;
            return false;
        }
        const Placement placement = place(type, start);
        if (tooManyEntries_) {
            return false;
        }
        if (placement.value != nullptr && placement.kind == FrameKind::other) {
            skipping_ = true;  // recorded whole: its insides are only walked through
        }
        frames_.push_back(Frame{placement.kind, keys_.size(), placement.value});
        end_ = start + 1;
        return true;
    }

    bool close() {
        const std::size_t end = in_.Tell() + 1;  // the reader is at the bracket
        const Frame frame = frames_.back();
        frames_.pop_back();
        checkDuplicates(frame);
        keys_.resize(frame.first_key);
        keyText_.resize(keys_.empty() ? 0 : keys_.back().first + keys_.back().second);
        if (frame.value != nullptr) {
            frame.value->end = end;
            if (frame.kind == FrameKind::other) {
                skipping_ = false;
            }
        }
        end_ = end;
        return true;
    }

    /// Records the first member name that an object which has just closed has twice.
    void checkDuplicates(const Frame& frame) {
        if (keys_.size() - frame.first_key < 2 || entries_.empty()) {
            return;
        }
        RawEntry& entry = entries_.back();  // the object belongs to the entry being read
        if (!entry.is_object || !entry.duplicate.empty()) {
            return;
        }
        const auto first = keys_.begin() + static_cast<std::ptrdiff_t>(frame.first_key);
        const auto text = [this](const std::pair<std::size_t, std::size_t>& key) {
            return std::string_view(keyText_).substr(key.first, key.second);
        };
        std::sort(first, keys_.end(),
                  [&](const auto& a, const auto& b) { return text(a) < text(b); });
        const auto twice = std::adjacent_find(
            first, keys_.end(), [&](const auto& a, const auto& b) { return text(a) == text(b); });
        if (twice == keys_.end()) {
            return;
        }
        const std::string_view name = text(*twice);
        entry.duplicate = "duplicate member " + describeString(name);
        if (frame.kind == FrameKind::envelope) {
            entry.duplicate_id = options_.envelopes && name == "id";
        } else if (frame.kind == FrameKind::error_object) {
            entry.duplicate += " in \"error\"";
        } else {
            entry.duplicate += " inside " + describeString(member_);
        }
    }

    std::string_view text_;
    Options options_;
    rapidjson::MemoryStream in_;
    std::vector<Frame> frames_;
    /// Member names of the open objects, innermost last: (offset in keyText_, length).
    std::vector<std::pair<std::size_t, std::size_t>> keys_;
    std::string keyText_;
    std::string member_;   ///< the envelope member being read, for messages
    std::size_t end_ = 0;  ///< one past the last token the reader reported
    std::vector<RawEntry> entries_;
    bool batch_ = false;
    bool skipping_ = false;
    bool tooDeep_ = false;
    bool tooBig_ = false;  ///< a number past the range of a double
    bool tooManyEntries_ = false;
    std::optional<std::size_t> surrogateAt_;  ///< start of a string with a lone surrogate
    std::string error_;
};

const RawValue* findMember(const std::vector<RawMember>& members, std::string_view name) {
    const auto it = std::find_if(members.begin(), members.end(),
                                 [&](const RawMember& m) { return m.name == name; });
    return it == members.end() ? nullptr : &it->value;
}

/// The id a value holds, when it is a valid one.
std::optional<RequestId> requestIdOf(const RawValue& value) {
    if (value.type == ValueType::integer) {
        return RequestId(value.integer);
    }
    if (value.type == ValueType::string) {
        return RequestId(value.text);
    }
    return std::nullopt;
}

/// Why `value` is not a valid id (or progress token) for `what`.
std::string badId(std::string_view what, std::string_view text, const RawValue& value) {
    const std::string got = describe(text, value);
    if (value.type == ValueType::number && got.find_first_of(".eE") == std::string::npos) {
        return std::string(what) +
               " must be a string or an integer between -9223372036854775808 and "
               "9223372036854775807, got " +
               got;
    }
    return std::string(what) + " must be a string or an integer, got " + got;
}

JsonRpcEntry reject(std::optional<RequestId> id, std::string message) {
    return JsonRpcRejection{std::move(id), kInvalidRequest, std::move(message)};
}

JsonRpcEntry readEntry(std::string_view body, const RawEntry& entry) {
    if (!entry.is_object) {
        return reject(std::nullopt,
                      "a batch entry must be an object, got " + describe(body, entry.value));
    }
    const RawValue* id = findMember(entry.members, "id");
    const std::optional<RequestId> readableId =
        id != nullptr && !entry.duplicate_id ? requestIdOf(*id) : std::nullopt;
    if (!entry.duplicate.empty()) {
        return reject(readableId, entry.duplicate);
    }
    const RawValue* jsonrpc = findMember(entry.members, "jsonrpc");
    if (jsonrpc == nullptr) {
        return reject(readableId, R"("jsonrpc" must be "2.0", but it is missing)");
    }
    if (jsonrpc->type != ValueType::string || jsonrpc->text != "2.0") {
        return reject(readableId, R"("jsonrpc" must be "2.0", got )" + describe(body, *jsonrpc));
    }
    const RawValue* method = findMember(entry.members, "method");
    const RawValue* params = findMember(entry.members, "params");
    const RawValue* result = findMember(entry.members, "result");
    const RawValue* error = findMember(entry.members, "error");

    JsonRpcMessage message;
    if (method != nullptr) {
        if (result != nullptr) {
            return reject(readableId, R"(a message with "method" must not have "result")");
        }
        if (error != nullptr) {
            return reject(readableId, R"(a message with "method" must not have "error")");
        }
        if (id != nullptr && !readableId) {
            return reject(std::nullopt, badId(R"("id")", body, *id));
        }
        if (method->type != ValueType::string) {
            return reject(readableId,
                          R"("method" must be a string, got )" + describe(body, *method));
        }
        if (params != nullptr && params->type != ValueType::object &&
            params->type != ValueType::array) {
            return reject(readableId, R"("params" must be an object or an array, got )" +
                                          describe(body, *params));
        }
        message.kind = id != nullptr ? JsonRpcKind::request : JsonRpcKind::notification;
        message.id = readableId;
        message.method = method->text;
        if (params != nullptr) {
            message.params_json = jsonText(body, *params);
        }
        return message;
    }

    if (result != nullptr && error != nullptr) {
        return reject(readableId, R"(a response must not have both "result" and "error")");
    }
    if (result == nullptr && error == nullptr) {
        return reject(readableId,
                      R"(a message must have "method" (a request or a notification), or "result" )"
                      R"(or "error" (a response))");
    }
    if (params != nullptr) {
        return reject(readableId, R"(a response must not have "params")");
    }
    if (result != nullptr) {
        if (id == nullptr) {
            return reject(std::nullopt, R"(a response must have an "id")");
        }
        if (!readableId) {
            return reject(std::nullopt, badId(R"("id")", body, *id));
        }
        message.kind = JsonRpcKind::response;
        message.id = readableId;
        message.result_json = jsonText(body, *result);
        return message;
    }

    // An error response: "id" may be null or absent when the request's id was unreadable.
    if (id != nullptr && !readableId && id->type != ValueType::null) {
        return reject(std::nullopt, badId(R"("id")", body, *id));
    }
    if (error->type != ValueType::object) {
        return reject(readableId, R"("error" must be an object, got )" + describe(body, *error));
    }
    const RawValue* code = findMember(entry.error_members, "code");
    if (code == nullptr) {
        return reject(readableId, R"("error.code" must be an integer, but it is missing)");
    }
    if (code->type != ValueType::integer) {
        return reject(readableId,
                      R"("error.code" must be an integer, got )" + describe(body, *code));
    }
    const RawValue* text = findMember(entry.error_members, "message");
    if (text == nullptr) {
        return reject(readableId, R"("error.message" must be a string, but it is missing)");
    }
    if (text->type != ValueType::string) {
        return reject(readableId,
                      R"("error.message" must be a string, got )" + describe(body, *text));
    }
    message.kind = JsonRpcKind::error_response;
    message.id = readableId;
    message.error.code = code->integer;
    message.error.message = text->text;
    if (const RawValue* data = findMember(entry.error_members, "data")) {
        message.error.data_json = jsonText(body, *data);
    }
    return message;
}

ParsedBody refuse(ParsedBody parsed, std::int64_t code, std::string message) {
    parsed.fatal = JsonRpcRejection{std::nullopt, code, std::move(message)};
    parsed.entries.clear();
    return parsed;
}

/// The members of the JSON object `json` (not empty).
Result<RawEntry> readObject(std::string_view json) {
    Scanner scanner(json, Scanner::Options{});
    if (!scanner.run()) {
        return Error{ErrorCode::invalid_argument, scanner.error()};
    }
    RawEntry& object = scanner.entries().front();
    if (!object.is_object) {
        return Error{ErrorCode::invalid_argument,
                     "expected an object, got " + describe(json, object.value)};
    }
    if (!object.duplicate.empty()) {
        return Error{ErrorCode::invalid_argument, object.duplicate};
    }
    return std::move(object);
}

void appendEnvelope(std::string& out) {
    out += R"({"jsonrpc":"2.0")";
}

}  // namespace

std::string_view jsonRpcKindName(JsonRpcKind kind) {
    switch (kind) {
        case JsonRpcKind::request:
            return "request";
        case JsonRpcKind::notification:
            return "notification";
        case JsonRpcKind::response:
            return "response";
        case JsonRpcKind::error_response:
            return "error_response";
    }
    return "request";
}

ParsedBody parseJsonRpcBody(std::string_view body, const JsonRpcLimits& limits) {
    ParsedBody parsed;
    Scanner scanner(body, Scanner::Options{limits.max_depth, limits.max_batch_size, true, true});
    const bool valid = scanner.run();
    parsed.batch = scanner.batch();
    if (scanner.tooManyEntries()) {
        return refuse(
            std::move(parsed), kInvalidRequest,
            "a batch may hold at most " + std::to_string(limits.max_batch_size) + " messages");
    }
    if (!valid) {
        return refuse(std::move(parsed), kParseError, scanner.error());
    }
    std::vector<RawEntry>& entries = scanner.entries();
    if (parsed.batch && entries.empty()) {
        return refuse(std::move(parsed), kInvalidRequest, "a batch must hold at least one message");
    }
    if (!parsed.batch && !entries.front().is_object) {
        return refuse(std::move(parsed), kInvalidRequest,
                      "a JSON-RPC message must be an object (or a batch: an array of objects), "
                      "got " +
                          describe(body, entries.front().value));
    }
    parsed.entries.reserve(entries.size());
    for (const RawEntry& entry : entries) {
        parsed.entries.push_back(readEntry(body, entry));
    }
    return parsed;
}

std::string makeResult(const RequestId& id, std::string_view resultJson) {
    std::string out;
    out.reserve(resultJson.size() + 48);
    appendEnvelope(out);
    out += R"(,"id":)";
    out += id.toJson();
    out += R"(,"result":)";
    out += resultJson.empty() ? std::string_view("{}") : resultJson;
    out += '}';
    return out;
}

std::string makeError(const std::optional<RequestId>& id, std::int64_t code,
                      std::string_view message, std::string_view dataJson) {
    std::string out;
    out.reserve(message.size() + dataJson.size() + 80);
    appendEnvelope(out);
    out += R"(,"id":)";
    out += id ? id->toJson() : std::string("null");
    out += R"(,"error":{"code":)";
    out += std::to_string(code);
    out += R"(,"message":)";
    appendJsonString(out, message);
    if (!dataJson.empty()) {
        out += R"(,"data":)";
        out += dataJson;
    }
    out += "}}";
    return out;
}

std::string makeError(const JsonRpcRejection& rejection) {
    return makeError(rejection.id, rejection.code, rejection.message);
}

std::string makeNotification(std::string_view method, std::string_view paramsJson) {
    std::string out;
    out.reserve(method.size() + paramsJson.size() + 48);
    appendEnvelope(out);
    out += R"(,"method":)";
    appendJsonString(out, method);
    if (!paramsJson.empty()) {
        out += R"(,"params":)";
        out += paramsJson;
    }
    out += '}';
    return out;
}

std::string makeRequest(const RequestId& id, std::string_view method, std::string_view paramsJson) {
    std::string out;
    out.reserve(method.size() + paramsJson.size() + 64);
    appendEnvelope(out);
    out += R"(,"id":)";
    out += id.toJson();
    out += R"(,"method":)";
    appendJsonString(out, method);
    if (!paramsJson.empty()) {
        out += R"(,"params":)";
        out += paramsJson;
    }
    out += '}';
    return out;
}

Result<std::string> extractMember(std::string_view objectJson, std::string_view key) {
    if (objectJson.empty()) {
        return std::string();
    }
    Result<RawEntry> object = readObject(objectJson);
    if (!object) {
        return object.error();
    }
    const RawValue* value = findMember(object->members, key);
    return value == nullptr ? std::string() : jsonText(objectJson, *value);
}

Result<std::optional<RequestId>> progressTokenOf(std::string_view paramsJson) {
    if (paramsJson.empty()) {
        return std::optional<RequestId>();
    }
    Result<RawEntry> params = readObject(paramsJson);
    if (!params) {
        return params.error();
    }
    const RawValue* meta = findMember(params->members, "_meta");
    if (meta == nullptr) {
        return std::optional<RequestId>();
    }
    if (meta->type != ValueType::object) {
        return Error{ErrorCode::invalid_argument,
                     R"("_meta" must be an object, got )" + describe(paramsJson, *meta)};
    }
    const std::string_view metaJson = paramsJson.substr(meta->start, meta->end - meta->start);
    Result<RawEntry> metaObject = readObject(metaJson);
    if (!metaObject) {
        return metaObject.error();
    }
    const RawValue* token = findMember(metaObject->members, "progressToken");
    if (token == nullptr) {
        return std::optional<RequestId>();
    }
    std::optional<RequestId> id = requestIdOf(*token);
    if (!id) {
        return Error{ErrorCode::invalid_argument,
                     badId(R"("_meta.progressToken")", metaJson, *token)};
    }
    return id;
}

}  // namespace crank::mcp
