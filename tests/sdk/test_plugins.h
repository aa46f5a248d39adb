// The plugins compiled into crank_sdk_tests (tests/sdk/test_plugins.cpp), each behind its own
// entry function (CRANK_PLUGIN_NAMED), handed to crank::testing::FakeHost.
#pragma once

#include <atomic>

#include <crank/plugin.h>

// The C entry symbols follow the ABI's snake_case, like crank_plugin_entry.
// NOLINTBEGIN(readability-identifier-naming)
extern "C" {
/// "sdk_test": adapters boundary, request_echo, chatty, streamer, raw_stream; aggregator sum.
const crank_plugin_descriptor* sdk_test_plugin_entry(void);
/// Registers "echo" twice: the host refuses the second, init fails.
const crank_plugin_descriptor* sdk_duplicate_plugin_entry(void);
/// Registers an adapter named "Bad-Name": the SDK refuses it before the host sees it.
const crank_plugin_descriptor* sdk_bad_name_plugin_entry(void);
/// Its register function throws std::runtime_error("registration exploded").
const crank_plugin_descriptor* sdk_std_throw_plugin_entry(void);
/// Its register function throws an int.
const crank_plugin_descriptor* sdk_int_throw_plugin_entry(void);
/// Catches the host's refusal of a duplicate and goes on: loads with "echo" only.
const crank_plugin_descriptor* sdk_tolerant_plugin_entry(void);
/// "hang": a plain Stream that never completes and ignores cancel.
const crank_plugin_descriptor* sdk_hang_plugin_entry(void);
}
// NOLINTEND(readability-identifier-naming)

namespace sdk_tests {
/// How many test plugin objects (adapters, aggregators) are alive; shutdown brings it back.
extern std::atomic<int> live_objects;
}  // namespace sdk_tests
