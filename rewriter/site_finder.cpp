// The libclang side: parse, walk the AST, resolve each reference, compute its edits.
#include "clang_string.h"
#include "site_finder.h"

#include "site_edits.h"

#include <clang-c/Index.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string_view>
#include <unordered_map>

namespace fs = std::filesystem;

namespace vtime::rewriter {
namespace {

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

// vtime's own API headers call std facilities on purpose; they are never rewritten.
bool is_vtime_header(std::string_view path) {
  return ends_with(path, "/vtime/vtime.h") || ends_with(path, "/vtime/std.h");
}

std::string strip_template_args(std::string s) {
  auto lt = s.find('<');
  return lt == std::string::npos ? s : s.substr(0, lt);
}

// A position in a real file; `file` is empty for invalid or scratch-space locations.
struct Pos {
  std::string file;
  unsigned offset = 0, line = 0, column = 0;
  bool operator==(const Pos& o) const { return file == o.file && offset == o.offset; }
};

enum class LocKind { Spelling, Expansion, File };

// A site at `p` for `target`, found while parsing `via`.
Site site_at(const Pos& p, std::string target, const std::string& via) {
  Site s;
  s.file = p.file;
  s.offset = p.offset;
  s.line = p.line;
  s.column = p.column;
  s.target = std::move(target);
  s.via = via;
  return s;
}

// The fully qualified name of a declaration: namespaces and classes, inline namespaces
// (std::chrono::_V2, std::__1) and extern "C" blocks dropped, template arguments dropped.
std::string qualified_name(CXCursor decl) {
  std::string name = strip_template_args(take(clang_getCursorSpelling(decl)));
  for (CXCursor p = clang_getCursorSemanticParent(decl); !clang_Cursor_isNull(p);
       p = clang_getCursorSemanticParent(p)) {
    const CXCursorKind k = clang_getCursorKind(p);
    if (k == CXCursor_TranslationUnit || clang_isInvalid(k)) break;
    if (k == CXCursor_Namespace && clang_Cursor_isInlineNamespace(p)) continue;
    if (k == CXCursor_Namespace || k == CXCursor_ClassDecl || k == CXCursor_StructDecl ||
        k == CXCursor_ClassTemplate || k == CXCursor_ClassTemplatePartialSpecialization ||
        k == CXCursor_UnionDecl)
      name = strip_template_args(take(clang_getCursorSpelling(p))) + "::" + name;
  }
  return name;
}

bool in_system_header(CXCursor c) { return clang_Location_isInSystemHeader(clang_getCursorLocation(c)) != 0; }

// A declaration is a library function when it is declared in a system header and, if the
// program defines it, defined there too (a program defining its own `sleep` keeps it).
bool is_library_decl(CXCursor decl) {
  if (!in_system_header(decl)) return false;
  CXCursor def = clang_getCursorDefinition(decl);
  return clang_Cursor_isNull(def) || in_system_header(def);
}

class Walker {
 public:
  Walker(CXTranslationUnit tu, const Scope& scope, TuResult& out) : tu_(tu), scope_(scope), out_(out) {}

  void walk_tu() {
    clang_visitChildren(clang_getTranslationUnitCursor(tu_), &Walker::visit, this);
    scan_inactive();
  }

 private:
  CXTranslationUnit tu_;
  const Scope& scope_;
  TuResult& out_;
  std::vector<CXCursor> stack_;
  std::unordered_map<std::string, std::string> canon_;
  std::unordered_map<std::string, std::string> text_;

  static CXChildVisitResult visit(CXCursor c, CXCursor, CXClientData data) {
    auto* self = static_cast<Walker*>(data);
    // System headers hold the library itself; nothing there is ours to rewrite.
    if (clang_Location_isInSystemHeader(clang_getCursorLocation(c))) return CXChildVisit_Continue;
    if (self->stack_.empty() && is_vtime_header(self->pos(clang_getCursorLocation(c), LocKind::Expansion).file))
      return CXChildVisit_Continue;
    self->stack_.push_back(c);
    const CXCursorKind k = clang_getCursorKind(c);
    if (k == CXCursor_DeclRefExpr || k == CXCursor_MemberRefExpr) self->on_reference(c);
    clang_visitChildren(c, &Walker::visit, self);
    self->stack_.pop_back();
    return CXChildVisit_Continue;
  }

