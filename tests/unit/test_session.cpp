// vtime/session.h: creating a session, attaching to it, and refusing what is not one.
#include <vtime/session.h>

#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <string>

using namespace vtime;

namespace {

std::string temp_file(const std::string& name, const std::string& bytes) {
  std::string path = ::testing::TempDir() + "/" + name;
  std::ofstream(path, std::ios::binary) << bytes;
  return path;
}

std::string error_of(const std::string& spec) {
  try {
    Session::attach(spec);
  } catch (const SessionError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST(Session, CreateStartsFrozenAtOriginWithTheGivenEpoch) {
  Session s = Session::create({.epoch_ns = 42, .mono_origin_ns = 7});
  EXPECT_TRUE(s.is_owner());
  EXPECT_EQ(s.now(), TimePoint::origin());
  EXPECT_EQ(s.epoch_ns(), 42);
  EXPECT_EQ(s.mono_origin_ns(), 7);
  EXPECT_EQ(s.header().magic, vtime::abi::kMagic);
  EXPECT_EQ(s.header().version, vtime::abi::kVersion);
  EXPECT_EQ(s.header().owner_pid, getpid());
}

TEST(Session, SegmentIsUnlinkedAndPrivate) {
  Session s = Session::create();
  std::string spec = s.attach_spec();
  struct stat st{};
  ASSERT_EQ(stat(spec.c_str(), &st), 0) << spec;
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  EXPECT_EQ(st.st_nlink, 0u) << "the segment must not keep a name in /dev/shm";
  EXPECT_EQ(static_cast<size_t>(st.st_size), sizeof(vtime::abi::Segment));
}

TEST(Session, AttachSeesTheSameClock) {
  Session owner = Session::create();
  Session peer = Session::attach(owner.attach_spec());
  EXPECT_FALSE(peer.is_owner());
  owner.segment().header.clock.now_ns.store(123456789);
  EXPECT_EQ(peer.now(), TimePoint::from_ns(123456789));
  EXPECT_THROW(peer.attach_spec(), SessionError);
}

TEST(Session, ClockRunningAtARateAdvancesWithRealTime) {
  Session s = Session::create();
  auto& c = s.segment().header.clock;
  c.real_base_ns.store(real_monotonic_ns());
  c.rate_ppm.store(1000000);
  TimePoint a = s.now();
  usleep(2000);
  EXPECT_GE(s.now() - a, milliseconds(2));
}

TEST(Session, AttachRefusesWhatIsNotASegment) {
  EXPECT_NE(error_of("/nonexistent/vtime").find("cannot open session"), std::string::npos);
  EXPECT_NE(error_of("").find("empty"), std::string::npos);
  EXPECT_NE(error_of(temp_file("short", "xx")).find("too small"), std::string::npos);
  std::string garbage(sizeof(vtime::abi::Segment), 'x');
  EXPECT_NE(error_of(temp_file("garbage", garbage)).find("bad magic"), std::string::npos);
}

TEST(Session, AttachRefusesAnotherAbiVersionOrLayout) {
  vtime::abi::Header h{};
  h.magic = vtime::abi::kMagic;
  h.version = vtime::abi::kVersion + 1;
  h.header_size = sizeof(vtime::abi::Header);
  h.total_size = sizeof(vtime::abi::Segment);
  std::string bytes(reinterpret_cast<const char*>(&h), sizeof h);
  bytes.resize(sizeof(vtime::abi::Segment), '\0');
  EXPECT_NE(error_of(temp_file("v2", bytes)).find("ABI version"), std::string::npos);

  h.version = vtime::abi::kVersion;
  h.total_size = 12345;
  std::string bytes2(reinterpret_cast<const char*>(&h), sizeof h);
  bytes2.resize(sizeof(vtime::abi::Segment), '\0');
  EXPECT_NE(error_of(temp_file("layout", bytes2)).find("unexpected layout"), std::string::npos);
}
