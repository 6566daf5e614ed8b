// Taking ownership of a libclang CXString: copy it out and dispose of it in one step.
#pragma once

#include <clang-c/CXString.h>

#include <string>

namespace vtime::rewriter {

inline std::string take(CXString s) {
  const char* c = clang_getCString(s);
  std::string out = c ? c : "";
  clang_disposeString(s);
  return out;
}

}  // namespace vtime::rewriter
