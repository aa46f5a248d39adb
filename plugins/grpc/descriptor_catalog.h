// plugins/grpc: the descriptors of one upstream (a descriptor set file or what its reflection
// service sent), and the proto3 JSON mapping over them.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace google::protobuf {
class Descriptor;
class DescriptorPool;
class FileDescriptorProto;
class MethodDescriptor;
}  // namespace google::protobuf

namespace crank::grpc_plugin {

/// An immutable set of protobuf descriptors with a dynamic message factory and a JSON type
/// resolver over them. Built once (at config load, or when reflection is fetched again) and shared
/// by every call through a shared_ptr; every member is const and safe from any thread.
///
/// No generated code: the pool is fed only with FileDescriptorProtos. The well-known types
/// (google/protobuf/*.proto) resolve from libprotobuf's own pool when the files do not carry them.
class DescriptorCatalog {
public:
    /// Builds from serialized FileDescriptorProtos, in any order. `origin` names where they came
    /// from in errors ("descriptor set /x/y.desc", "reflection of 127.0.0.1:5000"). Throws
    /// sdk::Error(invalid_argument) naming the origin, the file and the problem (a file that is
    /// not a FileDescriptorProto, a missing import, an unresolvable type, conflicting files, a
    /// symbol defined twice, more than 1000 files or 64 MiB), e.g. "reflection of x: cannot build
    /// a.proto: a.proto: a.M.x: \".b.B\" is not defined.".
    /// The same file twice is fine. Every file is built here, so nothing fails later. Files that
    /// use google.protobuf types without importing them (grpc-node's reflection) get the import.
    /// Files given for google/protobuf/*.proto are used as given; missing ones come from
    /// libprotobuf.
    static std::shared_ptr<const DescriptorCatalog> fromFiles(
        const std::vector<std::string>& serialized_files, const std::string& origin);
    /// Reads a FileDescriptorSet file (`protoc --descriptor_set_out=F --include_imports`). Throws
    /// sdk::Error(invalid_argument) naming the path: missing, unreadable, larger than 64 MiB, not a
    /// FileDescriptorSet, or any problem of fromFiles().
    static std::shared_ptr<const DescriptorCatalog> fromDescriptorSetFile(const std::string& path);

    ~DescriptorCatalog();
    DescriptorCatalog(const DescriptorCatalog&) = delete;
    DescriptorCatalog& operator=(const DescriptorCatalog&) = delete;
    DescriptorCatalog(DescriptorCatalog&&) = delete;
    DescriptorCatalog& operator=(DescriptorCatalog&&) = delete;

    /// The method named "pkg.Service/Method" (a leading "/" is accepted); nullptr when unknown.
    const google::protobuf::MethodDescriptor* findMethod(std::string_view name) const;
    /// Why findMethod(name) found nothing, one sentence: "the service pkg.S is not in <origin>
    /// (it has: a.B, c.D)", or "pkg.S has no method Foo (it has: Bar, Baz)", or the expected
    /// form when `name` is not "pkg.Service/Method".
    std::string whyNoMethod(std::string_view name) const;
    /// Every method of every service, "pkg.Service/Method", sorted.
    std::vector<std::string> methodNames() const;

    /// The tool input (a JSON object's text, proto3 JSON mapping: lowerCamel or original field
    /// names, int64 as string or number, enums by name or number) as wire bytes of `type`.
    /// Throws sdk::Error(invalid_argument, "input does not match <full type name>: <why>"), e.g.
    /// "...: (big): invalid value 1.5 for type TYPE_INT64", "...: nope: Cannot find field.",
    /// "...: nested deeper than 200 levels" (checked before protobuf sees the text: its converter
    /// takes more than quadratic time on deeply nested lists), "...: nested deeper than the 100
    /// messages protobuf reads" (a Struct of lists 50 deep: no protobuf peer would parse it).
    /// protobuf 3.21's parser is more lenient than the spec (and than inputSchemaJson()): "yes"
    /// and "no" for bools, a single value for a repeated field, unknown numbers of open enums.
    /// The bytes are valid but not canonical: fields in the JSON's order, explicit zeros kept,
    /// repeated scalars unpacked; compare messages, not bytes.
    std::string jsonToBinary(const google::protobuf::Descriptor& type, std::string_view json) const;
    /// Wire bytes of `type` as JSON (proto3 JSON mapping): lowerCamel names, fields with zero
    /// values printed, enums as names (unknown numbers as numbers), 64-bit integers as strings,
    /// well-known types in their JSON forms; unknown fields (and fields with another wire type)
    /// are dropped. Unset message fields, oneof members and proto3 `optional` fields are absent,
    /// never null; a whole google.protobuf.Value without a kind is null (and a whole ListValue of
    /// unknown fields alone is []).
    /// Throws sdk::Error(protocol):
    ///  - "the upstream sent bytes that are not a valid <type>[: <why>]" when the bytes, or the
    ///    payload of a google.protobuf.Any inside, do not parse;
    ///  - "the upstream sent a <type> that has no JSON form: <why>" when protobuf's printer
    ///    refuses it: an Any of a type this catalog does not know, or whose URL prefix is not
    ///    "type.googleapis.com/" (but such an Any with an empty payload prints as {"@type": URL},
    ///    which jsonToBinary then refuses).
    std::string binaryToJson(const google::protobuf::Descriptor& type,
                             const std::string& binary) const;
    /// A google.protobuf.Any's payload (`type_url` "type.googleapis.com/pkg.T", any prefix, `value`
    /// the bytes) as JSON with "@type" (the URL as given) and the fields, or "value" for a
    /// well-known type; when this catalog knows the type, the URL is UTF-8 and the bytes parse;
    /// nullopt otherwise.
    std::optional<std::string> anyToJson(std::string_view type_url, const std::string& value) const;

    /// Where the descriptors came from, as given to fromFiles().
    const std::string& origin() const;
    const google::protobuf::DescriptorPool& pool() const;

private:
    struct Impl;
    explicit DescriptorCatalog(std::unique_ptr<Impl> impl);
    /// What fromFiles() and fromDescriptorSetFile() share, once the files are parsed.
    static std::shared_ptr<const DescriptorCatalog> build(
        std::vector<google::protobuf::FileDescriptorProto> files, const std::string& origin);
    /// Whether messages of `type` can hold a google.protobuf.Any (cached).
    bool mayHoldAny(const google::protobuf::Descriptor& type) const;
    /// Whether `binary` parses as `type` with messages nested at most `recursion_limit` deep.
    bool parses(const google::protobuf::Descriptor& type, const std::string& binary,
                int recursion_limit) const;
    std::unique_ptr<Impl> impl_;
};

}  // namespace crank::grpc_plugin
