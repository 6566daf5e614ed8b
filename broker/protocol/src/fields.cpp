#include "fields.h"

#include <algorithm>
#include <limits>

namespace vtime::protocol::detail {

void Fields::fail_field(std::string_view key, const std::string& why) const {
  fail(where_ + ": field '" + prefix_ + std::string(key) + "' " + why);
}

void Fields::fail_here(const std::string& why) const { fail(where_ + ": " + why); }

const Json& Fields::require(std::string_view key) const {
  auto it = obj_.find(key);
  if (it == obj_.end()) fail(where_ + ": missing field '" + prefix_ + std::string(key) + "'");
  return *it;
}

std::string Fields::string(std::string_view key) const {
  const Json& v = require(key);
  if (!v.is_string()) fail_field(key, "must be a string (got " + describe(v) + ")");
  return v.get<std::string>();
}

int Fields::integer(std::string_view key) const {
  const Json& v = require(key);
  if (!v.is_number_integer()) fail_field(key, "must be an integer (got " + describe(v) + ")");
  if (v.is_number_unsigned() ? v.get<uint64_t>() > uint64_t(std::numeric_limits<int>::max())
                             : (v.get<int64_t>() > std::numeric_limits<int>::max() ||
                                v.get<int64_t>() < std::numeric_limits<int>::min()))
    fail_field(key, "is out of range (got " + describe(v) + ")");
  return v.get<int>();
}

bool Fields::boolean(std::string_view key) const {
  const Json& v = require(key);
  if (!v.is_boolean()) fail_field(key, "must be true or false (got " + describe(v) + ")");
  return v.get<bool>();
}

Nanos Fields::seconds(std::string_view key) const {
  const Json& v = require(key);
  if (!v.is_number()) fail_field(key, "must be a number of seconds (got " + describe(v) + ")");
  auto n = Nanos::from_seconds(v.get<double>());
  if (!n) fail_field(key, "is out of range (got " + describe(v) + ")");
  return *n;
}

RawJson Fields::raw(std::string_view key) const { return RawJson{dump_batsim(require(key))}; }

RawJson Fields::object_raw(std::string_view key) const {
  const Json& v = require(key);
  if (!v.is_object()) fail_field(key, "must be an object (got " + describe(v) + ")");
  return RawJson{dump_batsim(v)};
}

std::vector<std::string> Fields::string_array(std::string_view key, bool non_empty) const {
  const Json& v = require(key);
  if (!v.is_array()) fail_field(key, "must be an array of strings (got " + describe(v) + ")");
  if (non_empty && v.empty()) fail_field(key, "must not be empty");
  std::vector<std::string> out;
  for (size_t i = 0; i < v.size(); ++i) {
    if (!v[i].is_string())
      fail_field(key, "must be an array of strings (element " + std::to_string(i) + " is " +
                          describe(v[i]) + ")");
    out.push_back(v[i].get<std::string>());
  }
  return out;
}

StringPairs Fields::string_map(std::string_view key) const {
  const Json& v = require(key);
  if (!v.is_object()) fail_field(key, "must be an object of strings (got " + describe(v) + ")");
  StringPairs out;
  for (auto it = v.begin(); it != v.end(); ++it) {
    if (!it.value().is_string())
      fail_field(key, "must be an object of strings (member '" + it.key() + "' is " +
                          describe(it.value()) + ")");
    out.emplace_back(it.key(), it.value().get<std::string>());
  }
  return out;
}

ResourceSet Fields::resources(std::string_view key) const {
  const Json& v = require(key);
  if (!v.is_string()) fail_field(key, "must be a string like '0-3 5' (got " + describe(v) + ")");
  auto r = ResourceSet::parse(v.get_ref<const std::string&>());
  if (!r) fail_field(key, "must be a string like '0-3 5' (" + r.error() + ")");
  return std::move(r).value();
}

std::string check_job_id(std::string_view id) {
  size_t bang = id.find('!');
  if (bang == std::string_view::npos || id.find('!', bang + 1) != std::string_view::npos ||
      bang == 0 || bang + 1 == id.size())
    return "must look like 'WORKLOAD!JOB', e.g. 'w0!42' (got '" + std::string(id) + "')";
  return {};
}

std::string Fields::job_id(std::string_view key) const {
  std::string id = string(key);
  std::string why = check_job_id(id);
  if (!why.empty()) fail_field(key, why);
  return id;
}

void Fields::expect_members(size_t lo, size_t hi) const {
  size_t n = obj_.size();
  if (n >= lo && n <= hi) return;
  std::string names;
  for (auto it = obj_.begin(); it != obj_.end(); ++it) names += (names.empty() ? "'" : ", '") + it.key() + "'";
  std::string want = lo == hi ? "exactly " + std::to_string(lo) : std::to_string(lo) + " to " + std::to_string(hi);
  fail(where_ + ": 'data' must have " + want + " member" + (hi > 1 ? "s" : "") +
       " (Batsim 4.2.1 aborts otherwise), got " + std::to_string(n) +
       (names.empty() ? "" : ": " + names));
}

Extras Fields::extras(std::initializer_list<std::string_view> known) const {
  Extras out;
  for (auto it = obj_.begin(); it != obj_.end(); ++it) {
    if (std::find(known.begin(), known.end(), std::string_view(it.key())) != known.end()) continue;
    out.emplace_back(it.key(), RawJson{dump_batsim(it.value())});
  }
  return out;
}

}  // namespace vtime::protocol::detail
