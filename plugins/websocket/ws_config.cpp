#include "ws_config.h"

#include <algorithm>
#include <cctype>
#include <initializer_list>

#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

namespace crank::ws {
namespace {

using Json = rapidjson::Value;

std::string str(const Json& v) {
    return {v.GetString(), v.GetStringLength()};
}

bool templated(std::string_view text) {
    return text.find("{{") != std::string_view::npos;
}

std::string lower(std::string_view text) {
    std::string out(text);
    std::transform(out.begin(), out.end(), out.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return out;
}

std::string compact(const Json& v) {
    rapidjson::StringBuffer buffer;
    rapidjson::Writer<rapidjson::StringBuffer> writer(buffer);
    v.Accept(writer);
    return {buffer.GetString(), buffer.GetSize()};
}

class Parser {
public:
    Parser(bool rendered, const ProblemSink& problem) : rendered_(rendered), problem_(problem) {}
    bool failed() const { return failed_; }

    void parse(const Json& root, WsConfig& c) {
        unknownMembers(
            root, "",
            {"url", "headers", "subprotocols", "connect_timeout_ms", "heartbeat_interval_ms",
             "heartbeat_timeout_ms", "subscribe_message_template", "unsubscribe_message_template",
             "max_message_bytes", "reconnect", "tls", "job"});
        parseUrl(root, c);
        parseHeaders(root, c);
        if (const Json* s = member(root, "subprotocols")) {
            if (!s->IsArray()) {
                problem("subprotocols", "expected an array of subprotocol names");
            } else {
                for (rapidjson::SizeType i = 0; i < s->Size(); ++i) {
                    const Json& p = (*s)[i];
                    if (!p.IsString() || !token(str(p))) {
                        problem(
                            "subprotocols[" + std::to_string(i) + "]",
                            "expected a subprotocol name (letters, digits, and !#$%&'*+-.^_`|~)");
                    } else {
                        c.subprotocols.push_back(str(p));
                    }
                }
            }
        }
        c.connect_timeout_ms = integer(root, "connect_timeout_ms", c.connect_timeout_ms, 1, 60'000);
        c.heartbeat_interval_ms =
            integer(root, "heartbeat_interval_ms", c.heartbeat_interval_ms, 0, WsDefaults::max_ms);
        c.heartbeat_timeout_ms =
            integer(root, "heartbeat_timeout_ms", c.heartbeat_timeout_ms, 1, WsDefaults::max_ms);
        c.max_message_bytes = integer(root, "max_message_bytes", c.max_message_bytes, 1,
                                      WsDefaults::max_message_bytes_ceiling);
        c.subscribe_message = message(root, "subscribe_message_template");
        c.unsubscribe_message = message(root, "unsubscribe_message_template");
        if (const Json* r = member(root, "reconnect")) {
            if (!r->IsObject()) {
                problem("reconnect",
                        "expected an object {attempts, initial_backoff_ms, "
                        "max_backoff_ms}");
            } else {
                unknownMembers(*r, "reconnect.",
                               {"attempts", "initial_backoff_ms", "max_backoff_ms"});
                c.reconnect.attempts = static_cast<int>(
                    integer(*r, "attempts", c.reconnect.attempts, 0, 1000, "reconnect."));
                c.reconnect.initial_backoff_ms =
                    integer(*r, "initial_backoff_ms", c.reconnect.initial_backoff_ms, 1,
                            WsDefaults::max_ms, "reconnect.");
                c.reconnect.max_backoff_ms =
                    integer(*r, "max_backoff_ms", c.reconnect.max_backoff_ms, 1, WsDefaults::max_ms,
                            "reconnect.");
            }
        }
        if (const Json* t = member(root, "tls")) {
            if (!t->IsObject()) {
                problem("tls", "expected an object {verify, ca_file}");
            } else {
                unknownMembers(*t, "tls.", {"verify", "ca_file"});
                if (const Json* v = member(*t, "verify")) {
                    if (v->IsBool()) {
                        c.tls_verify = v->GetBool();
                    } else {
                        problem("tls.verify", "expected true or false");
                    }
                }
                if (const Json* f = member(*t, "ca_file")) {
                    if (f->IsString() && f->GetStringLength() > 0) {
                        c.tls_ca_file = str(*f);
                    } else {
                        problem("tls.ca_file", "expected the path of a PEM file");
                    }
                }
            }
        }
        if (const Json* j = member(root, "job")) {
            parseJob(*j, c);
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

    static bool token(std::string_view text) {
        static constexpr std::string_view kExtra = "!#$%&'*+-.^_`|~";
        return !text.empty() && std::all_of(text.begin(), text.end(), [](char ch) {
            return std::isalnum(static_cast<unsigned char>(ch)) != 0 ||
                   kExtra.find(ch) != std::string_view::npos;
        });
    }

    void unknownMembers(const Json& object, const std::string& prefix,
                        std::initializer_list<std::string_view> known) {
        for (auto it = object.MemberBegin(); it != object.MemberEnd(); ++it) {
            const std::string_view name(it->name.GetString(), it->name.GetStringLength());
            if (std::find(known.begin(), known.end(), name) == known.end()) {
                std::string list;
                for (const std::string_view k : known) {
                    list += (list.empty() ? "" : ", ") + std::string(k);
                }
                problem(prefix + std::string(name),
                        "unknown member of the WebSocket config (known: " + list + ")");
            }
        }
    }

    std::int64_t integer(const Json& object, const char* name, std::int64_t fallback,
                         std::int64_t min, std::int64_t max, const std::string& prefix = "") {
        const Json* v = member(object, name);
        if (v == nullptr) {
            return fallback;
        }
        if (!v->IsInt64() || v->GetInt64() < min || v->GetInt64() > max) {
            problem(prefix + name, "expected an integer from " + std::to_string(min) + " to " +
                                       std::to_string(max));
            return fallback;
        }
        return v->GetInt64();
    }

    void parseUrl(const Json& root, WsConfig& c) {
        const Json* u = member(root, "url");
        if (u == nullptr || !u->IsString() || u->GetStringLength() == 0) {
            problem("url", "is required: the upstream's ws:// or wss:// URL");
            return;
        }
        c.url = str(*u);
        if (!rendered_ && templated(c.url)) {
            const bool scheme = c.url.rfind("ws://", 0) == 0 || c.url.rfind("wss://", 0) == 0;
            if (!scheme) {
                problem("url", "must start with ws:// or wss:// (templates may follow)");
            }
            return;
        }
        std::string_view rest = c.url;
        if (rest.rfind("ws://", 0) == 0) {
            rest.remove_prefix(5);
        } else if (rest.rfind("wss://", 0) == 0) {
            rest.remove_prefix(6);
            c.secure = true;
        } else {
            problem("url", "expected a ws:// or wss:// URL, got \"" + c.url + "\"");
            return;
        }
        const std::size_t slash = rest.find_first_of("/?");
        std::string_view authority = rest.substr(0, slash);
        c.path_and_query = slash == std::string_view::npos ? "/" : std::string(rest.substr(slash));
        if (!c.path_and_query.empty() && c.path_and_query.front() == '?') {
            c.path_and_query.insert(0, "/");
        }
        if (authority.find('@') != std::string_view::npos) {
            problem("url", "must not carry user info: use headers or an auth profile");
            return;
        }
        std::string_view port;
        if (!authority.empty() && authority.front() == '[') {
            const std::size_t close = authority.find(']');
            if (close == std::string_view::npos) {
                problem("url", "has an unterminated IPv6 address");
                return;
            }
            c.host = std::string(authority.substr(1, close - 1));
            if (close + 1 < authority.size() && authority[close + 1] == ':') {
                port = authority.substr(close + 2);
            }
        } else {
            const std::size_t colon = authority.rfind(':');
            c.host = std::string(authority.substr(0, colon));
            if (colon != std::string_view::npos) {
                port = authority.substr(colon + 1);
            }
        }
        if (c.host.empty()) {
            problem("url", "has no host");
            return;
        }
        c.port = c.secure ? 443 : 80;
        if (!port.empty()) {
            unsigned value = 0;
            for (const char ch : port) {
                if (ch < '0' || ch > '9' || value > 65535) {
                    value = 70000;
                    break;
                }
                value = value * 10 + static_cast<unsigned>(ch - '0');
            }
            if (value == 0 || value > 65535) {
                problem("url", "has an invalid port");
                return;
            }
            c.port = static_cast<std::uint16_t>(value);
        }
        for (const char ch : c.path_and_query) {
            if (static_cast<unsigned char>(ch) <= 0x20 || ch == 0x7f) {
                problem("url",
                        "must not contain spaces or control characters (percent-encode them)");
                return;
            }
        }
    }

    void parseHeaders(const Json& root, WsConfig& c) {
        const Json* h = member(root, "headers");
        if (h == nullptr) {
            return;
        }
        if (!h->IsObject()) {
            problem("headers", "expected an object of header names and string values");
            return;
        }
        for (auto it = h->MemberBegin(); it != h->MemberEnd(); ++it) {
            const std::string name(it->name.GetString(), it->name.GetStringLength());
            const std::string path = "headers." + name;
            const std::string l = lower(name);
            if (!token(name)) {
                problem(path, "is not a header name");
                continue;
            }
            if (l == "host" || l == "upgrade" || l == "connection" || l == "content-length" ||
                l.rfind("sec-websocket-", 0) == 0) {
                problem(path, "is set by the plugin itself (the WebSocket handshake)");
                continue;
            }
            if (!it->value.IsString()) {
                problem(path, "expected a string");
                continue;
            }
            const std::string value = str(it->value);
            if (rendered_ || !templated(value)) {
                const bool bad = std::any_of(value.begin(), value.end(), [](char ch) {
                    return ch == '\r' || ch == '\n' || ch == '\0';
                });
                if (bad) {
                    problem(path, "must not contain line breaks");
                    continue;
                }
            }
            c.headers.emplace_back(name, value);
        }
    }

    std::optional<std::string> message(const Json& root, const char* name) {
        const Json* m = member(root, name);
        if (m == nullptr || m->IsNull()) {
            return std::nullopt;
        }
        if (m->IsString()) {
            return str(*m);
        }
        if (!m->IsObject() && !m->IsArray()) {
            problem(name,
                    "expected a JSON object or array (sent as JSON text) or a string (sent "
                    "as it is)");
            return std::nullopt;
        }
        return compact(*m);
    }

    std::optional<MessagePath> path(const Json& object, const char* name) {
        const Json* p = member(object, name);
        if (p == nullptr) {
            return std::nullopt;
        }
        sdk::PathError error;
        std::optional<sdk::Path> parsed;
        if (p->IsString()) {
            parsed = sdk::parsePath(str(*p), &error);
        }
        if (!parsed || parsed->hasWildcard()) {
            problem(std::string("job.") + name,
                    "expected a path into the message, e.g. \"$.status\"");
            return std::nullopt;
        }
        return MessagePath{str(*p), std::move(*parsed)};
    }

    void parseJob(const Json& j, WsConfig& c) {
        if (!j.IsObject()) {
            problem("job",
                    "expected an object {done_path, status_path, progress_path, total_path, "
                    "result_path, error_path}");
            return;
        }
        unknownMembers(j, "job.",
                       {"done_path", "status_path", "progress_path", "total_path", "result_path",
                        "error_path"});
        JobOptions job;
        auto done = path(j, "done_path");
        if (!done) {
            if (member(j, "done_path") == nullptr) {
                problem("job.done_path", "is required: the path that is true on the final message");
            }
            return;
        }
        job.done_path = std::move(*done);
        job.status_path = path(j, "status_path");
        job.progress_path = path(j, "progress_path");
        job.total_path = path(j, "total_path");
        job.result_path = path(j, "result_path");
        job.error_path = path(j, "error_path");
        c.job = std::move(job);
    }

    bool rendered_;
    const ProblemSink& problem_;
    bool failed_ = false;
};

}  // namespace

std::optional<WsConfig> parseWsConfig(std::string_view json, bool rendered,
                                      const ProblemSink& problem) {
    rapidjson::Document doc;
    doc.Parse(json.data(), json.size());
    if (doc.HasParseError() || !doc.IsObject()) {
        problem("", "expected a JSON object");
        return std::nullopt;
    }
    Parser parser(rendered, problem);
    WsConfig c;
    parser.parse(doc, c);
    if (parser.failed()) {
        return std::nullopt;
    }
    return c;
}

std::string_view wsConfigSchema() {
    return R"json({
  "type": "object",
  "additionalProperties": false,
  "required": ["url"],
  "properties": {
    "url": {"type": "string", "format": "uri", "minLength": 1, "description": "ws:// or wss:// URL; templates allowed, each value percent-encoded"},
    "headers": {"type": "object", "additionalProperties": {"type": "string"}},
    "subprotocols": {"type": "array", "items": {"type": "string", "minLength": 1}},
    "connect_timeout_ms": {"type": "integer", "minimum": 1, "maximum": 60000},
    "heartbeat_interval_ms": {"type": "integer", "minimum": 0, "maximum": 3600000},
    "heartbeat_timeout_ms": {"type": "integer", "minimum": 1, "maximum": 3600000},
    "subscribe_message_template": {"description": "sent after the handshake: JSON (object, array) or text"},
    "unsubscribe_message_template": {"description": "sent before a requested close"},
    "max_message_bytes": {"type": "integer", "minimum": 1, "maximum": 67108864},
    "reconnect": {"type": "object", "additionalProperties": false, "properties": {
      "attempts": {"type": "integer", "minimum": 0, "maximum": 1000},
      "initial_backoff_ms": {"type": "integer", "minimum": 1, "maximum": 3600000},
      "max_backoff_ms": {"type": "integer", "minimum": 1, "maximum": 3600000}}},
    "tls": {"type": "object", "additionalProperties": false, "properties": {
      "verify": {"type": "boolean"}, "ca_file": {"type": "string", "minLength": 1}}},
    "job": {"type": "object", "additionalProperties": false, "required": ["done_path"], "properties": {
      "done_path": {"type": "string"}, "status_path": {"type": "string"},
      "progress_path": {"type": "string"}, "total_path": {"type": "string"},
      "result_path": {"type": "string"}, "error_path": {"type": "string"}}}
  }
})json";
}

}  // namespace crank::ws
