#include "aggregator_catalog.h"

#include <string>

#include "latest_state_aggregate.h"
#include "raw_items_aggregate.h"
#include "stats_aggregate.h"
#include "summary_aggregate.h"

namespace crank::aggregators {

namespace {

constexpr const char* kVersion = "1.0.0";

// ---- schema fragments ------------------------------------------------------------------------

std::string integerSchema(std::size_t min, std::size_t max, std::size_t fallback,
                          const std::string& description) {
    return R"({"type":"integer","minimum":)" + std::to_string(min) + R"(,"maximum":)" +
           std::to_string(max) + R"(,"default":)" + std::to_string(fallback) +
           R"(,"description":")" + description + R"("})";
}

std::string pathsSchema(std::size_t max, const std::string& description) {
    return R"({"type":"array","items":{"type":"string"},"maxItems":)" + std::to_string(max) +
           R"(,"default":[],"description":")" + description + R"("})";
}

std::string object(const std::string& properties, const std::string& required = "") {
    std::string schema = R"({"type":"object","properties":{)" + properties + "}";
    if (!required.empty()) {
        schema += R"(,"required":[)" + required + "]";
    }
    return schema + R"(,"additionalProperties":false})";
}

const char* const kCount = R"({"type":"integer","minimum":0})";
const char* const kNumber = R"({"type":"number"})";
const char* const kTruncated =
    R"({"type":"boolean","description":"true when something was left out; the host ORs it into the result's truncated"})";

std::string topListSchema() {
    const std::string value =
        object(R"("value":{"type":"string"},"count":{"type":"integer","minimum":1})",
               R"("value","count")");
    return object(
        R"("values":{"type":"array","items":)" + value +
            R"(},"other":{"type":"integer","minimum":0,"description":"matches not listed in values"})",
        R"("values","other")");
}

std::string countsSchema() {
    return R"({"type":"object","description":"per key path: the most frequent values","additionalProperties":)" +
           topListSchema() + "}";
}

std::string itemOrMarker(const std::string& description) {
    return R"({"description":")" + description +
           R"(; an item longer than max_item_bytes is {\"truncated_item\": true, \"bytes\": n}"})";
}

std::string summaryConfigProperties() {
    return R"("key_paths":)" +
           pathsSchema(SummaryConfig::kMaxKeyPaths,
                       "paths whose values are counted (top-K per path)") +
           R"(,"top_k":)" +
           integerSchema(1, SummaryConfig::kMaxTopK, SummaryConfig::kDefaultTopK,
                         "values listed per counts / fields list") +
           R"(,"include_first_last":{"type":"boolean","default":true,"description":"include the first and the last item"})" +
           R"(,"max_item_bytes":)" +
           integerSchema(SummaryConfig::kMinMaxItemBytes, SummaryConfig::kMaxMaxItemBytes,
                         SummaryConfig::kDefaultMaxItemBytes,
                         "a longer kept item is replaced by a marker");
}

std::string summarySchema() {
    const std::string types = object(
        std::string(R"("object":)") + kCount + R"(,"array":)" + kCount + R"(,"string":)" + kCount +
            R"(,"number":)" + kCount + R"(,"boolean":)" + kCount + R"(,"null":)" + kCount,
        R"("object","array","string","number","boolean","null")");
    return object(std::string(R"("count":)") + kCount + R"(,"bytes":)" + kCount + R"(,"types":)" +
                      types + R"(,"fields":)" + topListSchema() + R"(,"counts":)" + countsSchema() +
                      R"(,"first":)" + itemOrMarker("the first item") + R"(,"last":)" +
                      itemOrMarker("the last item"),
                  R"("count","bytes","types","fields","counts")");
}

// ---- the modes -------------------------------------------------------------------------------

template <typename Config>
std::vector<ConfigProblem> validateWith(std::string_view config_json,
                                        Config (*read)(ConfigReader&)) {
    ConfigReader reader(config_json);
    read(reader);
    return reader.finish();
}

SummaryConfig readSummaryOnly(ConfigReader& reader) {
    return SummaryConfig::read(reader, false);
}
SummaryConfig readSummaryPlusSamples(ConfigReader& reader) {
    return SummaryConfig::read(reader, true);
}

