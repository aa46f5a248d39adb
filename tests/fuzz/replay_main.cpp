// The main() of a fuzz target outside a libFuzzer build: runs LLVMFuzzerTestOneInput once on
// every file named on the command line, or found (recursively, sorted) in a directory named there.
// ctest's fuzz_replay.<name> runs the target's corpus and regressions this way in every tree, so
// that an input that once crashed stays a test. A directory that does not exist is skipped (a
// target may have no regressions yet); finding no input at all is an error.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <system_error>
#include <vector>

// libFuzzer's names. NOLINTBEGIN(readability-identifier-naming)
extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);
// Optional in a target, as in libFuzzer.
extern "C" __attribute__((weak)) int LLVMFuzzerInitialize(int* argc, char*** argv);
// NOLINTEND(readability-identifier-naming)

namespace {

namespace fs = std::filesystem;

bool readFile(const fs::path& path, std::vector<std::uint8_t>& out) {
    std::ifstream in(path, std::ios::binary);
    std::error_code ec;
    const auto size = fs::file_size(path, ec);
    if (!in || ec) {
        return false;
    }
    out.resize(static_cast<std::size_t>(size));
    in.read(reinterpret_cast<char*>(out.data()), static_cast<std::streamsize>(out.size()));
    return static_cast<std::size_t>(in.gcount()) == out.size();
}

}  // namespace

int main(int argc, char** argv) {
    if (LLVMFuzzerInitialize != nullptr) {
        LLVMFuzzerInitialize(&argc, &argv);
    }
    std::vector<fs::path> inputs;
    for (int i = 1; i < argc; ++i) {
        const fs::path arg(argv[i]);
        std::error_code ec;
        if (fs::is_directory(arg, ec)) {
            std::vector<fs::path> found;
            for (const auto& entry : fs::recursive_directory_iterator(arg, ec)) {
                if (entry.is_regular_file()) {
                    found.push_back(entry.path());
                }
            }
            if (ec) {
                std::fprintf(stderr, "cannot list %s: %s\n", argv[i], ec.message().c_str());
                return 2;
            }
            std::sort(found.begin(), found.end());
            inputs.insert(inputs.end(), found.begin(), found.end());
        } else if (fs::is_regular_file(arg, ec)) {
            inputs.push_back(arg);
        } else {
            std::printf("%s: absent, skipped\n", argv[i]);
        }
    }
    if (inputs.empty()) {
        std::fprintf(stderr, "no input to replay\n");
        return 2;
    }
    std::vector<std::uint8_t> data;
    for (const fs::path& path : inputs) {
        if (!readFile(path, data)) {
            std::fprintf(stderr, "cannot read %s\n", path.c_str());
            return 2;
        }
        std::printf("%s (%zu bytes)\n", path.c_str(), data.size());
        std::fflush(stdout);  // the input that crashes is the last one named
        // An empty vector's data() may be null; libFuzzer passes a valid pointer.
        const std::uint8_t empty = 0;
        LLVMFuzzerTestOneInput(data.empty() ? &empty : data.data(), data.size());
    }
    std::printf("replayed %zu inputs\n", inputs.size());
    return 0;
}
