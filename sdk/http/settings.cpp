#include <algorithm>
#include <initializer_list>

#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <crank/sdk/http/redirect_policy.hpp>
#include <crank/sdk/http/settings.hpp>

namespace crank::sdk::http {
namespace {

using Json = rapidjson::Value;

constexpr std::int64_t kMaxMs = 24LL * 3'600'000;
constexpr std::size_t kMaxResponseCeiling = std::size_t{1} << 30U;  // 1 GiB
// Headers the client writes itself (framing and connection management).
constexpr std::array<std::string_view, 5> kOwnHeaders = {"host", "content-length",
                                                         "transfer-encoding", "connection", "te"};

std::string lower(std::string_view s) {
    std::string out(s);
    std::transform(out.begin(), out.end(), out.begin(), [](char c) {
        return static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
    });
    return out;
}

std::string str(const Json& v) {
    return {v.GetString(), v.GetStringLength()};
}

bool isToken(std::string_view s) {
    return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) {
        const auto u = static_cast<unsigned char>(c);
        return (u >= 'a' && u <= 'z') || (u >= 'A' && u <= 'Z') || (u >= '0' && u <= '9') ||
               std::string_view("!#$%&'*+-.^_`|~").find(c) != std::string_view::npos;
    });
}

bool hasControl(std::string_view s) {
    return std::any_of(s.begin(), s.end(), [](char c) {
        const auto u = static_cast<unsigned char>(c);
        return (u < 0x20 && c != '\t') || u == 0x7f;
    });
}

class Reader {
public:
    Reader(std::string_view plugin, std::vector<SettingProblem>& problems)
        : plugin_(plugin), problems_(problems) {}

    void read(const Json& root, HttpSettings& s) {
        headers(root, s);
        if (const Json* t = object(root, "timeouts")) {
            unknownMembers(*t, "timeouts.", {"connect_ms", "headers_ms", "total_ms"});
            s.connect_ms = millis(*t, "connect_ms", "timeouts.connect_ms").value_or(s.connect_ms);
            s.headers_ms = millis(*t, "headers_ms", "timeouts.headers_ms").value_or(s.headers_ms);
            s.total_ms = millis(*t, "total_ms", "timeouts.total_ms");
        }
        tls(root, s);
        const auto bytes = root.FindMember("max_response_bytes");
        if (bytes != root.MemberEnd()) {
            if (!bytes->value.IsUint64() || bytes->value.GetUint64() < 1 ||
                bytes->value.GetUint64() > kMaxResponseCeiling) {
                problem("max_response_bytes", "expected a whole number of bytes from 1 to " +
                                                  std::to_string(kMaxResponseCeiling));
            } else {
                s.max_response_bytes = static_cast<std::size_t>(bytes->value.GetUint64());
            }
        }
        const auto redirects = root.FindMember("follow_redirects");
        if (redirects != root.MemberEnd()) {
            if (!redirects->value.IsInt() || redirects->value.GetInt() < 0 ||
                redirects->value.GetInt() > 20) {
                problem("follow_redirects", "expected a whole number from 0 to 20");
            } else {
                s.follow_redirects = redirects->value.GetInt();
            }
        }
        redirectOrigins(root, s);
        const auto compression = root.FindMember("compression");
        if (compression != root.MemberEnd()) {
            if (compression->value.IsBool()) {
                s.compression = compression->value.GetBool();
            } else {
                problem("compression", "expected true or false");
            }
        }
        keepAlive(root, s);
    }

private:
    void problem(std::string path, std::string message) {
        problems_.push_back({std::move(path), std::move(message)});
    }

    const Json* object(const Json& parent, const char* key) {
        const auto it = parent.FindMember(key);
        if (it == parent.MemberEnd()) {
            return nullptr;
        }
        if (!it->value.IsObject()) {
            problem(key, "expected an object");
            return nullptr;
        }
        return &it->value;
    }

    void unknownMembers(const Json& object, const std::string& prefix,
                        std::initializer_list<std::string_view> known) {
        for (const auto& m : object.GetObject()) {
            const std::string_view name(m.name.GetString(), m.name.GetStringLength());
            if (std::find(known.begin(), known.end(), name) == known.end()) {
                problem(prefix + std::string(name),
                        "unknown member of the " + std::string(plugin_) + " config");
            }
        }
    }

    std::optional<std::int64_t> millis(const Json& parent, const char* key, std::string path) {
        const auto it = parent.FindMember(key);
        if (it == parent.MemberEnd()) {
            return std::nullopt;
        }
        if (!it->value.IsInt64() || it->value.GetInt64() < 1 || it->value.GetInt64() > kMaxMs) {
            problem(std::move(path), "expected a whole number of milliseconds from 1 to 86400000");
            return std::nullopt;
        }
        return it->value.GetInt64();
    }

