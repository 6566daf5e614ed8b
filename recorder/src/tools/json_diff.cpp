#include "json_diff.h"

#include "trace_input.h"

namespace vtime::recorder::tools {

namespace {

// Values can be whole messages: keep the report to one readable line.
std::string shown(const Json& v) {
  std::string s = v.dump(-1, ' ', false, Json::error_handler_t::replace);
  return s.size() > 120 ? s.substr(0, 117) + "..." : s;
}

std::string member_path(const std::string& root, const std::string& key) {
  bool plain = !key.empty();
  for (char c : key)
    if (!(isalnum(static_cast<unsigned char>(c)) || c == '_')) plain = false;
  return plain ? root + "." + key : root + "[" + Json(key).dump() + "]";
}

}  // namespace

std::optional<JsonDifference> first_difference(const Json& a, const Json& b, const std::string& root) {
  if (a.type() != b.type()) {
    // 1 and 1.0 are different bytes but the same number: compare numbers by value.
    if (a.is_number() && b.is_number() && a.get<double>() == b.get<double>()) return std::nullopt;
    return JsonDifference{root, shown(a), shown(b)};
  }
  if (a.is_object()) {
    for (auto it = a.begin(); it != a.end(); ++it) {
      auto jt = b.find(it.key());
      if (jt == b.end()) return JsonDifference{member_path(root, it.key()), shown(it.value()), "(absent)"};
      if (auto d = first_difference(it.value(), *jt, member_path(root, it.key()))) return d;
    }
    for (auto jt = b.begin(); jt != b.end(); ++jt) {
      if (!a.contains(jt.key())) return JsonDifference{member_path(root, jt.key()), "(absent)", shown(jt.value())};
    }
    return std::nullopt;
  }
  if (a.is_array()) {
    size_t n = std::min(a.size(), b.size());
    for (size_t i = 0; i < n; ++i) {
      if (auto d = first_difference(a[i], b[i], root + "[" + std::to_string(i) + "]")) return d;
    }
    if (a.size() != b.size()) {
      std::string at = root + "[" + std::to_string(n) + "]";
      return a.size() > n ? JsonDifference{at, shown(a[n]), "(absent)"} : JsonDifference{at, "(absent)", shown(b[n])};
    }
    return std::nullopt;
  }
  if (a != b) return JsonDifference{root, shown(a), shown(b)};
  return std::nullopt;
}

std::optional<JsonDifference> msg_difference(const Json& a, const Json& b) {
  if (a.value("dir", Json()) != b.value("dir", Json())) return first_difference(a.value("dir", Json()), b.value("dir", Json()), "$.dir");
  auto ba = msg_bytes(a), bb = msg_bytes(b);
  if (!ba || !bb) return first_difference(a, b);
  if (*ba == *bb) return first_difference(a, b);  // same bytes: t or another field
  Json ja = Json::parse(*ba, nullptr, false), jb = Json::parse(*bb, nullptr, false);
  if (!ja.is_discarded() && !jb.is_discarded()) {
    if (auto d = first_difference(ja, jb, "bytes$")) return d;
    return JsonDifference{"bytes", "(same JSON, other formatting)", "(same JSON, other formatting)"};
  }
  size_t i = 0;
  while (i < ba->size() && i < bb->size() && (*ba)[i] == (*bb)[i]) ++i;
  auto around = [&](const std::string& s) { return Json(s.substr(i, 40)).dump(-1, ' ', false, Json::error_handler_t::replace); };
  return JsonDifference{"bytes[" + std::to_string(i) + "]", around(*ba), around(*bb)};
}

std::optional<JsonDifference> record_difference(const Json& a, const Json& b) {
  if (str_or(a, "type") == "msg" && str_or(b, "type") == "msg") return msg_difference(a, b);
  return first_difference(a, b);
}

}  // namespace vtime::recorder::tools
