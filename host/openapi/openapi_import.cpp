#include "openapi/openapi_import.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <initializer_list>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include <fmt/core.h>
#include <rapidjson/document.h>
#include <rapidjson/prettywriter.h>
#include <rapidjson/stringbuffer.h>

#include "json/json_parse.h"
#include "json/json_schema.h"
#include "json/json_template.h"
#include "json/json_text.h"
#include "openapi/openapi_support.h"
#include "openapi/schema_converter.h"
#include <crank/sdk/path.hpp>

namespace crank::openapi {
namespace {

using detail::childPointer;
using detail::documentError;
using detail::RefTarget;
using json::Value;

constexpr std::size_t kMaxToolName = 128;
constexpr std::size_t kMaxPrefix = 64;
constexpr std::size_t kMaxTitle = 256;
constexpr std::size_t kMaxDescription = 8192;
/// crankd's config file limit (config/config_loader.h): a larger output is still printed.
constexpr std::size_t kConfigFileLimit = std::size_t{16} * 1024 * 1024;
/// Where a parameter's schema sits in the input schema: root (1), properties (2), property (3).
constexpr std::size_t kPropertyDepth = 3;

constexpr std::array<std::string_view, 8> kMethods{"get",     "put",  "post",  "delete",
                                                   "options", "head", "patch", "trace"};

std::string_view view(const Value& v) {
    return {v.GetString(), v.GetStringLength()};
}

const Value* member(const Value& v, std::string_view key) {
    return detail::findMember(v, key);
}

/// A member that must be a string when present: the string, "" when absent.
std::string_view stringMember(const Value& v, std::string_view key) {
    const Value* m = member(v, key);
    return m != nullptr && m->IsString() ? view(*m) : std::string_view();
}

bool isTrue(const Value* v) {
    return v != nullptr && v->IsBool() && v->GetBool();
}

std::string lower(std::string_view text) {
    std::string out(text);
    std::transform(out.begin(), out.end(), out.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return out;
}

std::string upper(std::string_view text) {
    std::string out(text);
    std::transform(out.begin(), out.end(), out.begin(),
                   [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
    return out;
}

bool isSpace(char c) {
    return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

std::string_view trim(std::string_view text) {
    while (!text.empty() && isSpace(text.front())) {
        text.remove_prefix(1);
    }
    while (!text.empty() && isSpace(text.back())) {
        text.remove_suffix(1);
    }
    return text;
}

/// Runs of characters that are not allowed in a tool name become one "_"; none at either end.
std::string sanitizeName(std::string_view text) {
    std::string out;
    bool pending = false;
    for (char c : text) {
        if (!detail::isToolNameChar(c)) {
            pending = true;
            continue;
        }
        if (pending && !out.empty()) {
            out.push_back('_');
        }
        pending = false;
        out.push_back(c);
    }
    return out;
}

/// An HTTP header name (RFC 9110 token).
bool isToken(std::string_view name) {
    constexpr std::string_view extra = "!#$%&'*+-.^_`|~";
    return !name.empty() && std::all_of(name.begin(), name.end(), [&](char c) {
        return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
               extra.find(c) != std::string_view::npos;
    });
}

/// The template path (SDK path syntax) that reads input member `name`, or nullopt when no
/// template can name it (`|`, `{{`, `}}`, or white space at either end).
std::optional<std::string> templatePath(std::string_view name) {
    if (name.empty() || name.find('|') != std::string_view::npos ||
        name.find("{{") != std::string_view::npos || name.find("}}") != std::string_view::npos ||
        isSpace(name.front()) || isSpace(name.back())) {
        return std::nullopt;
    }
    std::string path = name.front() == '$' ? "$." : "";
    for (char c : name) {
        if (c == '.' || c == '*' || c == '\\') {
            path.push_back('\\');
        }
        path.push_back(c);
    }
    const std::optional<sdk::Path> parsed = sdk::parsePath(path);
    if (!parsed || parsed->segments.size() != 1 ||
        parsed->segments[0].kind != sdk::PathSegment::Kind::name ||
        parsed->segments[0].name != name) {
        return std::nullopt;
    }
    return path;
}

/// Literal text inside a template string: "{{" must be written "\{{".
void appendLiteral(std::string& out, std::string_view text) {
    for (std::size_t i = 0; i < text.size(); ++i) {
        if (text.compare(i, 2, "{{") == 0) {
            out += "\\{{";
            ++i;
        } else {
            out.push_back(text[i]);
        }
    }
}

/// A literal piece of a path: characters a URL path may not hold are percent-encoded (an
/// existing %XX is kept), "{{" is escaped for the template.
void appendPathLiteral(std::string& out, std::string_view text) {
    static constexpr char hex[] = "0123456789ABCDEF";
    constexpr std::string_view allowed = "-._~!$&'()*+,;=:@/%";
    std::string encoded;
    for (char c : text) {
        const auto u = static_cast<unsigned char>(c);
        if ((u >= 'A' && u <= 'Z') || (u >= 'a' && u <= 'z') || (u >= '0' && u <= '9') ||
            allowed.find(c) != std::string_view::npos) {
            encoded.push_back(c);
        } else {
            encoded.push_back('%');
            encoded.push_back(hex[u >> 4U]);
            encoded.push_back(hex[u & 0x0FU]);
        }
    }
    appendLiteral(out, encoded);
}

/// "application/json" or a "+json" type (parameters and case aside).
bool isJsonMediaType(std::string_view media_type, bool exact) {
    std::string type = lower(trim(media_type.substr(0, media_type.find(';'))));
    if (type == "application/json") {
        return true;
    }
    return !exact && type.find('/') != std::string::npos && type.ends_with("+json");
}

/// True when a converted schema declares that its value may be an array or an object.
bool mayBeStructured(const Value& schema) {
    const Value* type = member(schema, "type");
    if (type == nullptr) {
        return false;
    }
    const auto structured = [](const Value& t) {
        return t.IsString() && (view(t) == "array" || view(t) == "object");
    };
    if (type->IsArray()) {
        return std::any_of(type->Begin(), type->End(), structured);
    }
    return structured(*type);
}

/// One segment of a path template: literal text, or a `{name}` parameter.
struct PathPart {
    std::string text;
    bool parameter = false;
};

Result<std::vector<PathPart>> splitPath(std::string_view path, std::string_view pointer) {
    std::vector<PathPart> parts;
    std::size_t i = 0;
    while (i < path.size()) {
        const std::size_t open = path.find('{', i);
        if (open == std::string_view::npos) {
            parts.push_back({std::string(path.substr(i)), false});
            break;
        }
        if (open > i) {
            parts.push_back({std::string(path.substr(i, open - i)), false});
        }
        const std::size_t close = path.find('}', open);
        if (close == std::string_view::npos) {
            return documentError(pointer,
                                 fmt::format("unclosed \"{{\" at byte {} of the path", open));
        }
        if (close == open + 1) {
            return documentError(pointer,
                                 fmt::format("empty \"{{}}\" at byte {} of the path", open));
        }
        parts.push_back({std::string(path.substr(open + 1, close - open - 1)), true});
        i = close + 1;
    }
    return parts;
}

/// A parameter of an operation (path-level and operation-level merged).
struct Param {
    std::string name;
    std::string in;
    const Value* value = nullptr;  ///< the parameter object ($ref followed)
    std::string pointer;           ///< where it is written
};

/// The pieces of one operation being built.
struct Built {
    Value properties{rapidjson::kObjectType};
    Value required{rapidjson::kArrayType};
    Value query{rapidjson::kObjectType};
    Value headers{rapidjson::kObjectType};
    std::optional<std::string> body_template;
    std::unordered_set<std::string> keys;                           ///< input property names used
    std::unordered_set<std::string> header_names;                   ///< lower case
    std::unordered_map<std::string, std::string> path_expressions;  ///< path param: template
};

class Importer {
public:
    Importer(const Value& root, const ImportOptions& options)
        : root_(root),
          options_(options),
          allocator_(out_.GetAllocator()),
          warnings_(options.limits.max_warnings),
          converter_(root, allocator_, warnings_, budget_) {}

    Result<ImportResult> run();

private:
    Result<void> checkDocument();
    Result<void> importPath(std::string_view path, const Value& item_value,
                            const std::string& item_pointer);
    Result<void> importOperation(std::string_view path, const std::vector<PathPart>& parts,
                                 const RefTarget& item, const std::vector<Param>& path_params,
                                 std::string_view method, const Value& op,
                                 const std::string& pointer);
    Result<std::vector<Param>> collectParams(const Value* list, const std::string& pointer);
    std::string toolName(std::string_view path, std::string_view method, const Value& op,
                         const std::string& pointer);
    Result<std::string> serverUrl(const Value& op, const std::string& op_pointer,
                                  const RefTarget& item);
    Result<std::string> resolveServer(const Value& server, const std::string& pointer);
    Result<void> addParam(const Param& p, const std::vector<PathPart>& path_parts, Built& built);
    Result<void> addBody(const Value& op, const std::string& pointer, std::string_view method,
                         Built& built);
    std::string propertyKey(const std::string& name, std::string_view in,
                            const std::string& pointer, Built& built);
    void annotate(Value& schema, const Value& source);
    /// A string value (copied; embedded NUL bytes kept).
    Value text(std::string_view s) {
        return Value(s.data(), static_cast<rapidjson::SizeType>(s.size()), allocator_);
    }
    Result<void> finalCheck(const Value& operation, const std::string& pointer);

    const Value& root_;
    const ImportOptions& options_;
    json::Document out_;
    json::Allocator& allocator_;
    detail::Warnings warnings_;
    detail::Budget budget_;
    detail::SchemaConverter converter_;
    Value operations_{rapidjson::kArrayType};
    std::unordered_map<std::string, std::string> names_;  ///< tool name: the operation's pointer
    bool version_31_ = false;
};

Result<void> Importer::checkDocument() {
    if (!root_.IsObject()) {
        return documentError("", fmt::format("the document is not an OpenAPI 3 object: expected "
                                             "a JSON object, got {}",
                                             json::describeValue(root_)));
    }
    if (member(root_, "swagger") != nullptr) {
        return documentError("",
                             "Swagger 2.0 is not supported; convert it to OpenAPI 3 (for "
                             "example with https://converter.swagger.io) and import that");
    }
    const Value* version = member(root_, "openapi");
    if (version == nullptr) {
        return documentError("/openapi", "missing: the document is not an OpenAPI 3 object");
    }
    if (!version->IsString()) {
        return documentError("/openapi", fmt::format("must be a version string like \"3.1.0\", "
                                                     "got {}",
                                                     json::describeValue(*version)));
    }
    const std::string_view v = view(*version);
    if (v == "3.0" || v.starts_with("3.0.")) {
        version_31_ = false;
    } else if (v == "3.1" || v.starts_with("3.1.")) {
        version_31_ = true;
    } else if (v.starts_with("3.")) {
        version_31_ = true;
        warnings_.add("/openapi",
                      fmt::format("version {} is read as 3.1", json::describeValue(*version)));
    } else {
        return documentError("/openapi",
                             fmt::format("unsupported version {}: only OpenAPI 3.0.x and 3.1.x "
                                         "are imported",
                                         json::describeValue(*version)));
    }
    return {};
}

Result<ImportResult> Importer::run() {
    if (auto checked = checkDocument(); !checked) {
        return checked.error();
    }
    const Value* paths = member(root_, "paths");
    if (paths == nullptr) {
        if (!version_31_) {
            return documentError("/paths", "missing (OpenAPI 3.0 requires it)");
        }
        warnings_.add("/paths", "missing: no operation to import");
    } else if (!paths->IsObject()) {
        return documentError("/paths", fmt::format("must be an object of paths, got {}",
                                                   json::describeValue(*paths)));
    } else {
        for (const auto& p : paths->GetObject()) {
            const std::string_view path = view(p.name);
            if (path.starts_with("x-")) {
                continue;
            }
            const std::string pointer = childPointer("/paths", path);
            if (!path.starts_with("/")) {
                return documentError(pointer, "a path must begin with \"/\"");
            }
            if (auto done = importPath(path, p.value, pointer); !done) {
                return done.error();
            }
        }
    }
    ImportResult result;
    result.operation_count = operations_.Size();
    out_.SetObject();
    out_.AddMember("operations", operations_, allocator_);
    rapidjson::StringBuffer buffer;
    rapidjson::PrettyWriter<rapidjson::StringBuffer> writer(buffer);
    writer.SetIndent(' ', 2);
    out_.Accept(writer);
    result.json.assign(buffer.GetString(), buffer.GetSize());
    result.json.push_back('\n');
    if (result.json.size() > kConfigFileLimit) {
        warnings_.add("", fmt::format("the output is {} bytes, more than crankd reads from one "
                                      "config file ({}): import a part of the document",
                                      result.json.size(), kConfigFileLimit));
    }
    result.warnings = warnings_.take();
    return result;
}

Result<void> Importer::importPath(std::string_view path, const Value& item_value,
                                  const std::string& item_pointer) {
    Result<RefTarget> item = detail::resolveObject(root_, item_value, item_pointer, "a path item");
    if (!item) {
        return item.error();
    }
    if (item->pointer != item_pointer && item_value.MemberCount() > 1) {
        warnings_.add(item_pointer, "members beside \"$ref\" are ignored");
    }
    Result<std::vector<PathPart>> parts = splitPath(path, item_pointer);
    if (!parts) {
        return parts.error();
    }
    Result<std::vector<Param>> path_params = collectParams(
        member(*item->value, "parameters"), childPointer(item->pointer, "parameters"));
    if (!path_params) {
        return path_params.error();
    }
    for (const auto& m : item->value->GetObject()) {
        const std::string_view method = view(m.name);
        if (std::find(kMethods.begin(), kMethods.end(), method) == kMethods.end()) {
            continue;
        }
        const std::string pointer = childPointer(item->pointer, method);
        if (auto done =
                importOperation(path, *parts, *item, *path_params, method, m.value, pointer);
            !done) {
            return done;
        }
    }
    return {};
}

Result<std::vector<Param>> Importer::collectParams(const Value* list, const std::string& pointer) {
    std::vector<Param> params;
    if (list == nullptr) {
        return params;
    }
    if (!list->IsArray()) {
        return documentError(pointer, fmt::format("must be an array of parameters, got {}",
                                                  json::describeValue(*list)));
    }
    for (rapidjson::SizeType i = 0; i < list->Size(); ++i) {
        Result<RefTarget> p =
            detail::resolveObject(root_, (*list)[i], childPointer(pointer, i), "a parameter");
        if (!p) {
            return p.error();
        }
        const Value* name = member(*p->value, "name");
        if (name == nullptr || !name->IsString() || name->GetStringLength() == 0) {
            return documentError(p->pointer, "a parameter needs \"name\" (a non-empty string)");
        }
        const Value* in = member(*p->value, "in");
        const std::string_view location =
            in != nullptr && in->IsString() ? view(*in) : std::string_view();
        if (location != "query" && location != "header" && location != "path" &&
            location != "cookie") {
            return documentError(
                childPointer(p->pointer, "in"),
                fmt::format("must be \"query\", \"header\", \"path\" or \"cookie\", got {}",
                            in == nullptr ? "nothing" : json::describeValue(*in)));
        }
        Param param{std::string(view(*name)), std::string(location), p->value, p->pointer};
        const auto same = std::find_if(params.begin(), params.end(), [&](const Param& q) {
            return q.name == param.name && q.in == param.in;
        });
        if (same != params.end()) {
            warnings_.add(param.pointer, fmt::format("parameter \"{}\" in {} is defined twice; "
                                                     "the last one is kept",
                                                     param.name, param.in));
            *same = std::move(param);
        } else {
            params.push_back(std::move(param));
        }
    }
    return params;
}

std::string Importer::toolName(std::string_view path, std::string_view method, const Value& op,
                               const std::string& pointer) {
    std::string base;
    if (const Value* id = member(op, "operationId")) {
        if (!id->IsString()) {
            warnings_.add(
                childPointer(pointer, "operationId"),
                fmt::format("must be a string, got {}; ignored", json::describeValue(*id)));
        } else {
            base = sanitizeName(view(*id));
            if (base.empty()) {
                warnings_.add(childPointer(pointer, "operationId"),
                              fmt::format("{} has no character a tool name may hold; ignored",
                                          json::describeValue(*id)));
            } else if (base != view(*id) || base.size() > kMaxToolName - options_.prefix.size()) {
                const std::size_t room = kMaxToolName - options_.prefix.size();
                if (base.size() > room) {
                    base.resize(room);
                }
                warnings_.add(childPointer(pointer, "operationId"),
                              fmt::format("{} is not a tool name (1..128 of A-Z a-z 0-9 _ - .); "
                                          "named \"{}{}\"",
                                          json::describeValue(*id), options_.prefix, base));
            }
        }
    }
    if (base.empty()) {
        base = std::string(method);
        const std::string rest = sanitizeName(path);
        if (!rest.empty()) {
            base += "_" + rest;
        }
    }
    const std::size_t room = kMaxToolName - options_.prefix.size();
    if (base.size() > room) {
        base.resize(room);
    }
    std::string name = options_.prefix + base;
    if (const auto taken = names_.find(name); taken != names_.end()) {
        const std::string first = taken->second;
        const std::string wanted = name;
        for (std::size_t n = 2;; ++n) {
            const std::string suffix = fmt::format("_{}", n);
            name = options_.prefix + base.substr(0, std::min(base.size(), room - suffix.size())) +
                   suffix;
            if (names_.find(name) == names_.end()) {
                break;
            }
        }
        warnings_.add(pointer, fmt::format("the name \"{}\" is taken by {}; named \"{}\"", wanted,
                                           first, name));
    }
    names_.emplace(name, pointer);
    return name;
}

Result<std::string> Importer::resolveServer(const Value& server, const std::string& pointer) {
    if (!server.IsObject()) {
        return documentError(pointer, fmt::format("a server must be an object, got {}",
                                                  json::describeValue(server)));
    }
    const Value* url = member(server, "url");
    const std::string url_pointer = childPointer(pointer, "url");
    if (url == nullptr || !url->IsString()) {
        return documentError(url_pointer, "a server needs \"url\" (a string)");
    }
    const Value* variables = member(server, "variables");
    std::string out;
    const std::string_view text = view(*url);
    std::size_t i = 0;
    while (i < text.size()) {
        const std::size_t open = text.find('{', i);
        if (open == std::string_view::npos) {
            out += text.substr(i);
            break;
        }
        out += text.substr(i, open - i);
        const std::size_t close = text.find('}', open);
        if (close == std::string_view::npos) {
            return documentError(url_pointer, "unclosed \"{\" in the server URL");
        }
        const std::string_view name = text.substr(open + 1, close - open - 1);
        const Value* variable = variables != nullptr ? member(*variables, name) : nullptr;
        const Value* fallback = variable != nullptr ? member(*variable, "default") : nullptr;
        if (fallback == nullptr || !fallback->IsString()) {
            return documentError(
                url_pointer,
                fmt::format("the server variable \"{}\" has no default in {} (a string); pass "
                            "--server URL",
                            name, childPointer(pointer, "variables")));
        }
        out += view(*fallback);
        i = close + 1;
    }
    if (!checkServer(out)) {
        return documentError(
            url_pointer,
            fmt::format("{} is not an absolute http:// or https:// URL; pass --server URL (the "
                        "API's base URL)",
                        json::describeText(out)));
    }
    return out;
}

Result<std::string> Importer::serverUrl(const Value& op, const std::string& op_pointer,
                                        const RefTarget& item) {
    if (options_.server) {
        return *options_.server;
    }
    const std::array<std::pair<const Value*, std::string>, 3> levels{{
        {member(op, "servers"), childPointer(op_pointer, "servers")},
        {member(*item.value, "servers"), childPointer(item.pointer, "servers")},
        {member(root_, "servers"), "/servers"},
    }};
    for (const auto& [servers, pointer] : levels) {
        if (servers == nullptr) {
            continue;
        }
        if (!servers->IsArray()) {
            return documentError(pointer, fmt::format("must be an array of servers, got {}",
                                                      json::describeValue(*servers)));
        }
        if (!servers->Empty()) {
            return resolveServer((*servers)[0], childPointer(pointer, 0));
        }
    }
    return Error{ErrorCode::invalid_argument, "the document has no servers; pass --server URL"};
}

std::string Importer::propertyKey(const std::string& name, std::string_view in,
                                  const std::string& pointer, Built& built) {
    std::string base = name;
    if (!templatePath(name)) {
        std::string cleaned;
        for (char c : trim(name)) {
            cleaned.push_back(c == '|' || c == '{' || c == '}' ? '_' : c);
        }
        base = cleaned.empty() ? "param" : cleaned;
        warnings_.add(pointer, fmt::format("the name \"{}\" cannot be written in an input "
                                           "template; the tool's input calls it \"{}\"",
                                           name, base));
    }
    std::string key = base;
    if (built.keys.contains(key)) {
        key = fmt::format("{}_{}", base, in);
        for (std::size_t n = 2; built.keys.contains(key); ++n) {
            key = fmt::format("{}_{}_{}", base, in, n);
        }
        warnings_.add(pointer, fmt::format("the input property \"{}\" is taken; this one is "
                                           "\"{}\"",
                                           base, key));
    }
    built.keys.insert(key);
    return key;
}

void Importer::annotate(Value& schema, const Value& source) {
    const Value* description = member(source, "description");
    const bool deprecated = isTrue(member(source, "deprecated"));
    const bool has_description =
        description != nullptr && description->IsString() && description->GetStringLength() > 0;
    if (!has_description && !deprecated) {
        return;
    }
    if (schema.IsBool()) {
        if (!schema.GetBool()) {
            return;
        }
        schema.SetObject();
    }
    if (has_description) {
        schema.RemoveMember("description");
        schema.AddMember("description", Value(*description, allocator_), allocator_);
    }
    if (deprecated) {
        schema.RemoveMember("deprecated");
        schema.AddMember("deprecated", true, allocator_);
    }
}

Result<void> Importer::addParam(const Param& p, const std::vector<PathPart>& path_parts,
                                Built& built) {
    const Value& v = *p.value;
    const std::string style(stringMember(v, "style"));
    if (p.in == "cookie") {
        warnings_.add(p.pointer, fmt::format("cookie parameter \"{}\" is left out: the rest "
                                             "plugin does not send cookies",
                                             p.name));
        return {};
    }
    if (p.in == "header") {
        const std::string name = lower(p.name);
        if (name == "accept" || name == "content-type" || name == "authorization") {
            warnings_.add(
                p.pointer,
                fmt::format(
                    "header parameter \"{}\" is ignored, as OpenAPI says{}", p.name,
                    name == "authorization" ? "; give the operation an auth_profile instead" : ""));
            return {};
        }
        if (name == "host" || name == "content-length" || name == "transfer-encoding" ||
            name == "connection" || name == "te") {
            warnings_.add(p.pointer, fmt::format("header \"{}\" is the rest plugin's own; left "
                                                 "out",
                                                 p.name));
            return {};
        }
        if (!isToken(p.name)) {
            warnings_.add(p.pointer,
                          fmt::format("\"{}\" is not a valid header name; left out", p.name));
            return {};
        }
        if (!built.header_names.insert(name).second) {
            warnings_.add(p.pointer, fmt::format("header \"{}\" is defined twice (header names "
                                                 "ignore case); left out",
                                                 p.name));
            return {};
        }
    }
    if (p.in == "path") {
        const bool in_path = std::any_of(path_parts.begin(), path_parts.end(), [&](const auto& x) {
            return x.parameter && x.text == p.name;
        });
        if (!in_path) {
            warnings_.add(p.pointer, fmt::format("path parameter \"{}\" does not appear in the "
                                                 "path; left out",
                                                 p.name));
            return {};
        }
    }
    if (!style.empty() && style != (p.in == "query" ? "form" : "simple")) {
        warnings_.add(childPointer(p.pointer, "style"),
                      fmt::format("style \"{}\" is not supported; the value is sent {}", style,
                                  p.in == "query" ? "as form (arrays repeat the parameter)"
                                                  : "as its plain text"));
    }
    const std::string key = propertyKey(p.name, p.in, p.pointer, built);
    Value schema(rapidjson::kObjectType);
    bool json_text = false;
    if (const Value* s = member(v, "schema")) {
        if (auto done =
                converter_.convert(*s, childPointer(p.pointer, "schema"), schema, kPropertyDepth);
            !done) {
            return done;
        }
    } else if (const Value* content = member(v, "content");
               content != nullptr && content->IsObject() && !content->ObjectEmpty()) {
        // A parameter serialised as a media type: JSON is sent as JSON text.
        const auto& first = *content->MemberBegin();
        json_text = isJsonMediaType(view(first.name), false);
        if (const Value* media_schema = member(first.value, "schema")) {
            const std::string pointer = childPointer(
                childPointer(childPointer(p.pointer, "content"), view(first.name)), "schema");
            if (auto done = converter_.convert(*media_schema, pointer, schema, kPropertyDepth);
                !done) {
                return done;
            }
        }
    }
    annotate(schema, v);
    if (p.in == "path" && !json_text && mayBeStructured(schema)) {
        warnings_.add(p.pointer, fmt::format("an array or object value of path parameter \"{}\" "
                                             "is sent as JSON text, not in OpenAPI's \"simple\" "
                                             "style",
                                             p.name));
    } else if (p.in == "header" && !json_text && mayBeStructured(schema)) {
        warnings_.add(p.pointer, fmt::format("header parameter \"{}\" may be an array or object, "
                                             "which the rest plugin does not send (header values "
                                             "are text)",
                                             p.name));
    }
    const bool required = p.in == "path" || isTrue(member(v, "required"));
    const std::optional<std::string> path = templatePath(key);
    if (!path) {
        return Error{ErrorCode::internal,
                     fmt::format("{}: no template path for \"{}\"", p.pointer, key)};
    }
    std::string expression = "{{ " + *path + (json_text ? " | json" : "");
    if (p.in == "path") {
        built.path_expressions[p.name] = expression + " | url }}";
    } else {
        expression += " }}";
        Value& target = p.in == "query" ? built.query : built.headers;
        target.AddMember(text(p.name), text(expression), allocator_);
    }
    built.properties.AddMember(text(key), schema, allocator_);
    if (required) {
        built.required.PushBack(text(key), allocator_);
    }
    return {};
}

Result<void> Importer::addBody(const Value& op, const std::string& pointer, std::string_view method,
                               Built& built) {
    const Value* body = member(op, "requestBody");
    if (body == nullptr) {
        return {};
    }
    Result<RefTarget> target =
        detail::resolveObject(root_, *body, childPointer(pointer, "requestBody"), "a request body");
    if (!target) {
        return target.error();
    }
    const Value* content = member(*target->value, "content");
    const std::string content_pointer = childPointer(target->pointer, "content");
    if (content == nullptr || !content->IsObject()) {
        return documentError(content_pointer,
                             "a request body needs \"content\" (an object of "
                             "media types)");
    }
    const Value* media = nullptr;
    std::string_view media_type;
    for (bool exact : {true, false}) {
        for (const auto& m : content->GetObject()) {
            if (media == nullptr && isJsonMediaType(view(m.name), exact)) {
                media = &m.value;
                media_type = view(m.name);
            }
        }
    }
    if (media == nullptr) {
        std::string types;
        for (const auto& m : content->GetObject()) {
            types += (types.empty() ? "" : ", ") + std::string(view(m.name));
        }
        warnings_.add(content_pointer, fmt::format("no JSON media type ({}); the request body is "
                                                   "left out",
                                                   types.empty() ? "none" : types));
        return {};
    }
    if (method == "get" || method == "head" || method == "options") {
        warnings_.add(
            childPointer(pointer, "requestBody"),
            fmt::format("the rest plugin sends no body with {}; left out", upper(method)));
        return {};
    }
    std::string key = "body";
    if (built.keys.contains(key)) {
        key = "request_body";
        for (std::size_t n = 2; built.keys.contains(key); ++n) {
            key = fmt::format("request_body_{}", n);
        }
        warnings_.add(childPointer(pointer, "requestBody"),
                      fmt::format("a parameter is called \"body\"; the request body's input "
                                  "property is \"{}\"",
                                  key));
    }
    built.keys.insert(key);
    Value schema(rapidjson::kObjectType);
    if (const Value* s = member(*media, "schema")) {
        const std::string schema_pointer =
            childPointer(childPointer(content_pointer, media_type), "schema");
        if (auto done = converter_.convert(*s, schema_pointer, schema, kPropertyDepth); !done) {
            return done;
        }
    }
    annotate(schema, *target->value);
    if (isTrue(member(*target->value, "required"))) {
        built.required.PushBack(text(key), allocator_);
    }
    built.properties.AddMember(text(key), schema, allocator_);
    built.body_template = "{{ " + *templatePath(key) + " }}";
    const std::string type = lower(trim(media_type.substr(0, media_type.find(';'))));
    if (type != "application/json" && !built.header_names.contains("content-type")) {
        built.header_names.insert("content-type");
        built.headers.AddMember("Content-Type", text(type), allocator_);
    }
    return {};
}

Result<void> Importer::importOperation(std::string_view path, const std::vector<PathPart>& parts,
                                       const RefTarget& item, const std::vector<Param>& path_params,
                                       std::string_view method, const Value& op,
                                       const std::string& pointer) {
    if (!op.IsObject()) {
        return documentError(pointer, fmt::format("an operation must be an object, got {}",
                                                  json::describeValue(op)));
    }
    if (method == "trace") {
        warnings_.add(pointer, "TRACE is not supported by the rest plugin; skipped");
        return {};
    }
    budget_.startOperation();
    // What the operation costs before any schema: name, description, config, ... (the path
    // appears in several of them). A document of many tiny paths is bounded like one of big
    // schemas.
    if (!budget_.spend(16 + path.size() / 8)) {
        return detail::documentTooLarge();
    }
    const std::string method_name = upper(method);
    Result<std::vector<Param>> own =
        collectParams(member(op, "parameters"), childPointer(pointer, "parameters"));
    if (!own) {
        return own.error();
    }
    std::vector<Param> params = path_params;
    for (Param& p : *own) {
        const auto same = std::find_if(params.begin(), params.end(), [&](const Param& q) {
            return q.name == p.name && q.in == p.in;
        });
        if (same != params.end()) {
            *same = std::move(p);
        } else {
            params.push_back(std::move(p));
        }
    }
    Result<std::string> server = serverUrl(op, pointer, item);
    if (!server) {
        return server.error();
    }

    Built built;
    for (const Param& p : params) {
        if (auto done = addParam(p, parts, built); !done) {
            return done;
        }
    }
    for (const PathPart& part : parts) {
        if (!part.parameter || built.path_expressions.contains(part.text)) {
            continue;
        }
        // A {name} in the path without a parameter: a required string.
        warnings_.add(pointer, fmt::format("the path parameter \"{}\" is not defined; it is "
                                           "taken as a required string",
                                           part.text));
        const std::string key = propertyKey(part.text, "path", pointer, built);
        Value schema(rapidjson::kObjectType);
        schema.AddMember("type", "string", allocator_);
        built.properties.AddMember(text(key), schema, allocator_);
        built.required.PushBack(text(key), allocator_);
        built.path_expressions[part.text] = "{{ " + templatePath(key).value_or(key) + " | url }}";
    }
    if (auto done = addBody(op, pointer, method, built); !done) {
        return done;
    }

    std::string url;
    std::string_view base = *server;
    if (!base.empty() && base.back() == '/') {
        base.remove_suffix(1);
    }
    appendLiteral(url, base);
    for (const PathPart& part : parts) {
        if (part.parameter) {
            url += built.path_expressions[part.text];
        } else {
            appendPathLiteral(url, part.text);
        }
    }

    Value config(rapidjson::kObjectType);
    config.AddMember("method", text(method_name), allocator_);
    config.AddMember("url", text(url), allocator_);
    if (!built.query.ObjectEmpty()) {
        config.AddMember("query", built.query, allocator_);
    }
    if (!built.headers.ObjectEmpty()) {
        config.AddMember("headers", built.headers, allocator_);
    }
    if (built.body_template) {
        config.AddMember("body", text(*built.body_template), allocator_);
    }

    Value input(rapidjson::kObjectType);
    input.AddMember("type", "object", allocator_);
    input.AddMember("properties", built.properties, allocator_);
    if (!built.required.Empty()) {
        input.AddMember("required", built.required, allocator_);
    }

    const std::string name = toolName(path, method, op, pointer);
    const std::string_view summary = trim(stringMember(op, "summary"));
    std::string_view details = trim(stringMember(op, "description"));
    if (details.empty() && summary.empty()) {
        details = trim(stringMember(*item.value, "description"));
    }
    std::string description;
    if (isTrue(member(op, "deprecated"))) {
        description = "(deprecated) ";
    }
    description += summary;
    if (!details.empty() && details != summary) {
        description += (summary.empty() ? "" : "\n\n") + std::string(details);
    }
    if (trim(description).empty() || description == "(deprecated) ") {
        description += fmt::format("{} {}", method_name, path);
    }

    Value operation(rapidjson::kObjectType);
    operation.AddMember("name", text(name), allocator_);
    if (!summary.empty()) {
        const std::string title = detail::truncateUtf8(summary, kMaxTitle);
        operation.AddMember("title", text(title), allocator_);
    }
    const std::string shown = detail::truncateUtf8(description, kMaxDescription);
    operation.AddMember("description", text(shown), allocator_);
    operation.AddMember("protocol", "rest", allocator_);
    operation.AddMember("config", config, allocator_);
    operation.AddMember("input_schema", input, allocator_);
    Value execution(rapidjson::kObjectType);
    execution.AddMember("mode", "unary", allocator_);
    operation.AddMember("execution", execution, allocator_);
    if (auto checked = finalCheck(operation, pointer); !checked) {
        return checked;
    }
    operations_.PushBack(operation, allocator_);
    return {};
}

Result<void> Importer::finalCheck(const Value& operation, const std::string& pointer) {
    // What crankd does with the operation when it loads the config: both must compile.
    Result<json::CompiledSchema> schema =
        json::compileSchema(json::toJsonText(operation["input_schema"]), "input_schema");
    if (!schema) {
        return documentError(pointer, "the generated input schema is not accepted by crankd: " +
                                          schema.error().message);
    }
    Result<json::CompiledTemplate> config =
        json::compileTemplate(json::toJsonText(operation["config"]), "config");
    if (!config) {
        return documentError(pointer,
                             "the generated config does not compile: " + config.error().message);
    }
    return {};
}

}  // namespace

Result<void> checkPrefix(std::string_view prefix) {
    if (prefix.size() > kMaxPrefix) {
        return Error{
            ErrorCode::invalid_argument,
            fmt::format("--prefix: at most {} characters, got {}", kMaxPrefix, prefix.size())};
    }
    if (!std::all_of(prefix.begin(), prefix.end(), detail::isToolNameChar)) {
        return Error{ErrorCode::invalid_argument,
                     fmt::format("--prefix: only letters, digits, '_', '-' and '.' may begin a "
                                 "tool name, got {}",
                                 json::describeText(prefix))};
    }
    return {};
}

Result<void> checkServer(std::string_view server) {
    const std::string scheme = lower(server.substr(0, server.find("://")));
    const std::size_t host = server.find("://");
    const bool ok = host != std::string_view::npos && (scheme == "http" || scheme == "https") &&
                    host + 3 < server.size() && server[host + 3] != '/' &&
                    std::none_of(server.begin(), server.end(), [](char c) {
                        return static_cast<unsigned char>(c) <= 0x20U || c == '{' || c == '}';
                    });
    if (!ok) {
        return Error{ErrorCode::invalid_argument,
                     fmt::format("--server: expected an absolute http:// or https:// URL like "
                                 "https://api.example.com/v1, got {}",
                                 json::describeText(server))};
    }
    return {};
}

Result<ImportResult> importOpenApi(std::string_view document_json, const ImportOptions& options) {
    if (auto ok = checkPrefix(options.prefix); !ok) {
        return ok.error();
    }
    if (options.server) {
        if (auto ok = checkServer(*options.server); !ok) {
            return ok.error();
        }
    }
    json::ParseLimits limits;
    limits.max_bytes = options.limits.max_document_bytes;
    limits.max_depth = options.limits.max_document_depth;
    json::Document document;
    if (auto parsed = json::parseJson(document_json, document, "", limits); !parsed) {
        return parsed.error();
    }
    Importer importer(document, options);
    return importer.run();
}

}  // namespace crank::openapi
