// Reading sources and replacing them atomically: the new text goes to a temporary file in the
// same directory (same permissions), is flushed, then renamed over the original, so a crash
// or a full disk never leaves a half-written source.
#pragma once

#include <string>

namespace vtime::rewriter {

// The whole file; throws std::runtime_error when it cannot be read.
std::string read_file(const std::string& path);

// Replaces `path` with `text` atomically; throws std::runtime_error on failure.
void write_file_atomic(const std::string& path, const std::string& text);

}  // namespace vtime::rewriter
