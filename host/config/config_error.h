#pragma once

#include <string>
#include <vector>

namespace crank::config {

/// One problem in a configuration: where (a JSON path such as `operations[2].execution.max_items`,
/// or `FILE:LINE:COLUMN` for syntax errors) and what is wrong, phrased as what was expected.
struct ConfigError {
    std::string path;
    std::string message;

    /// "operations[2].execution.max_items: expected a positive integer, got -5"
    std::string toString() const { return path.empty() ? message : path + ": " + message; }
};

/// Collects every error of one load so that the operator sees them all at once.
class ConfigErrors {
public:
    void add(std::string path, std::string message) {
        errors_.push_back({std::move(path), std::move(message)});
    }
    bool empty() const { return errors_.empty(); }
    std::size_t size() const { return errors_.size(); }
    const std::vector<ConfigError>& all() const { return errors_; }
    std::vector<ConfigError> take() { return std::move(errors_); }

private:
    std::vector<ConfigError> errors_;
};

}  // namespace crank::config
