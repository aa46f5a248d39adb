#include "runtime/stop_reason.h"

#include <array>
#include <utility>

namespace crank::runtime {
namespace {

constexpr std::array<std::pair<StopReason, std::string_view>, 7> kNames{{
    {StopReason::duration, "duration"},
    {StopReason::max_items, "max_items"},
    {StopReason::max_bytes, "max_bytes"},
    {StopReason::upstream_end, "upstream_end"},
    {StopReason::upstream_timeout, "upstream_timeout"},
    {StopReason::upstream_error, "upstream_error"},
    {StopReason::cancelled, "cancelled"},
}};

}  // namespace

std::string_view toString(StopReason reason) {
    for (const auto& [value, name] : kNames) {
        if (value == reason) {
            return name;
        }
    }
    return "upstream_error";
}

std::optional<StopReason> parseStopReason(std::string_view text) {
    for (const auto& [value, name] : kNames) {
        if (name == text) {
            return value;
        }
    }
    return std::nullopt;
}

}  // namespace crank::runtime
