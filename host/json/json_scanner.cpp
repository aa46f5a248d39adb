#include "json/json_scanner.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <optional>
#include <type_traits>
#include <utility>

#include <rapidjson/error/en.h>
#include <rapidjson/memorystream.h>
#include <rapidjson/reader.h>

#include "util/json_string.h"

namespace crank::json::scan {
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
// not on a local copy of it. RapidJSON's own in-situ stream asks for local copies, so the reader
// reads this one instead: the same in-situ reading (a string is decoded where it lies, in a
// scratch copy of the text, instead of being pushed byte by byte onto the reader's stack), without
// the copies.
class ScratchStream {
public:
    using Ch = char;
    /// `text`: the scratch copy, NUL-terminated (the reader's end of input).
    explicit ScratchStream(Ch* text) : src_(text), dst_(text), head_(text) {}
    // The stream interface of RapidJSON's reader. RapidJSON fixes these names.
    // NOLINTBEGIN(readability-identifier-naming)
    Ch Peek() const { return *src_; }
    /// The NUL at the end is never passed: a reader that takes bytes without peeking (UTF-8
    /// validation takes a sequence's continuation bytes) reads the NUL again, not past it.
    Ch Take() {
        const Ch c = *src_;
        src_ += c != '\0' ? 1 : 0;
        return c;
    }
    std::size_t Tell() const { return static_cast<std::size_t>(src_ - head_); }
    Ch* PutBegin() { return dst_ = src_; }
    void Put(Ch c) { *dst_++ = c; }
    void Flush() {}
    std::size_t PutEnd(Ch* begin) { return static_cast<std::size_t>(dst_ - begin); }
    Ch* Push(std::size_t count) {
        Ch* begin = dst_;
        dst_ += count;
        return begin;
    }
    void Pop(std::size_t count) { dst_ -= count; }
    // NOLINTEND(readability-identifier-naming)

    /// Reads the run of bytes before the next '"', '\\' or control byte (the NUL at the end
    /// included) and puts it to `out`, this stream itself when reading in situ. The reader asks
    /// this only where it does not validate the encoding: on an ASCII text (see run()).
    void copyUnescaped(ScratchStream& out) {
        Ch* const from = src_;
        Ch* end = from;
        for (;;) {
            const auto c = static_cast<unsigned char>(*end);
            if (c == '"' || c == '\\' || c < 0x20U) {
                break;
            }
            ++end;
        }
        const auto n = static_cast<std::size_t>(end - from);
        Ch* const to = out.dst_;
        if (to != from) {
            std::memmove(to, from, n);  // behind an escape: the decoded text is shorter
        }
        out.dst_ = to + n;
        src_ = end;
    }

private:
    Ch* src_;   ///< the next byte to read
    Ch* dst_;   ///< where the string being decoded goes (never past src_)
    Ch* head_;  ///< the text's first byte
};
static_assert(rapidjson::StreamTraits<ScratchStream>::copyOptimization == 0,
              "the scanner reads the stream position inside callbacks");

}  // namespace
}  // namespace crank::json::scan

// The reader copies a string's unescaped runs through this hook where it does not validate the
// encoding; its own version does nothing for a stream it does not know, leaving each byte to its
// byte-by-byte loop.
template <>
template <>
inline void rapidjson::Reader::ScanCopyUnescapedString(crank::json::scan::ScratchStream& is,
                                                       crank::json::scan::ScratchStream& os) {
    is.copyUnescaped(os);
}

namespace crank::json::scan {
namespace {

constexpr unsigned kParseFlags =
    rapidjson::kParseIterativeFlag | rapidjson::kParseValidateEncodingFlag;
/// For a text of ASCII bytes only, which is valid UTF-8 whatever it holds: the reader's
/// byte-by-byte check of the encoding is then skipped (the grammar still refuses control bytes).
constexpr unsigned kAsciiParseFlags = rapidjson::kParseIterativeFlag;

/// Texts up to this size are read in situ, in a scratch copy (ScratchStream); longer ones (an
/// upstream's answer may be 64 MiB) through rapidjson's MemoryStream, which costs no copy of
/// the whole text, only of each string as it is read.
constexpr std::size_t kMaxScratchBytes = std::size_t{1} << 20;

static_assert(rapidjson::StreamTraits<rapidjson::MemoryStream>::copyOptimization == 0,
              "the scanner reads the stream position inside callbacks");

/// True when every byte of `text` is below 0x80.
bool isAscii(std::string_view text) {
    unsigned char high = 0;
    for (const char c : text) {  // a plain loop: the compiler widens it
        high |= static_cast<unsigned char>(c);
    }
    return (high & 0x80U) == 0;
}

/// How much of the sender's text an error message quotes.
constexpr std::size_t kMaxQuotedBytes = 40;

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

/// True when `json` has a byte that may be whitespace (or is a control byte): at most 0x20.
bool mayHaveWhitespace(std::string_view json) {
    bool low = false;
    for (const char c : json) {  // a plain loop: the compiler widens it
        low |= static_cast<unsigned char>(c) <= 0x20U;
    }
    return low;
}

/// Valid JSON text without the whitespace between tokens.
std::string minify(std::string_view json) {
    if (!mayHaveWhitespace(json)) {
        return std::string(json);  // compact already, as most senders write it
    }
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

}  // namespace

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

/// Compact JSON text of a recorded value.
std::string jsonText(std::string_view text, const RawValue& value) {
    const std::string_view span = text.substr(value.start, value.end - value.start);
    if (value.type == ValueType::object || value.type == ValueType::array) {
        return minify(span);
    }
    return std::string(span);  // a scalar token has no whitespace outside its string
}

namespace {

/// Members reserved for each recorded object: a JSON-RPC envelope has four, params and _meta
/// usually fewer.
constexpr std::size_t kMembersReserved = 4;

/// The SAX handler described at the top of this file.
template <typename Stream>
class Scanner {
public:
    using Options = ScanOptions;
    /// Reading in situ needs the reader's flag (and a stream that can be written to).
    static constexpr unsigned kInsitu =
        std::is_same_v<Stream, ScratchStream> ? rapidjson::kParseInsituFlag : 0U;

