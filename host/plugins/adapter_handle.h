#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "plugins/diagnostic.h"
#include "plugins/plugin_call.h"
#include <crank/plugin.h>

namespace crank::plugins {

/// A registered protocol adapter: the host's copy of a plugin's `crank_adapter` (read up to its
/// struct_size, the rest zero; every text copied into host memory) and typed calls into it.
///
/// Owned by the PluginRegistry; valid as long as the registry. THREADING: const and safe to use
/// from any thread; the plugin's own threading rules (plugin.h) apply to the calls.
class AdapterHandle {
public:
    AdapterHandle(const crank_adapter& adapter, std::string plugin_name);

    const std::string& name() const { return name_; }
    const std::string& version() const { return version_; }
    const std::string& description() const { return description_; }
    /// Name of the plugin library that registered it.
    const std::string& pluginName() const { return plugin_name_; }
    /// CRANK_CAP_* bits as declared (the loader checked that their functions exist).
    std::uint32_t capabilities() const { return adapter_.capabilities; }
    /// CRANK_MODE_* bits.
    std::uint32_t modes() const { return adapter_.modes; }
    bool hasCapability(std::uint32_t cap) const { return (adapter_.capabilities & cap) == cap; }
    bool supportsMode(std::uint32_t mode) const { return (adapter_.modes & mode) == mode; }
    /// The operation config's JSON Schema (checked to be a JSON object at load).
    const std::string& configSchemaJson() const { return config_schema_json_; }

    /// The plugin's semantic checks of one operation config (already schema-valid). Empty when
    /// the config is fine or the adapter has no validate().
    std::vector<Diagnostic> validate(std::string_view config_json) const;

    /// What the adapter tells about an operation's tool (ABI 1.3 describe()): `json` is one
    /// JSON object's text ("{}" when the adapter has nothing to say or no describe()).
    struct Description {
        std::string json = "{}";
        std::vector<Diagnostic> diagnostics;  ///< non-empty: the config is refused
    };
    Description describe(std::string_view config_json) const;

    /// CRANK_CAP_UNARY. Without it: call.setError(UNSUPPORTED) and CRANK_ERROR.
    crank_status unaryCall(PluginCall& call, const crank_request& request) const;
    /// CRANK_CAP_SERVER_STREAM. NULL after call.setError() (UNSUPPORTED without the capability).
    /// A returned stream must be destroyed with streamDestroy() after the plugin called
    /// complete(); `call` must outlive it.
    crank_stream* streamOpen(PluginCall& call, const crank_request& request) const;
    void streamResume(crank_stream* stream) const;
    void streamCancel(crank_stream* stream) const;
    void streamDestroy(crank_stream* stream) const;

    /// CRANK_CAP_FEDERATION (ABI 1.2): see crank_adapter.upstream_open and the others. `peer`
    /// must outlive the upstream (until upstreamClose() returns). Null after diagnostics.
    crank_upstream* upstreamOpen(crank_peer* peer, std::string_view name,
                                 std::string_view config_json, PluginCall& diagnostics) const;
    crank_status upstreamRequest(crank_upstream* upstream, PluginCall& call,
                                 std::string_view method, std::string_view params_json,
                                 crank_writer* result) const;
    void upstreamNotify(crank_upstream* upstream, std::string_view method,
                        std::string_view params_json) const;
    /// The upstream's status object (JSON text), "{}" when the adapter reports none.
    std::string upstreamStatus(crank_upstream* upstream) const;
    void upstreamClose(crank_upstream* upstream) const;

private:
    crank_adapter adapter_;
    std::string name_;
    std::string version_;
    std::string description_;
    std::string config_schema_json_;
    std::string plugin_name_;
};

}  // namespace crank::plugins
