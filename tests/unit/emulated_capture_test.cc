// The emulated GPU's model of CUDA graph capture (emulation/gpu/emulated_runtime.cc): a captured
// stream records its work instead of running it, until the graph made at the end of the capture
// runs it, as often as it is launched; a potentially unsafe call (allocating, synchronizing)
// fails while the calling thread's capture mode forbids it, and breaks the capture it would have
// disturbed; relaxed mode allows it. These are the rules a collective's first use must keep
// under PyTorch's default capture mode (global), and which only a real GPU enforced before.
#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <string>
#include <thread>

#include "gpu/runtime.h"

namespace braid {
namespace {

using gpu::CaptureMode;

class EmulatedCapture : public ::testing::Test {
 protected:
  void SetUp() override {
    rt_ = gpu::makeEmulatedRuntime(1);
    ASSERT_TRUE(rt_->setDevice(0).ok());
    auto s = rt_->streamCreate();
    ASSERT_TRUE(s.ok()) << s.status().message();
    stream_ = s.value();
    auto p = rt_->deviceAlloc(sizeof(int));
    ASSERT_TRUE(p.ok()) << p.status().message();
    word_ = static_cast<int*>(p.value());
    ASSERT_TRUE(rt_->fill(word_, 0, sizeof(int), stream_).ok());
    ASSERT_TRUE(rt_->streamSynchronize(stream_).ok());
  }
  void TearDown() override {
    if (rt_ == nullptr) return;
    (void)rt_->streamSynchronize(stream_);
    (void)rt_->deviceFree(word_);
    (void)rt_->streamDestroy(stream_);
  }
  /// The word, read back through the runtime.
  int word() {
    int out = -1;
    EXPECT_TRUE(rt_->copy(&out, word_, sizeof(int), stream_).ok());
    return out;
  }

  std::unique_ptr<gpu::Runtime> rt_;
  gpu::Stream stream_ = nullptr;
  int* word_ = nullptr;
};

// A host callback stands in for a kernel: it runs when the stream reaches it.
void increment(void* word) { ++*static_cast<int*>(word); }

TEST_F(EmulatedCapture, CapturedWorkRunsOnlyWhenItsGraphIsLaunchedAndAsOftenAsThat) {
  ASSERT_TRUE(rt_->beginCapture(stream_, CaptureMode::kGlobal).ok());
  EXPECT_TRUE(rt_->streamCapturing(stream_).value());
  ASSERT_TRUE(rt_->hostCallback(stream_, increment, word_).ok());
  auto graph = rt_->endCapture(stream_);
  ASSERT_TRUE(graph.ok()) << graph.status().message();
  EXPECT_FALSE(rt_->streamCapturing(stream_).value());
  EXPECT_EQ(word(), 0) << "captured work ran during the capture";
  ASSERT_TRUE(rt_->graphLaunch(graph.value(), stream_).ok());
  ASSERT_TRUE(rt_->graphLaunch(graph.value(), stream_).ok());
  EXPECT_EQ(word(), 2);
  EXPECT_TRUE(rt_->graphDestroy(graph.value()).ok());
}

TEST_F(EmulatedCapture, AnAllocationDuringAGlobalCaptureFailsAndBreaksTheCapture) {
  ASSERT_TRUE(rt_->beginCapture(stream_, CaptureMode::kGlobal).ok());
  auto p = rt_->deviceAlloc(64);
  ASSERT_FALSE(p.ok());
  EXPECT_NE(p.status().message().find("cudaMalloc is not permitted while a stream is being "
                                      "captured"),
            std::string::npos)
      << p.status().message();
  auto graph = rt_->endCapture(stream_);
  ASSERT_FALSE(graph.ok());
  EXPECT_NE(graph.status().message().find("invalidated by cudaMalloc"), std::string::npos)
      << graph.status().message();
}

TEST_F(EmulatedCapture, AnotherThreadIsBoundByAGlobalCaptureUnlessRelaxed) {
  ASSERT_TRUE(rt_->beginCapture(stream_, CaptureMode::kGlobal).ok());
  Status inGlobal = Status::success();
  Status inRelaxed = internalError("not run");
  std::thread other([&] {
    (void)rt_->setDevice(0);
    auto p = rt_->deviceAlloc(64);
    inGlobal = p.status();
    gpu::RelaxedCapture relaxed(*rt_);
    auto q = rt_->deviceAlloc(64);
    inRelaxed = q.status();
    if (q.ok()) (void)rt_->deviceFree(q.value());
  });
  other.join();
  EXPECT_FALSE(inGlobal.ok()) << "an allocation in global mode during another's global capture";
  EXPECT_TRUE(inRelaxed.ok()) << inRelaxed.message();
  // The relaxed allocation broke nothing, but the global one did.
  EXPECT_FALSE(rt_->endCapture(stream_).ok());
}

TEST_F(EmulatedCapture, AThreadLocalCaptureBindsOnlyItsOwnThread) {
  ASSERT_TRUE(rt_->beginCapture(stream_, CaptureMode::kThreadLocal).ok());
  Status elsewhere = internalError("not run");
  std::thread other([&] {
    (void)rt_->setDevice(0);
    auto p = rt_->deviceAlloc(64);
    elsewhere = p.status();
    if (p.ok()) (void)rt_->deviceFree(p.value());
  });
  other.join();
  EXPECT_TRUE(elsewhere.ok()) << elsewhere.message();
  EXPECT_FALSE(rt_->deviceAlloc(64).ok()) << "the capturing thread itself allocated";
  EXPECT_FALSE(rt_->endCapture(stream_).ok());
}

TEST_F(EmulatedCapture, TheCapturedStreamCannotBeSynchronizedOrTakePageableMemory) {
  ASSERT_TRUE(rt_->beginCapture(stream_, CaptureMode::kRelaxed).ok());
  EXPECT_FALSE(rt_->streamSynchronize(stream_).ok());
  int host = 7;
  EXPECT_FALSE(rt_->copy(word_, &host, sizeof(int), stream_).ok());
  EXPECT_FALSE(rt_->endCapture(stream_).ok());
}

TEST_F(EmulatedCapture, ItWaitsOnlyForEventsRecordedWithinIt) {
  auto outside = rt_->eventCreate();
  auto inside = rt_->eventCreate();
  ASSERT_TRUE(outside.ok() && inside.ok());
  ASSERT_TRUE(rt_->eventRecord(outside.value(), stream_).ok());
  ASSERT_TRUE(rt_->beginCapture(stream_, CaptureMode::kRelaxed).ok());
  ASSERT_TRUE(rt_->eventRecord(inside.value(), stream_).ok());
  EXPECT_TRUE(rt_->streamWaitEvent(stream_, inside.value()).ok());
  EXPECT_FALSE(rt_->streamWaitEvent(stream_, outside.value()).ok());
  EXPECT_FALSE(rt_->endCapture(stream_).ok());
  (void)rt_->eventDestroy(outside.value());
  (void)rt_->eventDestroy(inside.value());
}

}  // namespace
}  // namespace braid
