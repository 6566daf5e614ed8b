// Unified diff (diff -u / git style, 3 lines of context) between two versions of a file, so
// `vtime rewrite` output can be reviewed and applied with `patch -p0`.
//
// Example:
//     std::string d = unified_diff("a/src/x.c", "b/src/x.c", before, after);
#pragma once

#include <string>

namespace vtime::rewriter {

// Empty when the texts are equal.
std::string unified_diff(const std::string& old_name, const std::string& new_name,
                         const std::string& before, const std::string& after);

}  // namespace vtime::rewriter
