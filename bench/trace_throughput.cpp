// bench_trace_throughput TRACE: the replay engine's own cost per record, without a scheduler.
//
// A replay reads every record of the trace (TraceReader: line split, zstd if compressed, JSON
// parse, sequence and digest checks) and compares it with the record the replayed run made
// (JSON equality, plus JSON-pointer search on a mismatch). This program does exactly that work,
// each record compared with a copy of itself built as the recorder builds its records (a deep
// copy of the JSON value: the same allocations), and reports messages (msg
// records) and records per second of real time. The scheduler's own time (and the idle
// detection between its steps) comes on top in a real replay: bench/record_replay.sh measures
// that end to end.
#include <vtime/recorder/replay.h>
#include <vtime/recorder/trace.h>

#include <chrono>
#include <cstdio>

using vtime::recorder::Json;

int main(int argc, char** argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: bench_trace_throughput TRACE\n");
    return 2;
  }
  double best = 0;
  uint64_t msgs = 0, records = 0;
  for (int round = 0; round < 3; ++round) {
    std::string err;
    auto t0 = std::chrono::steady_clock::now();
    auto r = vtime::recorder::TraceReader::open(argv[1], &err);
    if (!r) {
      fprintf(stderr, "%s\n", err.c_str());
      return 1;
    }
    Json rec;
    msgs = records = 0;
    uint64_t mismatches = 0;
    while (r->next(rec)) {
      Json copy = rec;  // what the replayed run would have made
      if (!(copy == rec) && vtime::recorder::first_difference(rec, copy)) ++mismatches;
      ++records;
      if (rec["type"] == "msg") ++msgs;
    }
    double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (mismatches) {
      fprintf(stderr, "%llu records do not compare equal to themselves\n", static_cast<unsigned long long>(mismatches));
      return 1;
    }
    double rate = static_cast<double>(msgs) / s;
    if (rate > best) best = rate;
    printf("round %d: %llu records (%llu messages) in %.3f s: %.0f messages/s, %.0f records/s\n", round + 1,
           static_cast<unsigned long long>(records), static_cast<unsigned long long>(msgs), s, rate,
           static_cast<double>(records) / s);
  }
  printf("RESULT replay_engine_messages_per_s %.0f target >= 50000 %s\n", best, best >= 50000 ? "PASS" : "FAIL");
  return 0;
}
