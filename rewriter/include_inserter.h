// Where the vtime include goes in a file, and whether it is already there.
//
// The include goes after the last #include that precedes the first edit and is not inside a
// conditional block (an include guard does not count as one), so the declarations are visible
// wherever the file uses them; with no such #include it goes after the include guard or
// #pragma once, else at the top.
//
// Example:
//     std::optional<Edit> e = include_edit(path, text, Header::Cxx, first_edit_offset);
#pragma once

#include "site.h"

#include <optional>
#include <string>

namespace vtime::rewriter {

// The edit inserting the header `h` needs (vtime/std.h includes vtime/vtime.h), or nullopt
// when the file already includes it.
std::optional<Edit> include_edit(const std::string& path, const std::string& text, Header h,
                                 unsigned first_edit_offset);

}  // namespace vtime::rewriter
