#pragma once

#include <mutex>
#include <string_view>
#include <vector>

#include "plugins/diagnostic.h"
#include "plugins/plugin_call.h"

namespace crank::plugins {

/// The `crank_call` handed to a plugin's validate(): every set_error() becomes one Diagnostic
/// (its path taken from the details {"path": ...}). Items emitted here are refused.
class DiagnosticsCall final : public PluginCall {
public:
    crank_emit_result emit(std::string_view item_json) noexcept override;
    void setError(crank_error_code code, std::string_view message,
                  std::string_view details_json) noexcept override;
    bool isCancelled() const noexcept override { return false; }
    std::string_view logContext() const noexcept override { return "validate"; }

    /// What validate() reported; when it returned CRANK_ERROR without a word, one generic entry.
    std::vector<Diagnostic> finish(crank_status status);

private:
    std::mutex mutex_;
    std::vector<Diagnostic> diagnostics_;
};

}  // namespace crank::plugins
