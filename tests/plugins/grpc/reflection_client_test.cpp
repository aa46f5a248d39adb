// The reflection client against the real crank-grpc-fixture (v1, the v1alpha fallback, no
// reflection) and against in-process fake reflection servers (malformed answers, dependency walk,
// errors, limits, deadlines). Loopback only; every fixture process is stopped by pid.
#include "reflection_client.h"

#include <unistd.h>

#include <chrono>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <google/protobuf/descriptor.h>
#include <google/protobuf/descriptor.pb.h>
#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <google/protobuf/wire_format_lite.h>
#include <grpcpp/create_channel.h>
#include <grpcpp/generic/async_generic_service.h>
#include <grpcpp/security/credentials.h>
#include <grpcpp/security/server_credentials.h>
#include <grpcpp/server.h>
#include <grpcpp/server_builder.h>
#include <gtest/gtest.h>

#include "child_process.h"
#include "crank/sdk/error.hpp"
#include "descriptor_catalog.h"
#include <netinet/in.h>
#include <sys/socket.h>

namespace crank::grpc_plugin {
namespace {

namespace pb = google::protobuf;
using pb::internal::WireFormatLite;
using sdk::ErrorCode;
using namespace std::chrono_literals;

constexpr const char* v1_method = "/grpc.reflection.v1.ServerReflection/ServerReflectionInfo";
constexpr const char* v1alpha_method =
    "/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo";
constexpr const char* fixture_service = "crank.fixture.v1.Fixture";

template <class F>
sdk::Error errorOf(F&& f) {
    try {
        f();
    } catch (const sdk::Error& e) {
        return e;
    } catch (const std::exception& e) {
        ADD_FAILURE() << "not an sdk::Error: " << e.what();
        return {ErrorCode::internal, e.what()};
    }
    ADD_FAILURE() << "no exception";
    return {ErrorCode::internal, "no exception"};
}

std::shared_ptr<grpc::Channel> channelTo(const std::string& target) {
    return grpc::CreateChannel(target, grpc::InsecureChannelCredentials());
}

// --- the real fixture ---------------------------------------------------------------------------

struct Fixture {
    explicit Fixture(const std::string& reflection)
        : process(
              {CRANK_GRPC_FIXTURE_PATH, "--listen", "127.0.0.1:0", "--reflection", reflection}) {
        const auto port = process.waitForListeningPort(15s);
        if (!port) {
            ADD_FAILURE() << "the fixture did not start: " << process.stderrSoFar(100ms);
            return;
        }
        target = "127.0.0.1:" + std::to_string(*port);
        channel = channelTo(target);
    }
    testing::ChildProcess process;
    std::string target;
    std::shared_ptr<grpc::Channel> channel;
};

std::shared_ptr<const DescriptorCatalog> setCatalog() {
    static const auto catalog = DescriptorCatalog::fromDescriptorSetFile(CRANK_GRPC_FIXTURE_DESC);
    return catalog;
}

constexpr const char* echo_request = R"({
    "text": "hello", "small": -5, "big": "9007199254740993", "ubig": "18446744073709551615",
    "signedSmall": -7, "fixed": "42", "ratio": 1.5, "ratio32": 0.25, "flag": true,
    "blob": "AAEC/w==", "color": "COLOR_GREEN", "inner": {"label": "in", "values": [1, 2]},
    "tags": ["a", "b"], "inners": [{"label": "x"}], "counts": {"k": 3},
    "byId": {"5": {"label": "five"}}, "nested": {"label": "n"}, "maybeCount": 4,
    "at": "2024-01-02T03:04:05.123Z", "wait": "1.500s", "extra": {"s": "v"},
    "anyValue": [1, "two"], "maybe": 3,
    "packed": {"@type": "type.googleapis.com/crank.fixture.v1.Inner", "label": "p"},
    "mask": "text,inner.label", "nothing": {}, "tree": {"name": "r", "children": [{}]},
    "colors": ["COLOR_RED"], "maybeText": "t"})";

