// The "grpc" plugin library: one adapter, "grpc" (see grpc_adapter.h, README.md).
#include "grpc_adapter.h"
#include <crank/sdk.hpp>

CRANK_PLUGIN("grpc", "1.0.0",
             "gRPC upstreams: unary and server-streaming methods through descriptors, no "
             "generated code",
             crank::grpc_plugin::registerGrpcPlugin);
