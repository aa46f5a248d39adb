#pragma once

// The tools of a 2026-07-28 server as crank's client keeps them (SEP-2243): a tools/list result
// has the tools whose `x-mcp-header` annotations are invalid taken out (an HTTP client MUST NOT
// call them; the reason is kept for the upstream's status), and the Mcp-Param-* headers of the
// rest are remembered by tool name, for their tools/call requests.

#include <cstddef>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "param_headers.h"

namespace crank::mcpc {

/// A tool left out of a list, and why.
struct RefusedTool {
    std::string name;
    std::string reason;
};

class ModernTools {
public:
    /// Tools remembered at most (their headers); more are listed but their headers are not kept
    /// (their calls then go without Mcp-Param-*, and the server may refuse them).
    static constexpr std::size_t kMaxTools = 10'000;
    /// Refused tools kept for the status at most (each name and reason bounded).
    static constexpr std::size_t kMaxRefused = 100;
    /// Bytes of names, headers and paths the index keeps at most.
    static constexpr std::size_t kMaxBytes = std::size_t{4} * 1024 * 1024;

    /// `result_json` (a tools/list result) without the tools whose annotations are invalid; the
    /// text unchanged when it has none to take out (or is not a list). A first page
    /// (`first_page`: the request had no cursor) starts the index afresh.
    std::string filterList(const std::string& result_json, bool first_page);
    /// The Mcp-Param-* headers of tool `name`; nullptr when it declares none or is unknown.
    std::shared_ptr<const std::vector<MirroredParam>> headersOf(std::string_view name) const;
    /// The tools refused by the last listing.
    std::vector<RefusedTool> refused() const;
    /// Forgets everything (a new connection lists again).
    void clear();

private:
    mutable std::mutex mutex_;
    std::map<std::string, std::shared_ptr<const std::vector<MirroredParam>>, std::less<>> tools_;
    std::vector<RefusedTool> refused_;
    std::size_t bytes_ = 0;
};

}  // namespace crank::mcpc
