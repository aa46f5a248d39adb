#pragma once

#include <algorithm>
#include <ostream>
#include <string>
#include <string_view>

#include <fmt/core.h>

namespace crank::config {

/// Where a secret's value comes from. Secrets are never written inline in the config file.
struct SecretRef {
    enum class Kind { env, file, sha256 };
    Kind kind = Kind::env;
    std::string name;  ///< the environment variable, the file path, or the hex digest
};

/// A resolved secret value. It cannot be printed: streaming or formatting it yields "[redacted]",
/// and the value is only reachable through reveal(), which is easy to grep for in review.
class Secret {
public:
    Secret() = default;
    Secret(SecretRef ref, std::string value) : ref_(std::move(ref)), value_(std::move(value)) {}

    /// The secret itself. Call it only where the value is handed to its consumer (a header, a
    /// comparison); never to log, audit or return it.
    const std::string& reveal() const { return value_; }
    /// Where the value came from ("env:NAME", "file:PATH" or "sha256"), safe to show.
    std::string source() const;
    const SecretRef& ref() const { return ref_; }
    bool empty() const { return value_.empty(); }

private:
    SecretRef ref_;
    std::string value_;
};

inline std::ostream& operator<<(std::ostream& out, const Secret&) {
    return out << "[redacted]";
}

}  // namespace crank::config

/// Self-contained rather than derived from formatter<string_view>, whose format() is only defined
/// in <fmt/format.h>: with <fmt/core.h> alone that would not link. Format specs are ignored.
template <>
struct fmt::formatter<crank::config::Secret> {
    constexpr auto parse(fmt::format_parse_context& ctx) {
        auto it = ctx.begin();
        while (it != ctx.end() && *it != '}') {
            ++it;
        }
        return it;
    }
    template <typename Context>
    auto format(const crank::config::Secret&, Context& ctx) const {
        constexpr std::string_view kRedacted = "[redacted]";
        return std::copy(kRedacted.begin(), kRedacted.end(), ctx.out());
    }
};
