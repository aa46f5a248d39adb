#pragma once

#include <array>
#include <optional>
#include <string_view>

namespace crank::store {

/// Status of a stream session, stored as its name ("active", ...).
///
/// Legal transitions (enforced by the runtime; the store only compares-and-sets):
///   active -> paused | closed | expired | failed
///   paused -> active | closed | expired | failed
///   closed, expired, failed are terminal.
enum class SessionStatus {
    active,   ///< reading from upstream, clients poll it
    paused,   ///< upstream reading suspended (e.g. buffer full until the next poll); resumes
    closed,   ///< stopped by the client or an operator
    expired,  ///< idle timeout or maximum lifetime reached
    failed,   ///< upstream or internal error ended it
};

/// Every SessionStatus, in declaration order.
inline constexpr std::array<SessionStatus, 5> kSessionStatuses = {
    SessionStatus::active, SessionStatus::paused, SessionStatus::closed, SessionStatus::expired,
    SessionStatus::failed};

/// "active", "paused", "closed", "expired", "failed".
std::string_view sessionStatusName(SessionStatus status);
/// The status named `name` (exact, lower case); nullopt for anything else.
std::optional<SessionStatus> parseSessionStatus(std::string_view name);
/// True for closed, expired and failed: no transition leaves these.
bool isTerminal(SessionStatus status);

}  // namespace crank::store
