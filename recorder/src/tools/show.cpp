// `vtime trace show`: one line per record, or the records' JSON lines, filtered by type and seq.
#include <vtime/recorder/tools.h>

#include <algorithm>

#include "summary.h"
#include "trace_input.h"

namespace vtime::recorder::tools {

const std::vector<std::string>& record_type_names() {
  static const std::vector<std::string> kNames = {"header", "msg",     "decision", "timer", "advance",
                                                  "clock",  "process", "error",    "trailer"};
  return kNames;
}

int show(const std::string& path, const ShowOptions& o, std::ostream& out, std::ostream& err) {
  auto reader = open_trace(path, err);
  if (!reader) return kTraceUnreadable;
  auto wanted = [&](const Json& rec) {
    std::string type = str_or(rec, "type");
    uint64_t seq = type == "header" ? 0 : static_cast<uint64_t>(int_or(rec, "seq"));
    if (o.from && seq < *o.from) return false;
    if (o.to && seq > *o.to) return false;
    return o.types.empty() || std::find(o.types.begin(), o.types.end(), type) != o.types.end();
  };
  auto print = [&](const Json& rec) {
    if (!wanted(rec)) return;
    if (o.json) out << rec.dump(-1, ' ', false, Json::error_handler_t::replace) << "\n";
    else out << record_line(rec) << "\n";
  };
  print(reader->header());
  Json rec;
  while (reader->next(rec)) {
    // Past --to nothing more is printed; reading on would only cost time (problems after the
    // range are not this command's business: `validate` reports them).
    if (o.to && static_cast<uint64_t>(int_or(rec, "seq")) > *o.to) break;
    print(rec);
  }
  if (reader->trailer()) print(*reader->trailer());
  return report_problems(*reader, path, err) > 0 ? kTraceProblems : kTraceOk;
}

}  // namespace vtime::recorder::tools
