#include "json/json_number.h"

#include <string>

#include <gtest/gtest.h>

namespace crank::json {
namespace {

std::string canon(std::string_view text) {
    return canonicalNumber(text).value_or("<refused>");
}

TEST(CanonicalNumber, SpellingsOfOneNumberAgree) {
    for (const char* seven : {"7", "7.0", "7e0", "7E+0", "70e-1", "0.7e1", "7.000000", "700E-2"}) {
        EXPECT_EQ(canon(seven), "7") << seven;
    }
    EXPECT_EQ(canon("-7.50"), "-75e-1");
    EXPECT_EQ(canon("1500"), "15e2");
    EXPECT_EQ(canon("0.001"), "1e-3");
}

TEST(CanonicalNumber, ZeroOfAnySpellingIsZero) {
    for (const char* zero : {"0", "-0", "0.000", "0e99", "-0.0E-5"}) {
        EXPECT_EQ(canon(zero), "0") << zero;
    }
}

TEST(CanonicalNumber, NoDigitIsLostBeyondSixtyFourBits) {
    EXPECT_EQ(canon("18446744073709551616"), "18446744073709551616");
    EXPECT_EQ(canon("18446744073709551617"), "18446744073709551617");
    EXPECT_NE(canon("1.0"), canon("1.00000000000000001"));
    EXPECT_EQ(canon("184467440737095516170e-1"), "18446744073709551617");
}

TEST(CanonicalNumber, TextThatIsNotAJsonNumberIsRefused) {
    for (const char* bad : {"", "-", "+7", "07", "7.", ".5", "7e", "7e+", "0x10", "7 ", " 7", "NaN",
                            "Infinity", "1_000", "7e0.5", "--7", "1e1000000000000000000"}) {
        EXPECT_FALSE(canonicalNumber(bad).has_value()) << bad;
    }
}

TEST(CanonicalNumber, HugeTextAndExponentsAreBounded) {
    EXPECT_FALSE(canonicalNumber(std::string(kMaxNumberTextBytes + 1, '9')).has_value());
    EXPECT_EQ(canon(std::string(kMaxNumberTextBytes, '9')).size(), kMaxNumberTextBytes);
    EXPECT_EQ(canon("1e1000000000000000"), "1e1000000000000000");
    EXPECT_FALSE(canonicalNumber("1e1000000000000001").has_value());
    EXPECT_EQ(canon("-1e-1000000000000000"), "-1e-1000000000000000");
}

}  // namespace
}  // namespace crank::json
