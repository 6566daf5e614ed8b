// clang-tidy's --export-fixes format, so `clang-apply-replacements DIR` applies the rewrite:
// one diagnostic per rewritten site (its edits together) plus one per inserted #include.
//
// Example:
//     write_fixes_yaml(out, set, main_file);
#pragma once

#include "edit_set.h"

#include <ostream>

namespace vtime::rewriter {

void write_fixes_yaml(std::ostream& out, const EditSet& set);

}  // namespace vtime::rewriter
