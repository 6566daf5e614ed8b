// Fuzz target: Batsim protocol messages in both directions (what vtime reads from Batsim and
// from every scheduler), resource sets, and the canonical JSON writer.
// Invariants beyond "no crash, no leak, no UB": an accepted message serialises to text that
// parses again and serialises to the same bytes (the broker forwards what it serialises), and a
// resource set's text reads back as the same set.
#include "fuzz_support.h"

#include <vtime/protocol/codec.h>
#include <vtime/protocol/resource_set.h>

using namespace vtime::protocol;
using vtime::fuzz::Cursor;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  Cursor in(data, size);
  uint8_t mode = in.byte();
  std::string_view text = in.rest();
  switch (mode % 4) {
    case 0:
    case 1: {
      Direction dir = mode % 4 == 0 ? Direction::to_scheduler : Direction::to_batsim;
      auto m = parse_message(text, dir);
      if (!m) {
        FUZZ_CHECK(!m.error().empty(), "an empty error message");
        break;
      }
      std::string once = serialise(*m);
      auto again = parse_message(once, dir);
      FUZZ_CHECK(again.ok(), "what vtime wrote does not parse: %s\nerror: %s", once.c_str(),
                 again.error().c_str());
      std::string twice = serialise(*again);
      FUZZ_CHECK(once == twice, "serialisation is not stable:\n%s\n%s", once.c_str(), twice.c_str());
      break;
    }
    case 2: {
      auto r = ResourceSet::parse(text);
      if (!r) break;
      std::string s = r->to_string();
      auto back = ResourceSet::parse(s);
      FUZZ_CHECK(back.ok() && *back == *r, "'%s' does not read back", s.c_str());
      break;
    }
    case 3: {
      auto j = canonical_json(text);
      if (!j) break;
      auto again = canonical_json(j->text);
      FUZZ_CHECK(again.ok() && again->text == j->text, "canonical JSON is not stable: %s", j->text.c_str());
      break;
    }
  }
  return 0;
}
