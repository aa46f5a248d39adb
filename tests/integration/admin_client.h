#pragma once

// A raw HTTP/1.1 client for crankd's admin API (docs/admin-api.md) in tests, and safe readers of
// JSON answers: one exchange per connection (Connection: close) on a loopback socket, with the
// admin token sent as `Authorization: Bearer` unless the test leaves it out, a body sent in
// pieces (a server that answers early and stops reading does not block the test), a chunked answer
// decoded. Every accessor returns a marker instead of asserting when a member is missing or of
// another type, so that an answer of the wrong shape fails one test, never the whole process.

#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <Poco/Exception.h>
#include <Poco/Net/SocketAddress.h>
#include <Poco/Net/StreamSocket.h>
#include <gtest/gtest.h>
#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

namespace crank::testing::admin {

using Headers = std::vector<std::pair<std::string, std::string>>;

/// What an accessor returns for a missing member or one of another type.
inline constexpr const char* kAbsent = "(absent)";
inline constexpr std::int64_t kNoNumber = std::numeric_limits<std::int64_t>::min();

/// `v` as compact JSON text.
inline std::string jsonOf(const rapidjson::Value& v) {
    rapidjson::StringBuffer out;
    rapidjson::Writer<rapidjson::StringBuffer> w(out);
    v.Accept(w);
    return {out.GetString(), out.GetSize()};
}

/// `s` as a JSON string literal.
inline std::string quote(std::string_view s) {
    rapidjson::StringBuffer out;
    rapidjson::Writer<rapidjson::StringBuffer> w(out);
    w.String(s.data(), static_cast<rapidjson::SizeType>(s.size()));
    return {out.GetString(), out.GetSize()};
}

/// The value at `path` ("a.b.0.c": members, and decimal segments index arrays); nullptr when
/// any segment is missing. An empty path is `v` itself.
inline const rapidjson::Value* at(const rapidjson::Value& v, std::string_view path) {
    const rapidjson::Value* cur = &v;
    while (!path.empty()) {
        const auto dot = path.find('.');
        const std::string_view seg = path.substr(0, dot);
        path = dot == std::string_view::npos ? std::string_view() : path.substr(dot + 1);
        if (cur->IsObject()) {
            const auto it = cur->FindMember(rapidjson::Value(
                rapidjson::StringRef(seg.data(), static_cast<rapidjson::SizeType>(seg.size()))));
            if (it == cur->MemberEnd()) {
                return nullptr;
            }
            cur = &it->value;
        } else if (cur->IsArray()) {
            std::size_t index = 0;
            if (seg.empty()) {
                return nullptr;
            }
            for (const char c : seg) {
                if (c < '0' || c > '9') {
                    return nullptr;
                }
                index = index * 10 + static_cast<std::size_t>(c - '0');
            }
            if (index >= cur->Size()) {
                return nullptr;
            }
            cur = &(*cur)[static_cast<rapidjson::SizeType>(index)];
        } else {
            return nullptr;
        }
    }
    return cur;
}

/// The string at `path`, or kAbsent.
inline std::string str(const rapidjson::Value& v, std::string_view path) {
    const rapidjson::Value* x = at(v, path);
    return x != nullptr && x->IsString() ? std::string(x->GetString(), x->GetStringLength())
                                         : std::string(kAbsent);
}

/// The integer at `path`, or kNoNumber.
inline std::int64_t num(const rapidjson::Value& v, std::string_view path) {
    const rapidjson::Value* x = at(v, path);
    return x != nullptr && x->IsInt64() ? x->GetInt64() : kNoNumber;
}

/// The boolean at `path`, or nullopt.
inline std::optional<bool> flag(const rapidjson::Value& v, std::string_view path) {
    const rapidjson::Value* x = at(v, path);
    return x != nullptr && x->IsBool() ? std::optional<bool>(x->GetBool()) : std::nullopt;
}

/// The size of the array at `path`, or -1.
inline int count(const rapidjson::Value& v, std::string_view path) {
    const rapidjson::Value* x = at(v, path);
    return x != nullptr && x->IsArray() ? static_cast<int>(x->Size()) : -1;
}

/// True when `path` holds JSON null.
inline bool isNull(const rapidjson::Value& v, std::string_view path) {
    const rapidjson::Value* x = at(v, path);
    return x != nullptr && x->IsNull();
}

/// True when `path` holds an object.
inline bool isObject(const rapidjson::Value& v, std::string_view path) {
    const rapidjson::Value* x = at(v, path);
    return x != nullptr && x->IsObject();
}

/// The elements of the array at `path` (none when it is not an array).
inline std::vector<const rapidjson::Value*> elements(const rapidjson::Value& v,
                                                     std::string_view path) {
    std::vector<const rapidjson::Value*> out;
    const rapidjson::Value* x = at(v, path);
    if (x != nullptr && x->IsArray()) {
        for (const auto& e : x->GetArray()) {
            out.push_back(&e);
        }
    }
    return out;
}

/// The strings of the array at `path`.
inline std::vector<std::string> strings(const rapidjson::Value& v, std::string_view path) {
    std::vector<std::string> out;
    for (const rapidjson::Value* e : elements(v, path)) {
        out.push_back(e->IsString() ? e->GetString() : jsonOf(*e));
    }
    return out;
}

/// The value at `path` as JSON text, or kAbsent.
inline std::string textAt(const rapidjson::Value& v, std::string_view path) {
    const rapidjson::Value* x = at(v, path);
    return x != nullptr ? jsonOf(*x) : std::string(kAbsent);
}

/// One HTTP answer.
struct Answer {
    int status = 0;                              ///< 0: no answer (see `transport`)
    std::map<std::string, std::string> headers;  ///< lower-case names
    std::string body;
    std::string transport;     ///< what went wrong on the connection, if anything
    rapidjson::Document json;  ///< the body parsed; an empty object when it is not JSON

