#include "mcp/modern/request_state_seal.h"

#include <algorithm>
#include <array>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <utility>
#include <vector>

#include <Poco/Base64Decoder.h>
#include <Poco/Base64Encoder.h>
#include <rapidjson/document.h>
#include <rapidjson/memorystream.h>
#include <rapidjson/reader.h>
#include <rapidjson/writer.h>

#include "json/json_members.h"
#include "json/json_number.h"
#include "util/clock.h"
#include "util/json_string.h"
#include "util/random.h"
#include "util/sha256.h"
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>

namespace crank::mcp {
namespace {

constexpr std::string_view kPrefix = "v1.";
constexpr std::size_t kKeyBytes = 32;
constexpr std::size_t kNonceBytes = 12;
constexpr std::size_t kTagBytes = 16;
/// A sealed state longer than this is refused before any work: no tool's state is that large.
constexpr std::size_t kMaxSealedBytes = std::size_t{64} * 1024;
/// Domain separation: the same secret, used elsewhere, never yields this key.
constexpr std::string_view kKeyLabel = "crank mcp requestState v1";

std::string deriveKey(std::string_view material) {
    std::string secret(material);
    if (secret.empty()) {
        secret = randomHex(kKeyBytes);
    }
    std::array<unsigned char, EVP_MAX_MD_SIZE> out{};
    unsigned int size = 0;
    HMAC(EVP_sha256(), secret.data(), static_cast<int>(secret.size()),
         reinterpret_cast<const unsigned char*>(kKeyLabel.data()), kKeyLabel.size(), out.data(),
         &size);
    return {reinterpret_cast<const char*>(out.data()), kKeyBytes};
}

std::string base64Url(std::string_view bytes) {
    std::ostringstream out;
    Poco::Base64Encoder encoder(out, Poco::BASE64_URL_ENCODING | Poco::BASE64_NO_PADDING);
    encoder.rdbuf()->setLineLength(0);
    encoder.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    encoder.close();
    return out.str();
}

/// Unpadded base64url, decoded; nullopt when a character is outside the alphabet or the length
/// cannot be one of it.
std::optional<std::string> fromBase64Url(std::string_view text) {
    if (text.size() % 4 == 1) {
        return std::nullopt;
    }
    for (const char c : text) {
        const bool ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
                        (c >= '0' && c <= '9') || c == '-' || c == '_';
        if (!ok) {
            return std::nullopt;
        }
    }
    std::istringstream in{std::string(text)};
    Poco::Base64Decoder decoder(in, Poco::BASE64_URL_ENCODING | Poco::BASE64_NO_PADDING);
    std::string out;
    char c = 0;
    while (decoder.get(c)) {
        out.push_back(c);
    }
    return out;
}

struct CipherContext {
    EVP_CIPHER_CTX* ctx = EVP_CIPHER_CTX_new();
    CipherContext() = default;
    CipherContext(const CipherContext&) = delete;
    CipherContext& operator=(const CipherContext&) = delete;
    ~CipherContext() { EVP_CIPHER_CTX_free(ctx); }
};

const auto* bytesOf(std::string_view s) {
    return reinterpret_cast<const unsigned char*>(s.data());
}
auto* bytesOf(std::string& s) {
    return reinterpret_cast<unsigned char*>(s.data());
}

/// nonce | ciphertext | tag of `plaintext`.
std::string encrypt(const std::string& key, std::string_view plaintext) {
    std::string nonce(kNonceBytes, '\0');
    if (RAND_bytes(bytesOf(nonce), static_cast<int>(kNonceBytes)) != 1) {
        throw std::runtime_error("requestState: no random bytes for a nonce");
    }
    CipherContext c;
    std::string out = nonce;
    out.resize(kNonceBytes + plaintext.size() + kTagBytes);
    int written = 0;
    int last = 0;
    if (c.ctx == nullptr ||
        EVP_EncryptInit_ex(c.ctx, EVP_aes_256_gcm(), nullptr, bytesOf(key), bytesOf(nonce)) != 1 ||
        EVP_EncryptUpdate(c.ctx, bytesOf(out) + kNonceBytes, &written, bytesOf(plaintext),
                          static_cast<int>(plaintext.size())) != 1 ||
        EVP_EncryptFinal_ex(c.ctx, bytesOf(out) + kNonceBytes + written, &last) != 1 ||
        EVP_CIPHER_CTX_ctrl(c.ctx, EVP_CTRL_GCM_GET_TAG, static_cast<int>(kTagBytes),
                            bytesOf(out) + kNonceBytes + plaintext.size()) != 1) {
        throw std::runtime_error("requestState: AES-256-GCM failed");
    }
    return out;
}

/// The plaintext of `sealed` (nonce | ciphertext | tag); nullopt when the tag does not match.
std::optional<std::string> decrypt(const std::string& key, std::string& sealed) {
    if (sealed.size() < kNonceBytes + kTagBytes) {
        return std::nullopt;
    }
    const std::size_t size = sealed.size() - kNonceBytes - kTagBytes;
    std::string plain(size, '\0');
    CipherContext c;
    int written = 0;
    int last = 0;
    if (c.ctx == nullptr ||
        EVP_DecryptInit_ex(c.ctx, EVP_aes_256_gcm(), nullptr, bytesOf(key), bytesOf(sealed)) != 1 ||
        EVP_DecryptUpdate(c.ctx, bytesOf(plain), &written, bytesOf(sealed) + kNonceBytes,
                          static_cast<int>(size)) != 1 ||
        EVP_CIPHER_CTX_ctrl(c.ctx, EVP_CTRL_GCM_SET_TAG, static_cast<int>(kTagBytes),
                            bytesOf(sealed) + kNonceBytes + size) != 1 ||
        EVP_DecryptFinal_ex(c.ctx, bytesOf(plain) + written, &last) != 1) {
        return std::nullopt;
    }
    return plain;
}

Error refused(std::string_view why) {
    return Error{ErrorCode::invalid_argument, "requestState " + std::string(why)};
}

std::string stringOf(const rapidjson::Value& object, const char* key) {
    const auto it = object.FindMember(key);
    return it != object.MemberEnd() && it->value.IsString()
               ? std::string(it->value.GetString(), it->value.GetStringLength())
               : std::string();
}

/// A reader handler that builds `doc` with every scalar as a tagged string: "s" + the text of a
/// string, "n" + the canonical text of a number (read from its JSON spelling, never through a
/// double), "t"/"f"/"0" for true, false and null. Keys stay as they are.
// NOLINTBEGIN(readability-identifier-naming): RapidJSON's handler names
class TaggingHandler : public rapidjson::BaseReaderHandler<rapidjson::UTF8<>, TaggingHandler> {
public:
    explicit TaggingHandler(json::Document& doc) : doc_(doc) {}

