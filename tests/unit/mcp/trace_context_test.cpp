// W3C trace context as crankd passes it on: what is valid, what is dropped, and how far a
// hostile tracestate is cut.

#include "mcp/wire/trace_context.h"

#include <algorithm>
#include <string>

#include <gtest/gtest.h>

namespace crank::mcp {
namespace {

constexpr const char* kParent = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";

TEST(TraceContext, AValidParentAndStatePassAsTheyCame) {
    const TraceContext t = checkedTraceContext(kParent, "congo=t61rcWkgMzE,rojo=00f067aa0ba902b7");
    EXPECT_EQ(t.traceparent, kParent);
    EXPECT_EQ(t.tracestate, "congo=t61rcWkgMzE,rojo=00f067aa0ba902b7");
    EXPECT_FALSE(t.empty());
}

TEST(TraceContext, AMalformedParentIsDroppedWithItsState) {
    for (const std::string& bad : {
             std::string(),
             std::string("00"),
             std::string("00-0AF7651916CD43DD8448EB211C80319C-b7ad6b7169203331-01"),  // upper case
             std::string("00-00000000000000000000000000000000-b7ad6b7169203331-01"),  // zero trace
             std::string("00-0af7651916cd43dd8448eb211c80319c-0000000000000000-01"),  // zero parent
             std::string("ff-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"),  // version ff
             std::string("00_0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"),  // separator
             std::string("00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-0g"),  // flags
             std::string(kParent) + "-00",  // version 00 is exactly 55 characters
             std::string("01-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01x"),
             std::string(100'000, 'a'),
             std::string("00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01\0", 56),
         }) {
        SCOPED_TRACE(bad.substr(0, 80));
        const TraceContext t = checkedTraceContext(bad, "a=1");
        EXPECT_TRUE(t.empty());
        EXPECT_EQ(t.tracestate, "");
    }
}

TEST(TraceContext, ALaterVersionPassesByItsKnownFields) {
    const std::string later = "cc-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";
    EXPECT_EQ(checkedTraceContext(later, "").traceparent, later);
    EXPECT_EQ(checkedTraceContext(later + "-what-comes-next", "").traceparent, later);
    EXPECT_EQ(checkedTraceContext("  " + std::string(kParent) + "\t", "").traceparent, kParent);
}

TEST(TraceContext, TheStateKeepsWellFormedMembersOnly) {
    EXPECT_EQ(checkedTraceContext(kParent, " a=1 ,, b=2,\tc=3 ").tracestate, "a=1,b=2,c=3");
    EXPECT_EQ(checkedTraceContext(kParent, "a=1,no-equals,b=\x01x,c=3").tracestate, "a=1,c=3");
    EXPECT_EQ(checkedTraceContext(kParent, "").tracestate, "");
    EXPECT_EQ(checkedTraceContext(kParent, ",,,").tracestate, "");
}

TEST(TraceContext, AHugeStateIsCutByWholeMembersFromTheEnd) {
    std::string state;
    for (int i = 0; i < 10'000; ++i) {
        state +=
            (i == 0 ? "" : ",") + std::string("k") + std::to_string(i) + "=" + std::string(20, 'v');
    }
    const std::string kept = checkedTraceContext(kParent, state).tracestate;
    EXPECT_LE(kept.size(), kMaxTracestateBytes);
    EXPECT_EQ(kept.rfind("k0=", 0), 0U);
    EXPECT_NE(kept.back(), ',');
    // At most 32 members, even short ones.
    std::string many;
    for (int i = 0; i < 100; ++i) {
        many += (i == 0 ? "" : ",") + std::string("k") + std::to_string(i) + "=1";
    }
    const std::string cut = checkedTraceContext(kParent, many).tracestate;
    EXPECT_EQ(std::count(cut.begin(), cut.end(), ',') + 1, 32);
    // One member longer than the bound leaves nothing.
    EXPECT_EQ(checkedTraceContext(kParent, "k=" + std::string(600, 'v')).tracestate, "");
}

TEST(TraceContext, MetaWinsOverHeadersWhenItHasAParent) {
    const HeaderTrace headers{"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00", "h=1"};
    const TraceContext meta = requestTraceContext(kParent, "m=1", headers);
    EXPECT_EQ(meta.traceparent, kParent);
    EXPECT_EQ(meta.tracestate, "m=1");
    const TraceContext fallback = requestTraceContext("", "m=1", headers);
    EXPECT_EQ(fallback.traceparent, headers.traceparent);
    EXPECT_EQ(fallback.tracestate, "h=1");
    // A bad one in _meta is not replaced by the headers': the client said what it meant.
    EXPECT_TRUE(requestTraceContext("bad", "", headers).empty());
}

TEST(TraceContext, ForwardedParamsCarryOnlyTheCheckedContext) {
    const TraceContext checked{kParent, "a=1"};
    // Replaced: whatever the params' _meta said.
    const std::string replaced = withTraceContext(
        R"({"uri":"x","_meta":{"traceparent":"00-bad","tracestate":"evil","k":1}})", checked);
    EXPECT_EQ(replaced, std::string(R"({"uri":"x","_meta":{"k":1,"traceparent":")") + kParent +
                            R"(","tracestate":"a=1"}})");
    // Dropped when the client's was not valid (the checked context is empty).
    EXPECT_EQ(withTraceContext(R"({"_meta":{"traceparent":"00-bad"}})", {}), R"({"_meta":{}})");
    // Added where there was no _meta, or no params at all.
    EXPECT_EQ(withTraceContext("", TraceContext{kParent, ""}),
              std::string(R"({"_meta":{"traceparent":")") + kParent + R"("}})");
    // Untouched: nothing to say and nothing said, or not an object.
    EXPECT_EQ(withTraceContext(R"({"name":"t"})", {}), R"({"name":"t"})");
    EXPECT_EQ(withTraceContext("[1]", checked), "[1]");
    EXPECT_EQ(withTraceContext(R"({"_meta":[],"traceparent":1})", checked),
              R"({"_meta":[],"traceparent":1})");
}

}  // namespace
}  // namespace crank::mcp
