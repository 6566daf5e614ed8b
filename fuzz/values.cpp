// Fuzz target: the values users type on the command line that vtime parses itself: --epoch
// instants, durations and status lists of `vtime workload from-swf`, and `vtime sweep`'s
// --param lists and ranges (in every kind of parameter). Whatever the text, an answer or an
// error, quickly and in bounded memory (a range of a billion points is refused, not expanded).
#include "fuzz_support.h"

#include "epoch.h"

#include <vtime/sweep/values.h>
#include <vtime/workload/from_swf.h>

using vtime::fuzz::Cursor;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  Cursor in(data, size);
  uint8_t mode = in.byte();
  std::string text(in.rest());
  switch (mode % 4) {
    case 0:
      (void)vtime::cli::parse_epoch(text);
      break;
    case 1: {
      auto d = vtime::workload::parse_duration(text);
      if (d) FUZZ_CHECK(*d >= 0, "a negative duration %g from '%s'", *d, text.c_str());
      (void)vtime::workload::parse_statuses(text);
      break;
    }
    default: {
      using vtime::sweep::ParamKind;
      static const ParamKind kinds[] = {{ParamKind::kText, 1}, {ParamKind::kNumber, 1},
                                        {ParamKind::kDuration, 1e-3}, {ParamKind::kDuration, 1},
                                        {ParamKind::kPlaceholder, 1}};
      auto v = vtime::sweep::parse_values(text, kinds[(mode >> 2) % 5]);
      if (v) {
        FUZZ_CHECK(!v->values.empty(), "no values from '%s'", text.c_str());
        for (auto& x : v->values) FUZZ_CHECK(!x.text.empty(), "an empty value from '%s'", text.c_str());
      }
      break;
    }
  }
  return 0;
}
