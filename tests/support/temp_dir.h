#pragma once

#include <string>
#include <string_view>

namespace crank::testing {

/// A fresh directory under the system temp dir, removed with everything in it on destruction.
class TempDir {
public:
    TempDir();
    ~TempDir();
    TempDir(const TempDir&) = delete;
    TempDir& operator=(const TempDir&) = delete;

    const std::string& path() const { return path_; }
    /// The full path of `name` inside the directory (the file need not exist).
    std::string file(const std::string& name) const { return path_ + "/" + name; }
    /// Writes `content` byte for byte to `name` inside the directory and returns the full path.
    /// Throws std::runtime_error when the file cannot be written.
    std::string write(const std::string& name, std::string_view content) const;

private:
    std::string path_;
};

}  // namespace crank::testing
