// The first place where two JSON values differ, as a path: "$.events[0].data.alloc". Used by
// `diff` on records and on the parsed bytes of protocol messages, so a report points at the
// field that changed rather than at a byte offset in an escaped string.
#pragma once

#include <vtime/recorder/trace.h>

#include <optional>
#include <string>

namespace vtime::recorder::tools {

struct JsonDifference {
  std::string path;  // "$.data.alloc"
  std::string a, b;  // the differing values as compact JSON, "(absent)" for a missing member
};

// Walks objects in A's key order, then B's extra keys; arrays element by element. nullopt when
// equal.
std::optional<JsonDifference> first_difference(const Json& a, const Json& b, const std::string& root = "$");

// Differences of two msg records: "dir", then the parsed "bytes" (path rooted at "bytes$"), or
// the byte offset when a side is not JSON.
std::optional<JsonDifference> msg_difference(const Json& a, const Json& b);

// Any two records: msg records by msg_difference, others by first_difference.
std::optional<JsonDifference> record_difference(const Json& a, const Json& b);

}  // namespace vtime::recorder::tools