/// A catalog built from reflection behaves as the one from the descriptor set file.
void expectSameAsDescriptorSet(const DescriptorCatalog& reflected) {
    const auto from_set = setCatalog();
    EXPECT_EQ(reflected.methodNames(), from_set->methodNames());
    const auto* req_a = reflected.pool().FindMessageTypeByName("crank.fixture.v1.EchoRequest");
    const auto* req_b = from_set->pool().FindMessageTypeByName("crank.fixture.v1.EchoRequest");
    ASSERT_NE(req_a, nullptr);
    const std::string bytes_a = reflected.jsonToBinary(*req_a, echo_request);
    const std::string bytes_b = from_set->jsonToBinary(*req_b, echo_request);
    EXPECT_EQ(bytes_a, bytes_b);
    EXPECT_EQ(reflected.binaryToJson(*req_a, bytes_b), from_set->binaryToJson(*req_b, bytes_a));
    for (const char* name : {"crank.fixture.v1.EchoResponse", "crank.fixture.v1.Tick",
                             "crank.fixture.v1.StatsResponse"}) {
        const auto* a = reflected.pool().FindMessageTypeByName(name);
        const auto* b = from_set->pool().FindMessageTypeByName(name);
        ASSERT_NE(a, nullptr) << name;
        EXPECT_EQ(reflected.binaryToJson(*a, ""), from_set->binaryToJson(*b, "")) << name;
    }
    const auto* ticks = reflected.findMethod("crank.fixture.v1.Fixture/Ticks");
    ASSERT_NE(ticks, nullptr);
    EXPECT_TRUE(ticks->server_streaming());
}

TEST(ReflectionFixture, V1BuildsTheSameCatalogAsTheDescriptorSet) {
    Fixture fixture("both");
    ASSERT_NE(fixture.channel, nullptr);
    const auto files = fetchServiceFiles(fixture.channel, {fixture_service}, {}, 10s);
    ASSERT_FALSE(files.empty());
    const auto catalog = DescriptorCatalog::fromFiles(files, "reflection of " + fixture.target);
    expectSameAsDescriptorSet(*catalog);
}

TEST(ReflectionFixture, FallsBackToV1alpha) {
    Fixture fixture("v1alpha");
    ASSERT_NE(fixture.channel, nullptr);
    const auto files = fetchServiceFiles(fixture.channel, {fixture_service, fixture_service},
                                         {{"x-crank-test", "1"}}, 10s);
    const auto catalog = DescriptorCatalog::fromFiles(files, "reflection of " + fixture.target);
    expectSameAsDescriptorSet(*catalog);
}

TEST(ReflectionFixture, NoReflectionIsUnsupported) {
    Fixture fixture("none");
    ASSERT_NE(fixture.channel, nullptr);
    const auto e = errorOf([&] { fetchServiceFiles(fixture.channel, {fixture_service}, {}, 10s); });
    EXPECT_EQ(e.code(), ErrorCode::unsupported);
    const std::string what = e.what();
    EXPECT_NE(what.find("has no reflection service (tried grpc.reflection.v1 and v1alpha)"),
              std::string::npos)
        << what;
    EXPECT_NE(what.find("127.0.0.1:"), std::string::npos) << what;
    EXPECT_EQ(errorOf([&] { listServices(fixture.channel, {}, 10s); }).code(),
              ErrorCode::unsupported);
}

TEST(ReflectionFixture, UnknownServiceIsInvalidArgument) {
    Fixture fixture("both");
    ASSERT_NE(fixture.channel, nullptr);
    const auto e = errorOf([&] {
        fetchServiceFiles(fixture.channel, {fixture_service, "nope.Nope"}, {}, 10s);
    });
    EXPECT_EQ(e.code(), ErrorCode::invalid_argument);
    EXPECT_NE(std::string(e.what()).find("does not know the service nope.Nope"), std::string::npos)
        << e.what();
    Fixture old("v1alpha");
    const auto e2 = errorOf([&] { fetchServiceFiles(old.channel, {"nope.Nope"}, {}, 10s); });
    EXPECT_EQ(e2.code(), ErrorCode::invalid_argument) << e2.what();
    EXPECT_NE(std::string(e2.what()).find("nope.Nope"), std::string::npos) << e2.what();
}

