#include "json_text.h"

#include <cinttypes>
#include <cstdio>

namespace vtime::protocol::detail {

void append_quoted(std::string& out, std::string_view s) {
  out += '"';
  for (char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\b': out += "\\b"; break;
      case '\f': out += "\\f"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04X", static_cast<unsigned>(c));
          out += buf;
        } else {
          out += c;  // UTF-8 bytes pass through, as rapidjson writes them
        }
    }
  }
  out += '"';
}

void dump_batsim(const Json& j, std::string& out) {
  char buf[400];
  switch (j.type()) {
    case Json::value_t::null: out += "null"; break;
    case Json::value_t::boolean: out += j.get<bool>() ? "true" : "false"; break;
    case Json::value_t::number_integer:
      std::snprintf(buf, sizeof buf, "%" PRId64, j.get<int64_t>());
      out += buf;
      break;
    case Json::value_t::number_unsigned:
      std::snprintf(buf, sizeof buf, "%" PRIu64, j.get<uint64_t>());
      out += buf;
      break;
    case Json::value_t::number_float: {
      // "%f" of a very large double can exceed any fixed buffer; size it first.
      double d = j.get<double>();
      int n = std::snprintf(buf, sizeof buf, "%f", d);
      if (n >= 0 && static_cast<size_t>(n) < sizeof buf) {
        out += buf;
      } else if (n >= 0) {
        std::string big(static_cast<size_t>(n) + 1, '\0');
        std::snprintf(big.data(), big.size(), "%f", d);
        big.pop_back();
        out += big;
      }
      break;
    }
    case Json::value_t::string: append_quoted(out, j.get_ref<const std::string&>()); break;
    case Json::value_t::array: {
      out += '[';
      bool first = true;
      for (const auto& v : j) {
        if (!first) out += ',';
        first = false;
        dump_batsim(v, out);
      }
      out += ']';
      break;
    }
    case Json::value_t::object: {
      out += '{';
      bool first = true;
      for (auto it = j.begin(); it != j.end(); ++it) {
        if (!first) out += ',';
        first = false;
        append_quoted(out, it.key());
        out += ':';
        dump_batsim(it.value(), out);
      }
      out += '}';
      break;
    }
    case Json::value_t::binary:
    case Json::value_t::discarded: out += "null"; break;
  }
}

std::string dump_batsim(const Json& j) {
  std::string out;
  dump_batsim(j, out);
  return out;
}

std::string describe(const Json& j) {
  switch (j.type()) {
    case Json::value_t::null: return "null";
    case Json::value_t::boolean: return j.get<bool>() ? "true" : "false";
    case Json::value_t::number_integer:
    case Json::value_t::number_unsigned:
    case Json::value_t::number_float: return "number " + j.dump();
    case Json::value_t::string: {
      std::string s = j.dump();
      if (s.size() > 60) s = s.substr(0, 57) + "...";
      return "string " + s;
    }
    case Json::value_t::array: return "an array";
    case Json::value_t::object: return "an object";
    default: return "an unsupported value";
  }
}

}  // namespace vtime::protocol::detail
