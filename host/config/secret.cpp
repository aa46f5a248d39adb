#include "config/secret.h"

namespace crank::config {

std::string Secret::source() const {
    switch (ref_.kind) {
        case SecretRef::Kind::env:
            return "env:" + ref_.name;
        case SecretRef::Kind::file:
            return "file:" + ref_.name;
        case SecretRef::Kind::sha256:
            return "sha256";
    }
    return "unknown";
}

}  // namespace crank::config
