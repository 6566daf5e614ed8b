// vtime/sweep/values.h: the VALUES grammar of --param.
#include <vtime/sweep/values.h>

#include <gtest/gtest.h>

namespace vtime::sweep {
namespace {

const ParamKind kMs{ParamKind::kDuration, 1e-3};
const ParamKind kSeconds{ParamKind::kDuration, 1};
const ParamKind kNumber{ParamKind::kNumber, 1};
const ParamKind kText{ParamKind::kText, 1};
const ParamKind kHole{ParamKind::kPlaceholder, 1};

std::vector<std::string> texts(std::string_view spec, const ParamKind& k) {
  auto v = parse_values(spec, k);
  EXPECT_TRUE(v) << spec << ": " << (v ? "" : v.error());
  std::vector<std::string> out;
  if (v)
    for (auto& x : v->values) out.push_back(x.text);
  return out;
}

std::string error(std::string_view spec, const ParamKind& k) {
  auto v = parse_values(spec, k);
  EXPECT_FALSE(v) << spec;
  return v ? std::string() : v.error();
}

TEST(Values, ListsConvertUnitsToTheOptionsOwn) {
  EXPECT_EQ(texts("1,2,5", kMs), (std::vector<std::string>{"1", "2", "5"}));
  EXPECT_EQ(texts("10ms,0.5s,250us", kMs), (std::vector<std::string>{"10", "500", "0.25"}));
  EXPECT_EQ(texts("1min,2h", kSeconds), (std::vector<std::string>{"60", "7200"}));
  EXPECT_EQ(texts("exact,timeout", kText), (std::vector<std::string>{"exact", "timeout"}));
  EXPECT_EQ(texts("wall:2,zero", kText), (std::vector<std::string>{"wall:2", "zero"}));  // ':' in words
  EXPECT_EQ(texts("1:2:1", kText), (std::vector<std::string>{"1:2:1"}));  // words are never ranges
}

TEST(Values, LinearRangesIncludeTheLastValueDespiteRounding) {
  auto t = texts("0ms:100ms:1ms", kMs);
  ASSERT_EQ(t.size(), 101u);
  EXPECT_EQ(t.front(), "0");
  EXPECT_EQ(t[3], "3");
  EXPECT_EQ(t.back(), "100");
  EXPECT_EQ(texts("0:0.3:0.1", kSeconds), (std::vector<std::string>{"0", "0.1", "0.2", "0.3"}));
  EXPECT_EQ(texts("0s:0.1s:50ms", kMs), (std::vector<std::string>{"0", "50", "100"}));
  EXPECT_EQ(texts("1:2:5", kNumber), (std::vector<std::string>{"1"}));  // a step past the end
}

TEST(Values, LogRangesAreGeometricAndMarked) {
  auto v = parse_values("log:0.01:1000:6", kSeconds);
  ASSERT_TRUE(v);
  EXPECT_TRUE(v->log_scale);
  std::vector<std::string> t;
  for (auto& x : v->values) t.push_back(x.text);
  EXPECT_EQ(t, (std::vector<std::string>{"0.01", "0.1", "1", "10", "100", "1000"}));
  EXPECT_EQ(texts("log:1ms:1s:4", kMs), (std::vector<std::string>{"1", "10", "100", "1000"}));
  EXPECT_EQ(texts("log:5:5:1", kNumber), (std::vector<std::string>{"5"}));
}

TEST(Values, PlaceholdersKeepTheirUnitAsWritten) {
  EXPECT_EQ(texts("1s:3s:1s", kHole), (std::vector<std::string>{"1s", "2s", "3s"}));
  EXPECT_EQ(texts("1:3:1", kHole), (std::vector<std::string>{"1", "2", "3"}));
  auto v = parse_values("fcfs,easy", kHole);
  ASSERT_TRUE(v);
  EXPECT_EQ(v->values[1].text, "easy");
  EXPECT_FALSE(v->values[1].number);
  auto n = parse_values("10ms,20ms", kHole);
  ASSERT_TRUE(n);
  EXPECT_EQ(n->values[1].text, "20ms");
  EXPECT_EQ(*n->values[1].number, 20);
}

TEST(Values, BadInputIsOneClearError) {
  EXPECT_NE(error("", kMs).find("no values"), std::string::npos);
  EXPECT_NE(error("1,,2", kMs).find("empty value"), std::string::npos);
  EXPECT_NE(error("5:1:1", kMs).find("empty range"), std::string::npos);
  EXPECT_NE(error("log:1:10:0", kMs).find("empty range"), std::string::npos);
  EXPECT_NE(error("log:10:1:3", kMs).find("empty range"), std::string::npos);
  EXPECT_NE(error("0ms:100:1ms", kMs).find("unit mismatch"), std::string::npos);
  EXPECT_NE(error("1,5ms", kMs).find("unit mismatch"), std::string::npos);
  EXPECT_NE(error("1s:3ms:1s", kHole).find("unit mismatch"), std::string::npos);
  EXPECT_NE(error("2ms", kNumber).find("takes no unit"), std::string::npos);
  EXPECT_NE(error("1kg", kMs).find("unknown unit"), std::string::npos);
  EXPECT_NE(error("abc", kMs).find("not a number"), std::string::npos);
  EXPECT_NE(error("0:1:0", kMs).find("STEP must be positive"), std::string::npos);
  EXPECT_NE(error("log:0:1:3", kMs).find("positive bounds"), std::string::npos);
  EXPECT_NE(error("0:1:1e-9", kMs).find("more than 100000"), std::string::npos);
  EXPECT_NE(error("1:2", kMs).find("FIRST:LAST:STEP"), std::string::npos);
  EXPECT_NE(error("1,1ms,1", kMs).find("unit mismatch"), std::string::npos);
  EXPECT_NE(error("1,2,1", kMs).find("twice"), std::string::npos);
}

TEST(Values, FormatNumberIsShortAndExact) {
  EXPECT_EQ(format_number(0.1 + 0.2), "0.3");
  EXPECT_EQ(format_number(-0.0), "0");
  EXPECT_EQ(format_number(1e-5), "1e-05");
  EXPECT_EQ(format_number(8530), "8530");
}

}  // namespace
}  // namespace vtime::sweep
