// TraceReader: recovers every complete line; stops at the first line it cannot trust and says
// why with a problem code (docs/trace-format.md).
#include <vtime/recorder/trace.h>

#include <zstd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <set>

namespace vtime::recorder {

namespace {

// A member's text when it is a string, else `otherwise`: Json::value() throws on a member of
// another type, and a trace is input from anywhere (found by fuzz_trace).
std::string string_member(const Json& j, const char* key, const std::string& otherwise = "") {
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : otherwise;
}

// What is wrong with the shape of a header's members that readers of the header rely on
// (replay checks the inputs and takes the options), or "".
std::string header_shape_problem(const Json& h) {
  for (const char* key : {"tool", "command"}) {
    if (h.contains(key) && !h[key].is_string()) return std::string("\"") + key + "\" must be a string";
  }
  if (h.contains("options") && !h["options"].is_object()) return "\"options\" must be an object";
  if (h.contains("clock") && !h["clock"].is_object()) return "\"clock\" must be an object";
  if (h.contains("scheduler")) {
    if (!h["scheduler"].is_array()) return "\"scheduler\" must be an array of strings";
    for (auto& a : h["scheduler"]) {
      if (!a.is_string()) return "\"scheduler\" must be an array of strings";
    }
  }
  if (h.contains("inputs")) {
    if (!h["inputs"].is_array()) return "\"inputs\" must be an array";
    for (auto& in : h["inputs"]) {
      if (!in.is_object()) return "each of \"inputs\" must be an object";
      for (const char* key : {"role", "path", "fnv1a64"}) {
        if (in.contains(key) && !in[key].is_string()) return std::string("an input's \"") + key + "\" must be a string";
      }
    }
  }
  return "";
}

}  // namespace

std::string to_string(const Problem& p) {
  std::string s = p.code;
  if (p.line) s += " line " + std::to_string(p.line);
  return s + ": " + p.message;
}

// A byte source: the file itself, or its zstd frames decoded as they are read.
struct TraceReader::Source {
  std::ifstream in;
  bool zstd = false;
  ZSTD_DCtx* dctx = nullptr;
  std::string raw;       // compressed bytes not consumed yet
  std::string text;      // decoded text not returned yet
  size_t text_pos = 0;
  bool eof = false;
  bool frame_open = false;  // zstd: inside a frame (a cut there is corrupt data)
  std::string error;        // zstd error, VT009

  ~Source() {
    if (dctx) ZSTD_freeDCtx(dctx);
  }

  // Appends more decoded text; false at the end of input.
  bool fill() {
    if (eof) return false;
    char buf[1 << 16];
    if (!zstd) {
      in.read(buf, sizeof buf);
      auto n = static_cast<size_t>(in.gcount());
      if (n == 0) {
        eof = true;
        return false;
      }
      text.append(buf, n);
      return true;
    }
    for (;;) {
      if (raw.empty()) {
        in.read(buf, sizeof buf);
        auto n = static_cast<size_t>(in.gcount());
        if (n == 0) {
          eof = true;
          if (frame_open) error = "the compressed data ends in the middle of a frame";
          return false;
        }
        raw.append(buf, n);
      }
      ZSTD_inBuffer ib{raw.data(), raw.size(), 0};
      std::string out(ZSTD_DStreamOutSize(), '\0');
      ZSTD_outBuffer ob{out.data(), out.size(), 0};
      size_t r = ZSTD_decompressStream(dctx, &ob, &ib);
      if (ZSTD_isError(r)) {
        error = std::string("corrupt compressed data: ") + ZSTD_getErrorName(r);
        eof = true;
        return false;
      }
      frame_open = r != 0;
      raw.erase(0, ib.pos);
      if (ob.pos > 0) {
        text.append(out.data(), ob.pos);
        return true;
      }
    }
  }

