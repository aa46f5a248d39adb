#include "rest_config.h"

#include <algorithm>
#include <array>

#include <rapidjson/document.h>
#include <rapidjson/error/en.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "json_util.h"
#include "text_util.h"

namespace crank::rest {
namespace {

using Json = rapidjson::Value;

constexpr std::int64_t kMaxMs = 24LL * 3'600'000;
constexpr std::size_t kMaxDepth = 256;
constexpr std::size_t kMaxEventCeiling = std::size_t{256} * 1024 * 1024;
constexpr std::size_t kMaxJobUrl = 8192;
constexpr std::uint64_t kMaxPolls = 1'000'000'000;

constexpr std::array<std::string_view, 7> kMethods = {"GET",   "HEAD",   "POST",   "PUT",
                                                      "PATCH", "DELETE", "OPTIONS"};
constexpr std::array<std::string_view, 5> kCancelMethods = {"DELETE", "POST", "PUT", "PATCH",
                                                            "GET"};
std::string lower(std::string_view s) {
    std::string out(s);
    std::transform(out.begin(), out.end(), out.begin(), [](char c) {
        return static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
    });
    return out;
}

class Parser {
public:
    Parser(bool rendered, std::vector<ConfigProblem>& problems)
        : rendered_(rendered), problems_(problems) {}

