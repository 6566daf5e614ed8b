// vtime/sweep/plan.h
#include <vtime/sweep/plan.h>

#include <gtest/gtest.h>

#include <set>

namespace vtime::sweep {
namespace {

Param param(const std::string& name, std::string_view spec, ParamKind kind, bool sync_only) {
  Param p;
  p.name = name;
  p.spec = spec;
  p.kind = kind;
  p.sync_only = sync_only;
  auto v = parse_values(spec, kind);
  EXPECT_TRUE(v);
  p.values = *v;
  return p;
}

const ParamKind kMs{ParamKind::kDuration, 1e-3};
const ParamKind kHole{ParamKind::kPlaceholder, 1};
const ParamKind kText{ParamKind::kText, 1};

TEST(Plan, OneReferencePerWorkloadAndModelCombination) {
  auto never = [](const Values&) { return false; };
  Plan p = make_plan({param("timeout", "1,2", kMs, true), param("period", "1,5", kHole, false)},
                     name_workloads({"a/w.json", "b/w.json"}), 3, never);
  EXPECT_EQ(p.workloads[0].name, "w");
  EXPECT_EQ(p.workloads[1].name, "w-2");
  // Per workload: 2 references (one per period) + 4 configurations x 3 repetitions.
  EXPECT_EQ(p.runs.size(), 2u * (2 + 12));
  EXPECT_EQ(p.configurations.size(), 2u * (2 + 4));
  std::set<std::string> ids;
  for (const auto& r : p.runs) {
    EXPECT_TRUE(ids.insert(r.id).second) << r.id;
    if (r.reference) {
      EXPECT_EQ(r.values[0], kUnused);
      EXPECT_NE(r.values[1], kUnused);
      EXPECT_TRUE(r.exact);
    }
  }
  EXPECT_EQ(p.runs[0].id, "0000_w_exact_period=1");
  EXPECT_EQ(p.runs[2].id, "0002_w_timeout=1_period=1_r1");
  for (const auto& c : p.configurations) {
    const PlannedRun& ref = p.runs[c.reference_run];
    EXPECT_TRUE(ref.reference);
    EXPECT_EQ(ref.workload, c.workload);
    EXPECT_EQ(ref.values[1], c.values[1]);  // the same period
    if (!c.reference) {
      EXPECT_EQ(c.runs.size(), 3u);
    }
  }
}

TEST(Plan, ExactConfigurationsAreTheirReference) {
  Plan p = make_plan({param("sync", "exact,timeout", kText, true), param("timeout", "1,2", kMs, true)},
                     name_workloads({"w.json"}), 2, [](const Values& v) { return v[0] == 0; });
  // 1 reference + the 2 timeout configurations x 2 repetitions; the exact ones reuse the reference.
  EXPECT_EQ(p.runs.size(), 1u + 4);
  ASSERT_EQ(p.configurations.size(), 1u + 4);
  for (const auto& c : p.configurations)
    if (c.exact && !c.reference) {
      EXPECT_EQ(c.runs, std::vector<size_t>{c.reference_run});
    }
}

TEST(Plan, OnlyModelParametersGivesReferencesOnly) {
  Plan p = make_plan({param("period", "1,2,5", kHole, false)}, name_workloads({"w.json"}), 4,
                     [](const Values&) { return true; });
  EXPECT_EQ(p.runs.size(), 3u);
  EXPECT_EQ(p.configurations.size(), 3u);
}

}  // namespace
}  // namespace vtime::sweep
