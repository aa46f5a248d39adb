#include "graphql/import_command.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cstdio>
#include <istream>
#include <memory>
#include <mutex>
#include <ostream>
#include <system_error>

#include <Poco/Exception.h>
#include <Poco/Net/Context.h>
#include <Poco/Net/HTTPClientSession.h>
#include <Poco/Net/HTTPRequest.h>
#include <Poco/Net/HTTPResponse.h>
#include <Poco/Net/HTTPSClientSession.h>
#include <Poco/Net/NetSSL.h>
#include <Poco/Timespan.h>
#include <Poco/URI.h>
#include <fmt/core.h>
#include <rapidjson/document.h>
#include <rapidjson/prettywriter.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "graphql_schema.h"
#include "json/json_members.h"
#include "json/json_text.h"
#include "openapi/openapi_import.h"
#include "schema_import.h"
#include "util/read_input.h"

namespace crank::graphql_import {
namespace {

constexpr std::string_view kPrefix = "crankd: import-graphql: ";
constexpr std::size_t kMaxDepth = 8;
constexpr std::size_t kMaxWarnings = 200;
constexpr std::size_t kExcerptBytes = 200;

/// At most kExcerptBytes of a response body for a message: control characters as spaces, cut on
/// a UTF-8 boundary.
std::string excerpt(std::string_view body) {
    std::string out(body.substr(0, kExcerptBytes));
    if (body.size() > kExcerptBytes) {
        std::size_t end = out.size();
        while (end > 0 && (static_cast<unsigned char>(body[end]) & 0xC0U) == 0x80U) {
            --end;
        }
        out.resize(end);
        out += "...";
    }
    std::replace_if(
        out.begin(), out.end(), [](char c) { return static_cast<unsigned char>(c) < 0x20U; }, ' ');
    return out;
}

std::string trim(std::string_view s) {
    const auto space = [](char c) { return c == ' ' || c == '\t'; };
    while (!s.empty() && space(s.front())) {
        s.remove_prefix(1);
    }
    while (!s.empty() && space(s.back())) {
        s.remove_suffix(1);
    }
    return std::string(s);
}

Poco::Net::Context::Ptr tlsContext() {
    static std::once_flag once;
    static Poco::Net::Context::Ptr context;
    std::call_once(once, [] {
        Poco::Net::initializeSSL();
        Poco::Net::Context::Params params;
        params.verificationMode = Poco::Net::Context::VERIFY_RELAXED;
        params.loadDefaultCAs = true;
        params.verificationDepth = 9;
        context = new Poco::Net::Context(Poco::Net::Context::TLS_CLIENT_USE, params);
    });
    return context;
}

/// POSTs the introspection query to `url` and returns the response body (2xx only).
Result<std::string> introspect(const CommandOptions& options) {
    const std::string& url = options.source;
    const auto failure = [&](const std::string& what) {
        return Error{ErrorCode::io, fmt::format("POST {}: {}", url, what)};
    };
    const auto deadline = std::chrono::steady_clock::now() + options.timeout;
    try {
        const Poco::URI uri(url);
        std::unique_ptr<Poco::Net::HTTPClientSession> session;
        if (uri.getScheme() == "https") {
            session = std::make_unique<Poco::Net::HTTPSClientSession>(uri.getHost(), uri.getPort(),
                                                                      tlsContext());
        } else {
            session = std::make_unique<Poco::Net::HTTPClientSession>(uri.getHost(), uri.getPort());
        }
        const auto timeout_us =
            std::chrono::duration_cast<std::chrono::microseconds>(options.timeout).count();
        session->setTimeout(Poco::Timespan(timeout_us));

        rapidjson::StringBuffer buffer;
        rapidjson::Writer<rapidjson::StringBuffer> w(buffer);
        w.StartObject();
        w.Key("query");
        w.String(graphql::kIntrospectionQuery.data(),
                 static_cast<rapidjson::SizeType>(graphql::kIntrospectionQuery.size()));
        w.EndObject();

        std::string target = uri.getPathAndQuery();
        if (target.empty()) {
            target = "/";
        }
        Poco::Net::HTTPRequest request(Poco::Net::HTTPRequest::HTTP_POST, target,
                                       Poco::Net::HTTPMessage::HTTP_1_1);
        request.setContentType("application/json");
        request.set("Accept", "application/graphql-response+json, application/json;q=0.9");
        for (const std::string& header : options.headers) {
            const std::size_t colon = header.find(':');
            request.set(trim(std::string_view(header).substr(0, colon)),
                        trim(std::string_view(header).substr(colon + 1)));
        }
        request.setContentLength(static_cast<std::streamsize>(buffer.GetSize()));
        std::ostream& body_out = session->sendRequest(request);
        body_out.write(buffer.GetString(), static_cast<std::streamsize>(buffer.GetSize()));
        body_out.flush();

        Poco::Net::HTTPResponse response;
        std::istream& body_in = session->receiveResponse(response);
        std::string body;
        std::string chunk(std::size_t{64} * 1024, '\0');
        while (body_in) {
            if (std::chrono::steady_clock::now() > deadline) {
                return failure(
                    fmt::format("no complete response within {} ms", options.timeout.count()));
            }
            body_in.read(chunk.data(), static_cast<std::streamsize>(chunk.size()));
            body.append(chunk.data(), static_cast<std::size_t>(body_in.gcount()));
            if (body.size() > options.max_document_bytes) {
                return failure(fmt::format("the response is larger than {} bytes",
                                           options.max_document_bytes));
            }
        }
        const int status = static_cast<int>(response.getStatus());
        if (status < 200 || status > 299) {
            std::string message = fmt::format("HTTP {} {}", status, response.getReason());
            if (!body.empty()) {
                message += ": " + excerpt(body);
            }
            return failure(message);
        }
        return body;
    } catch (const Poco::Exception& e) {
        return failure(e.displayText());
    } catch (const std::exception& e) {
        return failure(e.what());
    }
}

/// {"operations": [...]} around importOperations' array, pretty, ending with a newline; counts
/// the queries and mutations.
std::string wrapOperations(const std::string& array_json, std::size_t& queries,
                           std::size_t& mutations) {
    json::Document doc;
    json::parseValue(array_json, doc);
    rapidjson::StringBuffer buffer;
    rapidjson::PrettyWriter<rapidjson::StringBuffer> w(buffer);
    w.SetIndent(' ', 2);
    w.StartObject();
    w.Key("operations");
    if (doc.IsArray()) {
        for (const auto& op : doc.GetArray()) {
            const auto config = op.FindMember("config");
            if (config == op.MemberEnd() || !config->value.IsObject()) {
                continue;
            }
            const auto document = config->value.FindMember("document");
            if (document == config->value.MemberEnd() || !document->value.IsString()) {
                continue;
            }
            const std::string_view text(document->value.GetString(),
                                        document->value.GetStringLength());
            if (text.starts_with("mutation")) {
                ++mutations;
            } else {
                ++queries;
            }
        }
        doc.Accept(w);
    } else {
        w.StartArray();
        w.EndArray();
    }
    w.EndObject();
    return std::string(buffer.GetString(), buffer.GetSize()) + "\n";
}

std::string plural(std::size_t n, std::string_view one, std::string_view many) {
    return fmt::format("{} {}", n, n == 1 ? one : many);
}

}  // namespace

bool isUrl(std::string_view source) {
    const auto startsWithNoCase = [&](std::string_view p) {
        return source.size() >= p.size() &&
               std::equal(p.begin(), p.end(), source.begin(), [](char a, char b) {
                   return a == static_cast<char>(std::tolower(static_cast<unsigned char>(b)));
               });
    };
    return startsWithNoCase("http://") || startsWithNoCase("https://");
}

Result<void> checkEndpoint(std::string_view url, std::string_view what) {
    const std::size_t host = url.find("://");
    const bool ok =
        isUrl(url) && host + 3 < url.size() && url[host + 3] != '/' &&
        std::none_of(url.begin(), url.end(), [](char c) {
            return static_cast<unsigned char>(c) <= 0x20U || static_cast<unsigned char>(c) == 0x7FU;
        });
    if (!ok) {
        return Error{ErrorCode::invalid_argument,
                     fmt::format("{}: expected an absolute http:// or https:// URL like "
                                 "https://api.example.com/graphql, got {}",
                                 what, json::describeText(url))};
    }
    return {};
}

Result<std::size_t> parseDepth(std::string_view text) {
    std::size_t depth = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), depth);
    if (ec != std::errc{} || end != text.data() + text.size() || depth < 1 || depth > kMaxDepth) {
        return Error{ErrorCode::invalid_argument,
                     fmt::format("--depth: expected an integer from 1 to {}, got {}", kMaxDepth,
                                 json::describeText(text))};
    }
    return depth;
}

