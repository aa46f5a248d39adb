#include "config/key_policy.h"

namespace crank::config {

std::optional<std::string> weakKeyReason(std::string_view key) {
    if (key.size() < kMinKeyLength) {
        return "is " + std::to_string(key.size()) + " characters long; a key needs at least " +
               std::to_string(kMinKeyLength) + " (e.g. openssl rand -hex 32)";
    }
    return std::nullopt;
}

}  // namespace crank::config
