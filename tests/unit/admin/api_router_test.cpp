// ApiRouter: the admin API's route table. A path goes to the first pattern added that matches it;
// its methods run their handlers, any other method is answered 405 with the pattern's methods.
#include "admin/api_router.h"

#include <optional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace crank::admin {
namespace {

/// A handler that only tells which route it is.
struct Named {
    std::string name;
    std::optional<ApiError> operator()(ApiCall& /*call*/) const { return std::nullopt; }
};

class ApiRouterTest : public ::testing::Test {
protected:
    void SetUp() override {
        add("POST", {"operations", "validate"});
        add("GET", {"operations"});
        add("POST", {"operations"});
        add("GET", {"operations", "{}"});
        add("PUT", {"operations", "{}"});
        add("DELETE", {"operations", "{}"});
        add("GET", {"operations", "{}", "versions", "{}"});
    }

    void add(const std::string& method, const std::vector<std::string>& pattern) {
        std::string name = method;
        for (const std::string& segment : pattern) {
            name += " /" + segment;
        }
        router.add(method, pattern, Named{name});
    }

    /// The name of the route ("METHOD /segment /{}"), "405 ALLOWED" or "404".
    std::string route(const std::string& method, const std::vector<std::string>& path) const {
        const ApiRouter::Match found = router.match(method, path);
        if (found.handler == nullptr) {
            return found.allowed.empty() ? "404" : "405 " + found.allowed;
        }
        const Named* named = found.handler->target<Named>();
        return named != nullptr ? named->name : "?";
    }

    ApiRouter router;
};

TEST_F(ApiRouterTest, AMethodOfTheMatchingPatternIsRouted) {
    EXPECT_EQ(route("GET", {"operations"}), "GET /operations");
    EXPECT_EQ(route("POST", {"operations"}), "POST /operations");
    EXPECT_EQ(route("PUT", {"operations", "op_1"}), "PUT /operations /{}");
    EXPECT_EQ(route("DELETE", {"operations", "op_1"}), "DELETE /operations /{}");
    EXPECT_EQ(route("GET", {"operations", "op_1", "versions", "3"}),
              "GET /operations /{} /versions /{}");
}

TEST_F(ApiRouterTest, AnotherMethodIs405ListingThePatternsMethodsInOrder) {
    EXPECT_EQ(route("PATCH", {"operations", "op_1"}), "405 GET,PUT,DELETE");
    EXPECT_EQ(route("DELETE", {"operations"}), "405 GET,POST");
    EXPECT_EQ(route("HEAD", {"operations", "op_1", "versions", "3"}), "405 GET");
}

TEST_F(ApiRouterTest, TheFirstPatternAddedWinsWhereTwoMatch) {
    // /operations/validate is its own resource, not the operation "validate".
    EXPECT_EQ(route("POST", {"operations", "validate"}), "POST /operations /validate");
    EXPECT_EQ(route("GET", {"operations", "validate"}), "405 POST");
}

TEST_F(ApiRouterTest, APathNoPatternMatchesIs404) {
    EXPECT_EQ(route("GET", {}), "404");
    EXPECT_EQ(route("GET", {"operation"}), "404");
    EXPECT_EQ(route("GET", {"operations", "op_1", "versions"}), "404");
    EXPECT_EQ(route("GET", {"operations", "op_1", "versions", "3", "x"}), "404");
}

TEST_F(ApiRouterTest, AnIdSegmentMatchesAnyOneSegmentEvenEmpty) {
    EXPECT_EQ(route("GET", {"operations", ""}), "GET /operations /{}");
    EXPECT_EQ(route("GET", {"operations", "{}"}), "GET /operations /{}");
}

}  // namespace
}  // namespace crank::admin
