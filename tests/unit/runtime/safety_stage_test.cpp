#include "runtime/safety_stage.h"

#include <algorithm>
#include <chrono>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include "json/json_parse.h"
#include "json/json_text.h"
#include "sanitizers.h"
#include <time.h>

namespace crank::runtime {
namespace {

SafetyStage stage(const config::ExecutionConfig& config, std::uint64_t seed = 1,
                  const SafetyLimits& limits = {}) {
    Result<SafetyStage> s = SafetyStage::create(config, seed, "operations[0].execution", limits);
    if (!s.ok()) {
        ADD_FAILURE() << s.error().message;
        return SafetyStage::create({}, seed, "").value();
    }
    return std::move(*s);
}

/// "accept <text>" or "drop <reason>".
std::string run(SafetyStage& s, std::string_view item) {
    SafetyDecision d = s.process(item);
    return d.accepted ? "accept " + std::string(d.text) : "drop " + std::string(toString(d.reason));
}

TEST(SafetyStage, PassThroughKeepsTextAsIs) {
    SafetyStage s = stage({});
    EXPECT_FALSE(s.rewrites());
    const std::string item = R"( {"a" : 1} )";
    SafetyDecision d = s.process(item);
    ASSERT_TRUE(d.accepted);
    EXPECT_EQ(d.text.data(), item.data());  // not re-serialised
    EXPECT_EQ(run(s, R"({"a":1})"), R"(accept {"a":1})");
    EXPECT_EQ(s.counters().accepted, 2U);
}

TEST(SafetyStage, MalformedItems) {
    SafetyStage s = stage({});
    using namespace std::string_view_literals;
    for (std::string_view bad : {"{"sv, ""sv, "{\"a\":1}x"sv, "\"\xC3\x28\""sv, "{}\0{}"sv,
                                 "[1,]"sv, "NaN"sv, "{\"a\":1"sv}) {
        EXPECT_EQ(run(s, bad), "drop malformed_json") << bad;
    }
    EXPECT_EQ(s.counters().malformed_json, 8U);
    EXPECT_EQ(s.counters().dropped(), 8U);
    config::ExecutionConfig redacting;
    redacting.redacted_paths = {"a"};
    SafetyStage r = stage(redacting);
    EXPECT_EQ(run(r, "{\"a\":"), "drop malformed_json");
    EXPECT_EQ(run(r, "\"\xFF\""), "drop malformed_json");
}

TEST(SafetyStage, TooLarge) {
    SafetyLimits limits;
    limits.max_item_bytes = 10;
    limits.max_depth = 3;
    SafetyStage s = stage({}, 1, limits);
    EXPECT_EQ(run(s, R"({"a":"0123456789"})"), "drop too_large");
    EXPECT_EQ(run(s, "[[[1]]]"), "accept [[[1]]]");
    EXPECT_EQ(run(s, "[[[[1]]]]"), "drop too_large");
    EXPECT_EQ(s.counters().too_large, 2U);
    config::ExecutionConfig redacting;
    redacting.redacted_paths = {"a"};
    SafetyStage r = stage(redacting, 1, limits);
    EXPECT_EQ(run(r, "[[[[1]]]]"), "drop too_large");
    SafetyStage deep = stage({});
    EXPECT_EQ(run(deep, std::string(100'000, '[')), "drop too_large");
}

TEST(SafetyStage, Redaction) {
    config::ExecutionConfig c;
    c.redacted_paths = {"token", "user.password", "items.*.secret", "*.ssn"};
    SafetyStage s = stage(c);
    EXPECT_TRUE(s.rewrites());
    EXPECT_EQ(run(s, R"({"token": {"deep": [1,2]}, "user": {"password": "hunter2", "name": "a"},
                         "items": [{"secret": 1, "x": 2}, {"x": 3}], "p": {"ssn": "1"}})"),
              R"(accept {"token":"[redacted]","user":{"password":"[redacted]","name":"a"},)"
              R"("items":[{"secret":"[redacted]","x":2},{"x":3}],"p":{"ssn":"[redacted]"}})");
    // Nothing matched: the item is handed on as it came, not serialised again.
    EXPECT_EQ(run(s, R"({"other": 1})"), R"(accept {"other": 1})");
    EXPECT_EQ(run(s, R"([1,2])"), R"(accept [1,2])");
}

TEST(SafetyStage, RedactionBeforeDedup) {
    config::ExecutionConfig c;
    c.redacted_paths = {"token"};
    c.drop_duplicates = true;
    SafetyStage s = stage(c);
    EXPECT_EQ(run(s, R"({"id": 1, "token": "a"})"), R"(accept {"id":1,"token":"[redacted]"})");
    EXPECT_EQ(run(s, R"({"id": 1, "token": "b"})"), "drop duplicate");
    EXPECT_EQ(run(s, R"({"id": 2, "token": "b"})"), R"(accept {"id":2,"token":"[redacted]"})");
}

TEST(SafetyStage, Truncation) {
    config::ExecutionConfig c;
    c.truncate_item_fields = true;
    c.max_field_length = 4;
    SafetyStage s = stage(c);
    EXPECT_EQ(
        run(s, R"({"long_key_untouched": "abcdefgh", "short": "abcd", "n": 123456789,
                         "list": ["12345", {"k": "xyzxyz"}]})"),
        "accept {\"long_key_untouched\":\"abcd\xE2\x80\xA6\",\"short\":\"abcd\",\"n\":123456789,"
        "\"list\":[\"1234\xE2\x80\xA6\",{\"k\":\"xyzx\xE2\x80\xA6\"}]}");
    // Cut on a UTF-8 boundary: "aé" is 3 bytes, "aéé" 5; a 4-byte cut would split the second é.
    EXPECT_EQ(run(s, "[\"a\xC3\xA9\xC3\xA9\"]"), "accept [\"a\xC3\xA9\xE2\x80\xA6\"]");
    // A 4-byte character longer than the limit from the start: cut to nothing.
    config::ExecutionConfig one;
    one.truncate_item_fields = true;
    one.max_field_length = 2;
    SafetyStage t = stage(one);
    EXPECT_EQ(run(t, "\"\xF0\x9F\x98\x80\""), "accept \"\xE2\x80\xA6\"");
    // Without truncate_item_fields, max_field_length alone does nothing.
    config::ExecutionConfig off;
    off.max_field_length = 1;
    SafetyStage u = stage(off);
    EXPECT_EQ(run(u, R"("abc")"), R"(accept "abc")");
}

TEST(SafetyStage, HugeStringTruncated) {
    config::ExecutionConfig c;
    c.truncate_item_fields = true;
    c.max_field_length = 10;
    SafetyStage s = stage(c);
    const std::string item = "{\"s\":\"" + std::string(500'000, 'x') + "\"}";
    EXPECT_EQ(run(s, item), "accept {\"s\":\"xxxxxxxxxx\xE2\x80\xA6\"}");
}

TEST(SafetyStage, DedupIgnoresWhitespaceNotOrder) {
    config::ExecutionConfig c;
    c.drop_duplicates = true;
    SafetyStage s = stage(c);
    EXPECT_EQ(run(s, R"({"a":1,"b":"x"})"), R"(accept {"a":1,"b":"x"})");
    EXPECT_EQ(run(s, R"( { "a" : 1 , "b" : "\u0078" } )"), "drop duplicate");
    EXPECT_EQ(run(s, R"({"b":"x","a":1})"), R"(accept {"b":"x","a":1})");
    EXPECT_EQ(s.counters().duplicate, 1U);
}

TEST(SafetyStage, DedupSetIsBoundedFifo) {
    config::ExecutionConfig c;
    c.drop_duplicates = true;
    SafetyLimits limits;
    limits.dedup_capacity = 4;
    SafetyStage s = stage(c, 1, limits);
    for (int i = 0; i < 4; ++i) {
        EXPECT_TRUE(s.process(std::to_string(i)).accepted);
    }
    EXPECT_FALSE(s.process("0").accepted);  // still remembered
    EXPECT_TRUE(s.process("4").accepted);   // evicts 0, the oldest
    EXPECT_TRUE(s.process("0").accepted);   // forgotten: accepted again (and evicts 1)
    EXPECT_TRUE(s.process("1").accepted);
    EXPECT_FALSE(s.process("4").accepted);
    EXPECT_FALSE(s.process("0").accepted);
    // Far beyond capacity: memory stays bounded and the newest are remembered.
    for (int i = 100; i < 100'000; ++i) {
        EXPECT_TRUE(s.process(std::to_string(i)).accepted);
    }
    for (int i = 99'996; i < 100'000; ++i) {
        EXPECT_FALSE(s.process(std::to_string(i)).accepted) << i;
    }
    EXPECT_TRUE(s.process("99995").accepted);
}

TEST(SafetyStage, DedupLargeCapacityChurn) {
    config::ExecutionConfig c;
    c.drop_duplicates = true;
    SafetyStage s = stage(c);  // 65,536
    for (int i = 0; i < 200'000; ++i) {
        ASSERT_TRUE(s.process(std::to_string(i)).accepted) << i;
    }
    int remembered = 0;
    for (int i = 200'000 - 65'536; i < 200'000; ++i) {
        remembered += s.process(std::to_string(i)).accepted ? 0 : 1;
    }
    EXPECT_EQ(remembered, 65'536);
}

TEST(SafetyStage, SamplingIsDeterministic) {
    config::ExecutionConfig c;
    c.sampling_rate = 0.25;
    auto decisions = [&](std::uint64_t seed) {
        SafetyStage s = stage(c, seed);
        std::string out;
        for (int i = 0; i < 10'000; ++i) {
            out.push_back(s.process("1").accepted ? '1' : '0');
        }
        EXPECT_EQ(s.counters().accepted + s.counters().sampled_out, 10'000U);
        return out;
    };
    const std::string a = decisions(42);
    EXPECT_EQ(a, decisions(42));
    EXPECT_NE(a, decisions(43));
    const auto kept = std::count(a.begin(), a.end(), '1');
    EXPECT_GT(kept, 2'250);
    EXPECT_LT(kept, 2'750);
    SafetyStage all = stage({}, 7);
    for (int i = 0; i < 1000; ++i) {
        EXPECT_TRUE(all.process("{}").accepted);
    }
}

TEST(SafetyStage, ConfigErrors) {
    config::ExecutionConfig c;
    c.redacted_paths = {"ok", "a.b", "a..b"};
    Result<SafetyStage> s = SafetyStage::create(c, 1, "operations[0].execution");
    ASSERT_FALSE(s.ok());
    EXPECT_EQ(s.error().message,
              "operations[0].execution.redacted_paths[2]: \"a..b\": empty member name (two dots "
              "in a row, or a trailing dot) at byte 2");
    config::ExecutionConfig rate;
    rate.sampling_rate = 0;
    EXPECT_EQ(SafetyStage::create(rate, 1, "operations[0].execution").error().message,
              "operations[0].execution.sampling_rate: must be > 0 and <= 1, got 0");
    rate.sampling_rate = 1.5;
    EXPECT_EQ(SafetyStage::create(rate, 1, "x").error().message,
              "x.sampling_rate: must be > 0 and <= 1, got 1.5");
    config::ExecutionConfig len;
    len.truncate_item_fields = true;
    len.max_field_length = 0;
    EXPECT_EQ(SafetyStage::create(len, 1, "x").error().message,
              "x.max_field_length: must be a positive integer, got 0");
}

TEST(SafetyStage, InPlace) {
    config::ExecutionConfig c;
    c.redacted_paths = {"secret"};
    c.truncate_item_fields = true;
    c.max_field_length = 3;
    c.drop_duplicates = true;
    SafetyStage s = stage(c);
    json::Document doc;
    ASSERT_TRUE(json::parseJson(R"({"secret": 1, "s": "abcdef"})", doc, "item").ok());
    EXPECT_EQ(s.processInPlace(doc, doc.GetAllocator()), std::nullopt);
    EXPECT_EQ(json::toJsonText(doc), "{\"secret\":\"[redacted]\",\"s\":\"abc\xE2\x80\xA6\"}");
    json::Document again;
    ASSERT_TRUE(json::parseJson(R"({"secret": 2, "s": "abcxyz"})", again, "item").ok());
    EXPECT_EQ(s.processInPlace(again, again.GetAllocator()), DropReason::duplicate);
    // The text path hashes the same way: the same content is a duplicate there too.
    EXPECT_EQ(run(s, R"({"secret": 3, "s": "abcq"})"), "drop duplicate");
    EXPECT_EQ(s.counters().accepted, 1U);
    EXPECT_EQ(s.counters().duplicate, 2U);
}

TEST(SafetyStage, DropReasonNames) {
    EXPECT_EQ(toString(DropReason::malformed_json), "malformed_json");
    EXPECT_EQ(toString(DropReason::duplicate), "duplicate");
    EXPECT_EQ(toString(DropReason::sampled_out), "sampled_out");
    EXPECT_EQ(toString(DropReason::too_large), "too_large");
    SafetyCounters c;
    c.too_large = 3;
    EXPECT_EQ(c.of(DropReason::too_large), 3U);
}

TEST(SafetyStage, Throughput) {
    // A smoke check of the hot path (the benchmark proper lives with the runtime): 200-byte
    // items with dedup on must go well beyond 1,000,000 items/s in an optimised build.
    config::ExecutionConfig c;
    c.drop_duplicates = true;
    SafetyStage s = stage(c);
    std::vector<std::string> items;
    for (int i = 0; i < 1000; ++i) {
        items.push_back(R"({"id":)" + std::to_string(i) +
                        R"(,"symbol":"ACME","price":123.45,"volume":1000,"side":"buy",)"
                        R"("venue":"XNAS","ts":"2025-01-01T00:00:00.000Z","tags":["a","b","c"],)"
                        R"("note":"lorem ipsum dolor sit amet consectetur adipiscing elit"})");
    }
    // CPU time of this thread: the machine running the tests may be busy.
    auto cpuSeconds = [] {
        timespec ts{};
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
        return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
    };
    const double start = cpuSeconds();
    std::size_t accepted = 0;
    for (int round = 0; round < 200; ++round) {
        for (const std::string& item : items) {
            accepted += s.process(item).accepted ? 1 : 0;
        }
    }
    const double seconds = cpuSeconds() - start;
    EXPECT_EQ(accepted, 1000U);
    if (!crank::testing::kSanitized) {
        EXPECT_GT(200'000 / seconds, 200'000);  // a loose floor: catches a pathological slowdown
    }
    RecordProperty("items_per_second", static_cast<int>(200'000 / seconds));
    std::printf("safety stage: %.0f items/s (%zu-byte items, dedup on)\n", 200'000 / seconds,
                items[0].size());
}

}  // namespace
}  // namespace crank::runtime
