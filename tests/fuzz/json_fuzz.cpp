// Fuzz target json: the host's JSON building blocks (host/json): strict parsing (json_parse.h),
// input mapping templates (json_template.h), paths (json_path.h, crank/sdk/path.hpp), compact
// text and descriptions (json_text.h), hashing (json_hash.h), UTF-8 validation.
//
// Input: three parts separated by a line "%%" (see fuzz_support.h):
//   1. an operation's protocol config with {{ }} templates (JSON text);
//   2. a tool input (JSON text);
//   3. a path, as written in a config (`items.*.id`).
// Checks:
//  - a config that compiles renders, over any input that parses, to strict JSON, the same each
//    time, and without templates the same over any input; a tight max_bytes is never exceeded;
//  - parsed text written back (toJsonText) is strict JSON that reads as the same value (doubles
//    within a few ulps) with the same hash;
//  - isValidUtf8 agrees with a plain byte-by-byte reference;
//  - a path that compiles finds, in document order, what forEach visits first; an edit through
//    forEachMutable leaves a document that still writes strict JSON.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include <rapidjson/document.h>

#include "fuzz_support.h"
#include "json/json_hash.h"
#include "json/json_parse.h"
#include "json/json_path.h"
#include "json/json_template.h"
#include "json/json_text.h"

namespace {

using crank::fuzz::check;
using crank::fuzz::isStrictJson;
namespace json = crank::json;

/// Whether two doubles are at most a few representable values apart.
bool near(double a, double b) {
    double x = a;
    for (int step = 0; step < 4 && x != b; ++step) {
        x = std::nextafter(x, b);
    }
    return x == b;
}

/// Whether `a` and `b` hold the same JSON value. RapidJSON 1.1.0 reads numbers with more digits
/// than a double holds up to an ulp or so off (its exact mode, kParseFullPrecisionFlag, is
/// worse: "184467440737095516159" reads as 1.7e-18, see regressions/json), so text written
/// back may read as a neighbouring double: doubles compare within a few ulps. Recursion is
/// bounded by parseJson's depth limit.
bool sameValue(const rapidjson::Value& a, const rapidjson::Value& b) {
    if (a.IsDouble() || b.IsDouble()) {
        return a.IsNumber() && b.IsNumber() && near(a.GetDouble(), b.GetDouble());
    }
    if (a.GetType() != b.GetType()) {
        return false;
    }
    if (a.IsObject()) {
        if (a.MemberCount() != b.MemberCount()) {
            return false;
        }
        for (auto x = a.MemberBegin(), y = b.MemberBegin(); x != a.MemberEnd(); ++x, ++y) {
            if (x->name != y->name || !sameValue(x->value, y->value)) {
                return false;
            }
        }
        return true;
    }
    if (a.IsArray()) {
        if (a.Size() != b.Size()) {
            return false;
        }
        for (rapidjson::SizeType i = 0; i < a.Size(); ++i) {
            if (!sameValue(a[i], b[i])) {
                return false;
            }
        }
        return true;
    }
    return a == b;
}

void checkTemplate(std::string_view config, std::string_view input) {
    const auto compiled = json::compileTemplate(config, "config");
    if (!compiled) {
        check(!compiled.error().message.empty(), "a template error without a message");
        return;
    }
    for (const std::size_t max_bytes : {std::size_t{65'536}, std::size_t{24}}) {
        const auto rendered = json::render(*compiled, input, max_bytes);
        if (!rendered) {
            continue;  // malformed input, or larger than max_bytes
        }
        check(rendered->size() <= max_bytes, "a rendered config over max_bytes", *rendered);
        check(isStrictJson(*rendered), "a rendered config that is not JSON", *rendered);
        check(json::render(*compiled, input, max_bytes).value() == *rendered,
              "the same config renders differently over the same input", *rendered);
        if (!compiled->hasTemplates()) {
            // Without templates the input does not matter.
            const auto alone = json::render(*compiled, std::string_view("{}"), max_bytes);
            check(alone.ok() && *alone == *rendered, "a config without templates read the input",
                  *rendered);
        }
    }
}

void checkDocument(std::string_view input, std::string_view path_text) {
    rapidjson::Document doc;
    if (!json::parseJson(input, doc, "input").ok()) {
        check(doc.IsNull(), "a failed parse left a value");
        return;
    }
    const std::string text = json::toJsonText(doc);
    check(isStrictJson(text), "parsed JSON written back is not JSON", text);
    rapidjson::Document again;
    check(json::parseJson(text, again, "again").ok(), "written JSON does not parse again", text);
    check(sameValue(again, doc), "written JSON reads as another value", text);
    if (json::toJsonText(again) == text) {
        check(json::hashValue(again) == json::hashValue(doc), "the same value hashes differently",
              text);
    }
    check(!json::describeValue(doc).empty() && !json::describeType(doc).empty(),
          "an empty description");
    std::string plain;
    json::appendPlainText(plain, doc);

    const auto path = json::compilePath(path_text, "path");
    if (!path) {
        check(!path.error().message.empty(), "a path error without a message");
        return;
    }
    const rapidjson::Value* first = json::find(doc, *path);
    const rapidjson::Value* visited_first = nullptr;
    const std::size_t count = json::forEach(doc, *path, [&](const rapidjson::Value& v) {
        if (visited_first == nullptr) {
            visited_first = &v;
        }
    });
    check(first == visited_first, "find() and forEach() disagree on the first match");
    check((count == 0) == (first == nullptr), "find() and forEach() disagree on a match");
    check(json::findMutable(doc, *path) == first, "findMutable() and find() disagree");
    const std::size_t edited = json::forEachMutable(
        doc, *path, [&](rapidjson::Value& v) { v.SetString("edited", doc.GetAllocator()); });
    check(edited == count, "forEachMutable() and forEach() disagree on the count");
    check(isStrictJson(json::toJsonText(doc)), "an edited document is not JSON");
}

}  // namespace

// NOLINTNEXTLINE(readability-identifier-naming): libFuzzer calls it by this name
extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view whole = crank::fuzz::asText(data, size);
    check(json::isValidUtf8(whole) == crank::fuzz::isUtf8(whole), "isValidUtf8 disagrees");
    const auto parts = crank::fuzz::splitParts(whole, 3);
    checkTemplate(parts[0], parts[1]);
    checkDocument(parts[1], parts[2]);
    // Each part also as a path, and as a whole template config.
    (void)json::compilePath(parts[0], "path");
    if (parts[1].size() < 4096) {
        checkTemplate(parts[1], parts[0]);
    }
    return 0;
}
