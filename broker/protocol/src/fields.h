// Private: typed access to one JSON object of a message, with precise error lines.
//
// Why exceptions inside: a reader that checks ten fields would otherwise be ten nested ifs.
// Fields throws ParseFailure; parse_message catches it and returns Error, so nothing escapes
// the public API.
#pragma once

#include <initializer_list>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "json_text.h"
#include "vtime/protocol/events.h"

namespace vtime::protocol::detail {

struct ParseFailure : std::runtime_error {
  using std::runtime_error::runtime_error;
};

[[noreturn]] inline void fail(const std::string& msg) { throw ParseFailure(msg); }

class Fields {
 public:
  // `where` prefixes every error: "event 2 (EXECUTE_JOB)". `prefix` names nested objects:
  // "data." or "data.job.".
  Fields(const Json& obj, std::string where, std::string prefix)
      : obj_(obj), where_(std::move(where)), prefix_(std::move(prefix)) {}

  [[noreturn]] void fail_field(std::string_view key, const std::string& why) const;
  [[noreturn]] void fail_here(const std::string& why) const;

  bool has(std::string_view key) const { return obj_.contains(key); }
  const Json& require(std::string_view key) const;

  std::string string(std::string_view key) const;
  int integer(std::string_view key) const;
  bool boolean(std::string_view key) const;
  Nanos seconds(std::string_view key) const;
  RawJson raw(std::string_view key) const;
  RawJson object_raw(std::string_view key) const;   // must be an object
  std::vector<std::string> string_array(std::string_view key, bool non_empty) const;
  StringPairs string_map(std::string_view key) const;
  ResourceSet resources(std::string_view key) const;
  std::string job_id(std::string_view key) const;   // "WORKLOAD!JOB"

  // Batsim 4.2.1 checks the member count of several decisions and aborts otherwise.
  void expect_members(size_t lo, size_t hi) const;
  // Members other than `known`, kept verbatim.
  Extras extras(std::initializer_list<std::string_view> known) const;

  const Json& object() const { return obj_; }
  const std::string& where() const { return where_; }

 private:
  const Json& obj_;
  std::string where_;
  std::string prefix_;
};

std::string check_job_id(std::string_view id);  // empty when valid, else the reason

}  // namespace vtime::protocol::detail
