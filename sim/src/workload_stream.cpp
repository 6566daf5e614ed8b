// Streaming a workload file: a scanner walks its top-level object piece by piece (each member
// but "jobs", then each element of "jobs") through a fixed buffer, and every piece is parsed and
// checked by the same code as load_workload's. Three passes: the profiles (which Batsim's files
// often put after the jobs), every job checked and indexed, then the jobs again as the
// simulation submits them. Anything the scanner does not expect (a syntax error, a duplicate
// top-level key) is handed to the whole-file reader, which gives nlohmann's exact message or,
// for an odd but valid file, the same workload held in memory.
#include <cstdio>
#include <map>
#include <set>

#include "workload_reading.h"

namespace vtime::sim {

using protocol::Error;

namespace {

using namespace detail;

class Scanner {
 public:
  enum class Item { member, job, end, syntax };

  explicit Scanner(std::FILE* f) : f_(f) { buf_.resize(1 << 20); }

  // The next piece: a top-level member (key, its value's text) or an element of "jobs" (its
  // text, only when want_jobs; otherwise skipped as it is scanned).
  Item next(std::string& key, std::string& text, bool want_jobs) {
    text.clear();
    for (;;) {
      int c = get();
      if (c == EOF) return state_ == State::end ? Item::end : Item::syntax;
      // No JSON text holds a raw NUL, and nlohmann's parser reads one as the end of its input:
      // a piece cut there could parse on its own (found by fuzz_workload). The whole-file
      // reader says where the text ends.
      if (c == 0) return Item::syntax;
      const bool ws = c == ' ' || c == '\n' || c == '\t' || c == '\r';
      switch (state_) {
        case State::start:
          if (ws) break;
          if (c != '{') return Item::syntax;
          state_ = State::key_or_close;
          break;
        case State::key_or_close:
        case State::key:
          if (ws) break;
          if (c == '}' && state_ == State::key_or_close) {
            state_ = State::end;
            break;
          }
          if (c != '"') return Item::syntax;
          key_raw_ = "\"";
          state_ = State::in_key;
          escaped_ = false;
          break;
        case State::in_key:
          key_raw_ += static_cast<char>(c);
          if (escaped_) {
            escaped_ = false;
          } else if (c == '\\') {
            escaped_ = true;
          } else if (c == '"') {
            try {
              key_ = Json::parse(key_raw_).get<std::string>();
            } catch (const std::exception&) {
              return Item::syntax;
            }
            if (!keys_.insert(key_).second) return Item::syntax;  // nlohmann keeps the last: let it decide
            state_ = State::colon;
          }
          break;
        case State::colon:
          if (ws) break;
          if (c != ':') return Item::syntax;
          state_ = State::value;
          break;
        case State::value:
          if (ws) break;
          if (key_ == "jobs" && c == '[') {
            state_ = State::job_or_close;
            first_job_ = true;
            break;
          }
          if (!begin_piece(c)) return Item::syntax;
          text.push_back(static_cast<char>(c));
          state_ = State::in_value;
          break;
        case State::in_value:
          if (!in_piece(c, true, text)) {
            if (c != ',' && c != '}') return Item::syntax;
            state_ = c == ',' ? State::key : State::end;
            key = key_;
            return Item::member;
          }
          break;
        case State::job_or_close:
          if (ws) break;
          if (c == ']') {
            if (!first_job_) return Item::syntax;  // a trailing comma
            state_ = State::after_member;
            break;
          }
          capture_job_ = want_jobs;
          if (!begin_piece(c)) return Item::syntax;
          if (capture_job_) text.push_back(static_cast<char>(c));
          state_ = State::in_job;
          break;
        case State::in_job:
          if (!in_piece(c, capture_job_, text)) {
            if (c != ',' && c != ']') return Item::syntax;
            state_ = c == ',' ? State::job_or_close : State::after_member;
            first_job_ = false;
            key = key_;
            return Item::job;
          }
          break;
        case State::after_member:
          if (ws) break;
          if (c == ',') state_ = State::key;
          else if (c == '}') state_ = State::end;
          else return Item::syntax;
          break;
        case State::end:
          if (!ws) return Item::syntax;
          break;
      }
    }
  }

