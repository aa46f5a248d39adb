#include "runtime/safety_stage.h"

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include <fmt/core.h>
#include <rapidjson/document.h>
#include <rapidjson/reader.h>
#include <rapidjson/stream.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "json/depth_limited_handler.h"
#include "json/json_hash.h"
#include "json/json_parse.h"
#include "json/json_path.h"

namespace crank::runtime {
namespace {

constexpr std::string_view redacted_text = "[redacted]";
constexpr std::string_view ellipsis = "\xE2\x80\xA6";  // U+2026
// UTF-8 is checked beforehand by json::isValidUtf8 (several times faster than the reader's own).
constexpr unsigned parse_flags = rapidjson::kParseDefaultFlags;
constexpr std::size_t pool_buffer_bytes = std::size_t{16} * 1024;

/// A bounded set of 64-bit digests: open addressing (linear probing, backward-shift deletion)
/// plus a FIFO ring that evicts the oldest digest once `capacity` are held.
class DedupSet {
public:
    explicit DedupSet(std::size_t capacity) : capacity_(capacity == 0 ? 1 : capacity) {
        std::size_t slots = 1;
        while (slots < capacity_ * 2) {
            slots <<= 1U;
        }
        slots_.assign(slots, 0);
        mask_ = slots - 1;
        fifo_.assign(capacity_, 0);
    }

    /// Adds `digest`; false when it was present already.
    bool insert(std::uint64_t digest) {
        if (digest == 0) {
            digest = 1;  // 0 marks an empty slot
        }
        std::size_t i = digest & mask_;
        while (slots_[i] != 0) {
            if (slots_[i] == digest) {
                return false;
            }
            i = (i + 1) & mask_;
        }
        if (size_ == capacity_) {
            erase(fifo_[head_]);
            --size_;
            i = digest & mask_;  // erase may have moved slots: probe again
            while (slots_[i] != 0) {
                i = (i + 1) & mask_;
            }
        }
        slots_[i] = digest;
        fifo_[head_] = digest;
        head_ = (head_ + 1) % capacity_;
        ++size_;
        return true;
    }

private:
    void erase(std::uint64_t digest) {
        std::size_t i = digest & mask_;
        while (slots_[i] != digest) {
            if (slots_[i] == 0) {
                return;
            }
            i = (i + 1) & mask_;
        }
        // Backward-shift deletion keeps every probe chain unbroken.
        std::size_t j = i;
        while (true) {
            j = (j + 1) & mask_;
            if (slots_[j] == 0) {
                break;
            }
            const std::size_t home = slots_[j] & mask_;
            // Move slots_[j] into the hole at i when its home is not in (i, j] cyclically.
            const bool in_between = (i <= j) ? (home > i && home <= j) : (home > i || home <= j);
            if (!in_between) {
                slots_[i] = slots_[j];
                i = j;
            }
        }
        slots_[i] = 0;
    }

    std::size_t capacity_;
    std::vector<std::uint64_t> slots_;
    std::size_t mask_ = 0;
    std::vector<std::uint64_t> fifo_;
    std::size_t head_ = 0;
    std::size_t size_ = 0;
};

// RapidJSON handler and stream concepts name these methods.
// NOLINTBEGIN(readability-identifier-naming)
/// SAX handler of the fast path: checks depth, and hashes when asked.
class ScanHandler {
public:
    ScanHandler(json::JsonHasher& hasher, bool hash, std::size_t max_depth)
        : hasher_(hasher), hash_(hash), max_depth_(max_depth) {}

