#include "util/sha256.h"

#include <Poco/DigestEngine.h>
#include <Poco/SHA2Engine.h>

namespace crank {

std::string sha256Hex(std::string_view data) {
    Poco::SHA2Engine engine(Poco::SHA2Engine::SHA_256);
    engine.update(data.data(), static_cast<unsigned>(data.size()));
    return Poco::DigestEngine::digestToHex(engine.digest());
}

bool constantTimeEqual(std::string_view a, std::string_view b) {
    if (a.size() != b.size()) {
        return false;
    }
    unsigned char diff = 0;
    for (std::size_t i = 0; i < a.size(); ++i) {
        diff |= static_cast<unsigned char>(a[i] ^ b[i]);
    }
    return diff == 0;
}

bool bearerMatchesDigest(std::string_view authorization, std::string_view digest) {
    constexpr std::string_view kBearer = "Bearer ";
    return authorization.size() > kBearer.size() &&
           authorization.substr(0, kBearer.size()) == kBearer &&
           constantTimeEqual(sha256Hex(authorization.substr(kBearer.size())), digest);
}

}  // namespace crank
