#include "trace_input.h"

#include <cinttypes>

namespace vtime::recorder::tools {

std::unique_ptr<TraceReader> open_trace(const std::string& path, std::ostream& err) {
  std::string error;
  auto r = TraceReader::open(path, &error);
  if (!r) err << "vtime trace: " << error << "\n";
  return r;
}

size_t report_problems(const TraceReader& r, const std::string& path, std::ostream& err, bool with_path) {
  for (const Problem& p : r.problems()) {
    if (with_path) err << path << ": ";
    err << to_string(p) << "\n";
  }
  return r.problems().size();
}

std::optional<std::string> str_field(const Json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end() || !it->is_string()) return std::nullopt;
  return it->get<std::string>();
}

std::optional<int64_t> int_field(const Json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end() || !it->is_number_integer()) return std::nullopt;
  // Unsigned values beyond int64 are not times or counts any trace can hold.
  if (it->is_number_unsigned() && it->get<uint64_t>() > static_cast<uint64_t>(INT64_MAX)) return std::nullopt;
  return it->get<int64_t>();
}

std::string str_or(const Json& j, const char* key, const std::string& fallback) {
  return str_field(j, key).value_or(fallback);
}

int64_t int_or(const Json& j, const char* key, int64_t fallback) { return int_field(j, key).value_or(fallback); }

std::string seconds6(int64_t ns) { return protocol::format_seconds_6(protocol::Nanos::from_ns(ns)); }

std::optional<std::string> msg_bytes(const Json& rec) {
  if (auto b = str_field(rec, "bytes")) return b;
  auto hex = str_field(rec, "hex");
  if (!hex || hex->size() % 2 != 0) return std::nullopt;
  auto nibble = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  };
  std::string out;
  out.reserve(hex->size() / 2);
  for (size_t i = 0; i < hex->size(); i += 2) {
    int hi = nibble((*hex)[i]), lo = nibble((*hex)[i + 1]);
    if (hi < 0 || lo < 0) return std::nullopt;
    out.push_back(static_cast<char>(hi * 16 + lo));
  }
  return out;
}

bool known_direction(const std::string& dir) {
  return dir == "from_batsim" || dir == "to_scheduler" || dir == "from_scheduler" || dir == "to_batsim";
}

protocol::Direction codec_direction(const std::string& dir) {
  return dir == "from_batsim" || dir == "to_scheduler" ? protocol::Direction::to_scheduler
                                                       : protocol::Direction::to_batsim;
}

protocol::Result<protocol::Message> parse_msg(const Json& rec) {
  std::string dir = str_or(rec, "dir");
  if (!known_direction(dir)) return protocol::Error{"unknown direction \"" + dir + "\""};
  auto bytes = msg_bytes(rec);
  if (!bytes) return protocol::Error{"neither \"bytes\" nor a valid \"hex\""};
  // A tick is an empty message: nothing to parse, no event.
  if (bytes->empty()) return protocol::Message{};
  return protocol::parse_message(*bytes, codec_direction(dir));
}

}  // namespace vtime::recorder::tools
