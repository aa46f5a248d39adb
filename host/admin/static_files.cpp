#include "admin/static_files.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <utility>

#include <Poco/Exception.h>
#include <Poco/Net/HTTPServerRequest.h>
#include <Poco/Net/HTTPServerResponse.h>
#include <Poco/URI.h>

#include "admin/admin_api.h"
#include "http/responses.h"
#include "log/log.h"

namespace crank::admin {
namespace {

using Poco::Net::HTTPServerRequest;
using Poco::Net::HTTPServerResponse;

constexpr std::size_t kMaxUiFileBytes = std::size_t{4} * 1024 * 1024;

}  // namespace

void StaticFiles::serve(HTTPServerRequest& request, HTTPServerResponse& response) const {
    if (!http::allowMethods(request, response, "GET,HEAD")) {
        return;
    }
    std::string path;
    try {
        path = Poco::URI(request.getURI()).getPath();
    } catch (const Poco::SyntaxException&) {
        http::sendError(response, 400, "bad_request", "malformed %-escape in the path");
        return;
    }
    if (path == "/ui") {
        response.set("Location", "/ui/");
        http::sendBody(response, 308, "", "");
        return;
    }
    std::string_view rel = std::string_view(path).substr(4);  // after "/ui/"
    if (rel.empty()) {
        rel = "index.html";
    }
    // Only plain relative names: no "..", no hidden files, nothing odd.
    const bool plain = std::all_of(rel.begin(), rel.end(),
                                   [](char c) {
                                       return std::isalnum(static_cast<unsigned char>(c)) != 0 ||
                                              c == '.' || c == '-' || c == '_' || c == '/';
                                   }) &&
                       rel.find("..") == std::string_view::npos && rel.front() != '/' &&
                       rel.find("/.") == std::string_view::npos && rel.front() != '.';
    const std::filesystem::path file = std::filesystem::path(directory_) / std::string(rel);
    std::error_code ec;
    if (!plain || !std::filesystem::is_regular_file(file, ec) ||
        std::filesystem::file_size(file, ec) > kMaxUiFileBytes) {
        const bool installed = !directory_.empty() && std::filesystem::is_directory(directory_, ec);
        if (!installed) {
            log::warn("web UI: no directory {} (admin.ui_directory)", directory_);
        }
        http::sendError(response, 404, "not_found",
                        installed ? "no such file in the web UI"
                                  : "the web UI is not installed on this server (see "
                                    "admin.ui_directory in crankd's log)");
        return;
    }
    std::ifstream in(file, std::ios::binary);
    std::ostringstream content;
    content << in.rdbuf();
    response.set("Cache-Control", "no-cache");
    response.set("X-Content-Type-Options", "nosniff");
    response.set("Content-Security-Policy",
                 "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; "
                 "frame-ancestors 'none'");
    const std::string body = content.str();
    http::sendBody(response, 200, contentType(file.extension().string()),
                   request.getMethod() == "HEAD" ? std::string_view() : body);
}

std::string_view StaticFiles::contentType(std::string_view ext) {
    if (ext == ".html") {
        return "text/html; charset=utf-8";
    }
    if (ext == ".js" || ext == ".mjs") {
        return "text/javascript; charset=utf-8";
    }
    if (ext == ".css") {
        return "text/css; charset=utf-8";
    }
    if (ext == ".svg") {
        return "image/svg+xml";
    }
    if (ext == ".png") {
        return "image/png";
    }
    if (ext == ".json") {
        return "application/json";
    }
    return "application/octet-stream";
}

std::string defaultUiDirectory() {
    std::error_code ec;
    const std::filesystem::path program = std::filesystem::read_symlink("/proc/self/exe", ec);
    if (ec || program.empty()) {
        return {};
    }
    return (program.parent_path() / ".." / "share" / "crank" / "ui").lexically_normal().string();
}

}  // namespace crank::admin
