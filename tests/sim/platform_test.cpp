#include "vtime/sim/platform.h"

#include <gtest/gtest.h>

using namespace vtime::sim;

namespace {
std::vector<std::string> names(const Platform& p) {
  std::vector<std::string> out;
  for (const auto& m : p.machines) out.push_back(m.name);
  return out;
}
}  // namespace

TEST(Platform, NumbersHostsInNameOrderWithoutTheMaster) {
  auto p = parse_platform_xml(R"(<?xml version='1.0'?>
<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">
<platform version="4.1"><!-- a comment with <host id="fake"/> -->
  <zone id="AS0" routing="Full">
    <host id="master_host" speed="1Gf"/>
    <host id="host2" speed="1Gf"/><host id="host10" speed="1Gf"/>
    <host id='host1' speed="1Gf">
      <prop id="wattage_off" value="10"/>
    </host>
  </zone>
</platform>)", "t", "master_host");
  ASSERT_TRUE(p) << p.error();
  EXPECT_EQ(names(*p), (std::vector<std::string>{"host1", "host10", "host2"}));
  EXPECT_EQ(p->master_name, "master_host");
  EXPECT_EQ(p->machines[0].properties, (StringPairs{{"wattage_off", "10"}}));
  EXPECT_EQ(p->compute_count(), 3);
}

TEST(Platform, ExpandsClustersAndHonoursRoles) {
  // platform16 of the reference transcripts: Batsim saw 16 compute hosts, host0, host1, host10...
  auto p = parse_platform_xml(R"(<platform version="4.1"><zone id="AS0" routing="Full">
    <cluster id="compute" prefix="host" suffix="" radical="0-15" speed="1Gf" bw="125MBps" lat="50us"/>
    <cluster id="mgmt" prefix="master_host" suffix="" radical="0-0" speed="1Gf" bw="1" lat="1">
      <prop id="role" value="master" />
    </cluster>
    <cluster id="st" prefix="disk" suffix=".x" radical="0,2" speed="1Gf" bw="1" lat="1">
      <prop id="role" value="storage"/>
    </cluster>
    <link id="backbone" bandwidth="1.25GBps" latency="500us" />
    <zoneRoute src="compute" dst="mgmt" gw_src="hostcompute_router" gw_dst="master_hostmgmt_router">
      <link_ctn id="backbone"/>
    </zoneRoute>
  </zone></platform>)", "t", "master_host");
  ASSERT_TRUE(p) << p.error();
  EXPECT_EQ(p->master_name, "master_host0");
  // Batsim's messages to the server: host0's link up (50 us), the backbone (500 us), the master's
  // link down (1 s, made up), then one byte at 1 B/s; from the master to itself up and down: 2 s.
  // Summed as SimGrid does, in doubles: the zone route, then the source's side, then the master's.
  EXPECT_EQ(p->machines[2].to_master.latency, (0.0 + 500 * 1e-6) + 50 * 1e-6 + 1.0);
  EXPECT_EQ(p->machines[2].to_master.rate, 1.0);
  EXPECT_TRUE(p->machines[2].to_master.links);
  EXPECT_EQ(p->master_route.latency, 2.0);
  EXPECT_EQ(p->compute_count(), 16);
  ASSERT_EQ(p->machines.size(), 18u);
  EXPECT_EQ(p->machines[0].name, "disk0.x");
  EXPECT_EQ(p->machines[0].role, "storage");
  EXPECT_EQ(p->machines[2].name, "host0");
  EXPECT_EQ(p->machines[4].name, "host10");
  EXPECT_FALSE(p->is_compute(0));
  EXPECT_TRUE(p->is_compute(2));
}

TEST(Platform, ZonePropertiesReachTheirHosts) {
  auto p = parse_platform_xml(R"(<platform><AS id="a"><prop id="site" value="x&amp;y"/>
    <host id="master_host"/><host id="n1"/></AS></platform>)", "t", "master_host");
  ASSERT_TRUE(p) << p.error();
  EXPECT_EQ(p->machines[0].zone_properties, (StringPairs{{"site", "x&y"}}));
}

