// The gRPC server reflection protocol, hand-serialized: protoc-generated reflection classes would
// register grpc/reflection/*.proto in the process-wide generated pool, where a second copy (from
// libgrpc++_reflection or another plugin) terminates the process.
//
// ServerReflectionRequest (v1 and v1alpha are wire-identical):
//   3 file_by_filename: string, 4 file_containing_symbol: string, 7 list_services: string
// ServerReflectionResponse:
//   4 file_descriptor_response { repeated bytes file_descriptor_proto = 1 }
//   6 list_services_response { repeated ServiceResponse { string name = 1 } service = 1 }
//   7 error_response { int32 error_code = 1; string error_message = 2 }
#include "reflection_client.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <optional>
#include <set>
#include <string_view>

#include <google/protobuf/descriptor.h>
#include <google/protobuf/descriptor.pb.h>
#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <google/protobuf/wire_format_lite.h>
#include <grpcpp/channel.h>
#include <grpcpp/client_context.h>
#include <grpcpp/completion_queue.h>
#include <grpcpp/generic/generic_stub.h>
#include <grpcpp/support/byte_buffer.h>
#include <grpcpp/support/slice.h>
#include <grpcpp/support/status.h>

#include "crank/sdk/error.hpp"

namespace crank::grpc_plugin {
namespace {

namespace pb = google::protobuf;
using pb::internal::WireFormatLite;
using sdk::Error;
using sdk::ErrorCode;
using Clock = std::chrono::system_clock;

constexpr std::string_view v1_method = "/grpc.reflection.v1.ServerReflection/ServerReflectionInfo";
constexpr std::string_view v1alpha_method =
    "/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo";
constexpr std::size_t max_files = 1000;
constexpr std::size_t max_total_bytes = std::size_t{64} * 1024 * 1024;
/// gRPC fails pending operations itself once the call's deadline passes; this bounds how much
/// longer a wait on the completion queue may take before we give up on it.
constexpr auto completion_grace = std::chrono::seconds(5);
/// grpc.reflection error_response codes are gRPC status codes.
constexpr std::int32_t not_found_code = 5;

enum class RequestField : int {
    file_by_filename = 3,
    file_containing_symbol = 4,
    list_services = 7,
};

std::string encodeRequest(RequestField field, std::string_view value) {
    std::string out;
    {
        pb::io::StringOutputStream stream(&out);
        pb::io::CodedOutputStream coded(&stream);
        coded.WriteTag(WireFormatLite::MakeTag(static_cast<int>(field),
                                               WireFormatLite::WIRETYPE_LENGTH_DELIMITED));
        coded.WriteVarint32(static_cast<std::uint32_t>(value.size()));
        coded.WriteRaw(value.data(), static_cast<int>(value.size()));
    }
    return out;
}

struct Response {
    std::optional<std::vector<std::string>> files;
    std::optional<std::vector<std::string>> services;
    bool has_error = false;
    std::int32_t error_code = 0;
    std::string error_message;
};

Error malformed(std::string_view what) {
    return {ErrorCode::protocol,
            "the server's reflection service sent a malformed " + std::string(what)};
}

/// Reads the fields of one length-delimited message; `on_field(number, wire_type, in)` consumes
/// a field it wants and returns true, or returns false to have it skipped.
template <class OnField>
bool forEachField(const std::string& bytes, OnField&& on_field) {
    pb::io::CodedInputStream in(reinterpret_cast<const std::uint8_t*>(bytes.data()),
                                static_cast<int>(bytes.size()));
    while (true) {
        const std::uint32_t tag = in.ReadTag();
        if (tag == 0) {
            return in.ConsumedEntireMessage();
        }
        const int number = WireFormatLite::GetTagFieldNumber(tag);
        const auto wire_type = WireFormatLite::GetTagWireType(tag);
        bool consumed = false;
        if (!on_field(number, wire_type, in, consumed)) {
            return false;
        }
        if (!consumed && !WireFormatLite::SkipField(&in, tag)) {
            return false;
        }
    }
}

Response parseResponse(const std::string& bytes) {
    Response r;
    const auto delimited = WireFormatLite::WIRETYPE_LENGTH_DELIMITED;
    const bool ok = forEachField(bytes, [&](int number, auto wire_type,
                                            pb::io::CodedInputStream& in, bool& consumed) {
        if (number == 4 && wire_type == delimited) {
            consumed = true;
            std::string sub;
            if (!WireFormatLite::ReadBytes(&in, &sub)) {
                return false;
            }
            if (!r.files) {
                r.files.emplace();
            }
            return forEachField(sub,
                                [&](int n, auto wt, pb::io::CodedInputStream& sin, bool& used) {
                                    if (n != 1 || wt != delimited) {
                                        return true;
                                    }
                                    used = true;
                                    r.files->emplace_back();
                                    return WireFormatLite::ReadBytes(&sin, &r.files->back());
                                });
        }
        if (number == 6 && wire_type == delimited) {
            consumed = true;
            std::string sub;
            if (!WireFormatLite::ReadBytes(&in, &sub)) {
                return false;
            }
            if (!r.services) {
                r.services.emplace();
            }
            return forEachField(sub, [&](int n, auto wt, pb::io::CodedInputStream& sin,
                                         bool& used) {
                if (n != 1 || wt != delimited) {
                    return true;
                }
                used = true;
                std::string service;
                if (!WireFormatLite::ReadBytes(&sin, &service)) {
                    return false;
                }
                return forEachField(
                    service, [&](int sn, auto swt, pb::io::CodedInputStream& nin, bool& name_used) {
                        if (sn != 1 || swt != delimited) {
                            return true;
                        }
                        name_used = true;
                        r.services->emplace_back();
                        return WireFormatLite::ReadString(&nin, &r.services->back());
                    });
            });
        }
        if (number == 7 && wire_type == delimited) {
            consumed = true;
            std::string sub;
            if (!WireFormatLite::ReadBytes(&in, &sub)) {
                return false;
            }
            r.has_error = true;
            return forEachField(sub,
                                [&](int n, auto wt, pb::io::CodedInputStream& sin, bool& used) {
                                    if (n == 1 && wt == WireFormatLite::WIRETYPE_VARINT) {
                                        used = true;
                                        std::uint32_t code = 0;
                                        if (!sin.ReadVarint32(&code)) {
                                            return false;
                                        }
                                        r.error_code = static_cast<std::int32_t>(code);
                                        return true;
                                    }
                                    if (n == 2 && wt == delimited) {
                                        used = true;
                                        return WireFormatLite::ReadString(&sin, &r.error_message);
                                    }
                                    return true;
                                });
        }
        return true;
    });
    if (!ok) {
        throw malformed("answer (not a ServerReflectionResponse)");
    }
    if (!r.files && !r.services && !r.has_error) {
        throw malformed("answer (neither files, services nor an error)");
    }
    return r;
}

std::string codeName(grpc::StatusCode code) {
    switch (code) {
        case grpc::StatusCode::OK:
            return "OK";
        case grpc::StatusCode::CANCELLED:
            return "CANCELLED";
        case grpc::StatusCode::UNKNOWN:
            return "UNKNOWN";
        case grpc::StatusCode::INVALID_ARGUMENT:
            return "INVALID_ARGUMENT";
        case grpc::StatusCode::DEADLINE_EXCEEDED:
            return "DEADLINE_EXCEEDED";
        case grpc::StatusCode::NOT_FOUND:
            return "NOT_FOUND";
        case grpc::StatusCode::ALREADY_EXISTS:
            return "ALREADY_EXISTS";
        case grpc::StatusCode::PERMISSION_DENIED:
            return "PERMISSION_DENIED";
        case grpc::StatusCode::RESOURCE_EXHAUSTED:
            return "RESOURCE_EXHAUSTED";
        case grpc::StatusCode::FAILED_PRECONDITION:
            return "FAILED_PRECONDITION";
        case grpc::StatusCode::ABORTED:
            return "ABORTED";
        case grpc::StatusCode::OUT_OF_RANGE:
            return "OUT_OF_RANGE";
        case grpc::StatusCode::UNIMPLEMENTED:
            return "UNIMPLEMENTED";
        case grpc::StatusCode::INTERNAL:
            return "INTERNAL";
        case grpc::StatusCode::UNAVAILABLE:
            return "UNAVAILABLE";
        case grpc::StatusCode::DATA_LOSS:
            return "DATA_LOSS";
        case grpc::StatusCode::UNAUTHENTICATED:
            return "UNAUTHENTICATED";
        default:
            return "code " + std::to_string(static_cast<int>(code));
    }
}

/// One ServerReflectionInfo stream on its own completion queue, one operation in flight at a
/// time. Every wait is bounded by the deadline (plus a grace for gRPC to fail the operation);
/// the destructor cancels whatever is left and drains the queue, so nothing outlives it.
class ReflectionStream {
public:
    ReflectionStream(grpc::GenericStub& stub, std::string_view method, const Metadata& metadata,
                     Clock::time_point deadline)
        : deadline_(deadline) {
        context_.set_deadline(deadline);
        for (const auto& [k, v] : metadata) {
            context_.AddMetadata(k, v);
        }
        call_ = stub.PrepareCall(&context_, std::string(method), &queue_);
        if (call_ == nullptr) {
            throw Error(ErrorCode::internal, "gRPC could not prepare the reflection call");
        }
    }

