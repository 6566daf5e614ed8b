// Reading compile_commands.json with libclang's C API and filtering the flags.
#include "clang_string.h"
#include "compile_db.h"

#include <clang-c/CXCompilationDatabase.h>

#include <algorithm>
#include <array>
#include <filesystem>
#include <stdexcept>
#include <string_view>

namespace fs = std::filesystem;

namespace vtime::rewriter {
namespace {

std::string absolute_in(const std::string& dir, const std::string& path) {
  fs::path p(path);
  if (p.is_relative()) p = fs::path(dir) / p;
  return fs::weakly_canonical(p).string();
}

bool starts_with(std::string_view s, std::string_view prefix) { return s.substr(0, prefix.size()) == prefix; }

}  // namespace

std::vector<std::string> filter_args(const std::vector<std::string>& raw, const std::string& file) {
  // Options whose next argument is consumed with them and that only matter to the build.
  static constexpr std::array kDropWithValue{"-o", "-MF", "-MT", "-MQ"};
  // Options that matter only to the build (outputs, dependency files) or that would turn a
  // harmless warning into a parse failure.
  static constexpr std::array kDrop{"-c", "-S", "-E", "-M", "-MM", "-MD", "-MMD", "-MP", "-MG",
                                    "-pipe", "-Werror", "-save-temps"};
  std::vector<std::string> out;
  const std::string file_name = fs::path(file).filename().string();
  for (size_t i = raw.empty() ? 0 : 1; i < raw.size(); ++i) {  // [0] is the compiler
    const std::string& a = raw[i];
    if (std::find(kDropWithValue.begin(), kDropWithValue.end(), a) != kDropWithValue.end()) {
      ++i;
      continue;
    }
    if (std::find(kDrop.begin(), kDrop.end(), a) != kDrop.end()) continue;
    if (starts_with(a, "-o") || starts_with(a, "-Werror=") || starts_with(a, "-MF") ||
        starts_with(a, "-MT") || starts_with(a, "-MQ"))
      continue;
    if (!a.empty() && a[0] != '-' && fs::path(a).filename() == file_name) continue;  // the source
    out.push_back(a);
  }
  return out;
}

CompileDb CompileDb::load(const std::string& build_dir) {
  CXCompilationDatabase_Error err = CXCompilationDatabase_NoError;
  CXCompilationDatabase db = clang_CompilationDatabase_fromDirectory(build_dir.c_str(), &err);
  if (err != CXCompilationDatabase_NoError || db == nullptr)
    throw std::runtime_error("cannot read " + build_dir + "/compile_commands.json");
  CompileDb out;
  out.loaded_ = true;
  CXCompileCommands cmds = clang_CompilationDatabase_getAllCompileCommands(db);
  const unsigned n = clang_CompileCommands_getSize(cmds);
  for (unsigned i = 0; i < n; ++i) {
    CXCompileCommand cmd = clang_CompileCommands_getCommand(cmds, i);
    Entry e;
    e.args.directory = take(clang_CompileCommand_getDirectory(cmd));
    e.args.file = absolute_in(e.args.directory, take(clang_CompileCommand_getFilename(cmd)));
    std::vector<std::string> raw;
    for (unsigned k = 0, m = clang_CompileCommand_getNumArgs(cmd); k < m; ++k)
      raw.push_back(take(clang_CompileCommand_getArg(cmd, k)));
    e.args.args = filter_args(raw, e.args.file);
    if (std::find(out.files_.begin(), out.files_.end(), e.args.file) == out.files_.end())
      out.files_.push_back(e.args.file);
    out.entries_.push_back(std::move(e));
  }
  clang_CompileCommands_dispose(cmds);
  clang_CompilationDatabase_dispose(db);
  return out;
}

std::optional<ParseArgs> CompileDb::args_for(const std::string& file) const {
  for (const auto& e : entries_)  // the first entry wins, as in clang's own tools
    if (e.args.file == file) return e.args;
  return std::nullopt;
}

ParseArgs CompileDb::fallback_for(const std::string& file) {
  ParseArgs a;
  a.file = file;
  a.directory = fs::path(file).parent_path().string();
  const std::string ext = fs::path(file).extension().string();
  if (ext == ".c")
    a.args = {"-x", "c", "-std=gnu17"};
  else
    a.args = {"-x", "c++", "-std=gnu++20"};
  return a;
}

}  // namespace vtime::rewriter
