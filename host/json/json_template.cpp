#include "json/json_template.h"

#include <algorithm>
#include <array>
#include <optional>
#include <utility>
#include <vector>

#include <fmt/core.h>
#include <rapidjson/document.h>

#include "json/instance_path.h"
#include "json/json_parse.h"
#include "json/json_path.h"
#include "json/json_text.h"
#include "json/url_template.h"
#include "util/json_string.h"
#include "util/suggest.h"

namespace crank::json {
namespace {

enum class FilterKind { url, json, default_value };

struct Filter {
    FilterKind kind = FilterKind::url;
    const Value* literal = nullptr;  ///< default: points into Impl::literals
};

struct Expression {
    sdk::Path path;
    std::vector<Filter> filters;
    std::string source;  ///< the text between the braces, trimmed, for messages
};

struct Part {
    std::string literal;  ///< text, when !expression
    std::optional<Expression> expression;
    std::optional<UrlPart> url_part;  ///< in a URL member: where the expression's value lands
};

struct TemplateNode {
    enum class Kind { literal, object, array, whole, mixed };
    Kind kind = Kind::literal;
    std::string literal_json;              ///< literal: the subtree's JSON text
    std::vector<std::string> member_keys;  ///< object: keys as JSON text
    std::vector<TemplateNode> member_values;
    std::vector<TemplateNode> elements;
    std::vector<Part> parts;  ///< whole: exactly one expression; mixed: several parts
    std::string url_path;     ///< mixed, in a URL member: its config path, for messages
};

constexpr std::array<std::string_view, 3> filter_names{"url", "json", "default"};

bool isSpace(char c) {
    return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

/// The value flowing through a template's filters.
struct Evaluated {
    bool missing = true;
    const Value* value = nullptr;  ///< when !missing && !is_text
    bool is_text = false;
    std::string text;          ///< when is_text: a string made by a filter
    bool url_encoded = false;  ///< text is the `url` filter's output
};

}  // namespace

struct CompiledTemplate::Impl {
    std::string where;
    std::vector<std::unique_ptr<Document>> literals;  ///< default filter values
    TemplateNode root;
    bool has_templates = false;
};

namespace {

class TemplateCompiler {
public:
    TemplateCompiler(CompiledTemplate::Impl& impl, std::vector<std::string> url_paths)
        : impl_(impl), url_paths_(std::move(url_paths)) {}

    Result<TemplateNode> compile(const Value& value, const std::string& path) {
        if (value.IsObject()) {
            TemplateNode node;
            node.kind = TemplateNode::Kind::object;
            bool all_literal = true;
            for (auto it = value.MemberBegin(); it != value.MemberEnd(); ++it) {
                const std::string_view key(it->name.GetString(), it->name.GetStringLength());
                Result<TemplateNode> child = compile(it->value, memberPath(path, key));
                if (!child) {
                    return child.error();
                }
                all_literal = all_literal && child->kind == TemplateNode::Kind::literal;
                node.member_keys.push_back(jsonString(key));
                node.member_values.push_back(std::move(*child));
            }
            if (all_literal) {
                TemplateNode collapsed;
                collapsed.literal_json.push_back('{');
                for (std::size_t i = 0; i < node.member_keys.size(); ++i) {
                    if (i > 0) {
                        collapsed.literal_json.push_back(',');
                    }
                    collapsed.literal_json += node.member_keys[i];
                    collapsed.literal_json.push_back(':');
                    collapsed.literal_json += node.member_values[i].literal_json;
                }
                collapsed.literal_json.push_back('}');
                return collapsed;
            }
            return node;
        }
        if (value.IsArray()) {
            TemplateNode node;
            node.kind = TemplateNode::Kind::array;
            bool all_literal = true;
            for (rapidjson::SizeType i = 0; i < value.Size(); ++i) {
                Result<TemplateNode> child = compile(value[i], indexPath(path, i));
                if (!child) {
                    return child.error();
                }
                all_literal = all_literal && child->kind == TemplateNode::Kind::literal;
                node.elements.push_back(std::move(*child));
            }
            if (all_literal) {
                TemplateNode collapsed;
                collapsed.literal_json.push_back('[');
                for (std::size_t i = 0; i < node.elements.size(); ++i) {
                    if (i > 0) {
                        collapsed.literal_json.push_back(',');
                    }
                    collapsed.literal_json += node.elements[i].literal_json;
                }
                collapsed.literal_json.push_back(']');
                return collapsed;
            }
            return node;
        }
        if (value.IsString()) {
            Result<TemplateNode> node =
                compileString({value.GetString(), value.GetStringLength()}, path);
            if (node && node->kind != TemplateNode::Kind::literal &&
                std::find(url_paths_.begin(), url_paths_.end(), path) != url_paths_.end()) {
                inUrl(*node, path);
            }
            return node;
        }
        return literal(value);
    }

private:
    static TemplateNode literal(const Value& value) {
        TemplateNode node;
        node.literal_json = toJsonText(value);
        return node;
    }