 private:
  enum class State { start, key_or_close, key, in_key, colon, value, in_value, job_or_close, in_job, after_member, end };

  int get() {
    if (pos_ == len_) {
      len_ = std::fread(buf_.data(), 1, buf_.size(), f_);
      pos_ = 0;
      if (len_ == 0) return EOF;
    }
    return static_cast<unsigned char>(buf_[pos_++]);
  }

  // A value's first character; false if no value can start with it.
  bool begin_piece(int c) {
    if (c == ',' || c == '}' || c == ']' || c == ':') return false;
    depth_ = (c == '{' || c == '[') ? 1 : 0;
    in_string_ = c == '"';
    escaped_ = false;
    return true;
  }

  // Consumes one character of a value; false when the character ends it (a ',' or closing
  // bracket outside strings and nested values), which is then not part of the value.
  bool in_piece(int c, bool capture, std::string& text) {
    if (in_string_) {
      if (escaped_) escaped_ = false;
      else if (c == '\\') escaped_ = true;
      else if (c == '"') in_string_ = false;
    } else if (c == '"') {
      in_string_ = true;
    } else if (c == '{' || c == '[') {
      ++depth_;
    } else if (c == '}' || c == ']' || c == ',') {
      if (depth_ == 0) return false;
      if (c != ',') --depth_;
    }
    if (capture) text.push_back(static_cast<char>(c));
    return true;
  }

  std::FILE* f_;
  std::string buf_;
  size_t pos_ = 0, len_ = 0;
  State state_ = State::start;
  std::string key_raw_, key_;
  std::set<std::string> keys_;
  bool escaped_ = false, in_string_ = false, first_job_ = true, capture_job_ = false;
  int depth_ = 0;
};

struct FileCloser {
  void operator()(std::FILE* f) const { std::fclose(f); }
};
using File = std::unique_ptr<std::FILE, FileCloser>;

// Thrown when the scanner gives up: the whole-file reader takes over.
struct Unusual {};

Json parse_piece(const std::string& text) {
  try {
    return Json::parse(text);
  } catch (const Json::exception&) {
    // A syntax error, or a number beyond a double (out_of_range 406): the whole-file reader
    // says which, at its place in the text (found by fuzz_workload).
    throw Unusual{};
  }
}

class FileSource : public JobSource {
 public:
  FileSource(WorkloadInfo info, JobKeys keys, ProfileIndex profiles, File file)
      : JobSource(std::move(info), std::move(keys)), profiles_(std::move(profiles)), file_(std::move(file)),
        scanner_(file_.get()) {}

 protected:
  std::string fetch(Nanos t, size_t count, std::vector<WorkloadJob>& out) override {
    if (auto it = pending_.find(t); it != pending_.end()) {
      for (auto& j : it->second) out.push_back(std::move(j));
      pending_.erase(it);
    }
    std::string key, text;
    while (out.size() < count) {
      auto item = scanner_.next(key, text, true);
      if (item == Scanner::Item::member) continue;  // read in the first pass
      if (item != Scanner::Item::job) return changed();
      try {
        WorkloadJob j = read_job(Json::parse(text), next_index_++, info_.file, info_, profiles_);
        // Jobs out of submission order wait here: nothing at all in a sorted file.
        if (j.subtime == t) out.push_back(std::move(j));
        else pending_[j.subtime].push_back(std::move(j));
      } catch (const std::exception&) {
        return changed();
      }
    }
    return {};
  }

 private:
  std::string changed() const { return file_label(info_.file) + " changed while it was read"; }

