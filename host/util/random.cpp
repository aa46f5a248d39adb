#include "util/random.h"

#include <cerrno>
#include <string_view>
#include <system_error>
#include <vector>

#include <sys/random.h>

namespace crank {

std::string randomHex(std::size_t bytes) {
    std::vector<unsigned char> buffer(bytes);
    std::size_t filled = 0;
    while (filled < bytes) {
        const ssize_t n = ::getrandom(buffer.data() + filled, bytes - filled, 0);
        if (n < 0) {
            if (errno == EINTR) {
                continue;
            }
            throw std::system_error(errno, std::generic_category(), "getrandom");
        }
        filled += static_cast<std::size_t>(n);
    }
    static constexpr std::string_view digits = "0123456789abcdef";
    std::string out;
    out.reserve(bytes * 2);
    for (unsigned char b : buffer) {
        out.push_back(digits[b >> 4U]);
        out.push_back(digits[b & 0x0fU]);
    }
    return out;
}

std::string newId(std::string_view prefix) {
    std::string id(prefix);
    id += randomHex(16);
    return id;
}

}  // namespace crank