    /// Makes a templated URL member render each value encoded for where it lands (as a string,
    /// even a whole-string template).
    static void inUrl(TemplateNode& node, const std::string& path) {
        node.kind = TemplateNode::Kind::mixed;
        node.url_path = path;
        std::string before;
        for (Part& part : node.parts) {
            if (part.expression) {
                part.url_part = urlPartAfter(before);
            } else {
                before += part.literal;
            }
        }
    }

    static Error fail(const std::string& path, std::string message) {
        return Error{ErrorCode::invalid_argument,
                     path.empty() ? std::move(message) : path + ": " + std::move(message)};
    }

    Result<TemplateNode> compileString(std::string_view s, const std::string& path) {
        std::vector<Part> parts;
        std::string literal_text;
        std::size_t i = 0;
        while (i < s.size()) {
            if (s.compare(i, 3, "\\{{") == 0) {
                literal_text += "{{";
                i += 3;
                continue;
            }
            if (s.compare(i, 2, "{{") != 0) {
                literal_text.push_back(s[i]);
                ++i;
                continue;
            }
            const std::size_t close = s.find("}}", i + 2);
            if (close == std::string_view::npos) {
                return fail(path, fmt::format("unclosed \"{{{{\" at byte {}", i));
            }
            Result<Expression> expression = parseExpression(s, i + 2, close, path);
            if (!expression) {
                return expression.error();
            }
            if (!literal_text.empty()) {
                parts.push_back({std::move(literal_text), std::nullopt, std::nullopt});
                literal_text.clear();
            }
            parts.push_back({"", std::move(*expression), std::nullopt});
            i = close + 2;
        }
        if (!literal_text.empty()) {
            parts.push_back({std::move(literal_text), std::nullopt, std::nullopt});
        }
        TemplateNode node;
        bool any_expression = false;
        for (const Part& part : parts) {
            any_expression = any_expression || part.expression.has_value();
        }
        if (!any_expression) {
            node.literal_json = jsonString(parts.empty() ? "" : parts[0].literal);
            return node;
        }
        impl_.has_templates = true;
        node.kind = parts.size() == 1 ? TemplateNode::Kind::whole : TemplateNode::Kind::mixed;
        node.parts = std::move(parts);
        return node;
    }

