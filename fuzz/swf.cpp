// Fuzz target: Standard Workload Format traces (`vtime workload from-swf`), then their
// conversion with options taken from the input's first bytes. A conversion that succeeds must
// give a workload the simulator accepts: from-swf never writes a file `vtime sim` refuses.
#include "fuzz_support.h"

#include <vtime/sim/workload.h>
#include <vtime/workload/from_swf.h>
#include <vtime/workload/swf.h>

using namespace vtime::workload;
using vtime::fuzz::Cursor;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  Cursor in(data, size);
  uint8_t o1 = in.byte(), o2 = in.byte(), o3 = in.byte();
  std::string_view text = in.rest();
  size_t pos = 0;
  auto next_line = [&](std::string& line) {
    if (pos >= text.size()) return false;
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    line.assign(text.substr(pos, end - pos));
    pos = end + 1;
    return true;
  };
  SwfReadOptions ro;
  ro.skip_bad = o1 & 1;
  auto trace = read_swf(next_line, ro);
  if (!trace) {
    FUZZ_CHECK(!ro.skip_bad || !trace.error().empty(), "an empty error message");
    return 0;
  }
  ConvertOptions co;
  if (o1 & 2) co.hosts = 1 + o2 % 64;
  if (o1 & 4) co.procs_per_host = 1 + o3 % 16;
  co.too_big = (o1 >> 3) % 3 == 0 ? TooBig::kCap : (o1 >> 3) % 3 == 1 ? TooBig::kDrop : TooBig::kKeep;
  switch ((o1 >> 5) % 4) {
    case 0: co.walltime = Walltime::kRequested; break;
    case 1: co.walltime = Walltime::kRuntime; break;
    case 2: co.walltime = Walltime::kFactor; co.walltime_factor = 1 + o3 % 4; break;
    default: co.walltime = Walltime::kNone; break;
  }
  co.shift = o2 & 0x80;
  if (o2 & 0x40) co.max_duration = 1 + o3 * 10.0;
  if (o3 & 0x80) {
    co.window_start = (o2 & 0x0f) * 100.0;
    co.window_end = *co.window_start + 1 + (o3 & 0x3f) * 100.0;
  } else if (o3 & 0x40) {
    co.window_length = 1 + (o2 & 0x3f) * 50.0;
    co.utilisation = ((o3 & 0x0f) + 1) / 16.0;
  }
  auto conv = convert(*trace, co);
  if (!conv) return 0;
  auto w = vtime::sim::parse_workload(conv->json, "from-swf.json", "w0");
  FUZZ_CHECK(w.ok(), "from-swf wrote a workload the simulator refuses: %s\n%s", w.error().c_str(),
             conv->json.c_str());
  FUZZ_CHECK(w->jobs.size() == conv->jobs, "%zu jobs written, %zu said", w->jobs.size(), conv->jobs);
  return 0;
}
