// Private JSON helpers of the protocol module: Batsim-format dumping and short value
// descriptions for error messages. Only the protocol module includes nlohmann/json.
#pragma once

#include <nlohmann/json.hpp>

#include <string>

namespace vtime::protocol::detail {

// Key order matters: Batsim's messages are compared byte-for-byte, so objects keep the order
// in which their members were read.
using Json = nlohmann::ordered_json;

// Compact JSON like Batsim's rapidjson writer: doubles as "%f", integers as integers.
void dump_batsim(const Json& j, std::string& out);
std::string dump_batsim(const Json& j);

// Appends a JSON string literal (quotes and escapes included).
void append_quoted(std::string& out, std::string_view s);

// "string \"10.0006\"", "number 3", "object", ... for "(got ...)" in error messages.
std::string describe(const Json& j);

}  // namespace vtime::protocol::detail
