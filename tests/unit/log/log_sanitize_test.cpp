// log::sanitize: a message from outside bytes stays on its one line and within its bound.
#include <string>

#include <gtest/gtest.h>

#include "log/log.h"

namespace crank::log {
namespace {

TEST(LogSanitize, ControlCharactersAreWrittenAsEscapesSoNoMessageCanForgeALine) {
    const std::string forged =
        "client x\n2026-12-01T00:00:00.000+0000 error admin token accepted\r\x1b[31mred\x7f\t!";
    const std::string line = sanitize(forged, 8192, true);
    EXPECT_EQ(line.find('\n'), std::string::npos);
    EXPECT_EQ(line.find('\r'), std::string::npos);
    EXPECT_EQ(line.find('\x1b'), std::string::npos);
    EXPECT_EQ(line,
              "client x\\n2026-12-01T00:00:00.000+0000 error admin token accepted\\r\\x1b[31mred"
              "\\x7f\\t!");
}

TEST(LogSanitize, TheJsonFormatLeavesControlsToItsOwnEscapes) {
    EXPECT_EQ(sanitize("a\nb", 100, false), "a\nb");
}

TEST(LogSanitize, ALongMessageIsCutAtAUtf8BoundaryAndSaysHowMuchWasCut) {
    std::string message(100, 'a');
    message += "\xc3\xa9\xc3\xa9";  // é é, two bytes each
    message += std::string(1000, 'b');
    const std::string line = sanitize(message, 101, true);  // 101 falls inside the first é
    EXPECT_EQ(line.substr(0, 100), std::string(100, 'a'));
    EXPECT_EQ(line.substr(100), " [1004 bytes cut]");
    EXPECT_EQ(sanitize(message, 102, true).substr(100, 2), "\xc3\xa9");
    const std::string huge(10 * 1024 * 1024, 'x');
    EXPECT_LT(sanitize(huge, 8192, true).size(), 8192u + 40u);
}

TEST(LogSanitize, PlainShortMessagesAreUnchanged) {
    EXPECT_EQ(sanitize("mcp: session 1234 initialized", 8192, true),
              "mcp: session 1234 initialized");
}

}  // namespace
}  // namespace crank::log
