#include "descriptor_catalog.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <system_error>
#include <unordered_map>
#include <utility>
#include <vector>

#include <google/protobuf/descriptor.h>
#include <google/protobuf/descriptor.pb.h>
#include <google/protobuf/descriptor_database.h>
#include <google/protobuf/dynamic_message.h>
#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <google/protobuf/stubs/common.h>
#include <google/protobuf/util/json_util.h>
#include <google/protobuf/util/message_differencer.h>
#include <google/protobuf/util/type_resolver.h>
#include <google/protobuf/util/type_resolver_util.h>
#include <google/protobuf/wire_format_lite.h>
#include <rapidjson/document.h>
#include <rapidjson/error/en.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "any_json_check.h"
#include "crank/sdk/error.hpp"
#include "crank/sdk/json.hpp"

namespace crank::grpc_plugin {
namespace {

namespace pb = google::protobuf;
using sdk::Error;
using sdk::ErrorCode;

constexpr std::size_t max_files = 1000;
constexpr std::size_t max_total_bytes = std::size_t{64} * 1024 * 1024;
// The type URL prefix of the resolver. JSON's "@type" must use it (protobuf's resolver refuses
// any other prefix), which is also what every gRPC implementation writes.
constexpr std::string_view type_url_prefix = "type.googleapis.com";
// JSON input nesting (objects and arrays) at most, counted before protobuf sees the text. protobuf
// 3.21's JSON parser bounds objects (depth 100) but not arrays: nested google.protobuf.Value lists
// convert in worse than quadratic time (8000 levels take seconds, 100000 hang a thread for hours).
// Nothing deeper than the binary parser's own limit (100 messages) can be read by a protobuf peer.
constexpr std::size_t max_json_depth = 200;
// Errors kept for one message: the first few say what is wrong, the rest is noise.
constexpr std::size_t max_errors = 8;

/// Collects the pool's build errors. The pool keeps a pointer to it for its whole life and may
/// report from any thread doing a lookup, hence the mutex.
class CollectingErrors final : public pb::DescriptorPool::ErrorCollector {
public:
    void AddError(const std::string& filename, const std::string& element_name,
                  const pb::Message* /*descriptor*/, ErrorLocation /*location*/,
                  const std::string& message) override {
        const std::lock_guard<std::mutex> lock(mutex_);
        if (errors_.size() >= max_errors) {
            return;
        }
        std::string text = filename;
        if (!element_name.empty()) {
            text += ": " + element_name;
        }
        text += ": " + message;
        // The same problem is often reported for a file and again for each importer.
        if (std::find(errors_.begin(), errors_.end(), text) == errors_.end()) {
            errors_.push_back(std::move(text));
        }
    }

