#pragma once

// What POST /admin/api/reload reloads (app::ConfigReloader in crankd), as an interface: the
// admin API does not depend on the app's library.
//
// THREADING: reload() from any worker thread; reloads are serialized by the target.

#include <string>

namespace crank::admin {

class ConfigReloadTarget {
public:
    struct Outcome {
        bool applied = false;  ///< false: the file was refused, nothing changed
        std::string json;      ///< the report (app::ReloadReport::toJson)
    };

    virtual ~ConfigReloadTarget() = default;
    virtual Outcome reload() = 0;
};

}  // namespace crank::admin