  std::string canonical(CXFile f) {
    std::string name = take(clang_getFileName(f));
    if (name.empty()) return name;
    auto it = canon_.find(name);
    if (it != canon_.end()) return it->second;
    std::string real = take(clang_File_tryGetRealPathName(f));
    std::error_code ec;
    std::string c = fs::weakly_canonical(real.empty() ? name : real, ec).string();
    if (ec) c = name;
    canon_[name] = c;
    return c;
  }

  Pos pos(CXSourceLocation loc, LocKind kind) {
    CXFile f = nullptr;
    Pos p;
    if (kind == LocKind::Spelling)
      clang_getSpellingLocation(loc, &f, &p.line, &p.column, &p.offset);
    else if (kind == LocKind::Expansion)
      clang_getExpansionLocation(loc, &f, &p.line, &p.column, &p.offset);
    else
      clang_getFileLocation(loc, &f, &p.line, &p.column, &p.offset);
    if (f) p.file = canonical(f);
    return p;
  }

  const std::string& text(const std::string& file) {
    auto it = text_.find(file);
    if (it != text_.end()) return it->second;
    std::ifstream in(file, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    return text_[file] = ss.str();
  }

  bool in_root(const std::string& file) const { return scope_.contains(file); }

  // The call whose callee is `c`, looking through implicit casts only; null when `c` is
  // not called directly (its address is taken, or it is wrapped in parentheses).
  CXCursor callee_of() const {
    const CXCursor self = stack_.back();
    const CXSourceLocation start = clang_getRangeStart(clang_getCursorExtent(self));
    for (size_t i = stack_.size() - 1; i-- > 0;) {
      const CXCursor p = stack_[i];
      const CXCursorKind k = clang_getCursorKind(p);
      if (k == CXCursor_CallExpr)
        return clang_equalLocations(clang_getRangeStart(clang_getCursorExtent(p)), start)
                   ? p : clang_getNullCursor();
      if (k != CXCursor_UnexposedExpr) break;
    }
    return clang_getNullCursor();
  }

  // Resolves a reference to the target it names. Returns null (not a target), or the target;
  // `why` is set when it names a target in a way we must refuse.
  const Target* resolve(CXCursor ref, std::string& why) {
    std::vector<CXCursor> decls;
    if (clang_getCursorKind(ref) == CXCursor_OverloadedDeclRef) {
      for (unsigned i = 0, n = clang_getNumOverloadedDecls(ref); i < n; ++i)
        decls.push_back(clang_getOverloadedDecl(ref, i));
    } else {
      decls.push_back(ref);
    }
    const Target* found = nullptr;
    size_t matching = 0;
    for (CXCursor d : decls) {
      if (clang_getCursorKind(d) == CXCursor_FunctionTemplate || clang_getCursorKind(d) == CXCursor_FunctionDecl ||
          clang_getCursorKind(d) == CXCursor_CXXMethod) {
        if (!is_library_decl(d)) continue;
        const Target* t = find_target(qualified_name(d));
        if (!t) continue;
        if (found && found != t) {
          why = "overload set names several targets";
          return found;
        }
        found = t;
        ++matching;
      }
    }
    if (found && matching != decls.size()) why = "overload set mixes a library time function with other functions";
    return found;
  }

  void on_reference(CXCursor c) {
    CXCursor ref = clang_getCursorReferenced(c);
    if (clang_Cursor_isNull(ref) || clang_isInvalid(clang_getCursorKind(ref))) {
      on_dependent(c);
      return;
    }
    const CXCursorKind rk = clang_getCursorKind(ref);
    std::string why;
    const bool callable = rk == CXCursor_OverloadedDeclRef || rk == CXCursor_FunctionDecl ||
                          rk == CXCursor_CXXMethod || rk == CXCursor_FunctionTemplate;
    const Target* t = callable ? resolve(ref, why) : nullptr;
    CXSourceLocation name_loc = clang_getRangeStart(clang_getCursorReferenceNameRange(c, 0, 0));
    if (rk == CXCursor_OverloadedDeclRef && clang_getCursorKind(c) == CXCursor_DeclRefExpr) {
      // An unresolved lookup in a template: its range starts at the qualifier; the name is
      // where its OverloadedDeclRef child is.
      clang_visitChildren(
          c,
          [](CXCursor ch, CXCursor, CXClientData d) {
            if (clang_getCursorKind(ch) != CXCursor_OverloadedDeclRef) return CXChildVisit_Continue;
            *static_cast<CXSourceLocation*>(d) = clang_getCursorLocation(ch);
            return CXChildVisit_Break;
          },
          &name_loc);
    }
    const Pos name_sp = pos(name_loc, LocKind::Spelling);
    const Pos name_ex = pos(name_loc, LocKind::Expansion);
    const Pos name_file = pos(name_loc, LocKind::File);
    const MacroRole role = name_sp == name_ex ? MacroRole::None
                           : name_file == name_sp ? MacroRole::Argument : MacroRole::Body;
    auto at = [&](CXSourceLocation l) { return pos(l, role == MacroRole::Body ? LocKind::Spelling : LocKind::File); };
    const Pos name = at(name_loc);

    std::string spelled = strip_template_args(take(clang_getCursorSpelling(ref)));
    if (!t) {
      if (role == MacroRole::Body && !name.file.empty() && is_target_short_name(spelled))
        out_.macro_uses.push_back({name.file, name.offset, ""});
      return;
    }

    Site s = site_at(name, std::string(t->qualified), out_.file);
    s.header = t->header;
    s.macro = role;
    CXCursor call = callee_of();
    s.form = clang_Cursor_isNull(call) ? "address" : "call";

    auto skip = [&](std::string reason) {
      s.status = SiteStatus::Skipped;
      s.reason = std::move(reason);
      s.edits.clear();
    };

    if (name.file.empty()) {
      skip("name built by token pasting; rewrite it by hand");
      s.file = name_ex.file;
      s.line = name_ex.line;
      s.column = name_ex.column;
      s.offset = name_ex.offset;
    } else if (is_vtime_header(name.file)) {
      return;
    } else if (!in_root(name.file)) {
      skip(role == MacroRole::Body ? "in the body of a macro defined outside the project"
                                   : "outside the project root");
    } else if (!why.empty()) {
      skip(why);
    } else {
      switch (t->form) {
        case Form::Unsupported: skip("libvtime has no replacement for this function yet"); break;
        case Form::Syscall:
          if (!syscall_site(call, s)) return;  // a non-time syscall number: not a target
          [[fallthrough]];
        case Form::Name: name_site(c, *t, name, at, s, skip); break;
        case Form::Member: member_site(c, call, *t, name, at, s, skip); break;
      }
    }
    if (role == MacroRole::Body && !s.file.empty()) {
      std::string outcome = s.status == SiteStatus::Rewritten ? "" : "skip:";
      for (const Edit& e : s.edits) outcome += std::to_string(e.offset) + ":" + e.text + ";";
      out_.macro_uses.push_back({s.file, s.offset, outcome});
    }
    out_.sites.push_back(std::move(s));
  }

  // syscall(): a target when the number is a time syscall, or not a constant (vtime_syscall
  // forwards other numbers to the kernel unchanged, so rewriting those is harmless).
  bool syscall_site(CXCursor call, Site& s) {
    if (clang_Cursor_isNull(call) || clang_Cursor_getNumArguments(call) < 1) {
      s.reason = "address of syscall taken: vtime_syscall forwards non-time numbers unchanged";
      return true;
    }
    s.form = "syscall";
    CXEvalResult ev = clang_Cursor_Evaluate(clang_Cursor_getArgument(call, 0));
    bool target = true;
    if (ev && clang_EvalResult_getKind(ev) == CXEval_Int) {
      target = is_time_syscall(clang_EvalResult_getAsLongLong(ev));
    } else {
      s.reason = "syscall number is not a constant: vtime_syscall forwards non-time numbers unchanged";
    }
    if (ev) clang_EvalResult_dispose(ev);
    return target;
  }

  template <class At, class Skip>
  void name_site(CXCursor c, const Target& t, const Pos& name, At at, Site& s, Skip skip) {
    const bool through_object = clang_getCursorKind(c) == CXCursor_MemberRefExpr;  // clock.now()
    const Pos start = at(through_object
                             ? clang_getRangeStart(clang_getCursorExtent(c))
                             : clang_getRangeStart(clang_getCursorReferenceNameRange(c, CXNameRange_WantQualifier, 0)));
    if (start.file != name.file) return skip("the name and its qualifier are not spelled together (macro); rewrite it by hand");
    apply(name_edits(name.file, text(name.file), t, start.offset, name.offset, through_object), s, skip);
  }

  template <class At, class Skip>
  void member_site(CXCursor c, CXCursor call, const Target& t, const Pos& name, At at, Site& s, Skip skip) {
    s.form = "member-call";
    if (clang_Cursor_isNull(call)) return skip("pointer to member function: no free-function equivalent");
    const int n = clang_Cursor_getNumArguments(call);
    if (n < t.min_args || n > t.max_args)
      return skip("this overload (" + std::to_string(n) + " arguments) has no vtime replacement");
    const Pos base = at(clang_getRangeStart(clang_getCursorExtent(c)));
    if (base.file != name.file) return skip("the call is not spelled in one place (macro); rewrite it by hand");
    apply(member_edits(name.file, text(name.file), t, base.offset, name.offset), s, skip);
  }

  template <class Skip>
  static void apply(SiteEdits e, Site& s, Skip skip) {
    if (!e.refusal.empty()) return skip(e.refusal);
    s.replacement = std::move(e.replacement);
    s.edits = std::move(e.edits);
  }

  // A call whose callee depends on a template parameter (Clock::now(), cv.wait_for(...) with a
  // dependent cv) cannot be resolved in the template: report it when it is named like a C++ target.
  void on_dependent(CXCursor c) {
    CXSourceRange r = clang_getCursorReferenceNameRange(c, 0, 0);
    CXToken* toks = nullptr;
    unsigned n = 0;
    clang_tokenize(tu_, r, &toks, &n);
    std::string name;
    CXSourceLocation loc = clang_getRangeStart(r);
    for (unsigned i = 0; i < n; ++i)
      if (clang_getTokenKind(toks[i]) == CXToken_Identifier) {
        name = take(clang_getTokenSpelling(tu_, toks[i]));
        loc = clang_getTokenLocation(tu_, toks[i]);
      }
    clang_disposeTokens(tu_, toks, n);
    if (!is_cxx_short_name(name)) return;
    const Pos p = pos(loc, LocKind::File);
    if (p.file.empty() || !in_root(p.file) || is_vtime_header(p.file)) return;
    Site s = site_at(p, name, out_.file);
    s.form = "dependent";
    s.status = SiteStatus::Skipped;
    s.reason = "dependent call in a template: which function it calls depends on the template "
               "arguments (instantiate it with vtime's clock types or rewrite it by hand)";
    out_.sites.push_back(std::move(s));
  }

  // Code in #if branches this parse skipped was not seen: names that look like targets there
  // are reported so that another configuration is not forgotten.
  void scan_inactive() {
    CXSourceRangeList* list = clang_getAllSkippedRanges(tu_);
    if (!list) return;
    for (unsigned i = 0; i < list->count; ++i) {
      const CXSourceRange r = list->ranges[i];
      if (clang_Location_isInSystemHeader(clang_getRangeStart(r))) continue;
      const Pos start = pos(clang_getRangeStart(r), LocKind::File);
      if (start.file.empty() || !in_root(start.file) || is_vtime_header(start.file)) continue;
      CXToken* toks = nullptr;
      unsigned n = 0;
      clang_tokenize(tu_, r, &toks, &n);
      for (unsigned k = 0; k + 1 < n; ++k) {
        if (clang_getTokenKind(toks[k]) != CXToken_Identifier) continue;
        std::string name = take(clang_getTokenSpelling(tu_, toks[k]));
        if (!is_target_short_name(name) || take(clang_getTokenSpelling(tu_, toks[k + 1])) != "(") continue;
        const Pos p = pos(clang_getTokenLocation(tu_, toks[k]), LocKind::File);
        Site s = site_at(p, name, out_.file);
        s.form = "inactive";
        s.status = SiteStatus::Inactive;
        s.reason = "in an #if branch not compiled with these flags: not rewritten";
        out_.sites.push_back(std::move(s));
      }
      clang_disposeTokens(tu_, toks, n);
    }
    clang_disposeSourceRangeList(list);
  }
};

// "unknown argument: '-fgcc-only'": the flags clang rejects, so a retry can drop them.
std::vector<std::string> unknown_arguments(CXTranslationUnit tu) {
  std::vector<std::string> out;
  static constexpr std::string_view kPrefix = "unknown argument: '";
  for (unsigned i = 0, n = clang_getNumDiagnostics(tu); i < n; ++i) {
    CXDiagnostic d = clang_getDiagnostic(tu, i);
    std::string msg = take(clang_getDiagnosticSpelling(d));
    clang_disposeDiagnostic(d);
    if (msg.compare(0, kPrefix.size(), kPrefix) == 0 && msg.back() == '\'')
      out.push_back(msg.substr(kPrefix.size(), msg.size() - kPrefix.size() - 1));
  }
  return out;
}

}  // namespace

SiteFinder::SiteFinder(std::string resource_dir, Scope scope, std::string vtime_include_dir)
    : resource_dir_(std::move(resource_dir)),
      scope_(std::move(scope)),
      vtime_include_(std::move(vtime_include_dir)),
      index_(clang_createIndex(0, 0)) {}

SiteFinder::~SiteFinder() { clang_disposeIndex(static_cast<CXIndex>(index_)); }

TuResult SiteFinder::run(const ParseArgs& pa) {
  TuResult out;
  out.file = pa.file;
  std::vector<std::string> args = pa.args;
  args.insert(args.end(), {"-resource-dir", resource_dir_, "-working-directory", pa.directory,
                           "-Wno-unknown-warning-option", "-ferror-limit=0"});
  if (!vtime_include_.empty()) args.insert(args.end(), {"-idirafter", vtime_include_});
  CXTranslationUnit tu = nullptr;
  for (int attempt = 0; attempt < 2; ++attempt) {
    std::vector<const char*> argv;
    for (const auto& a : args) argv.push_back(a.c_str());
    const CXErrorCode err = clang_parseTranslationUnit2(
        static_cast<CXIndex>(index_), pa.file.c_str(), argv.data(), static_cast<int>(argv.size()), nullptr, 0,
        CXTranslationUnit_DetailedPreprocessingRecord, &tu);
    if (err != CXError_Success || !tu) {
      out.errors.push_back("libclang could not parse the file (error " + std::to_string(err) + ")");
      return out;
    }
    std::vector<std::string> unknown = unknown_arguments(tu);
    if (unknown.empty() || attempt == 1) break;
    // GCC-only flags from the build: drop them and parse again.
    for (const auto& u : unknown) args.erase(std::remove(args.begin(), args.end(), u), args.end());
    clang_disposeTranslationUnit(tu);
    tu = nullptr;
  }
  for (unsigned i = 0, n = clang_getNumDiagnostics(tu); i < n; ++i) {
    CXDiagnostic d = clang_getDiagnostic(tu, i);
    if (clang_getDiagnosticSeverity(d) >= CXDiagnostic_Error) {
      CXFile f = nullptr;
      unsigned line = 0, col = 0;
      clang_getExpansionLocation(clang_getDiagnosticLocation(d), &f, &line, &col, nullptr);
      std::string where = f ? take(clang_getFileName(f)) : std::string();
      std::error_code ec;
      if (!where.empty()) where = fs::weakly_canonical(where, ec).string();
      where = scope_.relative(where);
      std::string msg = take(clang_getDiagnosticSpelling(d));
      if (out.errors.size() < 5)
        out.errors.push_back(where.empty() ? msg : where + ":" + std::to_string(line) + ":" + std::to_string(col) + ": " + msg);
    }
    clang_disposeDiagnostic(d);
  }
  if (out.errors.empty()) {
    Walker w(tu, scope_, out);
    w.walk_tu();
    out.ok = true;
  }
  clang_disposeTranslationUnit(tu);
  return out;
}

}  // namespace vtime::rewriter
