// `vtime trace compress`: a finished trace into independent zstd frames (compress_trace).
#include <vtime/recorder/tools.h>

#include <filesystem>
#include <fstream>

#include "trace_input.h"

namespace vtime::recorder::tools {

int compress(const std::string& path, const std::string& output, std::ostream& out, std::ostream& err) {
  std::string dest = output.empty() ? path + ".zst" : output;
  // Only a readable plain trace is worth compressing; a .zst inside a .zst reads as garbage.
  auto reader = open_trace(path, err);
  if (!reader) return kTraceUnreadable;
  if (reader->compressed()) {
    err << "vtime trace compress: " << path << " is already compressed\n";
    return kTraceUsage;
  }
  std::error_code ec;
  if (std::filesystem::equivalent(path, dest, ec)) {
    err << "vtime trace compress: the output " << dest << " is the trace itself\n";
    return kTraceUsage;
  }
  reader.reset();
  std::string error;
  if (!compress_trace(path, dest, &error, 6)) {
    err << "vtime trace compress: " << error << "\n";
    return kTraceOutputFailed;
  }
  auto in_size = std::filesystem::file_size(path, ec);
  auto out_size = std::filesystem::file_size(dest, ec);
  out << dest << ": " << in_size << " -> " << out_size << " bytes";
  if (in_size > 0) out << " (" << (100 * out_size / in_size) << "%)";
  out << "\n";
  return kTraceOk;
}

}  // namespace vtime::recorder::tools