    ~ReflectionStream() {
        if (!finished_) {
            context_.TryCancel();
            if (started_ && !finish_requested_) {
                call_->Finish(&status_, &finish_tag_);
            }
        }
        queue_.Shutdown();
        // After TryCancel every pending operation completes promptly; Next() returns false once
        // the queue is shut down and empty.
        void* tag = nullptr;
        bool ok = false;
        while (queue_.Next(&tag, &ok)) {
        }
    }

    ReflectionStream(const ReflectionStream&) = delete;
    ReflectionStream& operator=(const ReflectionStream&) = delete;
    ReflectionStream(ReflectionStream&&) = delete;
    ReflectionStream& operator=(ReflectionStream&&) = delete;

    /// Sends one request and reads its answer; nullopt when the stream ended instead (finish()
    /// says why).
    std::optional<std::string> exchange(const std::string& request) {
        if (broken_) {
            return std::nullopt;
        }
        if (!started_) {
            started_ = true;
            call_->StartCall(&start_tag_);
            if (!wait(&start_tag_)) {
                broken_ = true;
                return std::nullopt;
            }
        }
        grpc::Slice slice(request);
        write_buffer_ = grpc::ByteBuffer(&slice, 1);
        call_->Write(write_buffer_, &write_tag_);
        if (!wait(&write_tag_)) {
            broken_ = true;
            return std::nullopt;
        }
        read_buffer_.Clear();
        call_->Read(&read_buffer_, &read_tag_);
        if (!wait(&read_tag_)) {
            broken_ = true;
            return std::nullopt;
        }
        std::vector<grpc::Slice> slices;
        if (!read_buffer_.Dump(&slices).ok()) {
            throw malformed("answer (unreadable bytes)");
        }
        std::string out;
        out.reserve(read_buffer_.Length());
        for (const grpc::Slice& s : slices) {
            out.append(reinterpret_cast<const char*>(s.begin()), s.size());
        }
        return out;
    }