    bool Null() {
        if (hash_) {
            hasher_.null();
        }
        return true;
    }
    bool Bool(bool b) {
        if (hash_) {
            hasher_.boolean(b);
        }
        return true;
    }
    bool Int(int i) { return Int64(i); }
    bool Uint(unsigned u) { return Int64(u); }
    bool Int64(std::int64_t i) {
        if (hash_) {
            hasher_.integer(i);
        }
        return true;
    }
    bool Uint64(std::uint64_t u) {
        if (hash_) {
            hasher_.unsignedInteger(u);
        }
        return true;
    }
    bool Double(double d) {
        if (hash_) {
            hasher_.floating(d);
        }
        return true;
    }
    bool RawNumber(const char* /*str*/, rapidjson::SizeType /*length*/, bool /*copy*/) {
        return true;
    }
    bool String(const char* s, rapidjson::SizeType n, bool /*copy*/) {
        if (hash_) {
            hasher_.string({s, n});
        }
        return true;
    }
    bool Key(const char* s, rapidjson::SizeType n, bool /*copy*/) {
        if (hash_) {
            hasher_.key({s, n});
        }
        return true;
    }
    bool StartObject() {
        if (hash_) {
            hasher_.startObject();
        }
        return enter();
    }
    bool EndObject(rapidjson::SizeType /*count*/) {
        --depth_;
        if (hash_) {
            hasher_.endObject();
        }
        return true;
    }
    bool StartArray() {
        if (hash_) {
            hasher_.startArray();
        }
        return enter();
    }
    bool EndArray(rapidjson::SizeType /*count*/) {
        --depth_;
        if (hash_) {
            hasher_.endArray();
        }
        return true;
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

    json::JsonHasher& hasher_;
    bool hash_;
    std::size_t max_depth_;
    std::size_t depth_ = 0;
    bool too_deep_ = false;
};
// NOLINTEND(readability-identifier-naming)

/// The longest prefix of `text` of at most `max` bytes that ends on a UTF-8 character boundary.
std::size_t utf8Cut(std::string_view text, std::size_t max) {
    std::size_t cut = max;
    while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0U) == 0x80U) {
        --cut;
    }
    return cut;
}

}  // namespace

struct SafetyStage::Impl {
    SafetyLimits limits;
    std::vector<sdk::Path> redacted;
    bool truncate = false;
    std::size_t max_field_length = 0;
    bool dedup = false;
    double rate = 1.0;
    std::uint64_t rng = 0;
    std::optional<DedupSet> seen;
    SafetyCounters counters;

    // Reused per item (one thread at a time): no allocation per item once warmed up.
    std::unique_ptr<char[]> pool_buffer;
    std::unique_ptr<json::Allocator> pool;
    std::unique_ptr<json::Document> doc;
    rapidjson::Reader reader;
    json::JsonHasher hasher;
    std::string scratch;
    std::string insitu;
    rapidjson::StringBuffer out;  // reused: Put() into a growing stack, no per-char push_back
    rapidjson::Writer<rapidjson::StringBuffer> writer;

    Impl() : writer(out) {}

    bool rewrites() const { return !redacted.empty() || truncate; }

    std::uint64_t nextRandom() {
        // splitmix64
        std::uint64_t z = (rng += 0x9e3779b97f4a7c15ULL);
        z = (z ^ (z >> 30U)) * 0xbf58476d1ce4e5b9ULL;
        z = (z ^ (z >> 27U)) * 0x94d049bb133111ebULL;
        return z ^ (z >> 31U);
    }

    bool sampledOut() {
        if (rate >= 1.0) {
            return false;
        }
        const double draw = static_cast<double>(nextRandom() >> 11U) * 0x1.0p-53;
        return draw >= rate;
    }

    /// Returns how many strings were cut.
    std::size_t truncateStrings(json::Value& v, json::Allocator& allocator) {
        std::size_t cut = 0;
        if (v.IsString()) {
            if (v.GetStringLength() > max_field_length) {
                const std::string_view text(v.GetString(), v.GetStringLength());
                scratch.assign(text.substr(0, utf8Cut(text, max_field_length)));
                scratch += ellipsis;
                v.SetString(scratch.data(), static_cast<rapidjson::SizeType>(scratch.size()),
                            allocator);
                cut = 1;
            }
        } else if (v.IsObject()) {
            auto it = v.MemberBegin();
            for (rapidjson::SizeType n = v.MemberCount(); n > 0; --n, ++it) {
                cut += truncateStrings(it->value, allocator);
            }
        } else if (v.IsArray()) {
            for (auto it = v.Begin(); it != v.End(); ++it) {
                cut += truncateStrings(*it, allocator);
            }
        }
        return cut;
    }

