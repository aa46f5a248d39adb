#pragma once

// `crankd import-openapi SPEC.json [--prefix P] [--server URL]`: reads the document (a file, or
// standard input for "-"), imports it, and says what to print where.

#include <string>

#include "openapi/openapi_import.h"

namespace crank::openapi {

/// Exit statuses of the command.
enum ImportExit : int {
    kImportOk = 0,
    kImportBadDocument = 1,  ///< unreadable file, malformed JSON, not OpenAPI 3, ...
    kImportUsage = 2,        ///< a bad option (prefix, server)
};

/// What the command printed.
struct CommandOutput {
    int exit_code = kImportOk;
    std::string out;  ///< standard output: the operations JSON
    std::string err;  ///< standard error: warnings, a summary line, or the error
};

/// Runs the command on `path` ("-": standard input). Messages begin with
/// "crankd: import-openapi: ".
CommandOutput runImportCommand(const std::string& path, const ImportOptions& options);

}  // namespace crank::openapi