TEST(ReflectionFixture, ListServices) {
    Fixture fixture("both");
    ASSERT_NE(fixture.channel, nullptr);
    EXPECT_EQ(listServices(fixture.channel, {}, 10s),
              (std::vector<std::string>{fixture_service, "grpc.reflection.v1.ServerReflection",
                                        "grpc.reflection.v1alpha.ServerReflection"}));
    Fixture old("v1alpha");
    const auto services = listServices(old.channel, {}, 10s);
    EXPECT_NE(std::find(services.begin(), services.end(), fixture_service), services.end());
}

TEST(ReflectionFixture, AnExpiredDeadlineIsATimeoutOrAnAnswerNeverAnotherError) {
    // gRPC fails a call at its deadline from a timer; the fixture on loopback sometimes answers
    // first, even with a deadline already reached, so a timeout cannot be required here (a server
    // that does not answer is: ReflectionFake.SlowServerIsATimeoutWithinTheDeadline).
    Fixture fixture("both");
    ASSERT_NE(fixture.channel, nullptr);
    for (int i = 0; i < 20; ++i) {
        try {
            const auto files = fetchServiceFiles(fixture.channel, {fixture_service}, {}, 0ms);
            EXPECT_FALSE(files.empty());
        } catch (const sdk::Error& e) {
            EXPECT_EQ(e.code(), ErrorCode::timeout) << e.what();
        }
    }
}

std::uint16_t closedPort() {
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = 0;
    EXPECT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
    socklen_t len = sizeof addr;
    EXPECT_EQ(::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len), 0);
    ::close(fd);
    return ntohs(addr.sin_port);
}

TEST(Reflection, UnreachableServerIsUnavailable) {
    const auto channel = channelTo("127.0.0.1:" + std::to_string(closedPort()));
    const auto started = std::chrono::steady_clock::now();
    const auto e = errorOf([&] { fetchServiceFiles(channel, {fixture_service}, {}, 10s); });
    EXPECT_EQ(e.code(), ErrorCode::unavailable) << e.what();
    EXPECT_NE(std::string(e.what()).find("cannot reach"), std::string::npos) << e.what();
    EXPECT_LT(std::chrono::steady_clock::now() - started, 5s);
    EXPECT_EQ(errorOf([&] { listServices(channel, {}, 10s); }).code(), ErrorCode::unavailable);
}

// --- fake servers -------------------------------------------------------------------------------

std::string lengthDelimited(int field, const std::string& value) {
    std::string out;
    {
        pb::io::StringOutputStream stream(&out);
        pb::io::CodedOutputStream coded(&stream);
        coded.WriteTag(WireFormatLite::MakeTag(field, WireFormatLite::WIRETYPE_LENGTH_DELIMITED));
        coded.WriteVarint32(static_cast<std::uint32_t>(value.size()));
        coded.WriteString(value);
    }
    return out;
}

std::string filesAnswer(const std::vector<std::string>& files) {
    std::string inner;
    for (const std::string& f : files) {
        inner += lengthDelimited(1, f);
    }
    return lengthDelimited(4, inner);
}

std::string errorAnswer(int code, const std::string& message) {
    std::string inner;
    {
        pb::io::StringOutputStream stream(&inner);
        pb::io::CodedOutputStream coded(&stream);
        coded.WriteTag(WireFormatLite::MakeTag(1, WireFormatLite::WIRETYPE_VARINT));
        coded.WriteVarint32(static_cast<std::uint32_t>(code));
    }
    inner += lengthDelimited(2, message);
    return lengthDelimited(7, inner);
}

/// A request's oneof: (field number, value).
std::pair<int, std::string> parseRequest(const std::string& bytes) {
    pb::io::CodedInputStream in(reinterpret_cast<const std::uint8_t*>(bytes.data()),
                                static_cast<int>(bytes.size()));
    std::pair<int, std::string> out{0, ""};
    while (const std::uint32_t tag = in.ReadTag()) {
        std::string value;
        if (WireFormatLite::GetTagWireType(tag) != WireFormatLite::WIRETYPE_LENGTH_DELIMITED ||
            !WireFormatLite::ReadString(&in, &value)) {
            ADD_FAILURE() << "unexpected request field";
            return out;
        }
        out = {WireFormatLite::GetTagFieldNumber(tag), value};
    }
    return out;
}

