// Finding the counter reads the tracer patches where the CPU's trap is not honoured
// (tracer/go_ticks.h), on real binaries: the Go test program as built, stripped and
// position-independent, Debian's libzmq and libc, and a program that is not Go.
#include "go_ticks.h"

#include <gtest/gtest.h>

#include <fcntl.h>
#include <unistd.h>

#include <string>
#include <vector>

namespace {

using vtime::tracer::TickSite;

std::string bin(const char* name) { return std::string(VTIME_TRACER_BIN) + "/" + name; }

// The bytes of `path` at file offset `off`.
std::vector<unsigned char> bytes_at(const std::string& path, uint64_t off, size_t n) {
  std::vector<unsigned char> b(n);
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  EXPECT_GE(fd, 0) << path;
  EXPECT_EQ(pread(fd, b.data(), n, static_cast<off_t>(off)), static_cast<ssize_t>(n));
  close(fd);
  return b;
}

bool is_counter_read(const std::vector<unsigned char>& b, unsigned len) {
  return (len == 2 && b[0] == 0x0f && b[1] == 0x31) || (len == 3 && b[0] == 0x0f && b[1] == 0x01 && b[2] == 0xf9);
}

// runtime.cputicks has one RDTSCP and one RDTSC (asm_amd64.s), whichever table finds it.
void expect_cputicks(const std::string& path) {
  std::string why;
  uint64_t entry = 0;
  std::vector<TickSite> sites = vtime::tracer::find_tick_sites(path, why, &entry);
  EXPECT_NE(entry, 0u) << path;
  ASSERT_EQ(sites.size(), 2u) << path << ": " << why;
  EXPECT_EQ(sites[0].len, 3u);
  EXPECT_EQ(sites[1].len, 2u);
  EXPECT_GT(sites[1].addr, sites[0].addr);
  EXPECT_LT(sites[1].addr - sites[0].addr, 64u) << "both in one short function";
}

TEST(GoTicks, FoundThroughTheSymbolTable) { expect_cputicks(bin("random")); }

TEST(GoTicks, FoundThroughGosPcLineTableWhenStripped) { expect_cputicks(bin("random_stripped")); }

TEST(GoTicks, FoundInAPositionIndependentExecutable) { expect_cputicks(bin("random_pie")); }

TEST(GoTicks, NotAGoProgramSaysWhy) {
  std::string why;
  uint64_t entry = 0;
  EXPECT_TRUE(vtime::tracer::find_tick_sites("/bin/sleep", why, &entry).empty());
  EXPECT_NE(why.find("gopclntab"), std::string::npos) << why;
  EXPECT_TRUE(vtime::tracer::find_tick_sites("/etc/passwd", why, &entry).empty());
  EXPECT_FALSE(why.empty());
}

// libzmq reads the counter at the start of small functions (its clock's staleness check).
TEST(GoTicks, LibraryReadsAtFunctionStartsAreFound) {
  const std::string zmq = "/usr/lib/x86_64-linux-gnu/libzmq.so.5";
  if (access(zmq.c_str(), R_OK) != 0) GTEST_SKIP() << "no " << zmq << " (Debian's libzmq5)";
  std::string why;
  std::vector<TickSite> sites = vtime::tracer::find_prologue_tick_sites(zmq, why);
  ASSERT_FALSE(sites.empty()) << why;
  for (const TickSite& s : sites) EXPECT_TRUE(is_counter_read(bytes_at(zmq, s.addr, s.len), s.len)) << std::hex << s.addr;
}

// glibc's reads are in the middle of its mutexes' spin loops: never taken, as no decoding
// from a function's start reaches them.
TEST(GoTicks, ReadsInsideFunctionsAreLeftAlone) {
  std::string why;
  std::vector<TickSite> sites = vtime::tracer::find_prologue_tick_sites("/lib/x86_64-linux-gnu/libc.so.6", why);
  for (const TickSite& s : sites) {
    EXPECT_TRUE(is_counter_read(bytes_at("/lib/x86_64-linux-gnu/libc.so.6", s.addr, s.len), s.len));
  }
  EXPECT_TRUE(sites.empty()) << "glibc 2.36 reads the counter mid-function only";
}

}  // namespace