    /// Ends the stream (half-close when it is still healthy) and returns its status.
    grpc::Status finish() {
        if (finished_) {
            return status_;
        }
        if (!started_) {
            started_ = true;
            call_->StartCall(&start_tag_);
            broken_ = !wait(&start_tag_);
        }
        if (!broken_) {
            call_->WritesDone(&writes_done_tag_);
            wait(&writes_done_tag_);
        }
        finish_requested_ = true;
        call_->Finish(&status_, &finish_tag_);
        wait(&finish_tag_);
        finished_ = true;
        return status_;
    }

    std::string peer() const { return context_.peer(); }

private:
    /// Waits for the operation of `tag` (the only one in flight); its ok flag.
    bool wait(void* tag) {
        void* got = nullptr;
        bool ok = false;
        const auto next = queue_.AsyncNext(&got, &ok, deadline_ + completion_grace);
        if (next != grpc::CompletionQueue::GOT_EVENT) {
            // gRPC did not end the call at its deadline: give up; the destructor cancels.
            throw Error(ErrorCode::timeout,
                        "the gRPC server's reflection service did not answer in time");
        }
        if (got != tag) {
            throw Error(ErrorCode::internal, "reflection: unexpected completion queue event");
        }
        return ok;
    }

    Clock::time_point deadline_;
    // Declaration order matters: the queue outlives the context, which outlives the call object
    // (allocated in the call's arena).
    grpc::CompletionQueue queue_;
    grpc::ClientContext context_;
    std::unique_ptr<grpc::GenericClientAsyncReaderWriter> call_;
    grpc::ByteBuffer write_buffer_;
    grpc::ByteBuffer read_buffer_;  // a member: a Read in flight at an exception writes into it
    grpc::Status status_;
    bool started_ = false;
    bool broken_ = false;
    bool finish_requested_ = false;
    bool finished_ = false;
    // Tags: addresses of distinct members.
    char start_tag_ = 0;
    char write_tag_ = 0;
    char read_tag_ = 0;
    char writes_done_tag_ = 0;
    char finish_tag_ = 0;
};

/// One conversation with the server's reflection service: v1, or v1alpha when the server does not
/// implement v1. Requests go one after the other over one stream.
class ReflectionSession {
public:
    ReflectionSession(const std::shared_ptr<grpc::Channel>& channel, const Metadata& metadata,
                      std::chrono::milliseconds timeout)
        : stub_(channel),
          metadata_(metadata),
          timeout_(timeout),
          deadline_(Clock::now() + timeout) {}

