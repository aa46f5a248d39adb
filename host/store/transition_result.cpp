#include "store/transition_result.h"

namespace crank::store {

std::string_view transitionOutcomeName(TransitionOutcome outcome) {
    switch (outcome) {
        case TransitionOutcome::applied:
            return "applied";
        case TransitionOutcome::status_mismatch:
            return "status_mismatch";
        case TransitionOutcome::not_found:
            return "not_found";
    }
    return "not_found";
}

}  // namespace crank::store