    std::string take() {
        const std::lock_guard<std::mutex> lock(mutex_);
        std::string out;
        for (const std::string& e : errors_) {
            if (!out.empty()) {
                out += "; ";
            }
            out += e;
        }
        errors_.clear();
        return out;
    }

private:
    std::mutex mutex_;
    std::vector<std::string> errors_;
};

std::string typeUrl(const pb::Descriptor& type) {
    return std::string(type_url_prefix) + "/" + type.full_name();
}

/// protobuf's statuses read "INVALID_ARGUMENT:(big): invalid value ..." through ToString() and
/// sometimes start with ": " through message(): keep only what helps the caller.
std::string cleanStatusMessage(std::string_view message) {
    for (std::string_view prefix : {"INVALID_ARGUMENT:", "INTERNAL:", "UNKNOWN:"}) {
        if (message.substr(0, prefix.size()) == prefix) {
            message.remove_prefix(prefix.size());
        }
    }
    while (!message.empty() && (message.front() == ':' || message.front() == ' ')) {
        message.remove_prefix(1);
    }
    while (!message.empty() && (message.back() == '\n' || message.back() == ' ')) {
        message.remove_suffix(1);
    }
    // The JSON parser appends the input around the error position on following lines: keep the
    // first line (the input may be megabytes, or a secret).
    if (auto nl = message.find('\n'); nl != std::string_view::npos) {
        message = message.substr(0, nl);
    }
    constexpr std::size_t max_length = 500;
    std::string out(message.substr(0, max_length));
    if (message.size() > max_length) {
        out += "...";
    }
    return out.empty() ? "invalid input" : out;
}

/// What a message type can hold, at any depth.
struct Reach {
    bool any = false;  ///< a google.protobuf.Any
    bool map = false;  ///< a map field
};

Reach computeReach(const pb::Descriptor& root) {
    Reach reach;
    std::vector<const pb::Descriptor*> stack{&root};
    std::set<const pb::Descriptor*> seen{&root};
    while (!stack.empty()) {
        const pb::Descriptor* d = stack.back();
        stack.pop_back();
        if (d->full_name() == "google.protobuf.Any") {
            reach.any = true;
        }
        for (int i = 0; i < d->field_count(); ++i) {
            reach.map = reach.map || d->field(i)->is_map();
            const pb::Descriptor* m = d->field(i)->message_type();
            if (m != nullptr && seen.insert(m).second) {
                stack.push_back(m);
            }
        }
    }
    return reach;
}

/// The key of a map entry, as text: what tells two entries of one map apart.
std::string mapKeyText(const pb::Message& entry) {
    const pb::FieldDescriptor* key = entry.GetDescriptor()->map_key();
    const pb::Reflection* r = entry.GetReflection();
    switch (key->cpp_type()) {
        case pb::FieldDescriptor::CPPTYPE_STRING:
            return r->GetString(entry, key);
        case pb::FieldDescriptor::CPPTYPE_INT32:
            return std::to_string(r->GetInt32(entry, key));
        case pb::FieldDescriptor::CPPTYPE_INT64:
            return std::to_string(r->GetInt64(entry, key));
        case pb::FieldDescriptor::CPPTYPE_UINT32:
            return std::to_string(r->GetUInt32(entry, key));
        case pb::FieldDescriptor::CPPTYPE_UINT64:
            return std::to_string(r->GetUInt64(entry, key));
        case pb::FieldDescriptor::CPPTYPE_BOOL:
            return r->GetBool(entry, key) ? "true" : "false";
        default:
            return {};  // protobuf allows no other key type
    }
}

/// Keeps only the last entry of each key in every map of `message`, at any depth. The wire may
/// repeat a key (the last entry wins), a parsed dynamic message keeps every entry, and the JSON
/// printer prints them all: an object with the key twice, which no proto3 JSON reader takes back.
/// Recurses as deep as the parser did (its recursion limit bounds the message).
void keepLastMapEntries(pb::Message& message) {
    const pb::Reflection* r = message.GetReflection();
    std::vector<const pb::FieldDescriptor*> fields;
    r->ListFields(message, &fields);
    for (const pb::FieldDescriptor* field : fields) {
        if (field->cpp_type() != pb::FieldDescriptor::CPPTYPE_MESSAGE) {
            continue;
        }
        if (!field->is_repeated()) {
            keepLastMapEntries(*r->MutableMessage(&message, field));
            continue;
        }
        int size = r->FieldSize(message, field);
        if (field->is_map()) {
            std::unordered_map<std::string, int> last;
            for (int i = 0; i < size; ++i) {
                last[mapKeyText(r->GetRepeatedMessage(message, field, i))] = i;
            }
            if (static_cast<int>(last.size()) < size) {
                std::vector<bool> keep(static_cast<std::size_t>(size), false);
                for (const auto& [key, index] : last) {
                    keep[static_cast<std::size_t>(index)] = true;
                }
                int kept = 0;  // entries [0, kept) are the ones kept, in their order
                for (int i = 0; i < size; ++i) {
                    if (keep[static_cast<std::size_t>(i)]) {
                        if (kept != i) {
                            r->SwapElements(&message, field, kept, i);
                        }
                        ++kept;
                    }
                }
                for (; size > kept; --size) {
                    r->RemoveLast(&message, field);
                }
            }
        }
        for (int i = 0; i < size; ++i) {
            keepLastMapEntries(*r->MutableRepeatedMessage(&message, field, i));
        }
    }
}

/// Any payloads nest (an Any holding a message holding an Any...) at most this deep.
constexpr int max_any_depth = 8;

/// The first google.protobuf.Any in `message` (at any depth) whose payload does not parse as its
/// type, described; nullopt when all parse. The JSON printer would print such a payload as
/// defaults, as it does for any malformed bytes. Payloads of unknown types are left to the printer,
/// which refuses them by name.
std::optional<std::string> badAnyPayload(const pb::Message& message, pb::MessageFactory& factory,
                                         const pb::DescriptorPool& pool, int any_depth) {
    const pb::Descriptor* type = message.GetDescriptor();
    const pb::Reflection* reflection = message.GetReflection();
    if (type->full_name() == "google.protobuf.Any") {
        const pb::FieldDescriptor* url_field = type->FindFieldByNumber(1);
        const pb::FieldDescriptor* value_field = type->FindFieldByNumber(2);
        if (url_field == nullptr || value_field == nullptr) {
            return std::nullopt;
        }
        const std::string url = reflection->GetString(message, url_field);
        const pb::Descriptor* payload_type = anyPayloadType(pool, url);
        if (payload_type == nullptr) {
            return std::nullopt;
        }
        if (any_depth >= max_any_depth) {
            return "google.protobuf.Any values nested more than " + std::to_string(max_any_depth) +
                   " deep";
        }
        const pb::Message* prototype = factory.GetPrototype(payload_type);
        const std::unique_ptr<pb::Message> payload(prototype == nullptr ? nullptr
                                                                        : prototype->New());
        if (payload == nullptr ||
            !payload->ParsePartialFromString(reflection->GetString(message, value_field))) {
            return "a google.protobuf.Any holds bytes that are not a valid " +
                   payload_type->full_name();
        }
        return badAnyPayload(*payload, factory, pool, any_depth + 1);
    }
    std::vector<const pb::FieldDescriptor*> fields;
    reflection->ListFields(message, &fields);
    for (const pb::FieldDescriptor* field : fields) {
        if (field->cpp_type() != pb::FieldDescriptor::CPPTYPE_MESSAGE) {
            continue;
        }
        if (field->is_repeated()) {
            for (int i = 0; i < reflection->FieldSize(message, field); ++i) {
                if (auto bad = badAnyPayload(reflection->GetRepeatedMessage(message, field, i),
                                             factory, pool, any_depth)) {
                    return bad;
                }
            }
        } else if (auto bad = badAnyPayload(reflection->GetMessage(message, field), factory, pool,
                                            any_depth)) {
            return bad;
        }
    }
    return std::nullopt;
}

/// The type names a file refers to (fields, methods), fully qualified without the leading dot
/// when they are; relative names are returned as written.
void collectTypeNames(const pb::DescriptorProto& message, std::set<std::string>& out) {
    for (const auto& field : message.field()) {
        if (!field.type_name().empty()) {
            out.insert(field.type_name());
        }
    }
    for (const auto& field : message.extension()) {
        if (!field.type_name().empty()) {
            out.insert(field.type_name());
        }
        if (!field.extendee().empty()) {
            out.insert(field.extendee());
        }
    }
    for (const auto& nested : message.nested_type()) {
        collectTypeNames(nested, out);
    }
}

/// Some reflection servers (grpc-node's @grpc/reflection, grpc/grpc-node#3034) send files whose
/// `dependency` lacks the well-known-type imports their fields need. Add the missing imports of
/// google.protobuf types libprotobuf knows, so the file builds. Harmless when nothing is missing.
void addMissingWellKnownImports(pb::FileDescriptorProto& file) {
    if (file.package() == "google.protobuf") {
        return;
    }
    std::set<std::string> names;
    for (const auto& message : file.message_type()) {
        collectTypeNames(message, names);
    }
    for (const auto& field : file.extension()) {
        names.insert(field.type_name());
        names.insert(field.extendee());
    }
    for (const auto& service : file.service()) {
        for (const auto& method : service.method()) {
            names.insert(method.input_type());
            names.insert(method.output_type());
        }
    }
    const std::set<std::string> present(file.dependency().begin(), file.dependency().end());
    std::set<std::string> added;
    for (std::string name : names) {
        if (!name.empty() && name.front() == '.') {
            name.erase(0, 1);
        }
        if (name.rfind("google.protobuf.", 0) != 0) {
            continue;
        }
        const pb::FileDescriptor* wkt =
            pb::DescriptorPool::generated_pool()->FindFileContainingSymbol(name);
        if (wkt == nullptr || present.count(wkt->name()) != 0 || added.count(wkt->name()) != 0) {
            continue;
        }
        added.insert(wkt->name());
        file.add_dependency(wkt->name());
    }
}

/// The top-level symbols a file defines, for a clear message when two files define the same one
/// (SimpleDescriptorDatabase would only log it to stderr and refuse).
std::vector<std::string> topLevelSymbols(const pb::FileDescriptorProto& file) {
    const std::string prefix = file.package().empty() ? "" : file.package() + ".";
    std::vector<std::string> out;
    for (const auto& m : file.message_type()) {
        out.push_back(prefix + m.name());
    }
    for (const auto& e : file.enum_type()) {
        out.push_back(prefix + e.name());
        for (const auto& v : e.value()) {
            // Enum values are siblings of their enum in protobuf's scoping.
            out.push_back(prefix + v.name());
        }
    }
    for (const auto& s : file.service()) {
        out.push_back(prefix + s.name());
    }
    for (const auto& x : file.extension()) {
        out.push_back(prefix + x.name());
    }
    return out;
}

std::string joined(const std::vector<std::string>& names, std::size_t limit = 20) {
    std::string out;
    for (std::size_t i = 0; i < names.size() && i < limit; ++i) {
        if (i > 0) {
            out += ", ";
        }
        out += names[i];
    }
    if (names.size() > limit) {
        out += ", ... (" + std::to_string(names.size()) + " in all)";
    }
    return out.empty() ? "none" : out;
}

}  // namespace

struct DescriptorCatalog::Impl {
    explicit Impl(std::string from) : origin(std::move(from)) {}

