// The rewrite pipeline: compile database -> parse each file -> edit set -> output.
#include "rewrite.h"

#include "compile_db.h"
#include "diff_writer.h"
#include "edit_set.h"
#include "file_io.h"
#include "fixes_yaml.h"
#include "report.h"
#include "scope.h"
#include "site_finder.h"

#include <filesystem>
#include <fstream>

#ifndef VTIME_CLANG_RESOURCE_DIR
#error "VTIME_CLANG_RESOURCE_DIR must be defined by the build (rewriter/CMakeLists.txt)"
#endif
#ifndef VTIME_SOURCE_INCLUDE_DIR
#error "VTIME_SOURCE_INCLUDE_DIR must be defined by the build (rewriter/CMakeLists.txt)"
#endif

namespace fs = std::filesystem;

namespace vtime::rewriter {
namespace {

std::string canonical_or_throw(const std::string& p, const char* what) {
  std::error_code ec;
  if (!fs::exists(p, ec)) throw UsageError(std::string(what) + " not found: " + p);
  return fs::canonical(p).string();
}

const char* mode_name(OutputMode m) {
  switch (m) {
    case OutputMode::Diff: return "diff";
    case OutputMode::InPlace: return "in-place";
    case OutputMode::ExportFixes: return "export-fixes";
  }
  return "?";
}

// vtime's own headers, added to every parse so that a file rewritten by a first run (it now
// includes <vtime/vtime.h>) parses again before the user's build knows where they are: the
// installed ones beside the executable (bin/../include), else the source tree's.
std::string include_dir() {
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    const fs::path installed = exe.parent_path().parent_path() / "include";
    if (fs::exists(installed / "vtime" / "vtime.h", ec)) return installed.string();
  }
  return VTIME_SOURCE_INCLUDE_DIR;
}

}  // namespace

const char* default_resource_dir() { return VTIME_CLANG_RESOURCE_DIR; }

int run_rewrite(const RewriteOptions& opts, std::ostream& out, std::ostream& err) {
  const std::string root = canonical_or_throw(opts.root.empty() ? fs::current_path().string() : opts.root, "root");
  const std::string resource = opts.resource_dir.empty() ? default_resource_dir() : opts.resource_dir;
  if (!fs::is_directory(resource))
    throw UsageError("clang resource directory not found: " + resource + " (use --resource-dir)");

  CompileDb db;
  if (!opts.build_dir.empty()) {
    try {
      db = CompileDb::load(canonical_or_throw(opts.build_dir, "build directory"));
    } catch (const std::runtime_error& e) {
      throw UsageError(e.what());
    }
  }
  // Files named on the command line are always in scope; --root limits what the compilation
  // database and the includes bring in.
  Scope scope{root, {}};
  std::vector<std::string> files;
  for (const auto& f : opts.files) {
    files.push_back(canonical_or_throw(f, "file"));
    scope.named.insert(files.back());
  }
  if (files.empty()) {
    if (!db.loaded()) throw UsageError("no FILES given and no compilation database (-p) to take them from");
    files = db.files();
  }

  SiteFinder finder(resource, scope, include_dir());
  EditSet set(root);
  for (const auto& f : files) {
    std::optional<ParseArgs> args = db.args_for(f);
    if (!args) {
      if (db.loaded()) err << "vtime rewrite: " << scope.relative(f) << ": not in compile_commands.json, using default flags\n";
      args = CompileDb::fallback_for(f);
    }
    set.add(finder.run(*args));
  }
  set.finish();

  switch (opts.mode) {
    case OutputMode::Diff:
      for (const FileChange& c : set.changes()) {
        // A named file outside the root keeps its absolute path: "a/" + "/abs" reads a//abs,
        // so it is joined without the slash (`patch -p1 -d /` applies it).
        const std::string r = scope.relative(c.path);
        const char* sep = r.front() == '/' ? "" : "/";
        out << unified_diff(std::string("a") + sep + r, std::string("b") + sep + r, c.before, c.after);
      }
      break;
    case OutputMode::InPlace:
      for (const FileChange& c : set.changes()) {
        // Refuse to overwrite a file that changed since it was parsed.
        if (read_file(c.path) != c.before) throw std::runtime_error(c.path + " changed during the rewrite; not written");
        write_file_atomic(c.path, c.after);
      }
      break;
    case OutputMode::ExportFixes: {
      std::ofstream y(opts.fixes_file, std::ios::binary);
      if (!y) throw UsageError("cannot write " + opts.fixes_file);
      write_fixes_yaml(y, set);
      break;
    }
  }
  if (!opts.report_file.empty()) {
    std::ofstream r(opts.report_file, std::ios::binary);
    if (!r) throw UsageError("cannot write " + opts.report_file);
    write_report(r, set, mode_name(opts.mode));
  }

  // One line per problem on stderr, then a summary: the report has the details.
  int rewritten = 0, skipped = 0;
  for (const Site& s : set.sites()) {
    if (s.status == SiteStatus::Rewritten) ++rewritten;
    if (s.status != SiteStatus::Skipped) continue;
    ++skipped;
    err << scope.relative(s.file) << ":" << s.line << ":" << s.column << ": skipped " << s.target << ": " << s.reason << "\n";
  }
  for (const auto& f : set.failures())
    err << scope.relative(f.path) << ": not rewritten, parse errors: " << (f.errors.empty() ? "" : f.errors.front()) << "\n";
  err << "vtime rewrite: " << rewritten << " site(s) rewritten in " << set.changes().size() << " file(s), " << skipped
      << " skipped, " << set.failures().size() << " file(s) failed\n";
  return skipped > 0 || !set.failures().empty() ? kExitIncomplete : kExitOk;
}

}  // namespace vtime::rewriter
