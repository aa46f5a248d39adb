#include "grpc_config.h"

#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "metadata.h"

namespace crank::grpc_plugin {
namespace {

using Json = rapidjson::Value;

std::string str(const Json& v) {
    return {v.GetString(), v.GetStringLength()};
}

bool templated(std::string_view text) {
    return text.find("{{") != std::string_view::npos;
}

class Parser {
public:
    Parser(bool rendered, const ProblemSink& problem) : rendered_(rendered), problem_(problem) {}

    bool failed() const { return failed_; }

    void parse(const Json& root, GrpcConfig& c) {
        unknownMembers(root, "",
                       {"target", "method", "descriptor_set", "reflection_timeout_ms", "tls",
                        "metadata", "message", "max_receive_bytes", "wait_for_ready"});
        c.target = requiredString(root, "target",
                                  "is required: the upstream's address, e.g. \"127.0.0.1:50051\" "
                                  "or \"dns:///api.example.com:443\"");
        if (!c.target.empty()) {
            checkTarget(c.target);
        }
        std::string method =
            requiredString(root, "method", "is required: the method as \"package.Service/Method\"");
        if (!method.empty()) {
            if (method.front() == '/') {
                method.erase(0, 1);
            }
            checkMethod(method);
            c.method = method;
        }
        if (const Json* d = member(root, "descriptor_set")) {
            if (!d->IsString() || d->GetStringLength() == 0) {
                problem("descriptor_set",
                        "expected the path of a descriptor set file (protoc "
                        "--descriptor_set_out=FILE --include_imports)");
            } else {
                c.descriptor_set = str(*d);
                noTemplate("descriptor_set", c.descriptor_set);
            }
        }
        c.reflection_timeout_ms = integer(root, "reflection_timeout_ms", c.reflection_timeout_ms, 1,
                                          GrpcDefaults::max_reflection_timeout_ms);
        c.max_receive_bytes = integer(root, "max_receive_bytes", c.max_receive_bytes, 1,
                                      GrpcDefaults::max_receive_bytes_ceiling);
        if (const Json* w = member(root, "wait_for_ready")) {
            if (w->IsBool()) {
                c.wait_for_ready = w->GetBool();
            } else {
                problem("wait_for_ready", "expected true or false");
            }
        }
        parseTls(root, c.tls);
        parseMetadata(root, c.metadata);
        if (const Json* m = member(root, "message")) {
            if (rendered_ && !m->IsObject()) {
                problem("message",
                        "expected an object (the request message in the proto3 JSON mapping)");
            } else {
                rapidjson::StringBuffer buffer;
                rapidjson::Writer<rapidjson::StringBuffer> writer(buffer);
                m->Accept(writer);
                c.message_json = std::string(buffer.GetString(), buffer.GetSize());
            }
        }
    }

private:
    void problem(std::string_view path, std::string_view message) {
        failed_ = true;
        problem_(path, message);
    }

    static const Json* member(const Json& object, const char* name) {
        const auto it = object.FindMember(name);
        return it == object.MemberEnd() ? nullptr : &it->value;
    }

    void unknownMembers(const Json& object, const std::string& prefix,
                        std::initializer_list<std::string_view> known) {
        for (auto it = object.MemberBegin(); it != object.MemberEnd(); ++it) {
            const std::string_view name(it->name.GetString(), it->name.GetStringLength());
            if (std::find(known.begin(), known.end(), name) == known.end()) {
                std::string list;
                for (const std::string_view k : known) {
                    list += list.empty() ? "" : ", ";
                    list += k;
                }
                problem(prefix + std::string(name),
                        "unknown member of the gRPC config (known: " + list + ")");
            }
        }
    }

    std::string requiredString(const Json& root, const char* name, std::string_view missing) {
        const Json* v = member(root, name);
        if (v == nullptr) {
            problem(name, missing);
            return {};
        }
        if (!v->IsString() || v->GetStringLength() == 0) {
            problem(name, "expected a non-empty string");
            return {};
        }
        std::string out = str(*v);
        noTemplate(name, out);
        return out;
    }

    // What decides the method's descriptors and the channel is fixed when the config loads.
    void noTemplate(std::string_view path, std::string_view value) {
        if (templated(value)) {
            problem(path, "cannot hold a template: it is resolved once, when the config loads");
        }
    }

    std::int64_t integer(const Json& root, const char* name, std::int64_t fallback,
                         std::int64_t min, std::int64_t max) {
        const Json* v = member(root, name);
        if (v == nullptr) {
            return fallback;
        }
        if (!v->IsInt64() || v->GetInt64() < min || v->GetInt64() > max) {
            problem(name, "expected an integer from " + std::to_string(min) + " to " +
                              std::to_string(max));
            return fallback;
        }
        return v->GetInt64();
    }