    bool Null() { return tagged("0"); }
    bool Bool(bool b) { return tagged(b ? "t" : "f"); }
    bool RawNumber(const char* text, rapidjson::SizeType length, bool /*copy*/) {
        const std::optional<std::string> number =
            json::canonicalNumber(std::string_view(text, length));
        return number && tagged("n" + *number);
    }
    bool String(const char* text, rapidjson::SizeType length, bool /*copy*/) {
        return tagged("s" + std::string(text, length));
    }
    bool StartObject() { return doc_.StartObject(); }
    bool Key(const char* text, rapidjson::SizeType length, bool copy) {
        return doc_.Key(text, length, copy);
    }
    bool EndObject(rapidjson::SizeType members) { return doc_.EndObject(members); }
    bool StartArray() { return doc_.StartArray(); }
    bool EndArray(rapidjson::SizeType elements) { return doc_.EndArray(elements); }

private:
    bool tagged(const std::string& text) {
        return doc_.String(text.data(), static_cast<rapidjson::SizeType>(text.size()), true);
    }

    json::Document& doc_;
};
// NOLINTEND(readability-identifier-naming)

/// Document::Populate's generator: parses `text` (numbers as their text, iteratively, so that
/// depth cannot exhaust the stack) through a TaggingHandler; `ok` says whether it was JSON.
struct TaggingGenerator {
    std::string_view text;
    bool ok = false;

