// The per-site report (--report FILE): every site found, rewritten or skipped with the reason,
// every file that failed to parse, and a summary. Paths are relative to the project root so
// reports compare across machines.
//
// Format (version 1):
//   {"version": 1, "mode": "diff", "root": "/abs/root",
//    "files": [{"path": "a.c", "status": "parsed"}, {"path": "bad.c", "status": "failed",
//               "errors": ["bad.c:3:1: expected ';'"]}],
//    "sites": [{"file": "a.c", "line": 4, "column": 3, "target": "sleep",
//               "replacement": "vtime_sleep", "form": "call", "macro": "none",
//               "status": "rewritten"}, ...],
//    "summary": {"rewritten": 1, "skipped": 0, "inactive": 0, "failed_files": 0,
//                "changed_files": 1}}
#pragma once

#include "edit_set.h"

#include <ostream>
#include <string>

namespace vtime::rewriter {

void write_report(std::ostream& out, const EditSet& set, const std::string& mode);

}  // namespace vtime::rewriter
