#pragma once

// The RapidJSON types that host/json and the runtime pass around, by forward declaration only:
// including this header does not pull in RapidJSON's implementation. Code that creates or reads
// values includes <rapidjson/document.h> itself (in a .cpp, not in a public header).

#include <rapidjson/fwd.h>

namespace crank::json {

/// A parsed JSON value (RapidJSON's default UTF-8 value with a memory pool allocator).
using Value = rapidjson::Value;
/// A parsed JSON document: a Value that owns its allocator.
using Document = rapidjson::Document;
/// The allocator of Value and Document.
using Allocator = rapidjson::MemoryPoolAllocator<rapidjson::CrtAllocator>;

}  // namespace crank::json
