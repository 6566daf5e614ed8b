// Fuzz target: SimGrid platform XML as the embedded simulator reads it (the user's file).
// Accepted platforms are consistent: ids are 0..n-1 in order, the master is not a machine, and
// names are unique.
#include "fuzz_support.h"

#include <vtime/sim/platform.h>

#include <set>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  auto p = vtime::sim::parse_platform_xml(text, "fuzz.xml", "master_host");
  if (!p) {
    FUZZ_CHECK(!p.error().empty(), "an empty error message");
    return 0;
  }
  std::set<std::string> names;
  for (size_t i = 0; i < p->machines.size(); ++i) {
    const auto& m = p->machines[i];
    FUZZ_CHECK(m.id == static_cast<int>(i), "machine %zu has id %d", i, m.id);
    FUZZ_CHECK(m.name != p->master_name, "the master is a machine");
    FUZZ_CHECK(names.insert(m.name).second, "two machines named %s", m.name.c_str());
  }
  FUZZ_CHECK(p->compute_count() <= static_cast<int>(p->machines.size()), "more compute machines than machines");
  return 0;
}
