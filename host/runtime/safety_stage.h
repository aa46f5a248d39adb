#pragma once

// The safety stage: every upstream item passes here before the aggregator sees it.
//
// Order per item: size check -> UTF-8 check -> parse (strict JSON, depth-limited) -> field
// truncation -> redaction -> dedup -> sampling. Items are JSON text in, JSON text out.
//
// - redacted_paths: every value a path matches (wildcards expand) is replaced by the string
//   "[redacted]", whatever its type (the marker is never truncated). It happens before dedup
//   hashing and before the item leaves the stage, so the original value never reaches dedup,
//   the aggregator, the result or a log.
// - truncate_item_fields + max_field_length: every string VALUE (object keys are untouched)
//   longer than max_field_length bytes is cut to its longest prefix of at most max_field_length
//   bytes that ends on a UTF-8 character boundary, then "…" (U+2026, 3 bytes) is appended: a
//   truncated string is at most max_field_length + 3 bytes.
// - drop_duplicates: an item is a duplicate when the 64-bit JsonHasher digest of its (redacted,
//   truncated) content equals that of a recent item. Whitespace and escapes do not matter; member
//   order does. BOUNDED: the stage remembers the digests of the last `dedup_capacity` distinct
//   items (FIFO eviction): a duplicate of an item older than that is not detected, and two
//   different items collide with probability about capacity / 2^64.
// - sampling_rate (0 < rate <= 1): each item that survived the steps above is kept with
//   probability `rate`, drawn from a PRNG seeded with the constructor's seed: the same seed and
//   the same item sequence make the same decisions. Rate 1 never drops (and draws nothing).
// - too_large: item text longer than max_item_bytes, or nested deeper than max_depth.
// - malformed_json: not exactly one valid JSON value in UTF-8.
// Fast path: without redaction and truncation the item is never built as a DOM nor re-serialised:
// one SAX pass validates it (and hashes it when drop_duplicates is on), and the accepted text is
// the input text itself.
//
// Threading: one stage per stream; process() from one thread at a time (it reuses buffers).

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string_view>

#include "config/operation_config.h"
#include "json/json_value.h"
#include "util/error.h"

namespace crank::runtime {

/// Why the stage dropped an item.
enum class DropReason { malformed_json, duplicate, sampled_out, too_large };

/// "malformed_json", "duplicate", "sampled_out", "too_large"
std::string_view toString(DropReason reason);

/// Bounds of the stage (not in ExecutionConfig: host-wide defaults).
struct SafetyLimits {
    std::size_t max_item_bytes =
        std::size_t{1024} * 1024;         ///< longer item text is dropped as too_large
    std::size_t max_depth = 64;           ///< deeper nesting is dropped as too_large
    std::size_t dedup_capacity = 65'536;  ///< digests remembered for drop_duplicates
};

/// What happened to one item.
struct SafetyDecision {
    bool accepted = false;
    /// When accepted: the item's JSON text to hand on. Either the input text itself (nothing was
    /// rewritten) or a view of the stage's own buffer, valid until the next call on the stage.
    std::string_view text;
    DropReason reason = DropReason::malformed_json;  ///< when !accepted
};

/// How many items the stage saw, by outcome.
struct SafetyCounters {
    std::uint64_t accepted = 0;
    std::uint64_t malformed_json = 0;
    std::uint64_t duplicate = 0;
    std::uint64_t sampled_out = 0;
    std::uint64_t too_large = 0;
    std::uint64_t dropped() const { return malformed_json + duplicate + sampled_out + too_large; }
    std::uint64_t of(DropReason reason) const;
};

class SafetyStage {
public:
    /// Builds the stage from an operation's execution block; compiles redacted_paths once. Errors
    /// name the config path: `operations[0].execution.redacted_paths[2]: "a..b": empty member
    /// name ... at byte 2`, `operations[0].execution.sampling_rate: must be > 0 and <= 1, got 0`.
    /// `where` is the execution block's path (`operations[0].execution`).
    static Result<SafetyStage> create(const config::ExecutionConfig& config, std::uint64_t seed,
                                      std::string_view where, const SafetyLimits& limits = {});

    SafetyStage(SafetyStage&&) noexcept;
    SafetyStage& operator=(SafetyStage&&) noexcept;
    SafetyStage(const SafetyStage&) = delete;
    SafetyStage& operator=(const SafetyStage&) = delete;
    ~SafetyStage();

    /// Runs one item (JSON text) through the stage. Never throws; counts the outcome.
    SafetyDecision process(std::string_view item_json);

    /// The same for an item that is already parsed: redaction and truncation edit `item` in place
    /// (new strings come from `allocator`, normally the item's document allocator); then dedup
    /// and sampling. Returns nullopt when the item is accepted. The caller is responsible for the
    /// item's depth (parse it with json::parseJson's depth limit).
    std::optional<DropReason> processInPlace(json::Value& item, json::Allocator& allocator);

    /// True when redaction or truncation is configured (items may be rewritten).
    bool rewrites() const;
    const SafetyCounters& counters() const;

    struct Impl;

private:
    explicit SafetyStage(std::unique_ptr<Impl> impl);
    std::unique_ptr<Impl> impl_;
};

}  // namespace crank::runtime
