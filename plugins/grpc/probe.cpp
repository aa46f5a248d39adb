// crank-grpc-probe: what a gRPC upstream offers, as the grpc plugin sees it, for operators writing
// operations.
//
//   crank-grpc-probe [--descriptor-set FILE] [--tls] [--ca-file FILE] [--server-name NAME]
//                    [--timeout-ms N] [--operations] TARGET
//
// Lists every method of the upstream's services (over its reflection service, v1 then v1alpha,
// or from FILE), one per line: "pkg.Service/Method  unary|server-streaming|...  Request ->
// Response", marking the methods the plugin cannot call. With --operations it prints instead a
// JSON array of operations, one per callable method, ready for the `operations` of a crankd
// config (unary methods in mode unary, server-streaming ones as windows; the input schema and the
// description are derived when crankd loads them). Exit status 0 on success, 1 when the upstream
// or the file cannot be read, 2 on bad arguments.
#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <string_view>
#include <vector>

#include <google/protobuf/descriptor.h>

#include "channel_cache.h"
#include "descriptor_catalog.h"
#include "grpc_config.h"
#include "reflection_client.h"
#include <crank/sdk/json.hpp>

namespace {

using crank::grpc_plugin::ChannelCache;
using crank::grpc_plugin::DescriptorCatalog;
using crank::grpc_plugin::GrpcConfig;

int usage() {
    std::fputs(
        "usage: crank-grpc-probe [--descriptor-set FILE] [--tls] [--ca-file FILE]\n"
        "                        [--server-name NAME] [--timeout-ms N] [--operations] TARGET\n",
        stderr);
    return 2;
}

std::string kindOf(const google::protobuf::MethodDescriptor& m) {
    if (m.client_streaming()) {
        return m.server_streaming() ? "bidirectional" : "client-streaming";
    }
    return m.server_streaming() ? "server-streaming" : "unary";
}

/// "crank.fixture.v1.Fixture/TickStream" -> "fixture_tick_stream": the service's last name and
/// the method, in snake case (a tool name).
std::string toolName(const google::protobuf::MethodDescriptor& m) {
    std::string out;
    auto append = [&out](std::string_view word) {
        for (std::size_t i = 0; i < word.size(); ++i) {
            const char c = word[i];
            if (std::isupper(static_cast<unsigned char>(c)) != 0) {
                if (i > 0 && !out.empty() && out.back() != '_') {
                    out.push_back('_');
                }
                out.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
            } else {
                out.push_back(std::isalnum(static_cast<unsigned char>(c)) != 0 ? c : '_');
            }
        }
    };
    append(m.service()->name());
    out.push_back('_');
    append(m.name());
    return out;
}

}  // namespace

int main(int argc, char** argv) {
    GrpcConfig config;
    bool operations = false;
    for (int i = 1; i < argc; ++i) {
        const std::string_view arg = argv[i];
        const bool hasValue = i + 1 < argc;
        if (arg == "--descriptor-set" && hasValue) {
            config.descriptor_set = argv[++i];
        } else if (arg == "--tls") {
            config.tls.enabled = true;
        } else if (arg == "--ca-file" && hasValue) {
            config.tls.enabled = true;
            config.tls.ca_file = argv[++i];
        } else if (arg == "--server-name" && hasValue) {
            config.tls.server_name = argv[++i];
        } else if (arg == "--timeout-ms" && hasValue) {
            config.reflection_timeout_ms = std::strtoll(argv[++i], nullptr, 10);
            if (config.reflection_timeout_ms <= 0 ||
                config.reflection_timeout_ms >
                    crank::grpc_plugin::GrpcDefaults::max_reflection_timeout_ms) {
                return usage();
            }
        } else if (arg == "--operations") {
            operations = true;
        } else if (!arg.empty() && arg.front() != '-' && config.target.empty()) {
            config.target = arg;
        } else {
            return usage();
        }
    }
    if (config.target.empty()) {
        return usage();
    }
    try {
        std::shared_ptr<const DescriptorCatalog> catalog;
        if (!config.descriptor_set.empty()) {
            catalog = DescriptorCatalog::fromDescriptorSetFile(config.descriptor_set);
        } else {
            ChannelCache channels;
            const auto upstream = channels.get(config);
            const auto timeout = std::chrono::milliseconds(config.reflection_timeout_ms);
            std::vector<std::string> services =
                crank::grpc_plugin::listServices(upstream.channel, {}, timeout);
            services.erase(std::remove_if(services.begin(), services.end(),
                                          [](const std::string& s) {
                                              return s.rfind("grpc.reflection.", 0) == 0;
                                          }),
                           services.end());
            catalog = DescriptorCatalog::fromFiles(
                crank::grpc_plugin::fetchServiceFiles(upstream.channel, services, {}, timeout),
                "the reflection service of " + config.target);
        }
        std::string out = "[";
        for (const std::string& name : catalog->methodNames()) {
            const google::protobuf::MethodDescriptor* m = catalog->findMethod(name);
            if (m == nullptr) {
                continue;
            }
            const std::string kind = kindOf(*m);
            const bool callable = !m->client_streaming();
            if (!operations) {
                std::printf("%-48s %-17s %s -> %s%s\n", name.c_str(), kind.c_str(),
                            m->input_type()->full_name().c_str(),
                            m->output_type()->full_name().c_str(),
                            callable ? "" : "  (the plugin cannot call it)");
                continue;
            }
            if (!callable) {
                std::fprintf(stderr, "skipped %s: a %s method\n", name.c_str(), kind.c_str());
                continue;
            }
            out += out.size() == 1 ? "\n" : ",\n";
            out += "  {\"name\": ";
            crank::sdk::appendJsonString(out, toolName(*m));
            out += ", \"protocol\": \"grpc\", \"config\": {\"target\": ";
            crank::sdk::appendJsonString(out, config.target);
            out += ", \"method\": ";
            crank::sdk::appendJsonString(out, name);
            if (!config.descriptor_set.empty()) {
                out += ", \"descriptor_set\": ";
                crank::sdk::appendJsonString(out, config.descriptor_set);
            }
            if (config.tls.enabled) {
                out += ", \"tls\": {";
                std::string tls;
                if (!config.tls.ca_file.empty()) {
                    tls += "\"ca_file\": ";
                    crank::sdk::appendJsonString(tls, config.tls.ca_file);
                }
                if (!config.tls.server_name.empty()) {
                    tls += tls.empty() ? "" : ", ";
                    tls += "\"server_name\": ";
                    crank::sdk::appendJsonString(tls, config.tls.server_name);
                }
                out += tls + "}";
            }
            out += "}";
            if (m->server_streaming()) {
                out +=
                    ", \"execution\": {\"mode\": \"window\", \"aggregation_mode\": "
                    "\"summary_plus_samples\"}";
            }
            out += "}";
        }
        if (operations) {
            std::printf("%s\n]\n", out.c_str());
        }
        return 0;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "crank-grpc-probe: %s\n", e.what());
        return 1;
    }
}