    /// Redaction, truncation, dedup, sampling on a parsed item.
    /// `*changed` (when given) is set when redaction or truncation rewrote something, so that an
    /// untouched item is handed on as its original text, without serialising it again.
    std::optional<DropReason> finish(json::Value& item, json::Allocator& allocator,
                                     bool* changed = nullptr) {
        // Truncation first, so that the "[redacted]" marker itself is never cut.
        std::size_t rewritten = 0;
        if (truncate) {
            rewritten += truncateStrings(item, allocator);
        }
        for (const sdk::Path& path : redacted) {
            rewritten += json::forEachMutable(item, path, [](json::Value& v) {
                v.SetString(rapidjson::StringRef(redacted_text.data(), redacted_text.size()));
            });
        }
        if (changed != nullptr) {
            *changed = rewritten > 0;
        }
        if (dedup && !seen->insert(json::hashValue(item))) {
            return DropReason::duplicate;
        }
        if (sampledOut()) {
            return DropReason::sampled_out;
        }
        return std::nullopt;
    }

    SafetyDecision drop(DropReason reason) {
        switch (reason) {
            case DropReason::malformed_json:
                ++counters.malformed_json;
                break;
            case DropReason::duplicate:
                ++counters.duplicate;
                break;
            case DropReason::sampled_out:
                ++counters.sampled_out;
                break;
            case DropReason::too_large:
                ++counters.too_large;
                break;
        }
        return SafetyDecision{false, {}, reason};
    }

    SafetyDecision accept(std::string_view text) {
        ++counters.accepted;
        return SafetyDecision{true, text, DropReason::malformed_json};
    }

    SafetyDecision fastPath(std::string_view text) {
        if (!json::isValidUtf8(text)) {
            return drop(DropReason::malformed_json);
        }
        // In-situ parsing of a copy in a reused buffer: strings are decoded where they are
        // instead of being pushed onto the reader's stack byte by byte.
        insitu.assign(text);
        rapidjson::InsituStringStream stream(insitu.data());
        hasher.reset();
        ScanHandler handler(hasher, dedup, limits.max_depth);
        const rapidjson::ParseResult result =
            reader.Parse<parse_flags | rapidjson::kParseInsituFlag>(stream, handler);
        if (handler.tooDeep()) {
            return drop(DropReason::too_large);
        }
        if (result.IsError() || stream.Tell() != text.size()) {
            return drop(DropReason::malformed_json);
        }
        if (dedup && !seen->insert(hasher.digest())) {
            return drop(DropReason::duplicate);
        }
        if (sampledOut()) {
            return drop(DropReason::sampled_out);
        }
        return accept(text);
    }

    SafetyDecision slowPath(std::string_view text) {
        if (!json::isValidUtf8(text)) {
            return drop(DropReason::malformed_json);
        }
        doc->SetNull();
        pool->Clear();  // keeps the user buffer: no allocation for small items
        // In situ: the document's strings point into `insitu`, valid until the next item.
        insitu.assign(text);
        rapidjson::InsituStringStream stream(insitu.data());
        rapidjson::ParseResult result;
        bool too_deep = false;
        auto generate = [&](json::Document& target) {
            json::DepthLimitedHandler handler(target, limits.max_depth);
            result = reader.Parse<parse_flags | rapidjson::kParseInsituFlag>(stream, handler);
            too_deep = handler.tooDeep();
            return !result.IsError() && stream.Tell() == text.size();
        };
        doc->Populate(generate);
        if (too_deep) {
            return drop(DropReason::too_large);
        }
        if (result.IsError() || stream.Tell() != text.size()) {
            return drop(DropReason::malformed_json);
        }
        bool changed = false;
        if (std::optional<DropReason> reason = finish(*doc, *pool, &changed)) {
            return drop(*reason);
        }
        if (!changed) {
            return accept(text);
        }
        out.Clear();
        writer.Reset(out);
        doc->Accept(writer);
        return accept(std::string_view(out.GetString(), out.GetSize()));
    }
};