    void checkTarget(std::string_view target) {
        for (const char c : target) {
            if (static_cast<unsigned char>(c) <= 0x20 || c == 0x7f) {
                problem("target", "must not contain spaces or control characters");
                return;
            }
        }
        if (target.find("://") != std::string_view::npos &&
            (target.rfind("http://", 0) == 0 || target.rfind("https://", 0) == 0)) {
            problem("target",
                    "is an address, not a URL: write \"host:port\" (and \"tls\": true for "
                    "https)");
        }
    }

    void checkMethod(std::string_view method) {
        const std::size_t slash = method.find('/');
        const bool ok = slash != std::string_view::npos && slash > 0 && slash + 1 < method.size() &&
                        method.find('/', slash + 1) == std::string_view::npos;
        if (!ok) {
            problem("method",
                    "expected \"package.Service/Method\", e.g. "
                    "\"crank.fixture.v1.Fixture/Echo\"");
        }
    }

    void parseTls(const Json& root, TlsOptions& tls) {
        const Json* t = member(root, "tls");
        if (t == nullptr) {
            return;
        }
        if (t->IsBool()) {
            tls.enabled = t->GetBool();
            return;
        }
        if (!t->IsObject()) {
            problem("tls",
                    "expected true, false or an object {ca_file, cert_file, key_file, "
                    "server_name}");
            return;
        }
        tls.enabled = true;
        unknownMembers(*t, "tls.", {"ca_file", "cert_file", "key_file", "server_name"});
        auto text = [&](const char* name, std::string& out) {
            if (const Json* v = member(*t, name)) {
                if (v->IsString() && v->GetStringLength() > 0) {
                    out = str(*v);
                    noTemplate(std::string("tls.") + name, out);
                } else {
                    problem(std::string("tls.") + name, "expected a non-empty string");
                }
            }
        };
        text("ca_file", tls.ca_file);
        text("cert_file", tls.cert_file);
        text("key_file", tls.key_file);
        text("server_name", tls.server_name);
        if (tls.cert_file.empty() != tls.key_file.empty()) {
            problem(tls.cert_file.empty() ? "tls.cert_file" : "tls.key_file",
                    "a client certificate needs both cert_file and key_file");
        }
    }

    void parseMetadata(const Json& root, Metadata& out) {
        const Json* m = member(root, "metadata");
        if (m == nullptr) {
            return;
        }
        if (!m->IsObject()) {
            problem("metadata", "expected an object of metadata keys and string values");
            return;
        }
        for (auto it = m->MemberBegin(); it != m->MemberEnd(); ++it) {
            const std::string given(it->name.GetString(), it->name.GetStringLength());
            const std::string path = "metadata." + given;
            const std::string key = normalizeKey(given);
            if (auto why = badKey(key)) {
                problem(path, *why);
                continue;
            }
            if (!it->value.IsString()) {
                problem(path, "expected a string");
                continue;
            }
            std::string value = str(it->value);
            if (rendered_ || !templated(value)) {
                if (auto why = badValue(key, value)) {
                    problem(path, *why);
                    continue;
                }
            }
            out.emplace_back(key, std::move(value));
        }
    }

    bool rendered_;
    const ProblemSink& problem_;
    bool failed_ = false;
};

}  // namespace

std::string GrpcConfig::service() const {
    return method.substr(0, method.find('/'));
}

std::optional<GrpcConfig> parseGrpcConfig(std::string_view json, bool rendered,
                                          const ProblemSink& problem) {
    rapidjson::Document doc;
    doc.Parse(json.data(), json.size());
    if (doc.HasParseError() || !doc.IsObject()) {
        problem("", "expected a JSON object");
        return std::nullopt;
    }
    Parser parser(rendered, problem);
    GrpcConfig c;
    parser.parse(doc, c);
    if (parser.failed()) {
        return std::nullopt;
    }
    return c;
}

std::string_view grpcConfigSchema() {
    return R"json({
  "type": "object",
  "additionalProperties": false,
  "required": ["target", "method"],
  "properties": {
    "target": {"type": "string", "minLength": 1,
               "description": "the upstream's address: host:port, dns:///host:port, unix:/path"},
    "method": {"type": "string", "minLength": 3,
               "description": "package.Service/Method"},
    "descriptor_set": {"type": "string", "minLength": 1,
                       "description": "a descriptor set file; without it, server reflection"},
    "reflection_timeout_ms": {"type": "integer", "minimum": 1, "maximum": 60000},
    "tls": {"anyOf": [{"type": "boolean"},
                      {"type": "object", "additionalProperties": false, "properties": {
                         "ca_file": {"type": "string", "minLength": 1},
                         "cert_file": {"type": "string", "minLength": 1},
                         "key_file": {"type": "string", "minLength": 1},
                         "server_name": {"type": "string", "minLength": 1}}}]},
    "metadata": {"type": "object", "additionalProperties": {"type": "string"}},
    "message": {"description": "the request message (templates allowed); without it, the tool input"},
    "max_receive_bytes": {"type": "integer", "minimum": 1, "maximum": 67108864},
    "wait_for_ready": {"type": "boolean"}
  }
})json";
}

}  // namespace crank::grpc_plugin
