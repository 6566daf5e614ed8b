// parse_message: message-level checks in Batsim 4.2.1's order (JSON, object, now, events, then
// per event: object, timestamp, timestamp <= now, type, data), then the per-type reader.
#include <string>

#include "event_readers.h"
#include "fields.h"
#include "vtime/protocol/codec.h"

namespace vtime::protocol {

using detail::describe;
using detail::fail;
using detail::Fields;
using detail::Json;

namespace {

constexpr const char* kShape = "expected a JSON object like {\"now\": 12.5, \"events\": [...]}";

Event read_event(const Json& ev, size_t i, Nanos now, Direction dir) {
  std::string where = "event " + std::to_string(i);
  if (!ev.is_object()) fail(where + " must be an object (got " + describe(ev) + ")");
  // Name the type in every later message when it is readable, so errors say what was meant.
  auto type_it = ev.find("type");
  if (type_it != ev.end() && type_it->is_string())
    where += " (" + type_it->get<std::string>() + ")";
  Fields top(ev, where, "");

  Event out;
  out.timestamp = top.seconds("timestamp");
  if (out.timestamp > now)
    fail(where + ": timestamp " + format_seconds(out.timestamp) + " is later than the message's now " +
         format_seconds(now) + " (Batsim requires timestamp <= now)");

  std::string type = top.string("type");
  const auto* t = detail::find_event_type(type);
  if (t == nullptr)
    fail(where + ": unknown event type '" + type + "' (expected one of: " +
         detail::accepted_types(dir) + ")");
  bool allowed = dir == Direction::to_scheduler ? t->from_batsim : t->from_scheduler;
  if (!allowed)
    fail(where + ": " + type +
         (dir == Direction::to_batsim ? " is sent by Batsim, a scheduler cannot send it"
                                      : " is sent by schedulers, Batsim never sends it"));

  const Json& data = top.require("data");
  if (t->read == nullptr) {
    out.payload = OtherEvent{type, RawJson{detail::dump_batsim(data)}};
  } else {
    if (!data.is_object()) fail(where + ": field 'data' must be an object (got " + describe(data) + ")");
    out.payload = t->read(Fields(data, where, "data."));
  }
  if (dir == Direction::to_batsim) {
    if (const auto* n = std::get_if<Notify>(&out.payload);
        n && n->type != "registration_finished" && n->type != "continue_registration")
      fail(where + ": field 'data.type' must be 'registration_finished' or 'continue_registration' "
                   "(Batsim 4.2.1 aborts on any other NOTIFY from a scheduler; got '" + n->type + "')");
  }
  out.extras = top.extras({"timestamp", "type", "data"});
  return out;
}

Message read_message(std::string_view bytes, Direction dir) {
  if (bytes.empty()) fail(std::string("message is empty (0 bytes); ") + kShape);
  Json doc;
  try {
    doc = Json::parse(bytes.begin(), bytes.end());
  } catch (const Json::exception& e) {
    // nlohmann prefixes "[json.exception.parse_error.101] "; the rest says where and why.
    std::string what = e.what();
    if (auto p = what.find("] "); p != std::string::npos) what = what.substr(p + 2);
    fail("message is not valid JSON: " + what);
  }
  if (!doc.is_object()) fail("message must be a JSON object (got " + describe(doc) + "); " + kShape);
  Fields top(doc, "message", "");
  Message m;
  m.now = top.seconds("now");
  const Json& events = top.require("events");
  if (!events.is_array()) top.fail_field("events", "must be an array (got " + describe(events) + ")");
  m.events.reserve(events.size());
  for (size_t i = 0; i < events.size(); ++i) m.events.push_back(read_event(events[i], i, m.now, dir));
  m.extras = top.extras({"now", "events"});
  return m;
}

}  // namespace

Result<Message> parse_message(std::string_view bytes, Direction dir) {
  try {
    return read_message(bytes, dir);
  } catch (const detail::ParseFailure& e) {
    return Error{e.what()};
  } catch (const std::exception& e) {
    // Defensive: a reader bug must still not take the peer down with it.
    return Error{std::string("message could not be read: ") + e.what()};
  }
}

Result<RawJson> canonical_json(std::string_view json_text) {
  try {
    return RawJson{detail::dump_batsim(Json::parse(json_text.begin(), json_text.end()))};
  } catch (const std::exception& e) {
    return Error{std::string("not valid JSON: ") + e.what()};
  }
}

}  // namespace vtime::protocol