    void headers(const Json& root, HttpSettings& s) {
        const Json* h = object(root, "headers");
        if (h == nullptr) {
            return;
        }
        for (const auto& m : h->GetObject()) {
            const std::string name = str(m.name);
            const std::string path = "headers." + name;
            const std::string lowerName = lower(name);
            if (!isToken(name)) {
                problem(path, "not a valid HTTP header name");
                continue;
            }
            if (std::find(kOwnHeaders.begin(), kOwnHeaders.end(), lowerName) != kOwnHeaders.end()) {
                problem(path, "the " + std::string(plugin_) + " plugin sets this header itself");
                continue;
            }
            if (m.value.IsNull()) {
                continue;
            }
            std::string text;
            if (m.value.IsString()) {
                text = str(m.value);
            } else if (m.value.IsBool()) {
                text = m.value.GetBool() ? "true" : "false";
            } else if (m.value.IsNumber()) {
                rapidjson::StringBuffer buffer;
                rapidjson::Writer<rapidjson::StringBuffer> writer(buffer);
                m.value.Accept(writer);
                text.assign(buffer.GetString(), buffer.GetSize());
            } else {
                problem(path, "expected a string (or a number or boolean)");
                continue;
            }
            if (hasControl(text)) {
                problem(path,
                        "a header value must not contain line breaks or other control characters");
                continue;
            }
            s.has_content_type = s.has_content_type || lowerName == "content-type";
            s.headers.emplace_back(name, std::move(text));
        }
    }

    void tls(const Json& root, HttpSettings& s) {
        const Json* t = object(root, "tls");
        if (t == nullptr) {
            return;
        }
        unknownMembers(*t, "tls.", {"verify", "ca_file"});
        const auto verify = t->FindMember("verify");
        if (verify != t->MemberEnd()) {
            if (verify->value.IsBool()) {
                s.tls.verify = verify->value.GetBool();
            } else {
                problem("tls.verify", "expected true or false");
            }
        }
        const auto ca = t->FindMember("ca_file");
        if (ca != t->MemberEnd()) {
            if (ca->value.IsString() && ca->value.GetStringLength() > 0) {
                s.tls.ca_file = str(ca->value);
            } else {
                problem("tls.ca_file", "expected the path of a PEM file");
            }
        }
    }

    void redirectOrigins(const Json& root, HttpSettings& s) {
        const auto origins = root.FindMember("redirect_origins");
        if (origins == root.MemberEnd()) {
            return;
        }
        if (!origins->value.IsArray()) {
            problem("redirect_origins",
                    "expected an array of origins such as \"https://api.example.com\"");
            return;
        }
        for (rapidjson::SizeType i = 0; i < origins->value.Size(); ++i) {
            const Json& entry = origins->value[i];
            const std::string path = "redirect_origins[" + std::to_string(i) + "]";
            std::string error;
            std::optional<std::string> origin;
            if (entry.IsString()) {
                origin = parseOrigin(str(entry), error);
            } else {
                error = "expected an origin such as \"https://api.example.com\" (a string)";
            }
            if (origin) {
                s.redirect_origins.push_back(std::move(*origin));
            } else {
                problem(path, error);
            }
        }
    }

    void keepAlive(const Json& root, HttpSettings& s) {
        const Json* k = object(root, "keep_alive");
        if (k == nullptr) {
            return;
        }
        unknownMembers(*k, "keep_alive.", {"max_idle", "idle_timeout_ms"});
        const auto maxIdle = k->FindMember("max_idle");
        if (maxIdle != k->MemberEnd()) {
            if (!maxIdle->value.IsUint() || maxIdle->value.GetUint() > 1024) {
                problem("keep_alive.max_idle", "expected a whole number from 0 to 1024");
            } else {
                s.max_idle = maxIdle->value.GetUint();
            }
        }
        s.idle_timeout_ms =
            millis(*k, "idle_timeout_ms", "keep_alive.idle_timeout_ms").value_or(s.idle_timeout_ms);
    }

    std::string_view plugin_;
    std::vector<SettingProblem>& problems_;
};

}  // namespace

void readHttpSettings(const rapidjson::Value& config, std::string_view plugin, HttpSettings& out,
                      std::vector<SettingProblem>& problems) {
    if (!config.IsObject()) {
        problems.push_back({"", "expected a JSON object"});
        return;
    }
    Reader(plugin, problems).read(config, out);
}

void applySettings(const HttpSettings& settings, RequestPlan& plan) {
    plan.headers = settings.headers;
    plan.options.tls = settings.tls;
    plan.options.decompress = settings.compression;
    plan.options.max_idle = settings.max_idle;
    plan.options.idle_timeout = std::chrono::milliseconds(settings.idle_timeout_ms);
    plan.connect_ms = settings.connect_ms;
    plan.headers_ms = settings.headers_ms;
    plan.follow_redirects = settings.follow_redirects;
    plan.redirect_origins = settings.redirect_origins;
    plan.max_response_bytes = settings.max_response_bytes;
}

}  // namespace crank::sdk::http
