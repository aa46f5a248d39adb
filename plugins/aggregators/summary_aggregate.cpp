#include "summary_aggregate.h"

#include <utility>

#include "key_text.h"

namespace crank::aggregators {

namespace {

constexpr std::string_view kTypeNames[] = {"object", "array",   "string",
                                           "number", "boolean", "null"};

std::size_t typeSlot(const rapidjson::Value& value) {
    switch (value.GetType()) {
        case rapidjson::kObjectType:
            return 0;
        case rapidjson::kArrayType:
            return 1;
        case rapidjson::kStringType:
            return 2;
        case rapidjson::kNumberType:
            return 3;
        case rapidjson::kTrueType:
        case rapidjson::kFalseType:
            return 4;
        case rapidjson::kNullType:
            break;
    }
    return 5;
}

}  // namespace

SummaryConfig SummaryConfig::read(ConfigReader& reader, bool with_samples) {
    SummaryConfig config;
    config.with_samples = with_samples;
    config.key_paths = reader.paths("key_paths", kMaxKeyPaths);
    config.top_k = static_cast<std::size_t>(reader.integer("top_k", kDefaultTopK, 1, kMaxTopK));
    config.include_first_last = reader.boolean("include_first_last", true);
    config.max_item_bytes = static_cast<std::size_t>(
        reader.integer("max_item_bytes", kDefaultMaxItemBytes, kMinMaxItemBytes, kMaxMaxItemBytes));
    if (with_samples) {
        config.sample_size = static_cast<std::size_t>(
            reader.integer("sample_size", kDefaultSampleSize, 1, kMaxSampleSize));
        const std::string sampling =
            reader.enumeration("sampling", "reservoir", {"reservoir", "first", "last"});
        config.sampling = sampling == "first"  ? ItemSampler::Mode::first
                          : sampling == "last" ? ItemSampler::Mode::last
                                               : ItemSampler::Mode::reservoir;
        if (auto seed = reader.optionalInteger("seed")) {
            config.seed = static_cast<std::uint64_t>(*seed);
        }
    }
    return config;
}

SummaryAggregate::SummaryAggregate(SummaryConfig config)
    : top_k_(config.top_k),
      include_first_last_(config.include_first_last),
      max_item_bytes_(config.max_item_bytes),
      fields_(KeyCounts::countersFor(config.top_k)),
      counts_(std::move(config.key_paths), config.top_k) {
    if (config.with_samples) {
        sampler_.emplace(config.sampling, config.sample_size, config.seed, config.max_item_bytes);
    }
}

void SummaryAggregate::accept(std::string_view item_json) {
    const rapidjson::Value& item = parser_.parse(item_json);
    ++count_;
    bytes_ += item_json.size();
    ++types_[typeSlot(item)];
    if (item.IsObject()) {
        for (const auto& member : item.GetObject()) {
            fields_.add(
                cutUtf8(std::string_view(member.name.GetString(), member.name.GetStringLength()),
                        kMaxKeyBytes));
        }
    }
    counts_.accept(item);
    if (include_first_last_) {
        if (count_ == 1) {
            first_.assign(item_json, max_item_bytes_);
        }
        last_.assign(item_json, max_item_bytes_);
    }
    if (sampler_) {
        sampler_->offer(item_json);
    }
}

bool SummaryAggregate::truncated() const {
    return counts_.truncated() || fields_.evicted() || fields_.size() > top_k_ ||
           (include_first_last_ && count_ > 0 && (first_.cut() || last_.cut())) ||
           (sampler_ && sampler_->anyCut());
}

void SummaryAggregate::snapshot(JsonBuffer& out) const {
    JsonWriter writer(out);
    writer.StartObject();
    writeKey(writer, "summary");
    writer.StartObject();
    writeKey(writer, "count");
    writer.Uint64(count_);
    writeKey(writer, "bytes");
    writer.Uint64(bytes_);
    writeKey(writer, "types");
    writer.StartObject();
    for (std::size_t i = 0; i < kTypeCount; ++i) {
        writeKey(writer, kTypeNames[i]);
        writer.Uint64(types_[i]);
    }
    writer.EndObject();
    writeKey(writer, "fields");
    KeyCounts::writeTop(writer, fields_, top_k_, 0);
    writeKey(writer, "counts");
    counts_.write(writer);
    if (include_first_last_ && count_ > 0) {
        writeKey(writer, "first");
        first_.write(writer);
        writeKey(writer, "last");
        last_.write(writer);
    }
    writer.EndObject();
    if (sampler_) {
        writeKey(writer, "items");
        sampler_->write(writer);
    }
    if (truncated()) {
        writeKey(writer, "truncated");
        writer.Bool(true);
    }
    writer.EndObject();
}

std::size_t SummaryAggregate::memoryEstimate() const {
    return sizeof(*this) + parser_.memoryEstimate() + fields_.memoryEstimate() +
           counts_.memoryEstimate() + first_.memoryEstimate() + last_.memoryEstimate() +
           (sampler_ ? sampler_->memoryEstimate() : 0);
}

}  // namespace crank::aggregators
