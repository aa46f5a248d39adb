// `crankd import-openapi` as a command: reading the file, exit statuses, what goes to stdout and
// what to stderr.

#include "openapi/import_command.h"

#include <string>

#include <gtest/gtest.h>

#include "temp_dir.h"

namespace crank::openapi {
namespace {

constexpr std::string_view kDocument = R"({"openapi": "3.0.0", "paths": {"/a": {"get": {
    "operationId": "a", "parameters": [{"name": "c", "in": "cookie"}]}}}})";

TEST(OpenApiCommand, SuccessPrintsJsonAndWarningsApart) {
    const crank::testing::TempDir dir;
    const std::string path = dir.write("spec.json", kDocument);
    ImportOptions options;
    options.server = "http://127.0.0.1:9";
    const CommandOutput out = runImportCommand(path, options);
    EXPECT_EQ(out.exit_code, kImportOk);
    EXPECT_TRUE(out.out.starts_with("{\n  \"operations\": [\n")) << out.out;
    EXPECT_NE(out.out.find(R"("url": "http://127.0.0.1:9/a")"), std::string::npos) << out.out;
    EXPECT_EQ(out.err,
              "crankd: import-openapi: warning: /paths/~1a/get/parameters/0: cookie "
              "parameter \"c\" is left out: the rest plugin does not send cookies\n"
              "crankd: import-openapi: 1 operation from " +
                  path + "\n");
}

TEST(OpenApiCommand, ExitStatuses) {
    const crank::testing::TempDir dir;
    ImportOptions options;
    CommandOutput out = runImportCommand(dir.file("missing.json"), options);
    EXPECT_EQ(out.exit_code, kImportBadDocument);
    EXPECT_EQ(out.out, "");
    EXPECT_EQ(out.err, "crankd: import-openapi: cannot read " + dir.file("missing.json") +
                           ": No such file or directory\n");

    const std::string path = dir.write("spec.json", kDocument);
    out = runImportCommand(path, options);  // no servers, no --server
    EXPECT_EQ(out.exit_code, kImportBadDocument);
    EXPECT_EQ(out.out, "");
    EXPECT_EQ(out.err, "crankd: import-openapi: " + path +
                           ": the document has no servers; pass --server URL\n");

    options.prefix = "a b";
    out = runImportCommand(path, options);
    EXPECT_EQ(out.exit_code, kImportUsage);
    EXPECT_TRUE(out.err.starts_with("crankd: import-openapi: --prefix: ")) << out.err;

    options.prefix = "";
    options.server = "localhost:8080";
    out = runImportCommand(path, options);
    EXPECT_EQ(out.exit_code, kImportUsage);
    EXPECT_TRUE(out.err.starts_with("crankd: import-openapi: --server: ")) << out.err;

    options.server = "http://h";
    options.limits.max_document_bytes = 10;
    out = runImportCommand(path, options);
    EXPECT_EQ(out.exit_code, kImportBadDocument);
    EXPECT_EQ(out.err, "crankd: import-openapi: " + path + ": larger than 10 bytes\n");

    const std::string swagger = dir.write("swagger.json", R"({"swagger": "2.0"})");
    options.limits = {};
    out = runImportCommand(swagger, options);
    EXPECT_EQ(out.exit_code, kImportBadDocument);
    EXPECT_NE(out.err.find("Swagger 2.0 is not supported; convert it to OpenAPI 3"),
              std::string::npos);
}

}  // namespace
}  // namespace crank::openapi