  // One line without its '\n'; `complete` false for a last line without one.
  bool line(std::string& out, bool& complete) {
    for (;;) {
      size_t nl = text.find('\n', text_pos);
      if (nl != std::string::npos) {
        out.assign(text, text_pos, nl - text_pos);
        text_pos = nl + 1;
        if (text_pos > (1 << 20)) {
          text.erase(0, text_pos);
          text_pos = 0;
        }
        complete = true;
        return true;
      }
      if (!fill()) {
        if (text_pos < text.size()) {
          out.assign(text, text_pos, std::string::npos);
          text_pos = text.size();
          complete = false;
          return true;
        }
        return false;
      }
    }
  }
};

TraceReader::~TraceReader() = default;

bool TraceReader::read_line(std::string& line, bool& complete) { return src_->line(line, complete); }

std::unique_ptr<TraceReader> TraceReader::open(const std::string& path, std::string* error,
                                               bool allow_other_version) {
  auto fail = [&](const char* code, const std::string& msg) {
    if (error) *error = std::string(code) + ": " + path + ": " + msg;
    return nullptr;
  };
  std::unique_ptr<TraceReader> r(new TraceReader());
  r->src_ = std::make_unique<Source>();
  Source& s = *r->src_;
  s.in.open(path, std::ios::binary);
  if (!s.in) return fail("VT001", std::string("cannot open: ") + strerror(errno));
  unsigned char magic[4] = {0, 0, 0, 0};
  s.in.read(reinterpret_cast<char*>(magic), 4);
  auto got = s.in.gcount();
  s.in.clear();
  s.in.seekg(0);
  if (got == 4 && magic[0] == 0x28 && magic[1] == 0xb5 && magic[2] == 0x2f && magic[3] == 0xfd) {
    s.zstd = true;
    s.dctx = ZSTD_createDCtx();
    r->compressed_ = true;
  }
  std::string first;
  bool complete = false;
  if (!s.line(first, complete)) {
    if (!s.error.empty()) return fail("VT009", s.error);
    return fail("VT002", "empty file, not a vtime trace");
  }
  Json h = Json::parse(first, nullptr, false);
  if (h.is_discarded() || !h.is_object() || string_member(h, "type") != "header" ||
      string_member(h, "format") != kFormatName) {
    if (!s.error.empty()) return fail("VT009", s.error);
    return fail("VT002", "line 1 is not a vtime trace header");
  }
  if (!complete) return fail("VT005", "the trace is cut short inside its header");
  if (std::string why = header_shape_problem(h); !why.empty()) return fail("VT002", "line 1, the header: " + why);
  auto version = h.value("version", Json()).is_number_integer() ? h["version"].get<int>() : -1;
  if (version != kFormatVersion && !allow_other_version) {
    return fail("VT003", "format version " + std::to_string(version) + ", this vtime reads version " +
                             std::to_string(kFormatVersion));
  }
  std::string with_nl = first + "\n";
  r->digest_.add(with_nl.data(), with_nl.size());
  r->header_ = std::move(h);
  return r;
}

bool TraceReader::has_fatal_problem() const {
  for (auto& p : problems_) {
    if (p.fatal) return true;
  }
  return false;
}

void TraceReader::finish_checks() {
  done_ = true;
  if (!src_->error.empty()) problems_.push_back({"VT009", 0, src_->error, true});
  if (trailer_) return;
  if (!has_fatal_problem()) {
    problems_.push_back({"VT007", 0,
                         "no trailer: the run was cut short after record " + std::to_string(expected_seq_ - 1), false});
  }
}

bool TraceReader::next(Json& rec) {
  if (done_) return false;
  static const std::set<std::string> kTypes = {"msg", "decision", "timer", "advance", "clock", "process", "error"};
  std::string line;
  bool complete = false;
  if (!read_line(line, complete)) {
    finish_checks();
    return false;
  }
  ++line_no_;
  if (trailer_) {
    problems_.push_back({"VT006", line_no_, "a line follows the trailer", true});
    done_ = true;
    return false;
  }
  if (!complete) {
    problems_.push_back({"VT005", line_no_,
                         "the last line is cut short (" + std::to_string(line.size()) + " bytes, no newline); dropped",
                         false});
    finish_checks();
    return false;
  }
  Json j = Json::parse(line, nullptr, false);
  if (j.is_discarded() || !j.is_object()) {
    std::string shown = line.substr(0, 60);
    for (char& c : shown) {
      if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) >= 0x7f) c = '?';
    }
    problems_.push_back({"VT004", line_no_, "not valid JSON: \"" + shown + (line.size() > 60 ? "...\"" : "\""), true});
    finish_checks();
    return false;
  }
  if (!j.contains("seq") || !j["seq"].is_number_unsigned() || !j.contains("t") || !j["t"].is_number_integer() ||
      !j.contains("type") || !j["type"].is_string()) {
    problems_.push_back({"VT010", line_no_, "a record needs integer \"seq\" and \"t\" and a string \"type\"", true});
    finish_checks();
    return false;
  }
  uint64_t seq = j["seq"].get<uint64_t>();
  if (seq != expected_seq_) {
    problems_.push_back({"VT006", line_no_,
                         "record seq " + std::to_string(seq) + " where " + std::to_string(expected_seq_) + " was expected",
                         true});
    finish_checks();
    return false;
  }
  const std::string type = j["type"].get<std::string>();
  if (type == "trailer") {
    trailer_ = j;
    std::string why;
    if (j.value("records", Json()).is_number_unsigned() && j["records"].get<uint64_t>() != records_) {
      why = "it counts " + std::to_string(j["records"].get<uint64_t>()) + " records, the trace holds " +
            std::to_string(records_);
    } else if (string_member(j, "digest") != digest_.hex()) {
      why = "its digest " + string_member(j, "digest", "(none)") + " does not match the records (" + digest_.hex() + ")";
    } else if (j.contains("counts") && j["counts"].is_object()) {
      for (auto& [k, v] : j["counts"].items()) {
        uint64_t have = counts_.count(k) ? counts_[k] : 0;
        if (!v.is_number_unsigned() || v.get<uint64_t>() != have) {
          why = "it counts " + v.dump() + " " + k + " records, the trace holds " + std::to_string(have);
          break;
        }
      }
    }
    if (!why.empty()) problems_.push_back({"VT008", line_no_, "the trailer does not match: " + why, false});
    ++expected_seq_;
    // Anything after the trailer is reported by the next call.
    return next(rec);
  }
  if (!kTypes.count(type)) {
    problems_.push_back({"VT010", line_no_, "unknown record type \"" + type + "\"", true});
    finish_checks();
    return false;
  }
  digest_.add(line.data(), line.size());
  digest_.add("\n", 1);
  counts_[type]++;
  ++records_;
  ++expected_seq_;
  rec = std::move(j);
  return true;
}

