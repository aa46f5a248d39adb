#pragma once

// A SAX handler that builds a RapidJSON Document and refuses nesting deeper than a limit, before
// the document (or anything after it) recurses over it. For .cpp files that parse outside bytes
// (it includes RapidJSON's document.h).

#include <cstddef>
#include <cstdint>

#include <rapidjson/document.h>

namespace crank::json {

// RapidJSON handler and stream concepts name these methods.
// NOLINTBEGIN(readability-identifier-naming)
/// Forwards SAX events to a Document and refuses nesting deeper than the limit, before the
/// document (or anything after it) recurses over it.
class DepthLimitedHandler {
public:
    DepthLimitedHandler(rapidjson::Document& doc, std::size_t max_depth)
        : doc_(doc), max_depth_(max_depth) {}

    bool Null() { return doc_.Null(); }
    bool Bool(bool b) { return doc_.Bool(b); }
    bool Int(int i) { return doc_.Int(i); }
    bool Uint(unsigned u) { return doc_.Uint(u); }
    bool Int64(std::int64_t i) { return doc_.Int64(i); }
    bool Uint64(std::uint64_t u) { return doc_.Uint64(u); }
    bool Double(double d) { return doc_.Double(d); }
    bool RawNumber(const char* str, rapidjson::SizeType length, bool copy) {
        return doc_.RawNumber(str, length, copy);
    }
    bool String(const char* str, rapidjson::SizeType length, bool copy) {
        return doc_.String(str, length, copy);
    }
    bool Key(const char* str, rapidjson::SizeType length, bool copy) {
        return doc_.Key(str, length, copy);
    }
    bool StartObject() { return enter() && doc_.StartObject(); }
    bool EndObject(rapidjson::SizeType count) {
        --depth_;
        return doc_.EndObject(count);
    }
    bool StartArray() { return enter() && doc_.StartArray(); }
    bool EndArray(rapidjson::SizeType count) {
        --depth_;
        return doc_.EndArray(count);
    }

    bool tooDeep() const { return too_deep_; }

private:
    bool enter() {
        if (++depth_ > max_depth_) {
            too_deep_ = true;
            return false;
        }
        return true;
    }

    rapidjson::Document& doc_;
    std::size_t max_depth_;
    std::size_t depth_ = 0;
    bool too_deep_ = false;
};
// NOLINTEND(readability-identifier-naming)

}  // namespace crank::json
