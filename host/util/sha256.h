#pragma once

#include <string>
#include <string_view>

namespace crank {

/// Lower-case hex SHA-256 of `data` (64 characters): the form in which agents' API keys are kept.
std::string sha256Hex(std::string_view data);

}  // namespace crank