template <typename Aggregate, typename Config>
std::unique_ptr<AggregateLogic> createWith(std::string_view config_json,
                                           Config (*read)(ConfigReader&)) {
    ConfigReader reader(config_json);
    Config config = read(reader);
    reader.throwIfInvalid();
    return std::make_unique<Aggregate>(std::move(config));
}

AggregatorEntry rawItems() {
    AggregatorEntry entry;
    entry.name = "raw_items";
    entry.description =
        "Keeps the first or the last items verbatim, within max_items and max_bytes";
    entry.config_schema_json = object(
        R"("max_items":)" +
        integerSchema(1, RawItemsConfig::kMaxMaxItems, RawItemsConfig::kDefaultMaxItems,
                      "items kept at most") +
        R"(,"keep":{"type":"string","enum":["first","last"],"default":"first","description":"keep the first items, or the last ones"})" +
        R"(,"max_bytes":)" +
        integerSchema(1, RawItemsConfig::kMaxMaxBytes, RawItemsConfig::kDefaultMaxBytes,
                      "total text size of the kept items at most"));
    entry.output_schema_json = object(
        R"("items":{"type":"array","items":{},"description":"the kept items, in arrival order"},"truncated":)" +
            std::string(kTruncated),
        R"("items")");
    entry.validate = [](std::string_view config) {
        return validateWith(config, &RawItemsConfig::read);
    };
    entry.create = [](std::string_view config) {
        return createWith<RawItemsAggregate>(config, &RawItemsConfig::read);
    };
    return entry;
}

AggregatorEntry summaryOnly() {
    AggregatorEntry entry;
    entry.name = "summary_only";
    entry.description =
        "Counts, sizes, JSON types, frequent fields and values, first and last item";
    entry.config_schema_json = object(summaryConfigProperties());
    entry.output_schema_json =
        object(R"("summary":)" + summarySchema() + R"(,"truncated":)" + kTruncated, R"("summary")");
    entry.validate = [](std::string_view config) { return validateWith(config, &readSummaryOnly); };
    entry.create = [](std::string_view config) {
        return createWith<SummaryAggregate>(config, &readSummaryOnly);
    };
    return entry;
}

AggregatorEntry summaryPlusSamples() {
    AggregatorEntry entry;
    entry.name = "summary_plus_samples";
    entry.description =
        "summary_only plus a bounded sample of the items (reservoir, first or last)";
    entry.config_schema_json = object(
        summaryConfigProperties() + R"(,"sample_size":)" +
        integerSchema(1, SummaryConfig::kMaxSampleSize, SummaryConfig::kDefaultSampleSize,
                      "sample items kept") +
        R"(,"sampling":{"type":"string","enum":["reservoir","first","last"],"default":"reservoir","description":"uniform random sample, or the first / last items"})" +
        R"(,"seed":{"type":"integer","description":"makes reservoir sampling deterministic"})");
    entry.output_schema_json = object(
        R"("summary":)" + summarySchema() +
            R"(,"items":{"type":"array","items":{},"description":"the sample, in arrival order; an item longer than max_item_bytes is {\"truncated_item\": true, \"bytes\": n}"},"truncated":)" +
            kTruncated,
        R"("summary","items")");
    entry.validate = [](std::string_view config) {
        return validateWith(config, &readSummaryPlusSamples);
    };
    entry.create = [](std::string_view config) {
        return createWith<SummaryAggregate>(config, &readSummaryPlusSamples);
    };
    return entry;
}