    Response ask(RequestField field, std::string_view value) {
        const std::string request = encodeRequest(field, value);
        if (stream_ == nullptr) {
            stream_ = std::make_unique<ReflectionStream>(stub_, v1_method, metadata_, deadline_);
        }
        std::optional<std::string> answer = stream_->exchange(request);
        notePeer();
        if (!answer) {
            grpc::Status status = finishStream();
            if (status.error_code() == grpc::StatusCode::UNIMPLEMENTED && !answered_ &&
                !fell_back_) {
                // The server has no v1 (bookworm's C++ servers serve only v1alpha).
                fell_back_ = true;
                v1_message_ = status.error_message();
                stream_ =
                    std::make_unique<ReflectionStream>(stub_, v1alpha_method, metadata_, deadline_);
                answer = stream_->exchange(request);
                if (!answer) {
                    status = finishStream();
                }
            }
            if (!answer) {
                throwStatus(status);
            }
        }
        answered_ = true;
        return parseResponse(*answer);
    }

    /// Ends the stream; a status after complete answers changes nothing.
    void close() {
        if (stream_ != nullptr) {
            finishStream();
            stream_.reset();
        }
    }

    /// "the server at 127.0.0.1:5000" (gRPC names the target until it is connected), or "the
    /// server" when gRPC does not say.
    std::string server() const {
        return peer_.empty() ? std::string("the server") : "the server at " + peer_;
    }

private:
    grpc::Status finishStream() {
        grpc::Status status = stream_->finish();
        notePeer();
        return status;
    }

    void notePeer() {
        std::string peer = stream_->peer();
        for (std::string_view prefix : {"ipv4:", "ipv6:"}) {
            if (peer.rfind(prefix, 0) == 0) {
                peer.erase(0, prefix.size());
            }
        }
        if (!peer.empty()) {
            peer_ = std::move(peer);
        }
    }

    [[noreturn]] void throwStatus(const grpc::Status& status) const {
        const std::string message = status.error_message();
        switch (status.error_code()) {
            case grpc::StatusCode::OK:
                throw Error(ErrorCode::protocol,
                            server() + " ended the reflection stream without an answer");
            case grpc::StatusCode::UNAVAILABLE:
                throw Error(ErrorCode::unavailable,
                            "cannot reach " + server() + " for reflection: " + message);
            case grpc::StatusCode::DEADLINE_EXCEEDED:
                throw Error(ErrorCode::timeout, server() + " did not complete reflection within " +
                                                    std::to_string(timeout_.count()) + " ms");
            case grpc::StatusCode::UNIMPLEMENTED: {
                std::string why = message.empty() ? std::string("UNIMPLEMENTED") : message;
                if (!v1_message_.empty() && v1_message_ != message) {
                    why = v1_message_ + "; " + why;
                }
                throw Error(ErrorCode::unsupported,
                            server() +
                                " has no reflection service (tried grpc.reflection.v1 and "
                                "v1alpha): " +
                                why);
            }
            case grpc::StatusCode::RESOURCE_EXHAUSTED:
                throw Error(ErrorCode::resource_exhausted,
                            "reflection answer from " + server() + " too large: " + message);
            default:
                throw Error(ErrorCode::upstream, "reflection of " + server() +
                                                     " failed: " + codeName(status.error_code()) +
                                                     (message.empty() ? "" : " " + message));
        }
    }

    grpc::GenericStub stub_;
    const Metadata& metadata_;
    std::chrono::milliseconds timeout_;
    Clock::time_point deadline_;
    std::unique_ptr<ReflectionStream> stream_;
    std::string peer_;
    std::string v1_message_;
    bool answered_ = false;
    bool fell_back_ = false;
};

/// The files gathered so far, each once, within the limits.
class FileSet {
public:
    explicit FileSet(const ReflectionSession& session) : session_(session) {}

