#pragma once

// RapidJSON value helpers shared by the REST plugin's config reader and its job shape.

#include <optional>
#include <string>

#include <rapidjson/document.h>

namespace crank::rest {

/// A string value's text (the value must be a string).
std::string jsonStr(const rapidjson::Value& v);
/// `v` as compact JSON; the caller has bounded the document's depth.
std::string compactJson(const rapidjson::Value& v);
/// A scalar's text as it is sent in a query, a header or a URL (a string as it is, a number or
/// boolean as its JSON text); nullopt for null, objects and arrays.
std::optional<std::string> scalarText(const rapidjson::Value& v);

}  // namespace crank::rest