std::string_view toString(DropReason reason) {
    switch (reason) {
        case DropReason::malformed_json:
            return "malformed_json";
        case DropReason::duplicate:
            return "duplicate";
        case DropReason::sampled_out:
            return "sampled_out";
        case DropReason::too_large:
            return "too_large";
    }
    return "malformed_json";
}

std::uint64_t SafetyCounters::of(DropReason reason) const {
    switch (reason) {
        case DropReason::malformed_json:
            return malformed_json;
        case DropReason::duplicate:
            return duplicate;
        case DropReason::sampled_out:
            return sampled_out;
        case DropReason::too_large:
            return too_large;
    }
    return 0;
}

Result<SafetyStage> SafetyStage::create(const config::ExecutionConfig& config, std::uint64_t seed,
                                        std::string_view where, const SafetyLimits& limits) {
    try {
        auto at = [&](std::string_view key) {
            return where.empty() ? std::string(key) : fmt::format("{}.{}", where, key);
        };
        auto impl = std::make_unique<Impl>();
        impl->limits = limits;
        if (!(config.sampling_rate > 0.0 && config.sampling_rate <= 1.0)) {
            return Error{ErrorCode::invalid_argument,
                         fmt::format("{}: must be > 0 and <= 1, got {}", at("sampling_rate"),
                                     config.sampling_rate)};
        }
        impl->rate = config.sampling_rate;
        impl->rng = seed;
        if (config.truncate_item_fields) {
            if (config.max_field_length <= 0) {
                return Error{ErrorCode::invalid_argument,
                             fmt::format("{}: must be a positive integer, got {}",
                                         at("max_field_length"), config.max_field_length)};
            }
            impl->truncate = true;
            impl->max_field_length = static_cast<std::size_t>(config.max_field_length);
        }
        for (std::size_t i = 0; i < config.redacted_paths.size(); ++i) {
            Result<sdk::Path> path = json::compilePath(
                config.redacted_paths[i], fmt::format("{}[{}]", at("redacted_paths"), i));
            if (!path) {
                return path.error();
            }
            impl->redacted.push_back(std::move(*path));
        }
        impl->dedup = config.drop_duplicates;
        if (impl->dedup) {
            impl->seen.emplace(limits.dedup_capacity);
        }
        if (impl->rewrites()) {
            impl->pool_buffer = std::make_unique<char[]>(pool_buffer_bytes);
            impl->pool =
                std::make_unique<json::Allocator>(impl->pool_buffer.get(), pool_buffer_bytes);
            impl->doc = std::make_unique<json::Document>(impl->pool.get());
            impl->out.Reserve(pool_buffer_bytes);
        }
        return SafetyStage(std::move(impl));
    } catch (const std::exception& e) {
        return Error{ErrorCode::internal,
                     fmt::format("{}: building the safety stage failed: {}", where, e.what())};
    }
}

SafetyStage::SafetyStage(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
SafetyStage::SafetyStage(SafetyStage&&) noexcept = default;
SafetyStage& SafetyStage::operator=(SafetyStage&&) noexcept = default;
SafetyStage::~SafetyStage() = default;

SafetyDecision SafetyStage::process(std::string_view item_json) {
    Impl& impl = *impl_;
    if (item_json.size() > impl.limits.max_item_bytes) {
        return impl.drop(DropReason::too_large);
    }
    try {
        return impl.rewrites() ? impl.slowPath(item_json) : impl.fastPath(item_json);
    } catch (const std::exception&) {
        // Only allocation can throw here: the item is too large for the memory we have.
        return impl.drop(DropReason::too_large);
    }
}

std::optional<DropReason> SafetyStage::processInPlace(json::Value& item,
                                                      json::Allocator& allocator) {
    Impl& impl = *impl_;
    std::optional<DropReason> reason;
    try {
        reason = impl.finish(item, allocator);
    } catch (const std::exception&) {
        reason = DropReason::too_large;
    }
    if (reason) {
        impl.drop(*reason);
    } else {
        ++impl.counters.accepted;
    }
    return reason;
}

bool SafetyStage::rewrites() const {
    return impl_->rewrites();
}

const SafetyCounters& SafetyStage::counters() const {
    return impl_->counters;
}

}  // namespace crank::runtime
