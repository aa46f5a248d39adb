#pragma once

// Multi-round-trip requests of the 2026-07-28 era (SEP-2322), as crank's client follows them: a
// tools/call, prompts/get or resources/read may be answered with `resultType: "input_required"`,
// `inputRequests` (key -> {method, params}: elicitation, sampling, roots) and an opaque
// `requestState`; the client sends the same request again, as a new request with a new id, with
// `inputResponses` (key -> the answer) and the `requestState` unchanged, and only then gets the
// result. A result without `resultType` is complete.

#include <optional>
#include <string>
#include <string_view>

namespace crank::mcpc {

/// Rounds one request may take at most; the last input_required result is returned as it is.
inline constexpr int kMaxInputRounds = 10;

/// What an input_required result asks for.
struct InputRequired {
    std::string requests_json = "{}";  ///< the `inputRequests` object's text ("{}" when none)
    std::optional<std::string> state;  ///< `requestState`, when the result has one
};

/// The input_required part of `result_json`, or nullopt for any other result (complete, a task,
/// one without resultType, or not an object).
std::optional<InputRequired> inputRequired(std::string_view result_json);

/// `params_json` (an object's text, or empty) for the next round: `inputResponses` set to
/// `responses_json` and `requestState` to `state` (left out when nullopt), replacing earlier
/// ones.
std::string nextRoundParams(std::string_view params_json, std::string_view responses_json,
                            const std::optional<std::string>& state);

}  // namespace crank::mcpc
