// vtime/log.h: per-module levels from VTIME_LOG, parsed once.
#include <vtime/log.h>

#include <gtest/gtest.h>

#include <cstdlib>

TEST(Log, LevelsPerModuleFromTheEnvironment) {
  // Must be set before the first use: the configuration is read once.
  setenv("VTIME_LOG", "info,controller=debug,broker=error", 1);
  EXPECT_TRUE(vtime::log_enabled("controller", vtime::LogLevel::kDebug));
  EXPECT_TRUE(vtime::log_enabled("sim", vtime::LogLevel::kInfo));
  EXPECT_FALSE(vtime::log_enabled("sim", vtime::LogLevel::kDebug));
  EXPECT_TRUE(vtime::log_enabled("broker", vtime::LogLevel::kError));
  EXPECT_FALSE(vtime::log_enabled("broker", vtime::LogLevel::kWarn));
  testing::internal::CaptureStderr();
  VTIME_LOGF("controller", vtime::LogLevel::kDebug, "advance to %d", 42);
  VTIME_LOGF("sim", vtime::LogLevel::kDebug, "not shown");
  EXPECT_EQ(testing::internal::GetCapturedStderr(), "vtime[controller] advance to 42\n");
}