TEST(Platform, ErrorsSayWhereAndWhy) {
  auto err = [](const std::string& xml) {
    auto p = parse_platform_xml(xml, "platform 'p.xml'", "master_host");
    return p ? std::string("(accepted)") : p.error();
  };
  EXPECT_EQ(err("<platform><zone id='z'>\n<host id='a'/>\n</platform>"),
            "platform 'p.xml' line 3: </platform> does not close <zone> opened at line 1");
  EXPECT_EQ(err("<platform><zone id='z'><host id='a'/><host id='b'/></zone></platform>"),
            "platform 'p.xml': no master host: one host must be named 'master_host' or carry "
            "<prop id=\"role\" value=\"master\"/> (it runs the scheduler and computes no job)");
  EXPECT_EQ(err("<platform><zone id='z'><host id='master_host'/><host/></zone></platform>"),
            "platform 'p.xml' line 1: <host> has no 'id' attribute");
  EXPECT_EQ(err("<platform><zone id='z'><host id='master_host'/><host id='a'/>\n<host id='a'/></zone></platform>"),
            "platform 'p.xml': host 'a' is defined twice (lines 1 and 2)");
  EXPECT_EQ(err("<html></html>"), "platform 'p.xml' line 1: not a SimGrid platform file (root element is <html>, expected <platform>)");
  EXPECT_EQ(err("<platform><zone id='z'><cluster id='c' prefix='h' radical='3-1'/></zone></platform>"),
            "platform 'p.xml' line 1: bad cluster radical '3-1'");
  EXPECT_EQ(err("<platform><zone id=z></zone></platform>"), "platform 'p.xml' line 1: value of attribute 'id' must be quoted");
  EXPECT_EQ(err("<platform><zone id='z'>"), "platform 'p.xml' line 1: <zone> opened at line 1 is never closed");
  EXPECT_FALSE(load_platform_xml("/nonexistent/p.xml", "master_host"));
}

TEST(Platform, MadeUpFromAHostCount) {
  auto p = make_platform(12, "master_host");
  ASSERT_TRUE(p) << p.error();
  EXPECT_EQ(p->compute_count(), 12);
  EXPECT_EQ(p->machines[2].name, "host10");  // name order, like SimGrid
  EXPECT_FALSE(make_platform(0, "master_host"));
}

TEST(Platform, RoutesAsSimGridDoes) {
  // Floyd: the shortest path by link count; a symmetrical route back is the reverse.
  auto p = parse_platform_xml(R"(<platform version="4.1"><zone id="z" routing="Floyd">
    <host id="master_host" speed="1Gf"/><host id="a" speed="1Gf"/><host id="b" speed="2Gf"/>
    <link id="l1" bandwidth="10MBps" latency="1ms"/><link id="l2" bandwidth="20MBps" latency="2ms"/>
    <route src="b" dst="a"><link_ctn id="l1"/></route>
    <route src="master_host" dst="b"><link_ctn id="l2"/></route>
  </zone></platform>)", "t", "master_host");
  ASSERT_TRUE(p) << p.error();
  EXPECT_EQ(p->machines[0].name, "a");
  EXPECT_EQ(p->machines[0].to_master.latency, 0.0 + 1 * 1e-3 + 2 * 1e-3);  // a -> b -> master
  EXPECT_EQ(p->machines[0].to_master.rate, 10e6);                           // the slowest link
  EXPECT_EQ(p->machines[1].speed, 2e9);
  // A host to itself in a Full or Floyd zone: SimGrid's __loopback__ (10 GB/s, no latency).
  EXPECT_EQ(p->master_route.latency, 0.0);
  EXPECT_EQ(p->master_route.rate, 10e9);

  // Vivaldi: coordinates in ms, no link (the message is over with its latency).
  auto v = parse_platform_xml(R"(<platform version="4.1"><zone id="z" routing="Vivaldi">
    <host id="master_host" coordinates="0 0 1"/><host id="h" coordinates="3 4 2"/></zone></platform>)", "t",
                              "master_host");
  ASSERT_TRUE(v) << v.error();
  EXPECT_EQ(v->machines[0].to_master.latency, (5.0 + 2 + 1) / 1000.0);
  EXPECT_FALSE(v->machines[0].to_master.links);

  // What is not modelled is refused with its line, not silently given other times.
  auto err = [](const std::string& xml) {
    auto q = parse_platform_xml(xml, "platform 'p.xml'", "master_host");
    return q ? std::string("(accepted)") : q.error();
  };
  EXPECT_EQ(err("<platform><zone id='z' routing='Dijkstra'>\n</zone></platform>"),
            "platform 'p.xml' line 1: zone 'z' uses routing 'Dijkstra', which vtime sim does not model (Full, Floyd, "
            "Cluster, Vivaldi and None are); use --batsim with real Batsim");
  EXPECT_EQ(err("<platform><zone id='z' routing='Full'><host id='master_host'/>\n<cluster id='c' prefix='h' "
                "suffix='' radical='0-1' speed='1Gf' bw='1GBps' lat='1us' topology='TORUS'/></zone></platform>"),
            "platform 'p.xml' line 2: cluster 'c' has topology TORUS: vtime sim only models flat clusters (use --batsim "
            "with real Batsim)");
  EXPECT_EQ(err("<platform><zone id='z' routing='Full'><host id='master_host' speed='1Gf' "
                "availability_file='a.txt'/></zone></platform>"),
            "platform 'p.xml' line 1: <host> has 'availability_file': vtime sim does not model availability or speed "
            "traces (use --batsim with real Batsim)");
  EXPECT_EQ(err("<platform><zone id='z' routing='Full'><link id='l' bandwidth='1KBps'/></zone></platform>"),
            "platform 'p.xml' line 1: <link> attribute bandwidth=\"1KBps\" is not a value SimGrid reads");
}