    Scanner(std::string_view text, Options options, Stream in)
        : text_(text), options_(options), in_(in) {}

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
        if (isAscii(text_)) {
            reader.Parse<kAsciiParseFlags | kInsitu>(in_, *this);
        } else {
            reader.Parse<kParseFlags | kInsitu>(in_, *this);
        }
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
        batch,          ///< the root array of a batch
        envelope,       ///< an entry that is an object: its members are recorded
        error_object,   ///< the "error" object of an envelope: its members are recorded
        params_object,  ///< the "params" object of an envelope (ScanOptions::params)
        meta_object,    ///< the "_meta" object of those params
        other,          ///< inside a recorded value: only walked through
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
            if (entry.is_object) {
                entry.members.reserve(kMembersReserved);  // one allocation for the usual few
            }
            placement = {&entry.value, entry.is_object ? FrameKind::envelope : FrameKind::other};
        } else if (frames_.back().kind == FrameKind::envelope) {
            member_ = keyAt(keys_.size() - 1);
            RawMember& member = entries_.back().members.emplace_back(RawMember{member_, {}});
            FrameKind kind = FrameKind::other;
            if (options_.envelopes && type == ValueType::object && member_ == "error") {
                kind = FrameKind::error_object;
            } else if (options_.envelopes && options_.params && type == ValueType::object &&
                       member_ == "params") {
                kind = FrameKind::params_object;
                entries_.back().params_scanned = true;
                entries_.back().params_members.reserve(kMembersReserved);
            }
            placement = {&member.value, kind};
        } else if (frames_.back().kind == FrameKind::error_object) {
            RawMember& member = entries_.back().error_members.emplace_back(
                RawMember{std::string(keyAt(keys_.size() - 1)), {}});
            placement = {&member.value, FrameKind::other};
        } else if (frames_.back().kind == FrameKind::params_object) {
            RawEntry& entry = entries_.back();
            RawMember& member = entry.params_members.emplace_back(
                RawMember{std::string(keyAt(keys_.size() - 1)), {}});
            FrameKind kind = FrameKind::other;
            if (type == ValueType::object && member.name == "_meta") {
                kind = FrameKind::meta_object;
                entry.meta_scanned = true;
                entry.meta_members.reserve(kMembersReserved);
            }
            placement = {&member.value, kind};
        } else if (frames_.back().kind == FrameKind::meta_object) {
            RawMember& member = entries_.back().meta_members.emplace_back(
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
    Stream in_;
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

template <typename Stream>
Scan scanned(Scanner<Stream>&& scanner) {
    Scan scan;
    scan.valid = scanner.run();
    scan.batch = scanner.batch();
    scan.too_many_entries = scanner.tooManyEntries();
    scan.error = scanner.error();
    scan.entries = std::move(scanner.entries());
    return scan;
}

/// A copy of the text that the reader decodes strings into (spans are read from the text
/// itself), NUL-padded: UTF-8 validation puts up to three bytes of a cut sequence (NULs read at
/// the end) before it fails, and they land in the padding.
std::string scratchOf(std::string_view text) {
    constexpr std::size_t kPadding = 4;
    std::string scratch;
    scratch.reserve(text.size() + kPadding);
    scratch.append(text);
    scratch.append(kPadding, '\0');
    return scratch;
}

}  // namespace

Scan scanJson(std::string_view text, const ScanOptions& options) {
    if (text.size() > kMaxScratchBytes) {
        return scanned(Scanner<rapidjson::MemoryStream>(
            text, options, rapidjson::MemoryStream(text.data(), text.size())));
    }
    std::string scratch = scratchOf(text);
    return scanned(Scanner<ScratchStream>(text, options, ScratchStream(scratch.data())));
}

const RawValue* findMember(const std::vector<RawMember>& members, std::string_view name) {
    const auto it = std::find_if(members.begin(), members.end(),
                                 [&](const RawMember& m) { return m.name == name; });
    return it == members.end() ? nullptr : &it->value;
}

Result<RawEntry> readObject(std::string_view json) {
    Scan scan = scanJson(json, ScanOptions{});
    if (!scan.valid) {
        return Error{ErrorCode::invalid_argument, scan.error};
    }
    RawEntry& object = scan.entries.front();
    if (!object.is_object) {
        return Error{ErrorCode::invalid_argument,
                     "expected an object, got " + describe(json, object.value)};
    }
    if (!object.duplicate.empty()) {
        return Error{ErrorCode::invalid_argument, object.duplicate};
    }
    return std::move(object);
}

}  // namespace crank::json::scan