  ProfileIndex profiles_;
  File file_;
  Scanner scanner_;
  size_t next_index_ = 0;
  std::map<Nanos, std::vector<WorkloadJob>> pending_;
};

// Throws Unusual when any piece of the file is not valid JSON. The whole-file reader parses the
// whole text before it checks anything, so a syntax error anywhere is its answer, even after
// the fault the passes found first (found by fuzz_workload). Only run on that error path.
void syntax_sweep(std::FILE* f) {
  std::rewind(f);
  std::string key, text;
  for (Scanner s(f);;) {
    auto item = s.next(key, text, true);
    if (item == Scanner::Item::end) return;
    if (item == Scanner::Item::syntax) throw Unusual{};
    parse_piece(text);
  }
}

// The three passes over an open file (see the file's comment); f is moved into the source.
Result<std::unique_ptr<JobSource>> open_stream(File& f, const std::string& path, const std::string& name) {
  const std::string file = file_label(path);
  WorkloadInfo info;
  info.name = name;
  info.file = path;

  // Pass 1: every member but the jobs.
  Json profiles, nb_res;
  bool jobs_array = false, jobs_other = false;
  size_t count = 0;
  std::string key, text;
  for (Scanner s(f.get());;) {
    auto item = s.next(key, text, false);
    if (item == Scanner::Item::end) break;
    if (item == Scanner::Item::syntax) throw Unusual{};
    if (item == Scanner::Item::job) {
      jobs_array = true;
      ++count;
      continue;
    }
    Json value = parse_piece(text);  // any member must be valid JSON, as for the whole-file reader
    if (key == "profiles") profiles = std::move(value);
    else if (key == "nb_res") nb_res = std::move(value);
    else if (key == "jobs") jobs_other = true;
  }
  if (!profiles.is_object()) throw WorkloadFailure(file + ": missing object 'profiles'");
  if (jobs_other) throw WorkloadFailure(file + ": missing array 'jobs'");
  if (!jobs_array) {
    // No element: "jobs": [] or no "jobs" at all; the whole-file reader tells them apart.
    throw Unusual{};
  }
  if (nb_res.is_number_integer()) info.nb_res = nb_res.get<int64_t>();
  ProfileIndex index = read_profiles(profiles, path, info);

  // Pass 2: every job, checked; ids and submission times kept.
  std::rewind(f.get());
  JobKeys keys;
  keys.reserve(count);  // no vector doubling: a million jobs would briefly take twice the room
  size_t i = 0;  // the job's index in "jobs" (other members before it are not counted: fuzz_workload)
  for (Scanner s(f.get());;) {
    auto item = s.next(key, text, true);
    if (item == Scanner::Item::end) break;
    if (item == Scanner::Item::syntax) throw Unusual{};
    if (item != Scanner::Item::job) continue;
    try {
      WorkloadJob j = read_job(parse_piece(text), i++, path, info, index, false);
      keys.add(j.name, j.subtime);
    } catch (const WorkloadFailure&) {
      // A duplicate id earlier in the file is the first fault, as the whole-file reader says.
      if (auto d = keys.first_duplicate()) throw WorkloadFailure(duplicate_message(path, *d, std::string(keys.name(*d))));
      throw;
    }
  }
  if (auto d = keys.first_duplicate()) throw WorkloadFailure(duplicate_message(path, *d, std::string(keys.name(*d))));

  // Pass 3 runs as the simulation goes.
  std::rewind(f.get());
  return std::unique_ptr<JobSource>(new FileSource(std::move(info), std::move(keys), std::move(index), std::move(f)));
}

Result<std::unique_ptr<JobSource>> open_checked(const std::string& path, const std::string& name) {
  File f(std::fopen(path.c_str(), "rbe"));
  if (!f) return Error{"cannot read workload file '" + path + "'"};
  try {
    return open_stream(f, path, name);
  } catch (const WorkloadFailure&) {
    syntax_sweep(f.get());
    throw;
  }
}

}  // namespace

Result<std::unique_ptr<JobSource>> open_workload(const std::string& path, const std::string& name) {
  try {
    return open_checked(path, name);
  } catch (const WorkloadFailure& e) {
    return Error{e.what()};
  } catch (const Unusual&) {
    auto w = load_workload(path, name);
    if (!w) return Error{w.error()};
    return memory_source(std::move(*w));
  } catch (const std::exception& e) {
    return Error{file_label(path) + ": " + e.what()};
  }
}

}  // namespace vtime::sim
