#include "runtime/secret_wire_forms.h"

#include <algorithm>

#include <crank/sdk/base64.hpp>

namespace crank::runtime {
namespace {

int hexDigit(char c) {
    if (c >= '0' && c <= '9') {
        return c - '0';
    }
    if (c >= 'a' && c <= 'f') {
        return c - 'a' + 10;
    }
    if (c >= 'A' && c <= 'F') {
        return c - 'A' + 10;
    }
    return -1;
}

/// The byte of `text` at `at` read as one encoded byte: {byte, length} (length 3 for %XX, 1 for
/// '+' read as a space), or length 0 when it is no encoding.
std::pair<char, std::size_t> encodedByte(std::string_view text, std::size_t at) {
    if (text[at] == '+') {
        return {' ', 1};
    }
    if (text[at] == '%' && at + 2 < text.size()) {
        const int hi = hexDigit(text[at + 1]);
        const int lo = hexDigit(text[at + 2]);
        if (hi >= 0 && lo >= 0) {
            return {static_cast<char>((hi << 4) | lo), 3};
        }
    }
    return {'\0', 0};
}

/// The end of `secret` spelled from `at` with some bytes encoded, or npos.
std::size_t matchFrom(std::string_view text, std::size_t at, std::string_view secret) {
    bool encoded = false;
    std::size_t pos = at;
    for (const char wanted : secret) {
        if (pos >= text.size()) {
            return std::string_view::npos;
        }
        const auto [byte, length] = encodedByte(text, pos);
        if (length > 0 && byte == wanted) {
            encoded = true;
            pos += length;
        } else if (text[pos] == wanted) {
            ++pos;
        } else {
            return std::string_view::npos;
        }
    }
    return encoded ? pos : std::string_view::npos;
}

}  // namespace

std::vector<std::string> base64Forms(std::string_view secret) {
    const std::string standard = sdk::base64(secret);
    std::string unpadded = standard;
    while (!unpadded.empty() && unpadded.back() == '=') {
        unpadded.pop_back();
    }
    std::vector<std::string> forms{standard, unpadded};
    for (std::size_t i = 0; i < 2; ++i) {
        std::string safe = forms[i];
        std::replace(safe.begin(), safe.end(), '+', '-');
        std::replace(safe.begin(), safe.end(), '/', '_');
        forms.push_back(std::move(safe));
    }
    std::sort(forms.begin(), forms.end());
    forms.erase(std::unique(forms.begin(), forms.end()), forms.end());
    forms.erase(std::remove(forms.begin(), forms.end(), secret), forms.end());
    return forms;
}

void findPercentEncoded(std::string_view text, std::string_view secret,
                        std::vector<std::pair<std::size_t, std::size_t>>& spans) {
    if (secret.empty()) {
        return;
    }
    for (std::size_t at = 0; at < text.size(); ++at) {
        const char c = text[at];
        // Cheap test first: only these can start an occurrence.
        if (c != secret.front() && c != '%' && c != '+') {
            continue;
        }
        const std::size_t end = matchFrom(text, at, secret);
        if (end != std::string_view::npos) {
            spans.emplace_back(at, end);
        }
    }
}

}  // namespace crank::runtime
