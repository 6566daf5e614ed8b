// Reading an SWF trace file, plain or gzip-compressed (.gz: through `gzip -dc`, which every Debian
// system has; no compression library is needed for it).
//
// Example:
//     auto t = read_swf_file("KIT-FH2-2016-1.swf.gz", {});
//     if (!t) die(t.error());   // "KIT-FH2-2016-1.swf.gz: line 12: field 4 ..."
#pragma once

#include <vtime/workload/swf.h>

#include <string>

namespace vtime::workload {

Result<SwfTrace> read_swf_file(const std::string& path, const SwfReadOptions& options);

// Whether `path` looks like an SWF trace (.swf or .swf.gz) rather than a Batsim JSON workload.
bool is_swf_path(const std::string& path);

}  // namespace vtime::workload