bool compress_trace(const std::string& in_path, const std::string& out_path, std::string* error, int level) {
  auto fail = [&](const std::string& msg) {
    if (error) *error = msg;
    std::remove(out_path.c_str());
    return false;
  };
  std::ifstream in(in_path, std::ios::binary);
  if (!in) return fail("cannot open " + in_path + ": " + strerror(errno));
  std::ofstream out(out_path, std::ios::binary | std::ios::trunc);
  if (!out) return fail("cannot create " + out_path + ": " + strerror(errno));
  // Independent frames of whole lines: a cut compressed file still yields its complete frames.
  constexpr size_t kFrameText = 1 << 20;
  std::string chunk, line;
  std::string dst;
  ZSTD_CCtx* cctx = ZSTD_createCCtx();
  auto flush = [&]() -> bool {
    if (chunk.empty()) return true;
    dst.resize(ZSTD_compressBound(chunk.size()));
    size_t n = ZSTD_compressCCtx(cctx, dst.data(), dst.size(), chunk.data(), chunk.size(), level);
    if (ZSTD_isError(n)) return false;
    out.write(dst.data(), static_cast<std::streamsize>(n));
    chunk.clear();
    return static_cast<bool>(out);
  };
  bool ok = true;
  while (ok && std::getline(in, line)) {
    chunk += line;
    if (!in.eof()) chunk += '\n';
    if (chunk.size() >= kFrameText) ok = flush();
  }
  if (ok) ok = flush();
  ZSTD_freeCCtx(cctx);
  out.close();
  if (!ok || !out) return fail("cannot write " + out_path);
  return true;
}

}  // namespace vtime::recorder
