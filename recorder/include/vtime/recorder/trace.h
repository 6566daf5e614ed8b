// Decision traces: the JSON Lines format of docs/trace-format.md, written as a run goes and read
// back (plain or zstd) with every problem reported by code.
//
// What it is for: `vtime run --record` writes one with TraceWriter; `vtime replay` and every
// `vtime trace` command read one with TraceReader, which recovers every complete line of a
// cut-short or damaged trace and says what was wrong with the rest.
//
// Example:
//     std::string err;
//     auto w = TraceWriter::create("run.trace", header, &err);      // header: see make_header
//     w->write(record("msg", t).set("dir", "from_batsim").set("bytes", text));
//     w->finish("ok", 0);
//
//     auto r = TraceReader::open("run.trace", &err);
//     Json rec;
//     while (r->next(rec)) use(rec);
//     for (auto& p : r->problems()) fprintf(stderr, "%s\n", to_string(p).c_str());
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <cstdio>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace vtime::recorder {

// Key order matters: identical runs must write identical bytes.
using Json = nlohmann::ordered_json;

inline constexpr int kFormatVersion = 1;
inline constexpr const char* kFormatName = "vtime-trace";

// FNV-1a 64-bit, the trace's hash for input files and the trailer digest.
struct Fnv1a {
  uint64_t h = 0xcbf29ce484222325ULL;
  void add(const void* data, size_t n) {
    auto* p = static_cast<const unsigned char*>(data);
    for (size_t i = 0; i < n; ++i) h = (h ^ p[i]) * 0x100000001b3ULL;
  }
  std::string hex() const;
};
std::string hex64(uint64_t v);

// {"role":..,"path":..,"size":..,"fnv1a64":..} of a file, or nullopt if it cannot be read.
std::optional<Json> describe_input(const std::string& role, const std::string& path);

// A record's fixed prefix: {"seq":0 (set by the writer),"t":t,"type":type}.
Json record(const char* type, int64_t t);

class TraceWriter {
 public:
  // Creates (truncates) `path` and writes the header line. nullptr and *error on failure.
  static std::unique_ptr<TraceWriter> create(const std::string& path, Json header, std::string* error);
  ~TraceWriter();
  TraceWriter(const TraceWriter&) = delete;
  TraceWriter& operator=(const TraceWriter&) = delete;

  // Sets the record's seq and appends it as one line (one write(2)). Returns its seq.
  uint64_t write(Json rec);
  // Writes the trailer (status "ok" or an error kind) and closes the file.
  void finish(const std::string& status, int exit_code, int64_t t);
  uint64_t next_seq() const { return seq_ + 1; }
  const std::string& path() const { return path_; }
  // False once a write failed (disk full...): the run goes on, the error is reported once.
  bool ok() const { return ok_; }

 private:
  TraceWriter() = default;
  void put_line(const std::string& line);
  int fd_ = -1;
  std::string path_;
  uint64_t seq_ = 0;
  Fnv1a digest_;
  std::map<std::string, uint64_t> counts_;
  bool ok_ = true;
  bool finished_ = false;
};

struct Problem {
  std::string code;   // "VT004"
  uint64_t line = 0;  // 1-based line of the trace text, 0 when not tied to a line
  std::string message;
  bool fatal = false; // reading stopped (or never started)
};
std::string to_string(const Problem& p);  // "VT004 line 12: not valid JSON (...)"

class TraceReader {
 public:
  // Opens a plain or zstd trace and reads its header. nullptr and *error ("VT00x ...") when the
  // file cannot be read or is not a trace of this version (unless allow_other_version).
  static std::unique_ptr<TraceReader> open(const std::string& path, std::string* error,
                                           bool allow_other_version = false);
  ~TraceReader();
  const Json& header() const { return header_; }
  // The next record after the header (the trailer is not returned: see trailer()). False at the
  // end of the trace or at the first line it cannot use; problems() tells which.
  bool next(Json& rec);
  // Set once next() returned false on a trace that has one.
  const std::optional<Json>& trailer() const { return trailer_; }
  const std::vector<Problem>& problems() const { return problems_; }
  bool has_fatal_problem() const;
  bool compressed() const { return compressed_; }
  uint64_t records_read() const { return records_; }

 private:
  TraceReader() = default;
  bool read_line(std::string& line, bool& complete);
  void finish_checks();
  struct Source;
  std::unique_ptr<Source> src_;
  Json header_;
  std::optional<Json> trailer_;
  std::vector<Problem> problems_;
  uint64_t line_no_ = 1;
  uint64_t records_ = 0;
  uint64_t expected_seq_ = 1;
  Fnv1a digest_;
  std::map<std::string, uint64_t> counts_;
  bool compressed_ = false;
  bool done_ = false;
};

// Compresses a finished trace into independent zstd frames of whole lines. False and *error
// on failure; `out` is removed then.
bool compress_trace(const std::string& in, const std::string& out, std::string* error, int level = 6);

// The sidecar's path for a trace: TRACE.meta.json (a ".zst" suffix is dropped first).
std::string sidecar_path(const std::string& trace_path);

}  // namespace vtime::recorder
