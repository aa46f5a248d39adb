// UpstreamSlots and the registry that applies them: the calls in progress to one upstream are
// bounded, other upstreams keep theirs, and a refusal names the upstream and the limit.
#include "mcp/upstream_slots.h"

#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "mcp/tool_registry.h"

namespace crank::mcp {
namespace {

TEST(UpstreamSlots, OneUpstreamIsBoundedAndTheOthersKeepTheirSlots) {
    auto slots = std::make_shared<UpstreamSlots>(2);
    std::string refusal;
    auto a1 = slots->hold("http://slow:80", refusal);
    auto a2 = slots->hold("http://slow:80", refusal);
    ASSERT_TRUE(a1 && a2);
    EXPECT_EQ(slots->hold("http://slow:80", refusal), nullptr);
    EXPECT_EQ(refusal,
              "upstream http://slow:80 already has 2 calls in progress from this node, its limit "
              "(server.max_calls_per_upstream: 2); retry when one of them has ended");
    auto b = slots->hold("http://quick:80", refusal);
    EXPECT_NE(b, nullptr);
    EXPECT_EQ(slots->held("http://slow:80"), 2);
    a1.reset();
    EXPECT_EQ(slots->held("http://slow:80"), 1);
    EXPECT_NE(slots->hold("http://slow:80", refusal), nullptr);  // taken and given back at once
    a2.reset();
    b.reset();
    EXPECT_EQ(slots->held("http://slow:80"), 0);
    EXPECT_EQ(slots->held("http://quick:80"), 0);
}

TEST(UpstreamSlots, ABoundBelowOneIsOne) {
    auto slots = std::make_shared<UpstreamSlots>(0);
    EXPECT_EQ(slots->perUpstream(), 1);
}

class NoopCall final : public ToolCall {
public:
    bool cancelled() const override { return false; }
    void progress(double, std::optional<double>, std::string_view) override {}
    void log(LogLevel, std::string_view, std::string_view) override {}
};

TEST(UpstreamSlots, TheRegistryRefusesACallBeyondItsUpstreamsBoundAndRunsTheOthers) {
    FunctionToolRegistry tools;
    auto slots = std::make_shared<UpstreamSlots>(1);
    tools.limitUpstreams(slots);
    std::vector<std::string> outcomes;
    tools.observeCalls(
        [&](std::string_view, std::string_view outcome, auto) { outcomes.emplace_back(outcome); });
    int ran = 0;
    // `outer` calls `inner` of the same upstream while it holds that upstream's one slot.
    ToolDefinition inner;
    inner.name = "inner";
    inner.upstream = "grpc://backend:50051";
    tools.add(inner, [&](std::string_view, ToolCall&) -> Result<ToolResult> {
        ++ran;
        return ToolResult{};
    });
    ToolDefinition local;
    local.name = "local";  // no upstream: never bounded
    tools.add(local, [&](std::string_view, ToolCall&) -> Result<ToolResult> {
        ++ran;
        return ToolResult{};
    });
    Result<ToolResult> nested = Error{ErrorCode::internal, "not run"};
    Result<ToolResult> unbounded = Error{ErrorCode::internal, "not run"};
    ToolDefinition outer = inner;
    outer.name = "outer";
    tools.add(outer, [&](std::string_view, ToolCall& call) -> Result<ToolResult> {
        ++ran;
        nested = tools.call("inner", "{}", call);
        unbounded = tools.call("local", "{}", call);
        return ToolResult{};
    });
    NoopCall call;
    ASSERT_TRUE(tools.call("outer", "{}", call).ok());
    ASSERT_TRUE(nested.ok());
    EXPECT_TRUE(nested->is_error);
    EXPECT_NE(nested->content_json.find("upstream grpc://backend:50051 already has 1 calls"),
              std::string::npos)
        << nested->content_json;
    ASSERT_TRUE(unbounded.ok());
    EXPECT_FALSE(unbounded->is_error);
    EXPECT_EQ(ran, 2);  // outer and local; inner was refused before it ran
    EXPECT_EQ(outcomes, (std::vector<std::string>{"refused", "ok", "ok"}));
    EXPECT_EQ(slots->held("grpc://backend:50051"), 0);
    ASSERT_TRUE(tools.call("inner", "{}", call).ok());  // the slot came back
    EXPECT_EQ(ran, 3);
}

}  // namespace
}  // namespace crank::mcp
