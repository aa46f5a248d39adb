#include "util/sha256.h"

#include <Poco/DigestEngine.h>
#include <Poco/SHA2Engine.h>

namespace crank {

std::string sha256Hex(std::string_view data) {
    Poco::SHA2Engine engine(Poco::SHA2Engine::SHA_256);
    engine.update(data.data(), static_cast<unsigned>(data.size()));
    return Poco::DigestEngine::digestToHex(engine.digest());
}

}  // namespace crank