    void problem(std::string path, std::string message) {
        problems_.push_back({std::move(path), std::move(message)});
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

    std::optional<std::size_t> bytes(const Json& parent, const char* key, std::string path,
                                     std::size_t ceiling) {
        const auto it = parent.FindMember(key);
        if (it == parent.MemberEnd()) {
            return std::nullopt;
        }
        if (!it->value.IsUint64() || it->value.GetUint64() < 1 || it->value.GetUint64() > ceiling) {
            problem(std::move(path),
                    "expected a whole number of bytes from 1 to " + std::to_string(ceiling));
            return std::nullopt;
        }
        return static_cast<std::size_t>(it->value.GetUint64());
    }

    const Json* object(const Json& parent, const char* key, const std::string& path) {
        const auto it = parent.FindMember(key);
        if (it == parent.MemberEnd()) {
            return nullptr;
        }
        if (!it->value.IsObject()) {
            problem(path, "expected an object");
            return nullptr;
        }
        return &it->value;
    }

    void unknownMembers(const Json& object, const std::string& prefix,
                        std::initializer_list<std::string_view> known) {
        for (const auto& m : object.GetObject()) {
            const std::string_view name(m.name.GetString(), m.name.GetStringLength());
            if (std::find(known.begin(), known.end(), name) == known.end()) {
                problem(prefix + std::string(name), "unknown member of the REST config");
            }
        }
    }

    void parse(const Json& root, RestConfig& c) {
        unknownMembers(root, "",
                       {"url", "method", "query", "headers", "body", "timeouts", "tls",
                        "max_response_bytes", "accept", "follow_redirects", "redirect_origins",
                        "compression", "cursor_param", "keep_alive", "sse", "job"});
        // headers, timeouts, tls, max_response_bytes, follow_redirects, compression, keep_alive:
        // sdk::http::readHttpSettings() (parseRestConfig).
        // url
        const auto url = root.FindMember("url");
        if (url == root.MemberEnd()) {
            problem("url", "is required: the upstream's absolute http:// or https:// URL");
        } else if (!url->value.IsString()) {
            problem("url", "expected a string");
        } else {
            c.url_text = jsonStr(url->value);
            const bool templated = c.url_text.find("{{") != std::string::npos;
            if (rendered_ || !templated) {
                std::string error;
                c.url = parseUrl(c.url_text, error);
                if (!c.url) {
                    problem("url", error);
                }
            } else {
                // Templates still in it: the scheme at least must be literal.
                const std::string head = lower(c.url_text.substr(0, 8));
                if (head.rfind("http://", 0) != 0 && head.rfind("https://", 0) != 0) {
                    problem("url", "must start with http:// or https:// (templates may follow)");
                }
            }
        }
        // method
        const auto method = root.FindMember("method");
        if (method != root.MemberEnd()) {
            const std::string m = method->value.IsString() ? jsonStr(method->value) : std::string();
            if (std::find(kMethods.begin(), kMethods.end(), m) == kMethods.end()) {
                problem(
                    "method",
                    "expected one of GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS (upper case)");
            } else {
                c.method = m;
            }
        }
        // query
        if (const Json* q = object(root, "query", "query")) {
            for (const auto& m : q->GetObject()) {
                const std::string name = jsonStr(m.name);
                const std::string path = "query." + name;
                if (name.empty()) {
                    problem(path, "a query parameter needs a name");
                    continue;
                }
                const auto add = [&](const Json& v) {
                    if (v.IsNull()) {
                        return;
                    }
                    if (auto text = scalarText(v)) {
                        c.query.emplace_back(name, std::move(*text));
                    } else {
                        problem(path,
                                "expected a string, number, boolean, null, or an array of them");
                    }
                };
                if (m.value.IsArray()) {
                    for (const auto& e : m.value.GetArray()) {
                        add(e);
                    }
                } else {
                    add(m.value);
                }
            }
        }
        // body
        const auto body = root.FindMember("body");
        if (body != root.MemberEnd()) {
            if (c.method == "GET" || c.method == "HEAD" || c.method == "OPTIONS") {
                problem("body", "a " + c.method + " request cannot have a body");
            } else {
                c.body = compactJson(body->value);
            }
        }
        // accept
        const auto accept = root.FindMember("accept");
        if (accept != root.MemberEnd()) {
            if (!accept->value.IsArray() || accept->value.Empty()) {
                problem("accept", "expected a non-empty array of media types");
            } else {
                c.accept.clear();
                for (const auto& e : accept->value.GetArray()) {
                    const std::string range = e.IsString() ? lower(jsonStr(e)) : std::string();
                    const std::size_t slash = range.find('/');
                    if (slash == std::string::npos || slash == 0 || slash + 1 == range.size()) {
                        problem("accept",
                                "expected media types like \"application/json\", "
                                "\"text/*\" or \"*/*\"");
                        break;
                    }
                    c.accept.push_back(range);
                }
            }
        }
        const auto cursor = root.FindMember("cursor_param");
        if (cursor != root.MemberEnd()) {
            if (cursor->value.IsString() && cursor->value.GetStringLength() > 0) {
                c.cursor_param = jsonStr(cursor->value);
            } else {
                problem("cursor_param", "expected the name of a query parameter");
            }
        }
        if (const Json* s = object(root, "sse", "sse")) {
            unknownMembers(*s, "sse.",
                           {"events", "data", "envelope", "max_event_bytes", "max_line_bytes"});
            const auto events = s->FindMember("events");
            if (events != s->MemberEnd()) {
                if (!events->value.IsArray()) {
                    problem("sse.events", "expected an array of event types");
                } else {
                    for (const auto& e : events->value.GetArray()) {
                        if (!e.IsString() || e.GetStringLength() == 0) {
                            problem("sse.events", "expected an array of event types (strings)");
                            break;
                        }
                        c.sse.events.push_back(jsonStr(e));
                    }
                }
            }
            const auto data = s->FindMember("data");
            if (data != s->MemberEnd()) {
                const std::string d = data->value.IsString() ? jsonStr(data->value) : std::string();
                if (d != "json" && d != "text") {
                    problem("sse.data", R"(expected "json" or "text")");
                } else {
                    c.sse.text = d == "text";
                }
            }
            const auto envelope = s->FindMember("envelope");
            if (envelope != s->MemberEnd()) {
                if (envelope->value.IsBool()) {
                    c.sse.envelope = envelope->value.GetBool();
                } else {
                    problem("sse.envelope", "expected true or false");
                }
            }
            c.sse.max_event_bytes =
                bytes(*s, "max_event_bytes", "sse.max_event_bytes", kMaxEventCeiling);
            c.sse.max_line_bytes =
                bytes(*s, "max_line_bytes", "sse.max_line_bytes", kMaxEventCeiling);
        }
        if (const Json* j = object(root, "job", "job")) {
            if (!c.cursor_param.empty()) {
                problem("job",
                        "cannot be combined with cursor_param: cursor_param is for long-poll "
                        "windows, a job keeps its own cursor");
            }
            c.job.emplace();
            parseJob(*j, c);
        }
    }

private:
    /// A path member of `job`: parsed, no wildcard.
    void jobPath(const Json& job, const char* key, JobPath& out) {
        const auto it = job.FindMember(key);
        if (it == job.MemberEnd()) {
            return;
        }
        const std::string path = std::string("job.") + key;
        if (!it->value.IsString()) {
            problem(path, "expected a path string such as \"$.status\"");
            return;
        }
        const std::string text = jsonStr(it->value);
        sdk::PathError error;
        std::optional<sdk::Path> parsed = sdk::parsePath(text, &error);
        if (!parsed) {
            problem(path, "not a valid path: " + error.message + " at byte " +
                              std::to_string(error.offset));
            return;
        }
        if (parsed->hasWildcard()) {
            problem(path, "must name one value: \"*\" is not allowed here");
            return;
        }
        out.text = text.empty() ? "$" : text;
        out.path = std::move(*parsed);
    }

    /// A URL template member of `job` ("{id}" for the job id): checked against the request URL
    /// when neither holds an input template any more.
    void jobUrl(const Json& job, const char* key, const RestConfig& c, std::string& out) {
        const auto it = job.FindMember(key);
        if (it == job.MemberEnd()) {
            return;
        }
        const std::string path = std::string("job.") + key;
        if (!it->value.IsString() || it->value.GetStringLength() == 0) {
            problem(path, "expected an absolute or relative URL (\"{id}\" for the job id)");
            return;
        }
        out = jsonStr(it->value);
        if (out.size() > kMaxJobUrl) {
            problem(path, "longer than " + std::to_string(kMaxJobUrl) + " bytes");
            return;
        }
        if (out.find("{{") != std::string::npos || !c.url) {
            return;  // input templates still in it: checked per call
        }
        std::string error;
        std::optional<Url> resolved = resolveUrl(*c.url, expandJobTemplate(out, "id"), error);
        if (!resolved) {
            problem(path, "not a usable URL: " + error);
        } else if (c.url->tls() && !resolved->tls()) {
            problem(path, "an https:// request cannot follow its job over http://");
        }
    }

    void stateValues(const Json& job, const char* key, std::vector<std::string>& out) {
        const auto it = job.FindMember(key);
        if (it == job.MemberEnd()) {
            return;
        }
        const std::string path = std::string("job.") + key;
        if (!it->value.IsArray() || it->value.Empty()) {
            problem(path, "expected a non-empty array of state values (strings)");
            return;
        }
        out.clear();
        for (const auto& e : it->value.GetArray()) {
            if (!e.IsString() || e.GetStringLength() == 0) {
                problem(path, "expected a non-empty array of state values (strings)");
                return;
            }
            out.push_back(jsonStr(e));
        }
    }

    void parseJob(const Json& j, RestConfig& c) {
        JobOptions& job = *c.job;
        unknownMembers(j, "job.",
                       {"status_url_path", "status_url", "id_path", "poll_interval_ms",
                        "state_path", "done_values", "failed_values", "progress_path", "total_path",
                        "message_path", "error_path", "result_url_path", "result_url",
                        "result_path", "cancel_method", "cancel_url", "max_polls"});
        jobPath(j, "status_url_path", job.status_url_path);
        jobUrl(j, "status_url", c, job.status_url);
        const bool hasStatusPath = j.HasMember("status_url_path");
        const bool hasStatusUrl = j.HasMember("status_url");
        if (hasStatusPath && hasStatusUrl) {
            problem("job.status_url", "give job.status_url_path or job.status_url, not both");
        } else if (!hasStatusPath && !hasStatusUrl) {
            problem("job",
                    "needs job.status_url_path (where the start response gives the status URL) "
                    "or job.status_url (a URL template with {id})");
        }
        job.id_path = JobPath{"$.id", *sdk::parsePath("$.id")};
        jobPath(j, "id_path", job.id_path);
        const auto interval = j.FindMember("poll_interval_ms");
        if (interval != j.MemberEnd()) {
            if (!interval->value.IsInt64() ||
                interval->value.GetInt64() < RestDefaults::job_min_poll_interval_ms ||
                interval->value.GetInt64() > RestDefaults::job_max_poll_interval_ms) {
                problem("job.poll_interval_ms",
                        "expected a whole number of milliseconds from " +
                            std::to_string(RestDefaults::job_min_poll_interval_ms) + " to " +
                            std::to_string(RestDefaults::job_max_poll_interval_ms));
            } else {
                job.poll_interval_ms = interval->value.GetInt64();
            }
        }
        job.state_path = JobPath{"$.status", *sdk::parsePath("$.status")};
        jobPath(j, "state_path", job.state_path);
        stateValues(j, "done_values", job.done_values);
        stateValues(j, "failed_values", job.failed_values);
        for (const std::string& v : job.done_values) {
            if (std::find(job.failed_values.begin(), job.failed_values.end(), v) !=
                job.failed_values.end()) {
                problem("job.failed_values", "\"" + v + "\" is also in job.done_values");
                break;
            }
        }
        jobPath(j, "progress_path", job.progress_path);
        jobPath(j, "total_path", job.total_path);
        jobPath(j, "message_path", job.message_path);
        jobPath(j, "error_path", job.error_path);
        jobPath(j, "result_url_path", job.result_url_path);
        jobUrl(j, "result_url", c, job.result_url);
        jobPath(j, "result_path", job.result_path);
        if (j.HasMember("result_url_path") && j.HasMember("result_url")) {
            problem("job.result_url", "give job.result_url_path or job.result_url, not both");
        }
        if (j.HasMember("result_path") &&
            (j.HasMember("result_url_path") || j.HasMember("result_url"))) {
            problem("job.result_path",
                    "the result is read from the status response only when no result URL "
                    "(job.result_url_path, job.result_url) is given");
        }
        const auto cancelMethod = j.FindMember("cancel_method");
        if (cancelMethod != j.MemberEnd()) {
            const std::string m =
                cancelMethod->value.IsString() ? jsonStr(cancelMethod->value) : std::string();
            if (std::find(kCancelMethods.begin(), kCancelMethods.end(), m) ==
                kCancelMethods.end()) {
                problem("job.cancel_method",
                        "expected one of DELETE, POST, PUT, PATCH, GET (upper case)");
            } else {
                job.cancel_method = m;
            }
        }
        jobUrl(j, "cancel_url", c, job.cancel_url);
        if (j.HasMember("cancel_url") && !j.HasMember("cancel_method")) {
            problem("job.cancel_url", "needs job.cancel_method (the method of the cancel request)");
        }
        const auto maxPolls = j.FindMember("max_polls");
        if (maxPolls != j.MemberEnd()) {
            if (!maxPolls->value.IsUint64() || maxPolls->value.GetUint64() > kMaxPolls) {
                problem("job.max_polls", "expected a whole number from 0 (no bound) to " +
                                             std::to_string(kMaxPolls));
            } else {
                job.max_polls = maxPolls->value.GetUint64();
            }
        }
    }

    bool rendered_;
    std::vector<ConfigProblem>& problems_;
};

}  // namespace

std::optional<RestConfig> parseRestConfig(std::string_view json, bool rendered,
                                          std::vector<ConfigProblem>& problems) {
    if (jsonNestingDepth(json) > kMaxDepth) {
        problems.push_back(
            {"", "the REST config is nested deeper than " + std::to_string(kMaxDepth) + " levels"});
        return std::nullopt;
    }
    rapidjson::Document doc;
    doc.Parse<rapidjson::kParseIterativeFlag>(json.data(), json.size());
    if (doc.HasParseError()) {
        problems.push_back({"", std::string("the REST config is not valid JSON: ") +
                                    rapidjson::GetParseError_En(doc.GetParseError()) + " at byte " +
                                    std::to_string(doc.GetErrorOffset())});
        return std::nullopt;
    }
    if (!doc.IsObject()) {
        problems.push_back({"", "the REST config must be an object"});
        return std::nullopt;
    }
    RestConfig config;
    const std::size_t before = problems.size();
    Parser(rendered, problems).parse(doc, config);
    std::vector<sdk::http::SettingProblem> settingProblems;
    sdk::http::readHttpSettings(doc, "REST", config.http, settingProblems);
    for (auto& p : settingProblems) {
        problems.push_back({std::move(p.path), std::move(p.message)});
    }
    if (problems.size() != before) {
        return std::nullopt;
    }
    return config;
}

bool JobOptions::needsId() const {
    for (const std::string* t : {&status_url, &result_url, &cancel_url}) {
        if (t->find("{id}") != std::string::npos) {
            return true;
        }
    }
    return false;
}

std::string expandJobTemplate(std::string_view url_template, std::string_view id) {
    std::string out;
    for (std::size_t i = 0; i < url_template.size();) {
        if (url_template.compare(i, 4, "{id}") == 0) {
            appendQueryComponent(out, id);
            i += 4;
        } else {
            out.push_back(url_template[i]);
            ++i;
        }
    }
    return out;
}

bool isJsonMediaType(std::string_view type) {
    return type == "application/json" ||
           (type.size() > 5 && type.substr(type.size() - 5) == "+json");
}

bool mediaTypeAccepted(std::string_view type, const std::vector<std::string>& ranges) {
    const std::size_t slash = type.find('/');
    const std::string_view major = type.substr(0, slash);
    for (const std::string& range : ranges) {
        if (range == "*/*" || range == type) {
            return true;
        }
        const std::size_t rslash = range.find('/');
        const std::string_view rmajor = std::string_view(range).substr(0, rslash);
        const std::string_view rminor = std::string_view(range).substr(rslash + 1);
        if (rmajor != major) {
            continue;
        }
        if (rminor == "*") {
            return true;
        }
        // "application/*+json": any subtype with that suffix.
        if (rminor.size() > 1 && rminor.front() == '*' && slash != std::string_view::npos) {
            const std::string_view suffix = rminor.substr(1);
            const std::string_view minor = type.substr(slash + 1);
            if (minor.size() > suffix.size() &&
                minor.substr(minor.size() - suffix.size()) == suffix) {
                return true;
            }
        }
    }
    return false;
}

std::string_view restConfigSchema() {
    return R"({
  "type": "object",
  "required": ["url"],
  "properties": {
    "url": {"type": "string", "format": "uri", "minLength": 1, "description": "absolute http(s) URL; templates allowed, each value percent-encoded"},
    "method": {"enum": ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]},
    "query": {"type": "object", "additionalProperties": {"type": ["string", "number", "boolean", "null", "array"]}},
    "headers": {"type": "object", "additionalProperties": {"type": ["string", "number", "boolean", "null"]}},
    "body": {},
    "timeouts": {"type": "object", "additionalProperties": false, "properties": {
      "connect_ms": {"type": "integer", "minimum": 1, "maximum": 86400000},
      "headers_ms": {"type": "integer", "minimum": 1, "maximum": 86400000},
      "total_ms": {"type": "integer", "minimum": 1, "maximum": 86400000}}},
    "tls": {"type": "object", "additionalProperties": false, "properties": {
      "verify": {"type": "boolean"}, "ca_file": {"type": "string", "minLength": 1}}},
    "max_response_bytes": {"type": "integer", "minimum": 1, "maximum": 1073741824},
    "accept": {"type": "array", "minItems": 1, "items": {"type": "string"}},
    "follow_redirects": {"type": "integer", "minimum": 0, "maximum": 20},
    "redirect_origins": {"type": "array", "items": {"type": "string", "minLength": 1}},
    "compression": {"type": "boolean"},
    "cursor_param": {"type": "string", "minLength": 1},
    "keep_alive": {"type": "object", "additionalProperties": false, "properties": {
      "max_idle": {"type": "integer", "minimum": 0, "maximum": 1024},
      "idle_timeout_ms": {"type": "integer", "minimum": 1, "maximum": 86400000}}},
    "sse": {"type": "object", "additionalProperties": false, "properties": {
      "events": {"type": "array", "items": {"type": "string", "minLength": 1}},
      "data": {"enum": ["json", "text"]},
      "envelope": {"type": "boolean"},
      "max_event_bytes": {"type": "integer", "minimum": 1, "maximum": 268435456},
      "max_line_bytes": {"type": "integer", "minimum": 1, "maximum": 268435456}}},
    "job": {"type": "object", "additionalProperties": false, "properties": {
      "status_url_path": {"type": "string"},
      "status_url": {"type": "string", "format": "uri", "minLength": 1},
      "id_path": {"type": "string"},
      "poll_interval_ms": {"type": "integer", "minimum": 10, "maximum": 3600000},
      "state_path": {"type": "string"},
      "done_values": {"type": "array", "minItems": 1, "items": {"type": "string", "minLength": 1}},
      "failed_values": {"type": "array", "minItems": 1, "items": {"type": "string", "minLength": 1}},
      "progress_path": {"type": "string"},
      "total_path": {"type": "string"},
      "message_path": {"type": "string"},
      "error_path": {"type": "string"},
      "result_url_path": {"type": "string"},
      "result_url": {"type": "string", "format": "uri", "minLength": 1},
      "result_path": {"type": "string"},
      "cancel_method": {"enum": ["DELETE", "POST", "PUT", "PATCH", "GET"]},
      "cancel_url": {"type": "string", "format": "uri", "minLength": 1},
      "max_polls": {"type": "integer", "minimum": 0, "maximum": 1000000000}}}
  },
  "additionalProperties": false
})";
}

}  // namespace crank::rest