    // NOLINTNEXTLINE(readability-function-cognitive-complexity): one small parser.
    Result<Expression> parseExpression(std::string_view s, std::size_t begin, std::size_t end,
                                       const std::string& path) {
        const std::size_t nested = s.substr(begin, end - begin).find("{{");
        if (nested != std::string_view::npos) {
            return fail(path, fmt::format("unexpected \"{{{{\" inside a template at byte {}",
                                          begin + nested));
        }
        auto skipSpaces = [&](std::size_t at) {
            while (at < end && isSpace(s[at])) {
                ++at;
            }
            return at;
        };
        std::size_t at = skipSpaces(begin);
        std::size_t path_end = at;
        while (path_end < end && s[path_end] != '|') {
            ++path_end;
        }
        std::size_t trimmed = path_end;
        while (trimmed > at && isSpace(s[trimmed - 1])) {
            --trimmed;
        }
        if (trimmed == at) {
            return fail(path,
                        fmt::format("empty template at byte {}: write {{{{ path }}}}", begin - 2));
        }
        const std::string_view path_text = s.substr(at, trimmed - at);
        sdk::PathError path_error;
        std::optional<sdk::Path> parsed = sdk::parsePath(path_text, &path_error);
        if (!parsed) {
            return fail(path, fmt::format("bad path {} at byte {}: {}", describeText(path_text),
                                          at + path_error.offset, path_error.message));
        }
        if (parsed->hasWildcard()) {
            return fail(path, fmt::format("bad path {} at byte {}: wildcards are not allowed in "
                                          "templates",
                                          describeText(path_text), at));
        }
        std::size_t source_end = end;
        while (source_end > begin && isSpace(s[source_end - 1])) {
            --source_end;
        }
        Expression expression{std::move(*parsed), {}, std::string(s.substr(at, source_end - at))};
        at = path_end;
        while (at < end) {
            // at points to '|'
            at = skipSpaces(at + 1);
            std::size_t name_end = at;
            while (name_end < end &&
                   ((s[name_end] >= 'a' && s[name_end] <= 'z') ||
                    (s[name_end] >= 'A' && s[name_end] <= 'Z') || s[name_end] == '_')) {
                ++name_end;
            }
            const std::string_view name = s.substr(at, name_end - at);
            Filter filter;
            if (name == "url") {
                filter.kind = FilterKind::url;
            } else if (name == "json") {
                filter.kind = FilterKind::json;
            } else if (name == "default") {
                filter.kind = FilterKind::default_value;
            } else {
                if (name.empty()) {
                    return fail(path,
                                fmt::format("expected a filter name after \"|\" at byte {}", at));
                }
                std::string message =
                    fmt::format("unknown filter {} at byte {}", describeText(name), at);
                if (auto hint = closestMatch(name, filter_names)) {
                    message += fmt::format("; did you mean \"{}\"?", *hint);
                } else {
                    message += " (filters: url, json, default)";
                }
                return fail(path, std::move(message));
            }
            std::size_t next = skipSpaces(name_end);
            if (filter.kind == FilterKind::default_value) {
                if (next >= end || s[next] != ':') {
                    return fail(path, fmt::format("filter \"default\" needs a value at byte {}: "
                                                  "write default: \"text\"",
                                                  at));
                }
                next = skipSpaces(next + 1);
                std::size_t literal_end = next;
                if (literal_end < end && s[literal_end] == '"') {
                    ++literal_end;
                    while (literal_end < end && s[literal_end] != '"') {
                        literal_end += s[literal_end] == '\\' ? 2 : 1;
                    }
                    literal_end = std::min(literal_end + 1, end);
                } else {
                    while (literal_end < end && s[literal_end] != '|' && !isSpace(s[literal_end])) {
                        ++literal_end;
                    }
                }
                auto doc = std::make_unique<Document>();
                const std::string_view literal_text = s.substr(next, literal_end - next);
                Result<void> ok = parseJson(literal_text, *doc, "", ParseLimits{4096, 1});
                if (!ok || doc->IsObject() || doc->IsArray()) {
                    return fail(path, fmt::format("filter \"default\" at byte {}: expected a JSON "
                                                  "string, number, true, false or null, got {}",
                                                  at, describeText(literal_text)));
                }
                filter.literal = doc.get();
                impl_.literals.push_back(std::move(doc));
                next = skipSpaces(literal_end);
            } else if (next < end && s[next] == ':') {
                return fail(path, fmt::format("filter {} at byte {} takes no value",
                                              describeText(name), at));
            }
            if (next < end && s[next] != '|') {
                return fail(path,
                            fmt::format("unexpected {} at byte {}: expected \"|\" or \"}}}}\"",
                                        describeText(s.substr(next, 1)), next));
            }
            expression.filters.push_back(filter);
            at = next;
        }
        return expression;
    }