Result<void> checkHeader(std::string_view header) {
    const std::size_t colon = header.find(':');
    const std::string_view name =
        colon == std::string_view::npos ? header : header.substr(0, colon);
    const bool token = !name.empty() && std::all_of(name.begin(), name.end(), [](char c) {
        return (std::isalnum(static_cast<unsigned char>(c)) != 0) ||
               std::string_view("!#$%&'*+-.^_`|~").find(c) != std::string_view::npos;
    });
    const bool clean = std::none_of(header.begin(), header.end(), [](char c) {
        return (static_cast<unsigned char>(c) < 0x20U && c != '\t') ||
               static_cast<unsigned char>(c) == 0x7FU;
    });
    if (colon == std::string_view::npos || !token || !clean) {
        return Error{ErrorCode::invalid_argument,
                     fmt::format("--header: expected 'Name: value' (a header name, a colon, a "
                                 "value without control characters), got {}",
                                 json::describeText(header.substr(0, colon)))};
    }
    return {};
}

CommandOutput runImportCommand(const CommandOptions& options) {
    CommandOutput output;
    const auto fail = [&](int code, std::string_view message) {
        output.exit_code = code;
        output.err = fmt::format("{}{}\n", kPrefix, message);
        return output;
    };
    if (options.source.empty()) {
        return fail(kImportUsage,
                    "needs a GraphQL endpoint URL or a schema file: crankd import-graphql "
                    "ENDPOINT_OR_SCHEMA_FILE [--prefix P] [--endpoint URL] [--depth N] "
                    "[--header 'Name: value']...");
    }
    if (auto ok = openapi::checkPrefix(options.prefix); !ok) {
        return fail(kImportUsage, ok.error().message);
    }
    if (options.depth < 1 || options.depth > kMaxDepth) {
        return fail(kImportUsage, fmt::format("--depth: expected an integer from 1 to {}, got {}",
                                              kMaxDepth, options.depth));
    }
    for (const std::string& header : options.headers) {
        if (auto ok = checkHeader(header); !ok) {
            return fail(kImportUsage, ok.error().message);
        }
    }
    if (options.endpoint) {
        if (auto ok = checkEndpoint(*options.endpoint); !ok) {
            return fail(kImportUsage, ok.error().message);
        }
    }
    const bool from_url = isUrl(options.source);
    std::string endpoint;
    if (from_url) {
        if (auto ok = checkEndpoint(options.source, "the endpoint to introspect"); !ok) {
            return fail(kImportUsage, ok.error().message);
        }
        endpoint = options.endpoint.value_or(options.source);
    } else {
        if (!options.endpoint) {
            return fail(kImportUsage,
                        "--endpoint URL is needed with a schema file: the URL the operations "
                        "send their requests to");
        }
        if (!options.headers.empty()) {
            return fail(kImportUsage,
                        "--header is for introspecting an endpoint, not for reading a file");
        }
        endpoint = *options.endpoint;
    }

    const std::string shown = from_url                ? options.source
                              : options.source == "-" ? std::string("standard input")
                                                      : options.source;
    Result<std::string> text = from_url
                                   ? introspect(options)
                                   : readInput(options.source, shown, options.max_document_bytes);
    if (!text) {
        return fail(kImportBadDocument, text.error().message);
    }
    std::string error;
    graphql::SchemaLimits limits;
    limits.max_bytes = std::max(limits.max_bytes, options.max_document_bytes);
    const std::optional<graphql::Schema> schema =
        from_url ? graphql::schemaFromIntrospection(*text, error, limits)
                 : graphql::schemaFromText(*text, error, limits);
    if (!schema) {
        return fail(kImportBadDocument, fmt::format("{}: {}", shown, error));
    }
    if (schema->query_type.empty() || schema->type(schema->query_type) == nullptr) {
        return fail(kImportBadDocument, fmt::format("{}: the schema has no query type", shown));
    }

    graphql::ImportOptions import;
    import.endpoint = endpoint;
    import.prefix = options.prefix;
    import.max_depth = options.depth;
    std::vector<std::string> warnings;
    const std::string operations = graphql::importOperations(*schema, import, warnings);
    std::size_t queries = 0;
    std::size_t mutations = 0;
    output.out = wrapOperations(operations, queries, mutations);
    for (std::size_t i = 0; i < warnings.size(); ++i) {
        if (i == kMaxWarnings) {
            output.err += fmt::format("{}warning: ... and {} more\n", kPrefix,
                                      warnings.size() - kMaxWarnings);
            break;
        }
        output.err += fmt::format("{}warning: {}\n", kPrefix, warnings[i]);
    }
    output.err += fmt::format(
        "{}{} ({}, {})\n", kPrefix, plural(queries + mutations, "operation", "operations"),
        plural(queries, "query", "queries"), plural(mutations, "mutation", "mutations"));
    return output;
}

}  // namespace crank::graphql_import