    /// Adds the files of an answer (each name once) and queues their imports.
    void add(const std::vector<std::string>& files) {
        for (const std::string& bytes : files) {
            pb::FileDescriptorProto file;
            if (!file.ParseFromString(bytes) || file.name().empty()) {
                throw malformed("file (not a FileDescriptorProto)");
            }
            if (names_.count(file.name()) != 0) {
                continue;
            }
            total_bytes_ += bytes.size();
            if (out_.size() + 1 > max_files || total_bytes_ > max_total_bytes) {
                throw Error(ErrorCode::resource_exhausted,
                            session_.server() +
                                " describes its services with more than 1000 files or 64 MiB");
            }
            names_.insert(file.name());
            for (const auto& service : file.service()) {
                services_.insert(file.package().empty() ? service.name()
                                                        : file.package() + "." + service.name());
            }
            for (const std::string& dependency : file.dependency()) {
                wanted_.emplace_back(dependency, file.name());
            }
            out_.push_back(bytes);
        }
    }

    bool hasService(const std::string& name) const { return services_.count(name) != 0; }

    /// The next import to fetch and the file that imports it; nullopt when none is missing.
    /// Well-known types are skipped: DescriptorCatalog takes them from libprotobuf.
    std::optional<std::pair<std::string, std::string>> nextMissing() {
        while (!wanted_.empty()) {
            auto next = std::move(wanted_.front());
            wanted_.pop_front();
            if (names_.count(next.first) != 0 || asked_.count(next.first) != 0) {
                continue;
            }
            if (next.first.rfind("google/protobuf/", 0) == 0 &&
                pb::DescriptorPool::generated_pool()->FindFileByName(next.first) != nullptr) {
                continue;
            }
            asked_.insert(next.first);
            return next;
        }
        return std::nullopt;
    }

    std::vector<std::string> take() { return std::move(out_); }

private:
    const ReflectionSession& session_;
    std::vector<std::string> out_;
    std::set<std::string> names_;
    std::set<std::string> asked_;
    std::set<std::string> services_;
    std::deque<std::pair<std::string, std::string>> wanted_;
    std::size_t total_bytes_ = 0;
};

}  // namespace

std::vector<std::string> fetchServiceFiles(const std::shared_ptr<grpc::Channel>& channel,
                                           const std::vector<std::string>& services,
                                           const Metadata& metadata,
                                           std::chrono::milliseconds timeout) {
    ReflectionSession session(channel, metadata, timeout);
    FileSet files(session);
    for (const std::string& service : services) {
        if (files.hasService(service)) {
            continue;  // an earlier answer carried it
        }
        const Response r = session.ask(RequestField::file_containing_symbol, service);
        if (r.has_error) {
            if (r.error_code == not_found_code) {
                throw Error(ErrorCode::invalid_argument,
                            session.server() + " does not know the service " + service +
                                " (reflection: " + r.error_message + ")");
            }
            throw Error(ErrorCode::upstream, "reflection of " + session.server() +
                                                 " could not describe " + service + ": " +
                                                 codeName(grpc::StatusCode(r.error_code)) + " " +
                                                 r.error_message);
        }
        if (!r.files) {
            throw malformed("answer to file_containing_symbol (no files)");
        }
        files.add(*r.files);
        if (!files.hasService(service)) {
            throw Error(ErrorCode::protocol, "the reflection answer of " + session.server() +
                                                 " for " + service + " does not define it");
        }
    }
    // Imports the answers did not carry (servers like grpc-go send only the one file).
    while (auto missing = files.nextMissing()) {
        const Response r = session.ask(RequestField::file_by_filename, missing->first);
        if (r.has_error) {
            throw Error(
                r.error_code == not_found_code ? ErrorCode::invalid_argument : ErrorCode::upstream,
                session.server() + " cannot send " + missing->first + ", imported by " +
                    missing->second + " (reflection: " + r.error_message + ")");
        }
        if (!r.files) {
            throw malformed("answer to file_by_filename (no files)");
        }
        files.add(*r.files);
    }
    session.close();
    return files.take();
}

std::vector<std::string> listServices(const std::shared_ptr<grpc::Channel>& channel,
                                      const Metadata& metadata, std::chrono::milliseconds timeout) {
    ReflectionSession session(channel, metadata, timeout);
    const Response r = session.ask(RequestField::list_services, "");
    if (r.has_error) {
        throw Error(ErrorCode::upstream, "reflection of " + session.server() +
                                             " could not list services: " + r.error_message);
    }
    if (!r.services) {
        throw malformed("answer to list_services (no services)");
    }
    session.close();
    std::vector<std::string> out = *r.services;
    std::sort(out.begin(), out.end());
    return out;
}

}  // namespace crank::grpc_plugin
