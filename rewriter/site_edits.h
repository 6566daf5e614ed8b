// The text side of a rewrite: given a file's text and the offsets libclang found (where the
// spelled reference starts, where the function's name is), the edits that rewrite the site, or
// why it must be refused. No libclang here, so the rules are easy to read and to test.
//
// Example: src = "  std::this_thread::sleep_for(1s);", start = 2, name = 20
//     SiteEdits e = name_edits("/p/a.cpp", src, *find_target("std::this_thread::sleep_for"), 2, 20, false);
//     // e.edits == {{"/p/a.cpp", 2, 27, "vtime::this_thread::sleep_for"}}
#pragma once

#include "site.h"

#include <string>
#include <vector>

namespace vtime::rewriter {

struct SiteEdits {
  std::vector<Edit> edits;  // empty when refused
  std::string replacement;
  std::string refusal;      // why the site cannot be rewritten, empty on success
};

// Replaces [start, end of name) -- the qualifier and the name, or `object.now` when
// `through_object` -- with the target's replacement.
SiteEdits name_edits(const std::string& file, const std::string& src, const Target& t, unsigned start,
                     unsigned name, bool through_object);

// obj.f(args) -> vtime::f(obj, args); p->f(args) -> vtime::f(*p, args); f(args) inside a class
// derived from the type (base == name) -> vtime::f(*this, args). The object's text stays where
// it is, so edits inside it (nested sites) never overlap ours.
SiteEdits member_edits(const std::string& file, const std::string& src, const Target& t, unsigned base,
                       unsigned name);

}  // namespace vtime::rewriter