    CompiledTemplate::Impl& impl_;
    std::vector<std::string> url_paths_;
};

class Renderer {
public:
    Renderer(const Value& input, std::string& out, std::size_t max_bytes)
        : input_(input), out_(out), max_bytes_(max_bytes) {}

    /// Appends the node; false when it is removed (a whole-string template with no value).
    bool render(const TemplateNode& node) {
        switch (node.kind) {
            case TemplateNode::Kind::literal:
                out_ += node.literal_json;
                return true;
            case TemplateNode::Kind::object: {
                out_.push_back('{');
                bool first = true;
                for (std::size_t i = 0; i < node.member_keys.size(); ++i) {
                    const std::size_t mark = out_.size();
                    if (!first) {
                        out_.push_back(',');
                    }
                    out_ += node.member_keys[i];
                    out_.push_back(':');
                    if (render(node.member_values[i])) {
                        first = false;
                    } else {
                        out_.resize(mark);
                    }
                    if (overflow()) {
                        return true;
                    }
                }
                out_.push_back('}');
                return true;
            }
            case TemplateNode::Kind::array: {
                out_.push_back('[');
                bool first = true;
                for (const TemplateNode& child : node.elements) {
                    const std::size_t mark = out_.size();
                    if (!first) {
                        out_.push_back(',');
                    }
                    if (render(child)) {
                        first = false;
                    } else {
                        out_.resize(mark);
                    }
                    if (overflow()) {
                        return true;
                    }
                }
                out_.push_back(']');
                return true;
            }
            case TemplateNode::Kind::whole: {
                const Evaluated e = evaluate(*node.parts[0].expression);
                if (e.missing) {
                    return false;
                }
                if (e.is_text) {
                    appendJsonString(out_, e.text);
                } else {
                    appendJsonText(out_, *e.value);
                }
                return true;
            }
            case TemplateNode::Kind::mixed: {
                scratch_.clear();
                for (std::size_t i = 0; i < node.parts.size(); ++i) {
                    const Part& part = node.parts[i];
                    if (!part.expression) {
                        scratch_ += part.literal;
                        continue;
                    }
                    const Evaluated e = evaluate(*part.expression);
                    if (e.missing) {
                        continue;
                    }
                    if (part.url_part) {
                        if (!appendInUrl(node, i, e)) {
                            return true;
                        }
                    } else if (e.is_text) {
                        scratch_ += e.text;
                    } else {
                        appendPlainText(scratch_, *e.value);
                    }
                    if (scratch_.size() > max_bytes_) {
                        break;
                    }
                }
                appendJsonString(out_, scratch_);
                return true;
            }
        }
        return true;
    }

    bool overflow() const { return out_.size() > max_bytes_; }

    /// Why rendering failed (a value a URL refuses); empty when it did not.
    const std::string& error() const { return error_; }

private:
    /// Appends part `i` of URL member `node`, valued `e`, encoded for where it lands; false (and
    /// error_ set) when the URL refuses the value.
    bool appendInUrl(const TemplateNode& node, std::size_t i, const Evaluated& e) {
        std::string plain;
        if (e.is_text) {
            plain = e.text;
        } else {
            appendPlainText(plain, *e.value);
        }
        const Part& part = node.parts[i];
        std::optional<char> next;
        if (i + 1 < node.parts.size() && !node.parts[i + 1].expression &&
            !node.parts[i + 1].literal.empty()) {
            next = node.parts[i + 1].literal.front();
        }
        if (appendUrlValue(scratch_, *part.url_part, plain, e.url_encoded, next)) {
            return true;
        }
        error_ = fmt::format(
            "{}: the value of {{{{ {} }}}} is \"{}\", a dot segment, which a URL path refuses (it "
            "would step out of the path the operation names)",
            node.url_path, part.expression->source, plain);
        return false;
    }

