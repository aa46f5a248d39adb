#include "mcp/endpoint_observer.h"

#include "mcp/message_outcome.h"

namespace crank::mcp {

void EndpointObserver::answered(std::string_view method, const MethodAnswer& answer,
                                std::chrono::steady_clock::time_point since) const {
    counted(methodLabel(method), answer.outcome(), since);
}

void EndpointObserver::counted(std::string_view method, std::string_view outcome,
                               std::chrono::steady_clock::time_point since) const {
    if (message) {
        message(method, outcome, std::chrono::steady_clock::now() - since);
    }
}

}  // namespace crank::mcp
