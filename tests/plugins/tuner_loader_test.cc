// The tuner plugin loader (src/tune/plugin/tuner_loader.h) on the test tuners built beside this
// binary (tuner_plugin.cc): loaded once per process and shared while held, closed with the last
// holder and loaded again after; a load that found nothing not tried again in the process, as in
// NCCL; the network plugin's library searched when no tuner library opens; a library without a
// tuner table refused. The loader's state is the process's, so each case runs in a forked child
// of its own (runProcesses with one rank).
#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "base/log.h"
#include "support/multiprocess.h"
#include "support/scoped_env.h"
#include "tune/plugin/tuner_loader.h"

namespace {

using braid::tune::acquireTuner;
using braid::tune::LoadedTuner;

std::string tunerPath(const std::string& variant) {
  return std::string(BRAID_TEST_PLUGIN_DIR) + "/libnccl-tuner-" + variant + ".so";
}
std::string netPath(const std::string& variant) {
  return std::string(BRAID_TEST_PLUGIN_DIR) + "/libnccl-net-" + variant + ".so";
}

// Runs `body` in a forked child, where the loader's state starts fresh.
void inChild(const std::function<void()>& body) {
  braid::testing::runProcesses(1, [&](int) { body(); });
}

// What `body` said at INFO.
std::string infoOf(const std::function<void()>& body) {
  braid::testing::ScopedEnv debug("BRAID_DEBUG", "INFO");
  braid::log::resetLevel();
  ::testing::internal::CaptureStderr();
  body();
  std::string said = ::testing::internal::GetCapturedStderr();
  braid::log::resetLevel();
  return said;
}

TEST(TunerLoad, IsSharedWhileHeldAndLoadedAgainAfterTheLast) {
  inChild([] {
    std::shared_ptr<LoadedTuner> first = acquireTuner(tunerPath("braidtuner"), "");
    ASSERT_NE(first, nullptr);
    EXPECT_EQ(first->plugin().version(), 6);
    EXPECT_EQ(first->plugin().name(), "braidtuner");
    // While one is held the process's tuner is it, whatever a later communicator's setting.
    std::shared_ptr<LoadedTuner> second = acquireTuner(tunerPath("braidtuner2"), "");
    EXPECT_EQ(second.get(), first.get());
    second.reset();
    const std::string said = infoOf([&] { first.reset(); });
    EXPECT_NE(said.find("TUNER/Plugin: Closing tuner: 'braidtuner'"), std::string::npos) << said;
    std::shared_ptr<LoadedTuner> again = acquireTuner(tunerPath("braidtuner2"), "");
    ASSERT_NE(again, nullptr);
    EXPECT_EQ(again->plugin().version(), 2);
  });
}

TEST(TunerLoad, AFailedLoadIsNotTriedAgain) {
  inChild([] {
    const std::string said =
        infoOf([] { EXPECT_EQ(acquireTuner(std::string("nosuch"), ""), nullptr); });
    EXPECT_NE(said.find("TUNER/Plugin: Could not find: nosuch libnccl-tuner-nosuch.so"),
              std::string::npos)
        << said;
    EXPECT_EQ(acquireTuner(tunerPath("braidtuner"), ""), nullptr);
  });
}

TEST(TunerLoad, NoneLoadsNothingNotEvenTheNetworkPluginsTuner) {
  inChild([] {
    EXPECT_EQ(acquireTuner(std::string("none"), netPath("braidtest-tuner")), nullptr);
    EXPECT_EQ(acquireTuner(std::string("NONE"), netPath("braidtest-tuner")), nullptr);
  });
}

TEST(TunerLoad, TheNetworkPluginsLibraryIsSearchedWhenNoTunerOpens) {
  inChild([] {
    std::shared_ptr<LoadedTuner> tuner = acquireTuner(std::nullopt, netPath("braidtest-tuner"));
    ASSERT_NE(tuner, nullptr);
    EXPECT_EQ(tuner->plugin().name(), "braidtuner");
    EXPECT_EQ(tuner->plugin().path(), netPath("braidtest-tuner"));
  });
}

TEST(TunerLoad, ALibraryWithoutATunerTableIsUnsupported) {
  inChild([] {
    const std::string said =
        infoOf([] { EXPECT_EQ(acquireTuner(netPath("braidtest"), ""), nullptr); });
    EXPECT_NE(said.find("External tuner plugin " + netPath("braidtest") + " is unsupported"),
              std::string::npos)
        << said;
  });
}

}  // namespace