    bool operator()(json::Document& doc) {
        TaggingHandler handler(doc);
        rapidjson::MemoryStream stream(text.data(), text.size());
        rapidjson::Reader reader;
        constexpr unsigned kFlags =
            rapidjson::kParseNumbersAsStringsFlag | rapidjson::kParseIterativeFlag;
        ok = !reader.Parse<kFlags>(stream, handler).IsError();
        return ok;
    }
};

/// `value` written with object members sorted by name, no whitespace.
void writeCanonical(const rapidjson::Value& value, rapidjson::Writer<rapidjson::StringBuffer>& w) {
    if (value.IsObject()) {
        std::vector<const rapidjson::Value::Member*> members;
        for (const auto& m : value.GetObject()) {
            members.push_back(&m);
        }
        std::sort(members.begin(), members.end(), [](const auto* a, const auto* b) {
            return std::string_view(a->name.GetString(), a->name.GetStringLength()) <
                   std::string_view(b->name.GetString(), b->name.GetStringLength());
        });
        w.StartObject();
        for (const auto* m : members) {
            w.String(m->name.GetString(), m->name.GetStringLength());
            writeCanonical(m->value, w);
        }
        w.EndObject();
    } else if (value.IsArray()) {
        w.StartArray();
        for (const auto& item : value.GetArray()) {
            writeCanonical(item, w);
        }
        w.EndArray();
    } else {
        value.Accept(w);
    }
}

}  // namespace

RequestStateSeal::RequestStateSeal(std::string_view key_material, std::string node,
                                   std::chrono::milliseconds ttl, std::shared_ptr<UsedStates> used)
    : key_(deriveKey(key_material)),
      node_(std::move(node)),
      ttl_(ttl),
      used_(used ? std::move(used) : std::make_shared<MemoryUsedStates>()) {}

std::string RequestStateSeal::seal(const StateBinding& binding, std::string_view payload, int round,
                                   std::string_view kind) const {
    const std::int64_t expires = nowUnixMs() + ttl_.count();
    const std::string plain = R"({"w":)" + jsonString(binding.workspace) + R"(,"a":)" +
                              jsonString(binding.agent) + R"(,"m":)" + jsonString(binding.method) +
                              R"(,"t":)" + jsonString(binding.target) + R"(,"d":)" +
                              jsonString(paramsDigest(binding.target, binding.arguments_json)) +
                              R"(,"e":)" + std::to_string(expires) + R"(,"n":)" +
                              jsonString(node_) + R"(,"r":)" + std::to_string(round) + R"(,"k":)" +
                              jsonString(kind) + R"(,"p":)" + jsonString(payload) + "}";
    return std::string(kPrefix) + base64Url(encrypt(key_, plain));
}

Result<OpenedState> RequestStateSeal::open(std::string_view sealed,
                                           const StateBinding& binding) const {
    if (sealed.size() > kMaxSealedBytes) {
        return refused("is too long to be one of crankd's");
    }
    if (sealed.substr(0, kPrefix.size()) != kPrefix) {
        return refused("is not one crankd issued (it must start with \"v1.\")");
    }
    const std::string_view text = sealed.substr(kPrefix.size());
    std::optional<std::string> bytes = fromBase64Url(text);
    // Only the canonical spelling: unused low bits of the last character set make another text
    // of the same bytes, and a state has one text.
    if (!bytes || base64Url(*bytes) != text) {
        return refused("is malformed: not base64url");
    }
    // Also a state sealed by a deployment with another key: both are simply not ours.
    const std::optional<std::string> plain = decrypt(key_, *bytes);
    if (!plain) {
        return refused("was altered or was not issued by this deployment");
    }
    json::Document parsed;
    // Authenticated, and written by seal(): a tool's state opens byte for byte as it was given.
    const bool object = json::parseOwnObject(*plain, parsed);
    const rapidjson::Value& doc = parsed;
    if (!object || !doc.HasMember("e") || !doc["e"].IsInt64()) {
        return refused("is malformed inside");
    }
    if (stringOf(doc, "w") != binding.workspace || stringOf(doc, "a") != binding.agent) {
        return refused("was issued to another caller");
    }
    if (stringOf(doc, "m") != binding.method || stringOf(doc, "t") != binding.target) {
        return refused("was issued for another request (" + stringOf(doc, "m") + " of " +
                       jsonString(stringOf(doc, "t")) + ")");
    }
    if (!constantTimeEqual(stringOf(doc, "d"),
                           paramsDigest(binding.target, binding.arguments_json))) {
        return refused("was issued for other arguments: a retry must repeat the arguments");
    }
    const std::int64_t expires_at = doc["e"].GetInt64();
    if (nowUnixMs() >= expires_at) {
        return refused("has expired: call again without it");
    }
    // A held call lives on the node that sealed its state: on another node the state is refused
    // before it is used, so that the retry can still reach that node. Node names are the
    // deployment's own business, not shown to clients.
    if (stringOf(doc, "k") == "held" && stringOf(doc, "n") != node_) {
        return refused(
            "belongs to a call held by another node of this deployment: the retry must reach "
            "the node that answered the request before it");
    }
    // The nonce (the first bytes) is the state's id: unique to each seal.
    const Result<bool> first =
        used_->consume(base64Url(bytes->substr(0, kNonceBytes)),
                       StateOwner{binding.workspace, binding.agent}, expires_at);
    if (!first) {
        return first.error();
    }
    if (!*first) {
        return refused("was used already: each opens once; call again without it");
    }
    OpenedState opened;
    opened.payload = stringOf(doc, "p");
    opened.node = stringOf(doc, "n");
    opened.kind = stringOf(doc, "k");
    opened.round = doc.HasMember("r") && doc["r"].IsInt() ? doc["r"].GetInt() : 0;
    return opened;
}

std::shared_ptr<const RequestStateSeal> configuredSeal(const config::McpConfig& mcp,
                                                       std::string node,
                                                       std::shared_ptr<UsedStates> used) {
    return std::make_shared<const RequestStateSeal>(
        mcp.request_state_key ? mcp.request_state_key->reveal() : std::string_view(),
        std::move(node), std::chrono::milliseconds(mcp.request_state_ttl_ms),
        std::make_shared<PacedUsedStates>(std::move(used), mcp.max_input_rounds_per_minute));
}

std::string paramsDigest(std::string_view target, std::string_view arguments_json) {
    json::Document doc;
    TaggingGenerator generator{arguments_json};
    doc.Populate(generator);
    std::string canonical;
    if (!generator.ok) {
        canonical = arguments_json;
    } else {
        rapidjson::StringBuffer buffer;
        rapidjson::Writer<rapidjson::StringBuffer> writer(buffer);
        writeCanonical(doc, writer);
        canonical.assign(buffer.GetString(), buffer.GetSize());
    }
    return sha256Hex(std::string(target) + '\0' + canonical);
}

}  // namespace crank::mcp
