#include "grpc_adapter.h"

#include <chrono>
#include <condition_variable>
#include <vector>

#include <google/protobuf/descriptor.h>
#include <grpcpp/client_context.h>
#include <grpcpp/completion_queue.h>
#include <grpcpp/support/byte_buffer.h>
#include <grpcpp/support/status.h>
#include <rapidjson/document.h>

#include "grpc_status.h"
#include "input_schema.h"
#include "metadata.h"
#include "reflection_client.h"

namespace crank::grpc_plugin {
namespace {

using google::protobuf::MethodDescriptor;
using Clock = std::chrono::steady_clock;

constexpr auto kCancelPoll = std::chrono::milliseconds(20);
constexpr auto kProgressEvery = std::chrono::milliseconds(250);

std::string catalogKey(const GrpcConfig& c) {
    if (!c.descriptor_set.empty()) {
        return "file\n" + c.descriptor_set;
    }
    return "reflection\n" + c.target + "\n" + std::to_string(static_cast<int>(c.tls.enabled)) +
           "\n" + c.tls.ca_file + "\n" + c.tls.cert_file + "\n" + c.tls.server_name + "\n" +
           c.service();
}

/// The metadata of the config that holds no template (what reflection may send at load).
Metadata staticMetadata(const GrpcConfig& c) {
    Metadata out;
    for (const auto& [key, value] : c.metadata) {
        if (value.find("{{") == std::string::npos) {
            out.emplace_back(key, value);
        }
    }
    return out;
}

grpc::ByteBuffer toByteBuffer(const std::string& bytes) {
    grpc::Slice slice(bytes);
    return grpc::ByteBuffer(&slice, 1);
}

std::string fromByteBuffer(const grpc::ByteBuffer& buffer) {
    std::vector<grpc::Slice> slices;
    std::string out;
    if (!buffer.Dump(&slices).ok()) {
        throw sdk::Error(sdk::ErrorCode::protocol, "the upstream's message could not be read");
    }
    out.reserve(buffer.Length());
    for (const grpc::Slice& s : slices) {
        out.append(reinterpret_cast<const char*>(s.begin()), s.size());
    }
    return out;
}

/// The method, or the sdk::Error saying why it cannot be called.
const MethodDescriptor& callableMethod(const DescriptorCatalog& catalog, const GrpcConfig& c) {
    const MethodDescriptor* method = catalog.findMethod(c.method);
    if (method == nullptr) {
        throw sdk::Error(sdk::ErrorCode::invalid_argument, catalog.whyNoMethod(c.method),
                         "{\"path\":\"method\"}");
    }
    if (method->client_streaming()) {
        throw sdk::Error(sdk::ErrorCode::invalid_argument,
                         c.method + " is a " +
                             (method->server_streaming() ? "bidirectional" : "client-streaming") +
                             " method: Crank calls unary and server-streaming methods only",
                         "{\"path\":\"method\"}");
    }
    return *method;
}

std::string kindOf(const MethodDescriptor& m) {
    return m.server_streaming() ? "server-streaming" : "unary";
}

void addMetadata(grpc::ClientContext& context, const Metadata& metadata) {
    for (const auto& [key, value] : metadata) {
        context.AddMetadata(key, value);
    }
}

/// A server-streaming call, read on the stream's own thread through a completion queue of its
/// own. Not reading (the host paused us) leaves the messages to HTTP/2 flow control: the
/// upstream is made to wait rather than buffered here.
class GrpcStream final : public sdk::ThreadedStream {
public:
    GrpcStream(Upstream upstream, std::string method, std::string request_bytes,
               const Metadata& metadata, bool wait_for_ready,
               std::shared_ptr<const DescriptorCatalog> catalog,
               const google::protobuf::Descriptor& output, std::int64_t max_item_bytes)
        : upstream_(std::move(upstream)),
          method_(std::move(method)),
          request_(std::move(request_bytes)),
          catalog_(std::move(catalog)),
          output_(output),
          max_item_bytes_(max_item_bytes) {
        addMetadata(context_, metadata);
        context_.set_wait_for_ready(wait_for_ready);
    }
    ~GrpcStream() override { stop(); }
    GrpcStream(const GrpcStream&) = delete;
    GrpcStream& operator=(const GrpcStream&) = delete;
    GrpcStream(GrpcStream&&) = delete;
    GrpcStream& operator=(GrpcStream&&) = delete;

protected:
    void run(sdk::StreamContext& ctx) override {
        grpc::CompletionQueue queue;
        // One operation at a time: each is started, then waited for with next().
        auto next = [&queue] {
            void* tag = nullptr;
            bool ok = false;
            return queue.Next(&tag, &ok) && ok;
        };
        std::unique_ptr<grpc::GenericClientAsyncReaderWriter> call =
            upstream_.stub->PrepareCall(&context_, "/" + method_, &queue);
        call->StartCall(this);
        bool ok = next();
        if (ok) {
            call->WriteLast(toByteBuffer(request_), grpc::WriteOptions(), this);
            ok = next();
        }
        std::uint64_t received = 0;
        std::uint64_t skipped = 0;
        bool stopped = false;
        auto lastProgress = Clock::now() - kProgressEvery;
        while (ok) {
            grpc::ByteBuffer buffer;
            call->Read(&buffer, this);
            if (!next()) {
                break;
            }
            ++received;
            const std::string json = catalog_->binaryToJson(output_, fromByteBuffer(buffer));
            if (max_item_bytes_ > 0 && static_cast<std::int64_t>(json.size()) > max_item_bytes_) {
                ++skipped;
                ctx.call().log(sdk::LogLevel::warn,
                               "message " + std::to_string(received) + " of " + method_ +
                                   " dropped: " + std::to_string(json.size()) +
                                   " bytes of JSON, more than the item limit of " +
                                   std::to_string(max_item_bytes_));
                continue;
            }
            if (!ctx.emit(json)) {
                stopped = true;
                context_.TryCancel();
                break;
            }
            if (const auto now = Clock::now(); now - lastProgress >= kProgressEvery) {
                lastProgress = now;
                ctx.call().progress(static_cast<double>(received), -1,
                                    std::to_string(received) + " messages from " + method_);
            }
        }
        grpc::Status status;
        call->Finish(&status, this);
        next();
        queue.Shutdown();
        void* tag = nullptr;
        bool drained = false;
        while (queue.Next(&tag, &drained)) {
        }
        if (stopped || ctx.cancelled()) {
            return;
        }
        if (!status.ok()) {
            throwStatus(status, method_, catalog_.get());
        }
        if (skipped > 0) {
            ctx.call().log(sdk::LogLevel::warn, std::to_string(skipped) + " of " +
                                                    std::to_string(received) + " messages of " +
                                                    method_ + " were too large and dropped");
        }
    }