/// A generic gRPC server on 127.0.0.1 whose every method is a bidi stream answering each message
/// with what `handler` says: answer bytes, or nullopt to end the call with `status`.
class FakeServer {
public:
    using Handler = std::function<std::optional<std::string>(
        const std::string& method, const std::string& request, grpc::Status& status)>;

    explicit FakeServer(Handler handler) : service_(this), handler_(std::move(handler)) {
        grpc::ServerBuilder builder;
        int port = 0;
        builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port);
        builder.RegisterCallbackGenericService(&service_);
        server_ = builder.BuildAndStart();
        target_ = "127.0.0.1:" + std::to_string(port);
    }
    ~FakeServer() { server_->Shutdown(std::chrono::system_clock::now() + 2s); }
    FakeServer(const FakeServer&) = delete;
    FakeServer& operator=(const FakeServer&) = delete;

    std::shared_ptr<grpc::Channel> channel() const { return channelTo(target_); }
    std::vector<std::string> methods() const {
        const std::lock_guard<std::mutex> lock(mutex_);
        return methods_;
    }
    std::multimap<std::string, std::string> metadata() const {
        const std::lock_guard<std::mutex> lock(mutex_);
        return metadata_;
    }
    std::vector<std::pair<int, std::string>> requests() const {
        const std::lock_guard<std::mutex> lock(mutex_);
        return requests_;
    }

private:
    class Reactor : public grpc::ServerGenericBidiReactor {
    public:
        Reactor(FakeServer& server, grpc::GenericCallbackServerContext* context)
            : server_(server), method_(context->method()) {
            {
                const std::lock_guard<std::mutex> lock(server_.mutex_);
                server_.methods_.push_back(method_);
                for (const auto& [k, v] : context->client_metadata()) {
                    server_.metadata_.emplace(std::string(k.data(), k.size()),
                                              std::string(v.data(), v.size()));
                }
            }
            StartRead(&request_);
        }
        void OnReadDone(bool ok) override {
            if (!ok) {
                Finish(grpc::Status::OK);
                return;
            }
            std::vector<grpc::Slice> slices;
            (void)request_.Dump(&slices);
            std::string bytes;
            for (const auto& s : slices) {
                bytes.append(reinterpret_cast<const char*>(s.begin()), s.size());
            }
            {
                const std::lock_guard<std::mutex> lock(server_.mutex_);
                server_.requests_.push_back(parseRequest(bytes));
            }
            grpc::Status status;
            const std::optional<std::string> answer = server_.handler_(method_, bytes, status);
            if (!answer) {
                Finish(status);
                return;
            }
            grpc::Slice slice(*answer);
            response_ = grpc::ByteBuffer(&slice, 1);
            StartWrite(&response_);
        }
        void OnWriteDone(bool ok) override {
            if (!ok) {
                Finish(grpc::Status(grpc::StatusCode::CANCELLED, "write failed"));
                return;
            }
            StartRead(&request_);
        }
        void OnDone() override { delete this; }

    private:
        FakeServer& server_;
        std::string method_;
        grpc::ByteBuffer request_;
        grpc::ByteBuffer response_;
    };

    class Service : public grpc::CallbackGenericService {
    public:
        explicit Service(FakeServer* server) : server_(server) {}
        grpc::ServerGenericBidiReactor* CreateReactor(
            grpc::GenericCallbackServerContext* context) override {
            return new Reactor(*server_, context);
        }

    private:
        FakeServer* server_;
    };

    Service service_;
    Handler handler_;
    std::unique_ptr<grpc::Server> server_;
    std::string target_;
    mutable std::mutex mutex_;
    std::vector<std::string> methods_;
    std::multimap<std::string, std::string> metadata_;
    std::vector<std::pair<int, std::string>> requests_;
};

