// Compile flags for each file: read from compile_commands.json through libclang's
// CXCompilationDatabase (it handles both "command" and "arguments" entries and shell quoting),
// then filtered down to what a libclang parse needs.
//
// Example:
//     CompileDb db = CompileDb::load("build");          // throws std::runtime_error
//     std::optional<ParseArgs> a = db.args_for("/src/main.cpp");
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace vtime::rewriter {

struct ParseArgs {
  std::string file;               // absolute path of the source
  std::string directory;          // the entry's working directory
  std::vector<std::string> args;  // compiler flags without the compiler, -c, -o, the file...
};

class CompileDb {
 public:
  // No database: every file gets fallback flags from its extension.
  CompileDb() = default;
  // Reads BUILD_DIR/compile_commands.json; throws std::runtime_error when it cannot.
  static CompileDb load(const std::string& build_dir);

  // Flags of `file` (absolute), or nullopt when the database has no entry for it.
  std::optional<ParseArgs> args_for(const std::string& file) const;
  // Fallback flags for a file that has no entry (no -p given, or not in the database).
  static ParseArgs fallback_for(const std::string& file);
  // Every source file the database lists, in its order (deduplicated).
  const std::vector<std::string>& files() const { return files_; }
  bool loaded() const { return loaded_; }

 private:
  struct Entry {
    ParseArgs args;
  };
  std::vector<Entry> entries_;
  std::vector<std::string> files_;
  bool loaded_ = false;
};

// Drops the compiler, the output and dependency-file options and the source file from a raw
// command line, keeps everything that changes how the code parses.
std::vector<std::string> filter_args(const std::vector<std::string>& raw, const std::string& file);

}  // namespace vtime::rewriter
