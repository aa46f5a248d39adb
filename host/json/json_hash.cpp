#include "json/json_hash.h"

#include <cstring>

#include <rapidjson/document.h>

namespace crank::json {
namespace {

constexpr std::uint64_t k0 = 0xa0761d6478bd642fULL;
constexpr std::uint64_t k1 = 0xe7037ed1a0b428dbULL;
constexpr std::uint64_t k2 = 0x8ebc6af09c88c6e3ULL;

__extension__ using Uint128 = unsigned __int128;

inline std::uint64_t mum(std::uint64_t a, std::uint64_t b) {
    const Uint128 product = static_cast<Uint128>(a) * b;
    return static_cast<std::uint64_t>(product) ^ static_cast<std::uint64_t>(product >> 64U);
}

inline std::uint64_t load64(const char* p) {
    std::uint64_t v = 0;
    std::memcpy(&v, p, sizeof v);
    return v;
}

void hashInto(JsonHasher& hasher, const Value& value) {
    switch (value.GetType()) {
        case rapidjson::kNullType:
            hasher.null();
            return;
        case rapidjson::kFalseType:
            hasher.boolean(false);
            return;
        case rapidjson::kTrueType:
            hasher.boolean(true);
            return;
        case rapidjson::kNumberType:
            if (value.IsInt64()) {
                hasher.integer(value.GetInt64());
            } else if (value.IsUint64()) {
                hasher.unsignedInteger(value.GetUint64());
            } else {
                hasher.floating(value.GetDouble());
            }
            return;
        case rapidjson::kStringType:
            hasher.string({value.GetString(), value.GetStringLength()});
            return;
        case rapidjson::kObjectType:
            hasher.startObject();
            for (auto it = value.MemberBegin(); it != value.MemberEnd(); ++it) {
                hasher.key({it->name.GetString(), it->name.GetStringLength()});
                hashInto(hasher, it->value);
            }
            hasher.endObject();
            return;
        case rapidjson::kArrayType:
            hasher.startArray();
            for (auto it = value.Begin(); it != value.End(); ++it) {
                hashInto(hasher, *it);
            }
            hasher.endArray();
            return;
    }
}

}  // namespace

void JsonHasher::mixWord(std::uint64_t word) {
    state_ = mum(state_ ^ word ^ k0, k1);
}

void JsonHasher::integer(std::int64_t i) {
    mixWord(tag_int);
    mixWord(static_cast<std::uint64_t>(i));
}

void JsonHasher::unsignedInteger(std::uint64_t u) {
    if (u <= static_cast<std::uint64_t>(INT64_MAX)) {
        integer(static_cast<std::int64_t>(u));
        return;
    }
    mixWord(tag_uint);
    mixWord(u);
}

void JsonHasher::floating(double d) {
    std::uint64_t bits = 0;
    std::memcpy(&bits, &d, sizeof bits);
    mixWord(tag_double);
    mixWord(bits);
}

void JsonHasher::mixBytes(std::uint64_t tag, std::string_view bytes) {
    std::uint64_t h = mum(state_ ^ tag ^ k0, k1 ^ bytes.size());
    const char* p = bytes.data();
    std::size_t n = bytes.size();
    while (n >= 16) {
        h = mum(load64(p) ^ k1, load64(p + 8) ^ h);
        p += 16;
        n -= 16;
    }
    if (n >= 8) {
        h = mum(load64(p) ^ k2, h ^ k1);
        p += 8;
        n -= 8;
    }
    if (n > 0) {
        std::uint64_t tail = 0;
        std::memcpy(&tail, p, n);
        h = mum(tail ^ k2 ^ n, h ^ k0);
    }
    state_ = h;
}

std::uint64_t JsonHasher::digest() const {
    return mum(state_ ^ k2, k0);
}

std::uint64_t hashValue(const Value& value) {
    JsonHasher hasher;
    hashInto(hasher, value);
    return hasher.digest();
}

}  // namespace crank::json