/// a.proto (service a.S, method M(b.B) returns (b.B)) imports b.proto, which imports
/// google/protobuf/timestamp.proto.
std::map<std::string, pb::FileDescriptorProto> twoFiles() {
    pb::FileDescriptorProto b;
    b.set_name("b.proto");
    b.set_package("b");
    b.set_syntax("proto3");
    b.add_dependency("google/protobuf/timestamp.proto");
    auto* bm = b.add_message_type();
    bm->set_name("B");
    auto* field = bm->add_field();
    field->set_name("at");
    field->set_json_name("at");
    field->set_number(1);
    field->set_type(pb::FieldDescriptorProto::TYPE_MESSAGE);
    field->set_type_name(".google.protobuf.Timestamp");
    field->set_label(pb::FieldDescriptorProto::LABEL_OPTIONAL);

    pb::FileDescriptorProto a;
    a.set_name("a.proto");
    a.set_package("a");
    a.set_syntax("proto3");
    a.add_dependency("b.proto");
    auto* method = a.add_service();
    method->set_name("S");
    auto* m = method->add_method();
    m->set_name("M");
    m->set_input_type(".b.B");
    m->set_output_type(".b.B");
    return {{"a.proto", a}, {"b.proto", b}};
}

/// A grpc-go-like server: each answer carries only the file asked for.
FakeServer::Handler oneFileAtATime(std::map<std::string, pb::FileDescriptorProto> files) {
    return [files = std::move(files)](const std::string&, const std::string& request,
                                      grpc::Status&) -> std::optional<std::string> {
        const auto [field, value] = parseRequest(request);
        for (const auto& [name, file] : files) {
            if (field == 3 && name == value) {
                return filesAnswer({file.SerializeAsString()});
            }
            if (field == 4) {
                for (const auto& s : file.service()) {
                    if (file.package() + "." + s.name() == value) {
                        return filesAnswer({file.SerializeAsString()});
                    }
                }
            }
        }
        return errorAnswer(5, value + " not found");
    };
}

TEST(ReflectionFake, FetchesMissingImportsOneByOneOnOneV1Stream) {
    FakeServer server(oneFileAtATime(twoFiles()));
    const auto files = fetchServiceFiles(server.channel(), {"a.S"}, {{"x-crank-test", "yes"}}, 10s);
    ASSERT_EQ(files.size(), 2U);
    // google/protobuf/timestamp.proto is not asked for: libprotobuf has it.
    EXPECT_EQ(server.requests(),
              (std::vector<std::pair<int, std::string>>{{4, "a.S"}, {3, "b.proto"}}));
    EXPECT_EQ(server.methods(), std::vector<std::string>{v1_method});
    const auto metadata = server.metadata();
    ASSERT_EQ(metadata.count("x-crank-test"), 1U);
    EXPECT_EQ(metadata.find("x-crank-test")->second, "yes");
    const auto catalog = DescriptorCatalog::fromFiles(files, "fake");
    EXPECT_EQ(catalog->methodNames(), std::vector<std::string>{"a.S/M"});
}

TEST(ReflectionFake, FallsBackToV1alphaOnUnimplemented) {
    auto serve = oneFileAtATime(twoFiles());
    FakeServer server([&serve](const std::string& method, const std::string& request,
                               grpc::Status& status) -> std::optional<std::string> {
        if (method == v1_method) {
            status = grpc::Status(grpc::StatusCode::UNIMPLEMENTED, "");
            return std::nullopt;
        }
        return serve(method, request, status);
    });
    const auto files = fetchServiceFiles(server.channel(), {"a.S"}, {}, 10s);
    EXPECT_EQ(files.size(), 2U);
    EXPECT_EQ(server.methods(), (std::vector<std::string>{v1_method, v1alpha_method}));
}

