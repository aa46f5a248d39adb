#pragma once

// The SDK's HTTP client (crank::sdk_http) under the names the REST plugin uses.

#include <crank/sdk/http/client.hpp>
#include <crank/sdk/http/connection.hpp>
#include <crank/sdk/http/exchange.hpp>
#include <crank/sdk/http/url.hpp>

namespace crank::rest {

using sdk::http::appendQueryComponent;
using sdk::http::appendQueryParameter;
using sdk::http::CancelCheck;
using sdk::http::Clock;
using sdk::http::ConnectionPool;
using sdk::http::ExchangeFailure;
using sdk::http::FetchedResponse;
using sdk::http::HeaderList;
using sdk::http::HttpExchange;
using sdk::http::parseUrl;
using sdk::http::resolveUrl;
using sdk::http::ResponseHead;
using sdk::http::TlsOptions;
using sdk::http::Url;

}  // namespace crank::rest