    void onCancel() override { context_.TryCancel(); }

private:
    Upstream upstream_;
    std::string method_;
    std::string request_;
    std::shared_ptr<const DescriptorCatalog> catalog_;
    const google::protobuf::Descriptor& output_;
    std::int64_t max_item_bytes_;
    grpc::ClientContext context_;
};

}  // namespace

// --- CatalogCache ----------------------------------------------------------------------------

std::shared_ptr<const DescriptorCatalog> CatalogCache::get(const GrpcConfig& config,
                                                           ChannelCache& channels) {
    const std::string key = catalogKey(config);
    {
        std::lock_guard<std::mutex> lock(mutex_);
        if (const auto it = catalogs_.find(key); it != catalogs_.end()) {
            return it->second;
        }
    }
    std::shared_ptr<const DescriptorCatalog> made;
    if (!config.descriptor_set.empty()) {
        made = DescriptorCatalog::fromDescriptorSetFile(config.descriptor_set);
    } else {
        const Upstream upstream = channels.get(config);
        made = DescriptorCatalog::fromFiles(
            fetchServiceFiles(upstream.channel, {config.service()}, staticMetadata(config),
                              std::chrono::milliseconds(config.reflection_timeout_ms)),
            "the reflection service of " + config.target);
    }
    std::lock_guard<std::mutex> lock(mutex_);
    return catalogs_.emplace(key, std::move(made)).first->second;
}

void CatalogCache::clear() {
    std::lock_guard<std::mutex> lock(mutex_);
    catalogs_.clear();
}

// --- GrpcAdapter -----------------------------------------------------------------------------

struct GrpcAdapter::Prepared {
    GrpcConfig config;
    std::shared_ptr<const DescriptorCatalog> catalog;
    const MethodDescriptor* method = nullptr;
    std::string request_bytes;
    Metadata metadata;
    Upstream upstream;
};

GrpcAdapter::~GrpcAdapter() {
    // Nothing of gRPC may outlive the plugin's shutdown: drop the channels and descriptors now.
    catalogs_.clear();
    channels_.clear();
}

void GrpcAdapter::validate(std::string_view config_json, sdk::Diagnostics& diagnostics) {
    auto config = parseGrpcConfig(
        config_json, false,
        [&](std::string_view path, std::string_view message) { diagnostics.error(path, message); });
    if (!config) {
        return;
    }
    try {
        channels_.get(*config);
        const auto catalog = catalogs_.get(*config, channels_);
        callableMethod(*catalog, *config);
    } catch (const sdk::Error& e) {
        // Name the member to fix: the method, a TLS file, the descriptor set, or the target
        // whose reflection service failed.
        const std::string_view what = e.what();
        std::string path = "target";
        if (e.details().find("\"path\":\"method\"") != std::string::npos) {
            path = "method";
        } else if (what.rfind("tls.", 0) == 0) {
            path = "tls";
        } else if (!config->descriptor_set.empty()) {
            path = "descriptor_set";
        }
        diagnostics.error(path, e.what());
    }
}

std::string GrpcAdapter::describe(std::string_view config_json, sdk::Diagnostics& diagnostics) {
    auto config = parseGrpcConfig(
        config_json, false,
        [&](std::string_view path, std::string_view message) { diagnostics.error(path, message); });
    if (!config) {
        return {};
    }
    const auto catalog = catalogs_.get(*config, channels_);
    const MethodDescriptor& method = callableMethod(*catalog, *config);
    std::string out = "{\"transport_behavior\":";
    out += method.server_streaming() ? "\"server_stream\"" : "\"request_response\"";
    out += ",\"description\":";
    sdk::appendJsonString(out, "gRPC " + kindOf(method) + " method " + config->method +
                                   " (request " + method.input_type()->full_name() + ", response " +
                                   method.output_type()->full_name() + ")");
    if (!config->message_json) {
        const std::string schema = inputSchemaJson(*method.input_type());
        // A tool's input is an object; a request that is a well-known type with another JSON
        // form (a Timestamp is a string) needs the operation to say how the input maps onto it.
        rapidjson::Document parsed;
        parsed.Parse(schema.data(), schema.size());
        const bool object = !parsed.HasParseError() && parsed.IsObject() &&
                            parsed.HasMember("type") && parsed["type"].IsString() &&
                            std::string_view(parsed["type"].GetString()) == "object";
        if (!object) {
            diagnostics.error("method", "the request of " + config->method + " is " +
                                            method.input_type()->full_name() +
                                            ", which is not a JSON object: give \"message\" "
                                            "(a template over the tool input) and an input_schema");
            return {};
        }
        out += ",\"input_schema\":" + schema;
    }
    return out + "}";
}

GrpcAdapter::Prepared GrpcAdapter::prepare(const sdk::Request& request) {
    std::string problems;
    auto config = parseGrpcConfig(
        request.request_json, true, [&](std::string_view path, std::string_view message) {
            problems += problems.empty() ? "" : "; ";
            problems += "config." + std::string(path) + ": " + std::string(message);
        });
    if (!config) {
        throw sdk::Error(sdk::ErrorCode::invalid_argument, problems);
    }
    Prepared p;
    p.config = std::move(*config);
    p.catalog = catalogs_.get(p.config, channels_);
    p.method = &callableMethod(*p.catalog, p.config);
    const std::string_view message =
        p.config.message_json ? std::string_view(*p.config.message_json) : request.input_json;
    p.request_bytes =
        p.catalog->jsonToBinary(*p.method->input_type(), message.empty() ? "{}" : message);
    p.metadata = p.config.metadata;
    checkMetadata(p.metadata, "config.metadata");
    for (auto& entry : authMetadata(request.auth_json)) {
        p.metadata.push_back(std::move(entry));
    }
    request.appendTraceHeaders(p.metadata);
    p.upstream = channels_.get(p.config);
    return p;
}

void GrpcAdapter::unaryCall(sdk::Call& call, const sdk::Request& request) {
    Prepared p = prepare(request);
    if (p.method->server_streaming()) {
        throw sdk::Error(
            sdk::ErrorCode::unsupported,
            p.config.method + " streams: give the operation mode window, session or async_job");
    }
    grpc::ClientContext context;
    addMetadata(context, p.metadata);
    context.set_wait_for_ready(p.config.wait_for_ready);
    if (request.timeout_ms > 0) {
        context.set_deadline(std::chrono::system_clock::now() +
                             std::chrono::milliseconds(request.timeout_ms));
    }
    const grpc::ByteBuffer sent = toByteBuffer(p.request_bytes);
    grpc::ByteBuffer received;
    std::mutex mutex;
    std::condition_variable done_cv;
    bool done = false;
    grpc::Status status;
    p.upstream.stub->UnaryCall(&context, p.config.path(), grpc::StubOptions(), &sent, &received,
                               [&](const grpc::Status& s) {
                                   std::lock_guard<std::mutex> lock(mutex);
                                   status = s;
                                   done = true;
                                   done_cv.notify_all();
                               });
    bool cancelSent = false;
    {
        std::unique_lock<std::mutex> lock(mutex);
        // The callback owns references to locals: wait for it whatever happens. A deadline or
        // TryCancel() always completes the call.
        while (!done_cv.wait_for(lock, kCancelPoll, [&] { return done; })) {
            if (!cancelSent && call.isCancelled()) {
                cancelSent = true;
                context.TryCancel();
            }
        }
    }
    if (!status.ok()) {
        if (cancelSent) {
            // crankd's clock for upstream_timeout_ms started before ours: its deadline usually
            // comes first, and is the same DEADLINE_EXCEEDED to the caller.
            if (call.cancelReason() == CRANK_CANCEL_DEADLINE) {
                throw sdk::Error(sdk::ErrorCode::timeout,
                                 "gRPC DEADLINE_EXCEEDED from " + p.config.method +
                                     ": no answer within " + std::to_string(request.timeout_ms) +
                                     " ms");
            }
            throw sdk::Error(sdk::ErrorCode::timeout,
                             "cancelled before " + p.config.method + " answered");
        }
        throwStatus(status, p.config.method, p.catalog.get());
    }
    const std::string json =
        p.catalog->binaryToJson(*p.method->output_type(), fromByteBuffer(received));
    if (request.max_item_bytes > 0 &&
        static_cast<std::int64_t>(json.size()) > request.max_item_bytes) {
        throw sdk::Error(sdk::ErrorCode::resource_exhausted,
                         "the response of " + p.config.method + " is " +
                             std::to_string(json.size()) + " bytes of JSON, more than the " +
                             std::to_string(request.max_item_bytes) + " an item may have");
    }
    call.emit(json);
}

std::unique_ptr<sdk::Stream> GrpcAdapter::openStream(sdk::Call& /*call*/,
                                                     const sdk::Request& request) {
    Prepared p = prepare(request);
    if (!p.method->server_streaming()) {
        throw sdk::Error(sdk::ErrorCode::unsupported,
                         p.config.method +
                             " is unary: give the operation transport_behavior "
                             "\"request_response\"");
    }
    return std::make_unique<GrpcStream>(
        std::move(p.upstream), p.config.method, std::move(p.request_bytes), p.metadata,
        p.config.wait_for_ready, p.catalog, *p.method->output_type(), request.max_item_bytes);
}

sdk::AdapterInfo grpcAdapterInfo() {
    sdk::AdapterInfo info;
    info.name = "grpc";
    info.version = "1.0.0";
    info.description =
        "gRPC upstreams: unary and server-streaming methods, descriptors from a descriptor set "
        "or server reflection";
    info.capabilities = CRANK_CAP_UNARY | CRANK_CAP_SERVER_STREAM;
    info.modes = CRANK_MODE_UNARY | CRANK_MODE_WINDOW | CRANK_MODE_SESSION | CRANK_MODE_ASYNC_JOB;
    info.config_schema_json = std::string(grpcConfigSchema());
    return info;
}

void registerGrpcPlugin(sdk::Registrar& registrar) {
    registrar.addAdapter(grpcAdapterInfo(), std::make_unique<GrpcAdapter>());
}

}  // namespace crank::grpc_plugin
