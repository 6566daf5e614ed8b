// What the rewriter may edit: every file under the project root, plus the files named on the
// command line wherever they are (a user who names a file means it; --root limits only what is
// reached through includes and the compilation database).
//
// Example:
//     Scope scope{"/home/me/proj", {"/tmp/one.c"}};
//     scope.contains("/tmp/one.c");          // true: named
//     scope.relative("/home/me/proj/a.c");   // "a.c"
#pragma once

#include <set>
#include <string>

namespace vtime::rewriter {

struct Scope {
  std::string root;             // canonical, no trailing slash
  std::set<std::string> named;  // canonical paths of the files named on the command line

  bool under_root(const std::string& path) const {
    return path.size() > root.size() && path.compare(0, root.size(), root) == 0 && path[root.size()] == '/';
  }
  bool contains(const std::string& path) const { return under_root(path) || named.count(path) > 0; }
  // The path relative to the root when under it, else the path as given (absolute).
  std::string relative(const std::string& path) const {
    return under_root(path) ? path.substr(root.size() + 1) : path;
  }
};

}  // namespace vtime::rewriter
