// Compiled as C++17 with the project's strict warnings and hidden visibility: the SDK headers
// must stay C++17 and warning-free, as plugins may be built that way.
#include <crank/sdk.hpp>
#include <crank/testing/fake_host.hpp>

#if __cplusplus != 201703L
#error "this file must be compiled as C++17"
#endif

namespace {

class Check : public crank::sdk::ThreadedStream {
protected:
    void run(crank::sdk::StreamContext& ctx) override { ctx.emit("{}"); }
};

void registerCheck(crank::sdk::Registrar& registrar) {
    registrar.addAdapter({"check", "1", "C++17 check", CRANK_CAP_UNARY, CRANK_MODE_UNARY},
                         std::make_unique<crank::sdk::Adapter>());
}

}  // namespace

CRANK_PLUGIN_NAMED(sdk_cxx17_check_entry, "cxx17_check", "1.0.0", "C++17 check", registerCheck);
