// Fuzz target: Batsim workload JSON, through both readers the simulator has (the whole-file
// parser, and the streaming reader that indexes the file and reads jobs again as they are
// submitted). They must agree on every input: the same error, or the same jobs in the same
// submission order with the same descriptions.
#include "fuzz_support.h"

#include <vtime/sim/workload.h>

using namespace vtime::sim;
using vtime::fuzz::MemFile;

namespace {

std::string describe(const WorkloadJob& j) {
  return std::to_string(j.index) + " " + j.id + " sub " + std::to_string(j.subtime.ns()) + " wall " +
         (j.walltime ? std::to_string(j.walltime->ns()) : std::string("-")) + " res " + std::to_string(j.res) +
         " profile " + std::to_string(j.profile) + " " + j.json.text;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  MemFile file(data, size);
  std::string text(reinterpret_cast<const char*>(data), size);
  auto whole = parse_workload(text, file.path(), "w0");
  auto stream = open_workload(file.path(), "w0");
  FUZZ_CHECK(whole.ok() == stream.ok(), "the readers disagree: whole %s, streaming %s",
             whole ? "accepts" : whole.error().c_str(), stream ? "accepts" : stream.error().c_str());
  if (!whole) {
    FUZZ_CHECK(whole.error() == stream.error(), "different errors:\n%s\n%s", whole.error().c_str(),
               stream.error().c_str());
    return 0;
  }
  JobSource& s = **stream;
  FUZZ_CHECK(s.info().profiles_json == whole->profiles_json, "profiles differ");
  FUZZ_CHECK(s.info().nb_res == whole->nb_res, "nb_res differs");
  FUZZ_CHECK(s.size() == whole->jobs.size(), "%zu jobs streamed, %zu read whole", s.size(), whole->jobs.size());
  auto mem = memory_source(*whole);
  while (mem->next_subtime()) {
    FUZZ_CHECK(s.next_subtime() == mem->next_subtime(), "batch times differ");
    auto a = mem->next_batch();
    auto b = s.next_batch();
    FUZZ_CHECK(a.ok() && b.ok(), "a batch failed: %s", a ? b.error().c_str() : a.error().c_str());
    FUZZ_CHECK(a->size() == b->size(), "batch sizes differ");
    for (size_t i = 0; i < a->size(); ++i) {
      std::string da = describe((*a)[i]), db = describe((*b)[i]);
      FUZZ_CHECK(da == db, "job differs:\n%s\n%s", da.c_str(), db.c_str());
      FUZZ_CHECK(s.slot((*b)[i].name).has_value(), "job %s has no slot", (*b)[i].name.c_str());
    }
  }
  FUZZ_CHECK(!s.next_subtime(), "the stream has more batches");
  return 0;
}