    std::string header(const std::string& name) const {
        const auto it = headers.find(name);
        return it == headers.end() ? "" : it->second;
    }
    bool isJson() const { return jsonOk; }
    /// The error code of an error answer, or kAbsent.
    std::string code() const { return str(json, "error.code"); }
    /// The error message of an error answer, or kAbsent.
    std::string message() const { return str(json, "error.message"); }
    /// The message of `fields[]` whose path is `path`, or nullopt.
    std::optional<std::string> field(const std::string& path) const {
        for (const rapidjson::Value* f : elements(json, "error.fields")) {
            if (str(*f, "path") == path) {
                return str(*f, "message");
            }
        }
        return std::nullopt;
    }
    /// Every `fields[].path`.
    std::vector<std::string> fieldPaths() const {
        std::vector<std::string> out;
        for (const rapidjson::Value* f : elements(json, "error.fields")) {
            out.push_back(str(*f, "path"));
        }
        return out;
    }
    /// Status, then the body: what a failed assertion shows.
    std::string describe() const {
        return std::to_string(status) + " " + (transport.empty() ? "" : "[" + transport + "] ") +
               body.substr(0, 4000);
    }

    bool jsonOk = false;
};

/// The body of a chunked answer, decoded; the text as it is when it is not well formed.
inline std::string dechunk(const std::string& raw) {
    std::string out;
    std::size_t pos = 0;
    while (pos < raw.size()) {
        const auto eol = raw.find("\r\n", pos);
        if (eol == std::string::npos) {
            return raw;
        }
        std::size_t size = 0;
        try {
            size = std::stoul(raw.substr(pos, eol - pos), nullptr, 16);
        } catch (const std::exception&) {
            return raw;
        }
        if (size == 0) {
            return out;
        }
        if (eol + 2 + size > raw.size()) {
            return raw;
        }
        out.append(raw, eol + 2, size);
        pos = eol + 2 + size + 2;
    }
    return out;
}

/// One exchange on a fresh loopback connection. The body goes in 64 KiB pieces; a send error
/// (the server answered early and closed) stops sending, and the answer is read all the same.
inline Answer httpExchange(std::uint16_t port, const std::string& method, const std::string& path,
                           const Headers& headers, const std::string& body,
                           int receiveTimeoutSeconds = 60) {
    Answer answer;
    std::string data;
    try {
        Poco::Net::StreamSocket socket(Poco::Net::SocketAddress("127.0.0.1", port));
        socket.setReceiveTimeout(Poco::Timespan(receiveTimeoutSeconds, 0));
        socket.setSendTimeout(Poco::Timespan(20, 0));
        std::string head =
            method + " " + path + " HTTP/1.1\r\nHost: 127.0.0.1:" + std::to_string(port) + "\r\n";
        for (const auto& [name, value] : headers) {
            head += name + ": " + value + "\r\n";
        }
        head += "Connection: close\r\nContent-Length: " + std::to_string(body.size()) + "\r\n\r\n";
        const std::string request = head + body;
        std::size_t sent = 0;
        try {
            while (sent < request.size()) {
                const std::size_t piece = std::min<std::size_t>(65536, request.size() - sent);
                const int n = socket.sendBytes(request.data() + sent, static_cast<int>(piece));
                if (n <= 0) {
                    break;
                }
                sent += static_cast<std::size_t>(n);
            }
        } catch (const Poco::Exception& e) {
            answer.transport =
                "send stopped after " + std::to_string(sent) + " bytes: " + e.displayText();
        }
        char buffer[16384];
        try {
            int n = 0;
            while ((n = socket.receiveBytes(buffer, sizeof buffer)) > 0) {
                data.append(buffer, static_cast<std::size_t>(n));
            }
        } catch (const Poco::Exception& e) {
            if (data.find("\r\n\r\n") == std::string::npos) {
                answer.transport += (answer.transport.empty() ? "" : "; ") +
                                    std::string("receive: ") + e.displayText();
            }
        }
    } catch (const Poco::Exception& e) {
        answer.transport = "connect: " + e.displayText();
        return answer;
    }
    const auto headEnd = data.find("\r\n\r\n");
    if (headEnd == std::string::npos || data.size() < 12) {
        answer.transport += (answer.transport.empty() ? "" : "; ") + std::string("no answer: ") +
                            data.substr(0, 200);
        answer.json.SetObject();
        return answer;
    }
    std::istringstream head(data.substr(0, headEnd));
    std::string line;
    std::getline(head, line);
    try {
        answer.status = std::stoi(line.substr(9, 3));
    } catch (const std::exception&) {
        answer.status = 0;
    }
    while (std::getline(head, line)) {
        const auto colon = line.find(':');
        if (colon == std::string::npos) {
            continue;
        }
        std::string name = line.substr(0, colon);
        for (char& c : name) {
            c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        }
        std::string value = line.substr(colon + 1);
        while (!value.empty() && value.front() == ' ') {
            value.erase(0, 1);
        }
        while (!value.empty() && (value.back() == '\r' || value.back() == ' ')) {
            value.pop_back();
        }
        answer.headers[name] = value;
    }
    answer.body = data.substr(headEnd + 4);
    if (answer.header("transfer-encoding").find("chunked") != std::string::npos) {
        answer.body = dechunk(answer.body);
    }
    answer.json.Parse(answer.body.c_str(), answer.body.size());
    answer.jsonOk = !answer.json.HasParseError();
    if (!answer.jsonOk) {
        answer.json.SetObject();
    }
    return answer;
}

/// The admin API of one crankd.
class AdminClient {
public:
    AdminClient(std::uint16_t port, std::string token) : port_(port), token_(std::move(token)) {}

    /// A request with the token (unless `withToken` is false) and a JSON content type when
    /// there is a body; `extra` headers are added.
    Answer request(const std::string& method, const std::string& path, const std::string& body = "",
                   const Headers& extra = {}, bool withToken = true) const {
        Headers headers;
        if (withToken) {
            headers.emplace_back("Authorization", "Bearer " + token_);
        }
        if (!body.empty()) {
            headers.emplace_back("Content-Type", "application/json");
        }
        headers.emplace_back("Accept", "application/json");
        for (const auto& h : extra) {
            headers.push_back(h);
        }
        return httpExchange(port_, method, path, headers, body);
    }

    Answer get(const std::string& path) const { return request("GET", path); }
    Answer post(const std::string& path, const std::string& body) const {
        return request("POST", path, body);
    }
    Answer put(const std::string& path, const std::string& body) const {
        return request("PUT", path, body);
    }
    Answer del(const std::string& path) const { return request("DELETE", path); }

    std::uint16_t port() const { return port_; }

private:
    std::uint16_t port_;
    std::string token_;
};

}  // namespace crank::testing::admin
