// The rewriter's text rules, without libclang: edits of one site, include placement, diffs.
#include "diff_writer.h"
#include "edit_set.h"
#include "include_inserter.h"
#include "site_edits.h"

#include <gtest/gtest.h>

namespace vtime::rewriter {
namespace {

std::string rewrite(const std::string& src, const SiteEdits& e) { return apply_edits(src, e.edits); }

TEST(SiteEdits, QualifiedNameIsReplacedWhole) {
  const std::string src = "  std::this_thread::sleep_for(1s);";
  auto e = name_edits("f", src, *find_target("std::this_thread::sleep_for"), 2, 20, false);
  EXPECT_EQ(rewrite(src, e), "  vtime::this_thread::sleep_for(1s);");
}

TEST(SiteEdits, HighResolutionClockKeepsItsSpelling) {
  const std::string src = "auto t = std::chrono::high_resolution_clock::now();";
  auto e = name_edits("f", src, *find_target("std::chrono::system_clock::now"), 9, 45, false);
  EXPECT_EQ(rewrite(src, e), "auto t = vtime::chrono::high_resolution_clock::now();");
}

TEST(SiteEdits, RefusesWhenTheNameIsNotThere) {
  const std::string src = "NAP(1);";
  EXPECT_FALSE(name_edits("f", src, *find_target("sleep"), 0, 0, false).refusal.empty());
}

TEST(SiteEdits, MemberCallForms) {
  const Target& wait_for = *find_target("std::condition_variable::wait_for");
  std::string src = "cv.wait_for(lk, 1s);";
  EXPECT_EQ(rewrite(src, member_edits("f", src, wait_for, 0, 3)), "vtime::wait_for(cv, lk, 1s);");
  src = "p->wait_for (lk, 1s);";
  EXPECT_EQ(rewrite(src, member_edits("f", src, wait_for, 0, 3)), "vtime::wait_for(*p, lk, 1s);");
  src = "(a ? p : q)->wait_for(lk, 1s);";
  EXPECT_EQ(rewrite(src, member_edits("f", src, wait_for, 0, 13)), "vtime::wait_for(*((a ? p : q)), lk, 1s);");
  src = "wait_for(lk, 1s);";
  EXPECT_EQ(rewrite(src, member_edits("f", src, wait_for, 0, 0)), "vtime::wait_for(*this, lk, 1s);");
  src = "cv.wait_for;";
  EXPECT_FALSE(member_edits("f", src, wait_for, 0, 3).refusal.empty());
}

TEST(IncludeInserter, AfterLastIncludeBeforeFirstUse) {
  const std::string src = "#include <a.h>\n#include <b.h>\nint x = f();\n#include <late.h>\n";
  auto e = include_edit("f", src, Header::C, 30);
  ASSERT_TRUE(e);
  EXPECT_EQ(apply_edits(src, {*e}), "#include <a.h>\n#include <b.h>\n#include <vtime/vtime.h>\nint x = f();\n#include <late.h>\n");
}

TEST(IncludeInserter, SkipsConditionalIncludesButNotTheGuard) {
  const std::string src = "#ifndef G\n#define G\n#include <a.h>\n#ifdef X\n#include <x.h>\n#endif\nint y;\n#endif\n";
  auto e = include_edit("f", src, Header::Cxx, static_cast<unsigned>(src.find("int y")));
  ASSERT_TRUE(e);
  EXPECT_EQ(e->offset, src.find("#ifdef X"));
  EXPECT_EQ(e->text, "#include <vtime/std.h>\n");
}

TEST(IncludeInserter, NothingWhenAlreadyIncluded) {
  EXPECT_FALSE(include_edit("f", "#include <vtime/std.h>\n", Header::C, 10));
  EXPECT_FALSE(include_edit("f", "#include \"vtime/vtime.h\"\n", Header::C, 10));
  EXPECT_TRUE(include_edit("f", "#include <vtime/vtime.h>\n", Header::Cxx, 10));
}

TEST(DiffWriter, UnifiedHunk) {
  const std::string d = unified_diff("a/x", "b/x", "1\n2\n3\n", "1\nTWO\n3\n");
  EXPECT_EQ(d, "--- a/x\n+++ b/x\n@@ -1,3 +1,3 @@\n 1\n-2\n+TWO\n 3\n");
  EXPECT_EQ(unified_diff("a/x", "b/x", "same\n", "same\n"), "");
}

}  // namespace
}  // namespace vtime::rewriter