    Evaluated evaluate(const Expression& expression) const {
        Evaluated e;
        e.value = find(input_, expression.path);
        e.missing = e.value == nullptr;
        for (const Filter& filter : expression.filters) {
            switch (filter.kind) {
                case FilterKind::default_value:
                    if (e.missing || (!e.is_text && e.value->IsNull())) {
                        e.missing = false;
                        e.is_text = false;
                        e.url_encoded = false;
                        e.value = filter.literal;
                    }
                    break;
                case FilterKind::url: {
                    if (e.missing) {
                        break;
                    }
                    std::string plain;
                    if (e.is_text) {
                        plain = std::move(e.text);
                    } else {
                        appendPlainText(plain, *e.value);
                    }
                    e.text.clear();
                    percentEncode(e.text, plain);
                    e.is_text = true;
                    e.url_encoded = true;
                    break;
                }
                case FilterKind::json: {
                    if (e.missing) {
                        break;
                    }
                    std::string text;
                    if (e.is_text) {
                        appendJsonString(text, e.text);
                    } else {
                        appendJsonText(text, *e.value);
                    }
                    e.text = std::move(text);
                    e.is_text = true;
                    e.url_encoded = false;
                    break;
                }
            }
        }
        return e;
    }

    const Value& input_;
    std::string& out_;
    std::size_t max_bytes_;
    std::string scratch_;
    std::string error_;
};

}  // namespace

bool CompiledTemplate::hasTemplates() const {
    return impl_->has_templates;
}

Result<CompiledTemplate> compileTemplate(std::string_view config_json, std::string_view where,
                                         const std::vector<std::vector<std::string>>& url_members) {
    try {
        Document doc;
        Result<void> parsed = parseJson(config_json, doc, where);
        if (!parsed) {
            return parsed.error();
        }
        auto impl = std::make_shared<CompiledTemplate::Impl>();
        impl->where = std::string(where);
        std::vector<std::string> url_paths;
        for (const std::vector<std::string>& names : url_members) {
            std::string path = impl->where;
            for (const std::string& name : names) {
                path = memberPath(path, name);
            }
            url_paths.push_back(std::move(path));
        }
        TemplateCompiler compiler(*impl, std::move(url_paths));
        Result<TemplateNode> root = compiler.compile(doc, impl->where);
        if (!root) {
            return root.error();
        }
        impl->root = std::move(*root);
        return CompiledTemplate(std::move(impl));
    } catch (const std::exception& e) {
        return Error{ErrorCode::internal,
                     fmt::format("{}: compiling the templates failed: {}", where, e.what())};
    }
}

Result<std::string> render(const CompiledTemplate& compiled, const Value& input,
                           std::size_t max_bytes) {
    const CompiledTemplate::Impl& impl = *compiled.impl_;
    try {
        std::string out;
        Renderer renderer(input, out, max_bytes);
        if (!renderer.render(impl.root)) {
            out = "null";
        }
        if (!renderer.error().empty()) {
            return Error{ErrorCode::invalid_argument, renderer.error()};
        }
        if (out.size() > max_bytes) {
            std::string message = fmt::format("rendered config is larger than {} bytes", max_bytes);
            return Error{ErrorCode::invalid_argument,
                         impl.where.empty() ? message : impl.where + ": " + message};
        }
        return out;
    } catch (const std::exception& e) {
        return Error{ErrorCode::internal,
                     fmt::format("{}: rendering failed: {}", impl.where, e.what())};
    }
}

Result<std::string> render(const CompiledTemplate& compiled, std::string_view input_json,
                           std::size_t max_bytes) {
    try {
        Document input;
        Result<void> parsed = parseJson(input_json, input, "input");
        if (!parsed) {
            return parsed.error();
        }
        return render(compiled, input, max_bytes);
    } catch (const std::exception& e) {
        return Error{ErrorCode::internal, fmt::format("rendering failed: {}", e.what())};
    }
}

}  // namespace crank::json
