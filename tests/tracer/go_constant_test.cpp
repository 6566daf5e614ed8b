// A Go function's constant (tracer/go_constant.h): the variable's value parsed, refused when
// malformed, and the constant found in what Go's compiler made of constant.go, as built,
// stripped and position-independent (found through Go's pc-line table there).
#include "go_constant.h"
#include "go_ticks.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace {

using vtime::tracer::constant_loads;
using vtime::tracer::parse_go_constants;

std::string bin(const char* name) { return std::string(VTIME_TRACER_BIN) + "/" + name; }

TEST(GoConstant, ParsesEntries) {
  std::string why;
  auto c = parse_go_constants("k8s.io/kubernetes/pkg/scheduler/internal/queue.(*PriorityQueue).Run.func1:1000000000:1001000000;main.f:0:7", why);
  ASSERT_TRUE(c) << why;
  ASSERT_EQ(c->size(), 2u);
  EXPECT_EQ((*c)[0].function, "k8s.io/kubernetes/pkg/scheduler/internal/queue.(*PriorityQueue).Run.func1");
  EXPECT_EQ((*c)[0].from, 1000000000u);
  EXPECT_EQ((*c)[0].to, 1001000000u);
  EXPECT_EQ((*c)[1].function, "main.f");
  EXPECT_EQ((*c)[1].from, 0u);
  EXPECT_EQ((*c)[1].to, 7u);
  // A name may hold colons of its own: the last two separate the numbers.
  c = parse_go_constants("a:b:1:2;", why);
  ASSERT_TRUE(c) << why;
  EXPECT_EQ((*c)[0].function, "a:b");
}

TEST(GoConstant, RefusesMalformed) {
  for (const char* bad : {"", ";", "main.f", "main.f:1", ":1:2", "main.f:1:", "main.f:x:2", "main.f:1:-2", "main.f:1:2147483648",
                          "main.f:99999999999:1", "main.f:1:2;main.g"}) {
    std::string why;
    EXPECT_FALSE(parse_go_constants(bad, why)) << bad;
    EXPECT_FALSE(why.empty()) << bad;
  }
}

TEST(GoConstant, FindsLoads) {
  // MOVL $1e9, BX; MOVQ $1e9, R8 (sign-extended); MOVL $1e9, R9D; 1e9 as a displacement elsewhere.
  std::vector<unsigned char> code = {0xbb, 0x00, 0xca, 0x9a, 0x3b, 0x49, 0xc7, 0xc0, 0x00, 0xca, 0x9a, 0x3b,
                                     0x41, 0xb9, 0x00, 0xca, 0x9a, 0x3b, 0x48, 0x8b, 0x80, 0x00, 0xca, 0x9a, 0x3b};
  EXPECT_EQ(constant_loads(code, 1000000000), (std::vector<size_t>{1, 8, 14}));
  EXPECT_TRUE(constant_loads(code, 1000000001).empty());
}

// period() returns time.Second: one load of 1e9 in what the compiler made of it, whichever
// table finds the function.
TEST(GoConstant, FindsTheConstantOfAGoFunction) {
  for (const char* prog : {"constant", "constant_pie"}) {
    std::string why;
    uint64_t entry = 0;
    auto fn = vtime::tracer::find_go_function(bin(prog), "main.period", why, &entry);
    ASSERT_TRUE(fn) << prog << ": " << why;
    EXPECT_EQ(constant_loads(fn->code, 1000000000).size(), 1u) << prog;
    EXPECT_FALSE(vtime::tracer::find_go_function(bin(prog), "main.nothere", why, &entry)) << prog;
  }
}

}  // namespace
