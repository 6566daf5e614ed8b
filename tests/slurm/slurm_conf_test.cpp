// slurm.conf generation for vtime-slurm (slurm/slurm_conf.h).
#include "slurm_conf.h"

#include <gtest/gtest.h>

using namespace vtime::slurm;

TEST(SlurmConf, NodesFromResourcesWithTheirOwnPorts) {
  ClusterSpec c{.dir = "/d", .resource_ids = {0, 3, 7}, .base_port = 21000, .user = "alice"};
  std::string text = make_slurm_conf(c, Extra{});
  EXPECT_NE(text.find("SlurmctldPort=21000\n"), std::string::npos);
  EXPECT_NE(text.find("NodeName=n0 NodeHostname=localhost NodeAddr=127.0.0.1 Port=21001 CPUs=1"), std::string::npos);
  EXPECT_NE(text.find("NodeName=n3 NodeHostname=localhost NodeAddr=127.0.0.1 Port=21002 CPUs=1"), std::string::npos);
  EXPECT_NE(text.find("NodeName=n7 NodeHostname=localhost NodeAddr=127.0.0.1 Port=21003 CPUs=1"), std::string::npos);
  EXPECT_NE(text.find("SlurmUser=alice\n"), std::string::npos);
  EXPECT_NE(text.find("StateSaveLocation=/d/state\n"), std::string::npos);
  EXPECT_NE(text.find("PartitionName=batch Nodes=ALL Default=YES"), std::string::npos);
  EXPECT_NE(text.find("EnforcePartLimits=ALL\n"), std::string::npos);
}

TEST(SlurmConf, ExtraOverridesGeneratedKeysCaseInsensitively) {
  auto e = parse_extra("# comment\n\nselecttype=select/cons_tres  # trailing\nPartitionName=p Nodes=ALL Default=YES\n",
                       "x.conf");
  ASSERT_TRUE(e) << e.error();
  std::string text = make_slurm_conf({.dir = "/d", .resource_ids = {0}, .base_port = 1}, *e);
  EXPECT_EQ(text.find("SelectType=select/linear"), std::string::npos);
  EXPECT_NE(text.find("selecttype=select/cons_tres\n"), std::string::npos);
  EXPECT_EQ(text.find("PartitionName=batch"), std::string::npos);
  EXPECT_NE(text.find("PartitionName=p Nodes=ALL Default=YES\n"), std::string::npos);
}

TEST(SlurmConf, RefusesWhatCannotWorkNamingTheLine) {
  auto bad = parse_extra("SchedulerType=sched/builtin\nnot a setting\n", "x.conf");
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().rfind("x.conf:2: not a Slurm setting", 0), 0u) << bad.error();
  auto port = parse_extra("SlurmctldPort=6817\n", "x.conf");
  ASSERT_FALSE(port);
  EXPECT_NE(port.error().find("x.conf:1: SlurmctldPort cannot be set"), std::string::npos);
  auto munge = parse_extra("AuthType=auth/munge\n", "x.conf");
  ASSERT_FALSE(munge);
  EXPECT_NE(munge.error().find("munge"), std::string::npos);
  EXPECT_FALSE(parse_extra("ProctrackType=proctrack/cgroup\n", "x.conf"));
  EXPECT_FALSE(parse_extra("AccountingStorageType=accounting_storage/slurmdbd\n", "x.conf"));
  EXPECT_TRUE(parse_extra("AuthType=auth/none\nSchedulerParameters=bf_interval=30,bf_resolution=60\n", "x.conf"));
}

// Found by fuzz_slurm_extra: Slurm reads every Key=Value pair of a line and splits at a carriage
// return too, so a key vtime-slurm decides could hide after the first pair.
TEST(SlurmConf, EveryPairOfALineIsChecked) {
  auto second = parse_extra("SchedulerType=sched/backfill SlurmctldPort=1234\n", "x.conf");
  ASSERT_FALSE(second);
  EXPECT_NE(second.error().find("x.conf:1: SlurmctldPort cannot be set (on the line of SchedulerType)"), std::string::npos)
      << second.error();
  auto params = parse_extra("SchedulerParameters=bf_interval=30 SlurmdLogFile=/tmp/x\n", "x.conf");
  ASSERT_FALSE(params);
  EXPECT_NE(params.error().find("SlurmdLogFile cannot be set"), std::string::npos) << params.error();
  EXPECT_FALSE(parse_extra("SchedulerType=sched/backfill AuthType=auth/munge\n", "x.conf"));
  auto cr = parse_extra("SchedulerType=sched/backfill\rSlurmctldPort=1\n", "x.conf");
  ASSERT_FALSE(cr);
  EXPECT_NE(cr.error().find("x.conf:1: a control character (0x0d) inside the line"), std::string::npos) << cr.error();
  // A partition's pairs are its own; a line ending in CR LF is fine.
  EXPECT_TRUE(parse_extra("PartitionName=big Nodes=ALL Default=YES State=UP\r\nSchedulerType=sched/builtin\r\n", "x.conf"));
}

TEST(SlurmConf, NodeNamesMapBackToResources) {
  EXPECT_EQ(node_name(12), "n12");
  EXPECT_EQ(resource_of_node("n12"), 12);
  EXPECT_EQ(resource_of_node("n0"), 0);
  EXPECT_FALSE(resource_of_node("n01"));
  EXPECT_FALSE(resource_of_node("x1"));
  EXPECT_FALSE(resource_of_node("n"));
}

TEST(SlurmConf, WalltimesRoundUpToMinutes) {
  constexpr int64_t s = 1'000'000'000;
  EXPECT_EQ(time_limit_minutes(0), 0u);
  EXPECT_EQ(time_limit_minutes(-5 * s), 0u);
  EXPECT_EQ(time_limit_minutes(1), 1u);
  EXPECT_EQ(time_limit_minutes(60 * s), 1u);
  EXPECT_EQ(time_limit_minutes(60 * s + 1), 2u);
  EXPECT_EQ(time_limit_minutes(170 * s), 3u);
}