AggregatorEntry stats() {
    AggregatorEntry entry;
    entry.name = "stats";
    entry.description =
        "Count, min, max, mean, sum and p50/p95/p99 of numeric paths; frequent values of key paths";
    entry.config_schema_json = object(
        R"("numeric_paths":)" +
        pathsSchema(StatsConfig::kMaxPaths,
                    "paths of numbers (\\\"*\\\" matches every member; every match counts)") +
        R"(,"key_paths":)" +
        pathsSchema(StatsConfig::kMaxPaths, "paths whose values are counted (top-K per path)") +
        R"(,"top_k":)" +
        integerSchema(1, StatsConfig::kMaxTopK, StatsConfig::kDefaultTopK,
                      "values listed per key path") +
        R"(,"relative_accuracy":{"type":"number","minimum":0.0001,"maximum":0.1,"default":0.01,"description":"relative error of the quantiles"})" +
        R"(,"max_buckets":)" +
        integerSchema(StatsConfig::kMinMaxBuckets, StatsConfig::kMaxMaxBuckets,
                      StatsConfig::kDefaultMaxBuckets,
                      "quantile buckets per sign and path (8 bytes each)"));
    const std::string numeric = object(
        std::string(R"("count":)") + kCount + R"(,"non_numeric":)" + kCount + R"(,"sum":)" +
            kNumber + R"(,"min":)" + kNumber + R"(,"max":)" + kNumber + R"(,"mean":)" + kNumber +
            R"(,"p50":)" + kNumber + R"(,"p95":)" + kNumber + R"(,"p99":)" + kNumber,
        R"("count","non_numeric","sum")");
    const std::string body = object(
        std::string(R"("count":)") + kCount +
            R"(,"numeric":{"type":"object","description":"per numeric path; min, max, mean and quantiles once a number was seen","additionalProperties":)" +
            numeric + R"(},"counts":)" + countsSchema(),
        R"("count","numeric","counts")");
    entry.output_schema_json =
        object(R"("stats":)" + body + R"(,"truncated":)" + kTruncated, R"("stats")");
    entry.validate = [](std::string_view config) {
        return validateWith(config, &StatsConfig::read);
    };
    entry.create = [](std::string_view config) {
        return createWith<StatsAggregate>(config, &StatsConfig::read);
    };
    return entry;
}

AggregatorEntry latestState() {
    AggregatorEntry entry;
    entry.name = "latest_state";
    entry.description = "The newest item per key (least recently updated keys evicted first)";
    entry.config_schema_json = object(
        R"("key_path":{"type":"string","description":"path of the key; absent: the newest item under \"_\""})" +
        std::string(R"(,"max_keys":)") +
        integerSchema(1, LatestStateConfig::kMaxMaxKeys, LatestStateConfig::kDefaultMaxKeys,
                      "keys kept at most") +
        R"(,"max_item_bytes":)" +
        integerSchema(LatestStateConfig::kMinMaxItemBytes, LatestStateConfig::kMaxMaxItemBytes,
                      LatestStateConfig::kDefaultMaxItemBytes,
                      "a longer item is replaced by a marker") +
        R"(,"max_bytes":)" +
        integerSchema(LatestStateConfig::kMinMaxBytes, LatestStateConfig::kMaxMaxBytes,
                      LatestStateConfig::kDefaultMaxBytes, "total size of keys and kept items"));
    entry.output_schema_json = object(
        R"("state":{"type":"object","description":"key -> newest item, least recently updated first; an item longer than max_item_bytes is {\"truncated_item\": true, \"bytes\": n}","additionalProperties":{}},"truncated":)" +
            std::string(kTruncated),
        R"("state")");
    entry.validate = [](std::string_view config) {
        return validateWith(config, &LatestStateConfig::read);
    };
    entry.create = [](std::string_view config) {
        return createWith<LatestStateAggregate>(config, &LatestStateConfig::read);
    };
    return entry;
}

}  // namespace

const std::vector<AggregatorEntry>& aggregatorCatalog() {
    static const std::vector<AggregatorEntry> catalog = [] {
        std::vector<AggregatorEntry> entries;
        entries.push_back(rawItems());
        entries.push_back(summaryOnly());
        entries.push_back(summaryPlusSamples());
        entries.push_back(stats());
        entries.push_back(latestState());
        for (AggregatorEntry& entry : entries) {
            entry.version = kVersion;
        }
        return entries;
    }();
    return catalog;
}

const AggregatorEntry* findAggregator(std::string_view name) {
    for (const AggregatorEntry& entry : aggregatorCatalog()) {
        if (entry.name == name) {
            return &entry;
        }
    }
    return nullptr;
}

}  // namespace crank::aggregators