TEST(ReflectionFake, MissingImportIsNamed) {
    auto files = twoFiles();
    files.erase("b.proto");
    FakeServer server(oneFileAtATime(files));
    const auto e = errorOf([&] { fetchServiceFiles(server.channel(), {"a.S"}, {}, 10s); });
    EXPECT_EQ(e.code(), ErrorCode::invalid_argument);
    EXPECT_NE(std::string(e.what()).find("cannot send b.proto, imported by a.proto"),
              std::string::npos)
        << e.what();
}

TEST(ReflectionFake, MalformedAnswersAreProtocolErrors) {
    const std::vector<std::string> answers = {
        std::string("\xff\xff\xff", 3),             // not a message
        "",                                         // none of the oneof
        filesAnswer({std::string("\xff\xff", 2)}),  // a file that is not a FileDescriptorProto
        filesAnswer({""}),                          // a file without a name
        lengthDelimited(4, std::string("\x0a\x05x", 3)),           // truncated inner field
        filesAnswer({twoFiles()["b.proto"].SerializeAsString()}),  // does not define a.S
    };
    for (const std::string& answer : answers) {
        FakeServer server(
            [&answer](const std::string&, const std::string&,
                      grpc::Status&) -> std::optional<std::string> { return answer; });
        const auto e = errorOf([&] { fetchServiceFiles(server.channel(), {"a.S"}, {}, 10s); });
        EXPECT_EQ(e.code(), ErrorCode::protocol) << e.what();
    }
    FakeServer server(
        [](const std::string&, const std::string&, grpc::Status&) -> std::optional<std::string> {
            return filesAnswer({});  // files where services were asked for
        });
    EXPECT_EQ(errorOf([&] { listServices(server.channel(), {}, 10s); }).code(),
              ErrorCode::protocol);
}

TEST(ReflectionFake, OtherStatusesAreUpstreamErrors) {
    FakeServer server([](const std::string&, const std::string&,
                         grpc::Status& status) -> std::optional<std::string> {
        status = grpc::Status(grpc::StatusCode::PERMISSION_DENIED, "go away");
        return std::nullopt;
    });
    const auto e = errorOf([&] { fetchServiceFiles(server.channel(), {"a.S"}, {}, 10s); });
    EXPECT_EQ(e.code(), ErrorCode::upstream);
    EXPECT_NE(std::string(e.what()).find("PERMISSION_DENIED go away"), std::string::npos)
        << e.what();
}

TEST(ReflectionFake, TooManyFilesAreResourceExhausted) {
    std::vector<std::string> files;
    for (int i = 0; i < 1001; ++i) {
        pb::FileDescriptorProto f;
        f.set_name("f" + std::to_string(i) + ".proto");
        files.push_back(f.SerializeAsString());
    }
    const std::string answer = filesAnswer(files);
    FakeServer server([&answer](const std::string&, const std::string&,
                                grpc::Status&) -> std::optional<std::string> { return answer; });
    const auto e = errorOf([&] { fetchServiceFiles(server.channel(), {"a.S"}, {}, 10s); });
    EXPECT_EQ(e.code(), ErrorCode::resource_exhausted) << e.what();
}

TEST(ReflectionFake, SlowServerIsATimeoutWithinTheDeadline) {
    FakeServer server(
        [](const std::string&, const std::string&, grpc::Status&) -> std::optional<std::string> {
            std::this_thread::sleep_for(1500ms);
            return errorAnswer(5, "late");
        });
    const auto started = std::chrono::steady_clock::now();
    const auto e = errorOf([&] { fetchServiceFiles(server.channel(), {"a.S"}, {}, 200ms); });
    EXPECT_EQ(e.code(), ErrorCode::timeout) << e.what();
    EXPECT_LT(std::chrono::steady_clock::now() - started, 1s);
}

TEST(ReflectionFake, ServerEndingWithoutAnswerIsAProtocolError) {
    FakeServer server([](const std::string&, const std::string&,
                         grpc::Status& status) -> std::optional<std::string> {
        status = grpc::Status::OK;
        return std::nullopt;
    });
    const auto e = errorOf([&] { listServices(server.channel(), {}, 10s); });
    EXPECT_EQ(e.code(), ErrorCode::protocol) << e.what();
}

}  // namespace
}  // namespace crank::grpc_plugin