    // Declaration order is construction order: the pool needs the databases and the collector,
    // the factory and the resolver need the pool; destruction runs the other way round.
    std::string origin;
    CollectingErrors errors;
    pb::SimpleDescriptorDatabase files;
    pb::DescriptorPoolDatabase generated{*pb::DescriptorPool::generated_pool()};
    pb::MergedDescriptorDatabase merged{&files, &generated};
    pb::DescriptorPool pool{&merged, &errors};
    pb::DynamicMessageFactory factory{&pool};
    std::unique_ptr<pb::util::TypeResolver> resolver{
        pb::util::NewTypeResolverForDescriptorPool(std::string(type_url_prefix), &pool)};
    /// Every service of the given files, by full name.
    std::map<std::string, const pb::ServiceDescriptor*, std::less<>> services;
    /// What a message type can hold, by type (filled on first use).
    std::mutex reach_mutex;
    std::map<const pb::Descriptor*, Reach> reach;

    Reach reachOf(const pb::Descriptor& type) {
        const std::lock_guard<std::mutex> lock(reach_mutex);
        auto [it, inserted] = reach.emplace(&type, Reach{});
        if (inserted) {
            it->second = computeReach(type);
        }
        return it->second;
    }
};

/// Files are checked and put in the database first; then every one is built, so that any problem
/// shows now rather than at the first call.
std::shared_ptr<const DescriptorCatalog> DescriptorCatalog::build(
    std::vector<pb::FileDescriptorProto> protos, const std::string& origin) {
    if (protos.size() > max_files) {
        throw Error(ErrorCode::invalid_argument, origin + ": " + std::to_string(protos.size()) +
                                                     " files, more than the " +
                                                     std::to_string(max_files) + " allowed");
    }
    auto impl = std::make_unique<Impl>(origin);
    std::map<std::string, std::size_t> by_name;
    std::map<std::string, std::string> symbol_files;
    std::vector<std::string> names;
    for (std::size_t i = 0; i < protos.size(); ++i) {
        pb::FileDescriptorProto& file = protos[i];
        if (file.name().empty()) {
            throw Error(ErrorCode::invalid_argument,
                        origin + ": file #" + std::to_string(i + 1) +
                            " has no name: it is not a FileDescriptorProto");
        }
        if (auto found = by_name.find(file.name()); found != by_name.end()) {
            if (pb::util::MessageDifferencer::Equals(protos[found->second], file)) {
                continue;  // the same file twice (e.g. from two reflection answers)
            }
            throw Error(ErrorCode::invalid_argument,
                        origin + ": two different files are named " + file.name());
        }
        by_name.emplace(file.name(), i);
        for (std::string& symbol : topLevelSymbols(file)) {
            auto [it, inserted] = symbol_files.emplace(std::move(symbol), file.name());
            if (!inserted) {
                throw Error(ErrorCode::invalid_argument, origin + ": " + it->first +
                                                             " is defined both in " + it->second +
                                                             " and in " + file.name());
            }
        }
        addMissingWellKnownImports(file);
        if (!impl->files.Add(file)) {
            throw Error(ErrorCode::invalid_argument,
                        origin + ": " + file.name() + " conflicts with another file of the set");
        }
        names.push_back(file.name());
    }
    if (names.empty()) {
        throw Error(ErrorCode::invalid_argument, origin + ": no files");
    }
    for (const std::string& name : names) {
        const pb::FileDescriptor* file = impl->pool.FindFileByName(name);
        if (file == nullptr) {
            std::string message = origin;
            message.append(": cannot build ").append(name).append(": ");
            const std::string why = impl->errors.take();
            message += why.empty() ? std::string("unknown error") : why;
            throw Error(ErrorCode::invalid_argument, message);
        }
        for (int s = 0; s < file->service_count(); ++s) {
            const pb::ServiceDescriptor* service = file->service(s);
            impl->services.emplace(service->full_name(), service);
        }
    }
    return std::shared_ptr<const DescriptorCatalog>(new DescriptorCatalog(std::move(impl)));
}

DescriptorCatalog::DescriptorCatalog(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

DescriptorCatalog::~DescriptorCatalog() = default;

std::shared_ptr<const DescriptorCatalog> DescriptorCatalog::fromFiles(
    const std::vector<std::string>& serialized_files, const std::string& origin) {
    if (serialized_files.size() > max_files) {
        throw Error(ErrorCode::invalid_argument,
                    origin + ": " + std::to_string(serialized_files.size()) +
                        " files, more than the " + std::to_string(max_files) + " allowed");
    }
    std::size_t total = 0;
    std::vector<pb::FileDescriptorProto> protos(serialized_files.size());
    for (std::size_t i = 0; i < serialized_files.size(); ++i) {
        total += serialized_files[i].size();
        if (total > max_total_bytes) {
            throw Error(ErrorCode::invalid_argument,
                        origin + ": the files are larger than 64 MiB in total");
        }
        if (!protos[i].ParseFromString(serialized_files[i])) {
            throw Error(ErrorCode::invalid_argument, origin + ": file #" + std::to_string(i + 1) +
                                                         " is not a FileDescriptorProto");
        }
    }
    return build(std::move(protos), origin);
}

std::shared_ptr<const DescriptorCatalog> DescriptorCatalog::fromDescriptorSetFile(
    const std::string& path) {
    const std::string origin = "descriptor set " + path;
    std::error_code ec;
    const auto status = std::filesystem::status(path, ec);
    if (ec || !std::filesystem::exists(status)) {
        throw Error(ErrorCode::invalid_argument, origin + ": no such file");
    }
    if (!std::filesystem::is_regular_file(status)) {
        throw Error(ErrorCode::invalid_argument, origin + ": not a regular file");
    }
    const auto size = std::filesystem::file_size(path, ec);
    if (ec) {
        throw Error(ErrorCode::invalid_argument, origin + ": cannot read it: " + ec.message());
    }
    if (size > max_total_bytes) {
        throw Error(ErrorCode::invalid_argument, origin + ": larger than 64 MiB");
    }
    std::ifstream in(path, std::ios::binary);
    std::string bytes(static_cast<std::size_t>(size), '\0');
    if (!in || !in.read(bytes.data(), static_cast<std::streamsize>(bytes.size()))) {
        throw Error(ErrorCode::invalid_argument, origin + ": cannot read it");
    }
    const char* hint =
        " (make one with protoc --descriptor_set_out=FILE --include_imports x.proto)";
    pb::FileDescriptorSet set;
    if (!set.ParseFromString(bytes)) {
        throw Error(ErrorCode::invalid_argument,
                    origin + ": not a FileDescriptorSet" + std::string(hint));
    }
    // Random bytes can parse as a message with nothing but unknown fields: a set must have files
    // and no field it does not know.
    if (set.file_size() == 0 || !set.GetReflection()->GetUnknownFields(set).empty()) {
        throw Error(ErrorCode::invalid_argument,
                    origin + ": not a FileDescriptorSet" + std::string(hint));
    }
    std::vector<pb::FileDescriptorProto> protos(set.file().begin(), set.file().end());
    return build(std::move(protos), origin);
}

const google::protobuf::MethodDescriptor* DescriptorCatalog::findMethod(
    std::string_view name) const {
    if (!name.empty() && name.front() == '/') {
        name.remove_prefix(1);
    }
    const auto slash = name.find('/');
    if (slash == std::string_view::npos || name.find('/', slash + 1) != std::string_view::npos) {
        return nullptr;
    }
    auto found = impl_->services.find(name.substr(0, slash));
    if (found == impl_->services.end()) {
        return nullptr;
    }
    return found->second->FindMethodByName(std::string(name.substr(slash + 1)));
}

std::string DescriptorCatalog::whyNoMethod(std::string_view name) const {
    std::string_view bare = name;
    if (!bare.empty() && bare.front() == '/') {
        bare.remove_prefix(1);
    }
    const auto slash = bare.find('/');
    if (slash == std::string_view::npos || slash == 0 || slash + 1 == bare.size() ||
        bare.find('/', slash + 1) != std::string_view::npos) {
        return "\"" + std::string(name) +
               "\" is not a method name: expected \"package.Service/Method\"";
    }
    const std::string_view service_name = bare.substr(0, slash);
    const std::string method_name(bare.substr(slash + 1));
    auto found = impl_->services.find(service_name);
    if (found == impl_->services.end()) {
        std::vector<std::string> services;
        services.reserve(impl_->services.size());
        for (const auto& entry : impl_->services) {
            services.push_back(entry.first);
        }
        return "the service " + std::string(service_name) + " is not in " + impl_->origin +
               " (it has: " + joined(services) + ")";
    }
    if (found->second->FindMethodByName(method_name) != nullptr) {
        return std::string(bare) + " exists";  // not an error: findMethod() finds it
    }
    std::vector<std::string> methods;
    methods.reserve(static_cast<std::size_t>(found->second->method_count()));
    for (int i = 0; i < found->second->method_count(); ++i) {
        methods.push_back(found->second->method(i)->name());
    }
    std::sort(methods.begin(), methods.end());
    return std::string(service_name) + " has no method " + method_name +
           " (it has: " + joined(methods) + ")";
}

std::vector<std::string> DescriptorCatalog::methodNames() const {
    std::vector<std::string> out;
    for (const auto& [name, service] : impl_->services) {
        for (int i = 0; i < service->method_count(); ++i) {
            out.push_back(name + "/" + service->method(i)->name());
        }
    }
    std::sort(out.begin(), out.end());
    return out;
}

std::string DescriptorCatalog::jsonToBinary(const google::protobuf::Descriptor& type,
                                            std::string_view json) const {
    pb::util::JsonParseOptions options;
    options.ignore_unknown_fields = false;
    options.case_insensitive_enum_parsing = false;
    if (sdk::jsonNestingDepth(json) > max_json_depth) {
        throw Error(ErrorCode::invalid_argument, "input does not match " + type.full_name() +
                                                     ": nested deeper than " +
                                                     std::to_string(max_json_depth) + " levels");
    }
    // Strict JSON only: protobuf's parser also takes single quotes and bare keys, which would
    // pass by anyInputProblem() unseen. The depth is bounded above, and the parse iterative.
    rapidjson::Document doc;
    doc.Parse<rapidjson::kParseIterativeFlag>(json.data(), json.size());
    if (doc.HasParseError()) {
        throw Error(ErrorCode::invalid_argument,
                    "input does not match " + type.full_name() +
                        ": not JSON: " + rapidjson::GetParseError_En(doc.GetParseError()) +
                        " at byte " + std::to_string(doc.GetErrorOffset()));
    }
    if (mayHoldAny(type)) {
        if (auto problem = anyInputProblem(doc, type, impl_->pool)) {
            throw Error(ErrorCode::invalid_argument,
                        "input does not match " + type.full_name() + ": " + *problem);
        }
    }
    std::string binary;
    const pb::util::Status status =
        pb::util::JsonToBinaryString(impl_->resolver.get(), typeUrl(type),
                                     pb::StringPiece(json.data(), json.size()), &binary, options);
    if (!status.ok()) {
        throw Error(ErrorCode::invalid_argument,
                    "input does not match " + type.full_name() + ": " +
                        cleanStatusMessage({status.message().data(), status.message().size()}));
    }
    // The JSON parser makes messages nested deeper than protobuf (here and in the upstream) reads:
    // a Struct of lists 50 deep is 100 messages, within max_json_depth. Refuse them here, where
    // the caller learns why, rather than send what the upstream cannot parse.
    if (!parses(type, binary, pb::io::CodedInputStream::GetDefaultRecursionLimit())) {
        const bool deep = parses(type, binary, std::numeric_limits<int>::max());
        throw Error(
            ErrorCode::invalid_argument,
            "input does not match " + type.full_name() + ": " +
                (deep ? "nested deeper than the " +
                            std::to_string(pb::io::CodedInputStream::GetDefaultRecursionLimit()) +
                            " messages protobuf reads"
                      : std::string("it makes a message protobuf does not read")));
    }
    return binary;
}

bool DescriptorCatalog::parses(const google::protobuf::Descriptor& type, const std::string& binary,
                               int recursion_limit) const {
    const pb::Message* prototype = impl_->factory.GetPrototype(&type);
    if (prototype == nullptr) {
        return false;
    }
    const std::unique_ptr<pb::Message> message(prototype->New());
    pb::io::CodedInputStream in(reinterpret_cast<const std::uint8_t*>(binary.data()),
                                static_cast<int>(binary.size()));
    in.SetRecursionLimit(recursion_limit);
    return message->MergePartialFromCodedStream(&in) && in.ConsumedEntireMessage();
}

std::string DescriptorCatalog::binaryToJson(const google::protobuf::Descriptor& type,
                                            const std::string& binary) const {
    // BinaryToJsonString prints defaults for malformed bytes instead of failing: parse first.
    const pb::Message* prototype = impl_->factory.GetPrototype(&type);
    if (prototype == nullptr) {
        throw Error(ErrorCode::internal, "no message factory for " + type.full_name());
    }
    const std::unique_ptr<pb::Message> message(prototype->New());
    // Partial: a proto2 message missing a required field still has a JSON form.
    if (!message->ParsePartialFromString(binary)) {
        throw Error(ErrorCode::protocol,
                    "the upstream sent bytes that are not a valid " + type.full_name());
    }
    if (mayHoldAny(type)) {
        if (auto bad = badAnyPayload(*message, impl_->factory, impl_->pool, 0)) {
            throw Error(ErrorCode::protocol, "the upstream sent bytes that are not a valid " +
                                                 type.full_name() + ": " + *bad);
        }
    }
    pb::util::JsonPrintOptions options;
    options.add_whitespace = false;
    options.always_print_primitive_fields = true;
    options.always_print_enums_as_ints = false;
    options.preserve_proto_field_names = false;
    // Print the parsed message's own bytes, not the upstream's. The wire may repeat a singular
    // field, a oneof member or a map key (the last one wins), and the printer, which streams the
    // bytes it is given, prints every occurrence: "true,true" for a google.protobuf.Value whose
    // bool_value came twice, an object with a key twice. The parsed message holds each field once,
    // and each map key once after keepLastMapEntries.
    if (impl_->reachOf(type).map) {
        keepLastMapEntries(*message);
    }
    const std::string canonical = message->SerializePartialAsString();
    std::string json;
    const pb::util::Status status = pb::util::BinaryToJsonString(
        impl_->resolver.get(), typeUrl(type), canonical, &json, options);
    if (!status.ok()) {
        throw Error(ErrorCode::protocol,
                    "the upstream sent a " + type.full_name() + " that has no JSON form: " +
                        cleanStatusMessage({status.message().data(), status.message().size()}));
    }
    if (json.empty()) {
        // protobuf's printer prints nothing for a whole google.protobuf.Value without a kind, and
        // for a whole ListValue whose bytes hold only unknown fields: what they stand for.
        json = type.full_name() == "google.protobuf.ListValue" ? "[]" : "null";
    }
    return json;
}

bool DescriptorCatalog::mayHoldAny(const google::protobuf::Descriptor& type) const {
    return impl_->reachOf(type).any;
}

std::optional<std::string> DescriptorCatalog::anyToJson(std::string_view type_url,
                                                        const std::string& value) const {
    // The URL is written into the JSON as given: it must be UTF-8 (the upstream's bytes).
    if (!pb::internal::IsStructurallyValidUTF8(type_url.data(),
                                               static_cast<int>(type_url.size()))) {
        return std::nullopt;
    }
    const auto slash = type_url.rfind('/');
    const std::string type_name(slash == std::string_view::npos ? type_url
                                                                : type_url.substr(slash + 1));
    if (type_name.empty()) {
        return std::nullopt;
    }
    const pb::Descriptor* type = impl_->pool.FindMessageTypeByName(type_name);
    if (type == nullptr) {
        return std::nullopt;
    }
    const pb::Message* prototype = impl_->factory.GetPrototype(type);
    const std::unique_ptr<pb::Message> message(prototype == nullptr ? nullptr : prototype->New());
    if (message == nullptr || !message->ParsePartialFromString(value) ||
        (mayHoldAny(*type) && badAnyPayload(*message, impl_->factory, impl_->pool, 1))) {
        return std::nullopt;
    }
    // Render through a google.protobuf.Any so that well-known types get their {"@type", "value"}
    // form. The resolver only accepts its own prefix: give it that, then put the URL back.
    std::string any;
    {
        pb::io::StringOutputStream stream(&any);
        pb::io::CodedOutputStream out(&stream);
        const std::string url = std::string(type_url_prefix) + "/" + type_name;
        out.WriteTag(pb::internal::WireFormatLite::MakeTag(
            1, pb::internal::WireFormatLite::WIRETYPE_LENGTH_DELIMITED));
        out.WriteVarint32(static_cast<std::uint32_t>(url.size()));
        out.WriteString(url);
        out.WriteTag(pb::internal::WireFormatLite::MakeTag(
            2, pb::internal::WireFormatLite::WIRETYPE_LENGTH_DELIMITED));
        out.WriteVarint32(static_cast<std::uint32_t>(value.size()));
        out.WriteString(value);
    }
    pb::util::JsonPrintOptions options;
    options.always_print_primitive_fields = true;
    std::string rendered;
    const pb::util::Status status = pb::util::BinaryToJsonString(
        impl_->resolver.get(), std::string(type_url_prefix) + "/google.protobuf.Any", any,
        &rendered, options);
    if (!status.ok()) {
        return std::nullopt;
    }
    rapidjson::Document doc;
    doc.Parse(rendered.data(), rendered.size());
    if (doc.HasParseError() || !doc.IsObject()) {
        return std::nullopt;
    }
    if (doc.HasMember("@type")) {
        doc["@type"].SetString(type_url.data(), static_cast<rapidjson::SizeType>(type_url.size()),
                               doc.GetAllocator());
    }
    rapidjson::StringBuffer buffer;
    rapidjson::Writer<rapidjson::StringBuffer> writer(buffer);
    doc.Accept(writer);
    return std::string(buffer.GetString(), buffer.GetSize());
}

const std::string& DescriptorCatalog::origin() const {
    return impl_->origin;
}

const google::protobuf::DescriptorPool& DescriptorCatalog::pool() const {
    return impl_->pool;
}

}  // namespace crank::grpc_plugin
