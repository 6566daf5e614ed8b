// Fuzz target: decision traces, plain or zstd (what `vtime replay` and `vtime trace` read, from
// a file a crash may have cut anywhere). The reader and the validator must report problems,
// never crash or loop, and say what each problem is.
#include "fuzz_support.h"

#include <vtime/recorder/tools.h>
#include <vtime/recorder/trace.h>

#include <sstream>

using vtime::fuzz::MemFile;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  MemFile file(data, size);
  std::string error;
  for (bool any_version : {false, true}) {
    auto reader = vtime::recorder::TraceReader::open(file.path(), &error, any_version);
    if (!reader) {
      FUZZ_CHECK(!error.empty(), "open failed without saying why");
      continue;
    }
    vtime::recorder::Json rec;
    uint64_t n = 0;
    while (reader->next(rec)) ++n;
    FUZZ_CHECK(n == reader->records_read(), "read %llu records, reader says %llu",
               static_cast<unsigned long long>(n), static_cast<unsigned long long>(reader->records_read()));
    for (auto& p : reader->problems()) FUZZ_CHECK(!p.code.empty() && !p.message.empty(), "a problem without code or text");
  }
  std::ostringstream out, err;
  int rc = vtime::recorder::tools::validate(file.path(), out, err);
  FUZZ_CHECK(rc >= 0 && rc < 128, "validate returned %d", rc);
  return 0;
}
