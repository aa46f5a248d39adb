#include "mcp/wire/method_registry.h"

#include <algorithm>
#include <array>

namespace crank::mcp {
namespace {

using C = MethodCache;
using H = MethodHandler;

// name, handler, legacy, modern, cache, name_member, may_ask, from_memory
constexpr std::array kMethods = {
    MethodInfo{"initialize", H::lifecycle, true, false, C::none, "", false, false},
    MethodInfo{"ping", H::lifecycle, true, false, C::none, "", false, false},
    MethodInfo{"logging/setLevel", H::lifecycle, true, false, C::none, "", false, false},
    MethodInfo{"server/discover", H::discover, false, true, C::list, "", false, false},
    MethodInfo{"subscriptions/listen", H::listen, false, true, C::none, "", false, false},
    MethodInfo{"tools/list", H::tools_list, true, true, C::list, "", false, false},
    MethodInfo{"tools/call", H::tools_call, true, true, C::none, "name", true, false},
    MethodInfo{"tasks/get", H::tasks, true, true, C::none, "taskId", false, false},
    MethodInfo{"tasks/list", H::tasks, true, false, C::none, "", false, false},
    MethodInfo{"tasks/cancel", H::tasks, true, true, C::none, "taskId", false, false},
    MethodInfo{"tasks/result", H::tasks, true, false, C::none, "", false, false},
    MethodInfo{"tasks/update", H::tasks, false, true, C::none, "taskId", false, false},
    MethodInfo{"resources/list", H::catalog, true, true, C::list, "", false, true},
    MethodInfo{"resources/read", H::catalog, true, true, C::content, "uri", true, false},
    MethodInfo{"resources/templates/list", H::catalog, true, true, C::list, "", false, true},
    MethodInfo{"resources/subscribe", H::catalog, true, false, C::none, "", false, false},
    MethodInfo{"resources/unsubscribe", H::catalog, true, false, C::none, "", false, false},
    MethodInfo{"prompts/list", H::catalog, true, true, C::list, "", false, true},
    MethodInfo{"prompts/get", H::catalog, true, true, C::none, "name", true, false},
    MethodInfo{"completion/complete", H::catalog, true, true, C::none, "", false, false},
    MethodInfo{"notifications/initialized", H::notification, true, false, C::none, "", false,
               false},
    MethodInfo{"notifications/cancelled", H::notification, true, true, C::none, "", false, false},
    MethodInfo{"notifications/progress", H::notification, true, true, C::none, "", false, false},
    MethodInfo{"notifications/roots/list_changed", H::notification, true, false, C::none, "", false,
               false},
};

/// The requests crankd sends to clients, and the capability each needs.
struct ClientMethod {
    std::string_view name;
    const char* capability;
};
constexpr std::array kClientMethods = {
    ClientMethod{"sampling/createMessage", "sampling"},
    ClientMethod{"elicitation/create", "elicitation"},
    ClientMethod{"roots/list", "roots"},
};

}  // namespace

const char* clientCapabilityFor(std::string_view client_method) {
    const auto* it = std::find_if(kClientMethods.begin(), kClientMethods.end(),
                                  [&](const ClientMethod& m) { return m.name == client_method; });
    return it == kClientMethods.end() ? nullptr : it->capability;
}

const MethodInfo* findMethod(std::string_view method) {
    const auto* it = std::find_if(kMethods.begin(), kMethods.end(),
                                  [&](const MethodInfo& m) { return m.name == method; });
    return it == kMethods.end() ? nullptr : &*it;
}

}  // namespace crank::mcp
