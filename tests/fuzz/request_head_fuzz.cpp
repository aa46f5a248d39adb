// Fuzz target request_head: scanRequestHead (host/http/request_head.h), which reads the bytes a
// client sends before Poco or any handler sees them.
//
// Input: one byte of settings, then the bytes of a connection.
//   settings bits 0-1: the head bound (64, 512, 4096 or 32768 bytes); bits 2-7 seed how the bytes
//   are cut into the reads that arrive one after another.
// The scan of the whole must equal the scan resumed read by read (with the hint the gate passes),
// a complete head must end with its blank line inside the bound, and every refusal must carry
// its status and a message.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "fuzz_support.h"
#include "http/request_head.h"

namespace {

using crank::fuzz::check;
using crank::http::HeadState;
using crank::http::RequestHead;
using crank::http::scanRequestHead;

bool same(const RequestHead& a, const RequestHead& b) {
    return a.state == b.state && a.head_bytes == b.head_bytes &&
           a.content_length == b.content_length && a.chunked == b.chunked &&
           a.expects_continue == b.expects_continue && a.status == b.status;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size == 0) {
        return 0;
    }
    constexpr std::size_t kBounds[] = {64, 512, 4096, 32768};
    const std::size_t max = kBounds[data[0] & 3U];
    std::uint32_t seed = (data[0] >> 2U) * 2654435761U + 1U;
    const std::string_view bytes = crank::fuzz::asText(data + 1, size - 1);

    const RequestHead whole = scanRequestHead(bytes, max);
    switch (whole.state) {
        case HeadState::complete:
            check(whole.head_bytes > 0 && whole.head_bytes <= bytes.size(), "head inside input");
            check(whole.head_bytes <= max, "head inside bound");
            check(bytes[whole.head_bytes - 1] == '\n', "head ends with a line feed");
            check(whole.status == 0 && whole.error.empty(), "no error on a complete head");
            check(!(whole.chunked && whole.content_length), "chunked and a length together");
            break;
        case HeadState::incomplete:
            check(bytes.size() < max, "incomplete only below the bound");
            break;
        case HeadState::too_large:
            check(whole.status == 431 && !whole.error.empty(), "431 with a message");
            break;
        case HeadState::invalid:
            check((whole.status == 400 || whole.status == 501) && !whole.error.empty(),
                  "400 or 501 with a message");
            break;
    }

    // The gate scans after every read, resuming where the last incomplete scan stopped.
    std::size_t got = 0;
    std::size_t hint = 0;
    RequestHead last;
    while (got < bytes.size()) {
        seed ^= seed << 13U;
        seed ^= seed >> 17U;
        seed ^= seed << 5U;
        got = std::min(bytes.size(), got + 1 + seed % 64U);
        last = scanRequestHead(bytes.substr(0, got), max, hint);
        if (last.state != HeadState::incomplete) {
            break;
        }
        hint = got;
    }
    if (last.state != HeadState::incomplete || got == bytes.size()) {
        // Once decided, later bytes change nothing: the decision on a prefix stands for the whole.
        const RequestHead prefix = scanRequestHead(bytes.substr(0, got), max);
        check(same(last, prefix), "a resumed scan equals a fresh one");
        if (last.state == HeadState::complete) {
            check(same(last, whole), "the head a prefix found is the whole's head");
        }
    }
    return 0;
}
