// The engine's LL protocol (kernels/engine/device_env.h, ll.h) between two blocks of one launch:
// block 0 sends a run of messages of many sizes into an LL GPU FIFO (transport/cuda_ipc), block 1
// receives them, reducing some into its own input. The FIFO's flags have 5 bits, so in a short run
// they wrap many times and both kinds of message occur (those that rewrite their whole slot and
// those that write only their payload); a second launch carries on where the first left the
// cursors. Also: a receiver that waits for a message nobody sends gives up at the deadline naming
// the peer, and one that expects another size says so.
//
// Built twice, like engine_kernel_test.cc: on the emulated GPU (label emulated-gpu), where the
// blocks are threads running the CPU instance of the engine, and on a real GPU (label gpu).
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "exec/device_program.h"
#include "gpu/runtime.h"
#include "kernels/engine/interpreter.h"
#include "kernels/engine/launch.h"
#include "kernels/engine_launch.h"
#include "support/engine_launch.h"
#include "transport/cuda_ipc/gpu_fifo.h"

namespace braid {
namespace {

namespace engine = kernels::engine;
using transport::cuda_ipc::FifoFormat;
using transport::cuda_ipc::FifoPlacement;
using transport::cuda_ipc::GpuRecvEnd;
using transport::cuda_ipc::GpuSendEnd;

#if defined(BRAID_TEST_REAL_GPU)
constexpr bool kEmulated = false;
gpu::Runtime& rt() { return gpu::runtime(); }
#else
constexpr bool kEmulated = true;
gpu::Runtime& rt() {
  static const std::unique_ptr<gpu::Runtime> emulated = gpu::makeEmulatedRuntime(1);
  return *emulated;
}
#endif

constexpr size_t kSlotBytes = 256;
constexpr size_t kSliceElems = kSlotBytes / sizeof(uint32_t);
constexpr uint32_t kFlagBits = 5;

/// A message of the run: `count` uint32 elements at `offset` of both ranks' buffers; the
/// receiver reduces it (sum) into its own input when `reduce`, else copies it.
struct Message {
  size_t offset;
  size_t count;
  bool reduce;
};

class EngineLl : public ::testing::Test {
 protected:
  void SetUp() override {
    if (rt().deviceCount() == 0 || rt().emulated() != kEmulated) {
      if (kEmulated) {  // the test made the emulated runtime itself: no device is its failure
        FAIL() << "the emulated GPU did not come up (" << rt().describe() << ")";
      }
      GTEST_SKIP() << "no " << (kEmulated ? "emulated GPU" : "CUDA device") << " here ("
                   << rt().describe() << ")";
    }
    ASSERT_TRUE(rt().setDevice(0).ok());
    stream_ = take(rt().streamCreate());
    abort_ = static_cast<uint32_t*>(take(rt().hostAlloc(sizeof(uint32_t))));
    *abort_ = 0;
    fault_ = static_cast<engine::FaultRecord*>(take(rt().hostAlloc(sizeof(engine::FaultRecord))));
    cursors_ = static_cast<engine::FifoCursor*>(take(rt().deviceAlloc(2 * sizeof(*cursors_))));
    ASSERT_TRUE(rt().fill(cursors_, 0, 2 * sizeof(*cursors_), stream_).ok());
    const std::string name = "/braid-test-ll-" + std::to_string(getpid());
    FifoFormat format;
    format.protocol = engine::FifoProtocol::kLl;
    format.llFlagBits = kFlagBits;
    recv_ = take(GpuRecvEnd::create(rt(), name, kSlotBytes, FifoPlacement::kDeviceMemory,
                                    &cursors_[0], stream_, format));
    send_ =
        take(GpuSendEnd::tryOpen(rt(), name, kSlotBytes, &cursors_[1], engine::FifoProtocol::kLl));
    ASSERT_TRUE(recv_ && send_);
    EXPECT_EQ(recv_->end().flagBits, kFlagBits);
    EXPECT_EQ(send_->end().flagBits, kFlagBits);
  }

  void TearDown() override {
    if (stream_ == nullptr) return;
    (void)rt().streamSynchronize(stream_);
    send_.reset();
    recv_.reset();
    programs_.clear();
    for (void* p : device_) (void)rt().deviceFree(p);
    (void)rt().deviceFree(cursors_);
    (void)rt().hostFree(abort_);
    (void)rt().hostFree(fault_);
    (void)rt().streamDestroy(stream_);
  }

  template <typename T>
  T take(Result<T> r) {
    EXPECT_TRUE(r.ok()) << r.status().message();
    return r.ok() ? std::move(r).value() : T{};
  }

  void* deviceCopy(const std::vector<uint32_t>& host) {
    void* d = take(rt().deviceAlloc(host.size() * sizeof(uint32_t)));
    device_.push_back(d);
    EXPECT_TRUE(rt().copy(d, host.data(), host.size() * sizeof(uint32_t), stream_).ok());
    EXPECT_TRUE(rt().streamSynchronize(stream_).ok());
    return d;
  }

  /// A one-channel LL program of `instrs` on the FIFO's sending or receiving end.
  const engine::DeviceChannel* upload(const std::vector<engine::Instruction>& instrs, bool send) {
    exec::Program program;
    program.sliceElems = kSliceElems;
    exec::ChannelProgram ch;
    ch.instrs = instrs;
    exec::ChannelPorts ports;
    const transport::cuda_ipc::GpuEnd e = send ? send_->end() : recv_->end();
    const engine::DevicePort port{e.fifo, e.cursor, send ? 1 : 0, e.flagBits};
    (send ? ch.sendPeers : ch.recvPeers).push_back(send ? 1 : 0);
    (send ? ports.send : ports.recv).push_back(port);
    program.channels.push_back(ch);
    auto uploaded = exec::DeviceProgram::upload(rt(), program, {ports}, stream_, kSlotBytes);
    EXPECT_TRUE(uploaded.ok()) << uploaded.status().message();
    if (!uploaded.ok()) return nullptr;
    programs_.push_back(std::make_unique<exec::DeviceProgram>(std::move(uploaded).value()));
    return programs_.back()->channels();
  }

  static engine::Instruction step(engine::StepOp op, const Message& m) {
    engine::Instruction i{};
    i.kind = engine::InstrKind::kStep;
    i.op = op;
    i.inOffset = m.offset;
    i.outOffset = m.offset;
    i.count = m.count;
    i.recvPort = engine::stepReceives(op) ? 0 : engine::kNoPort;
    i.sendPort = engine::stepSends(op) ? 0 : engine::kNoPort;
    return i;
  }

  /// Launches the kernel for (uint32, sum) with one call per (channel, buffers) pair, block i
  /// running call i, and waits for it. Returns the fault code the launch recorded.
  uint32_t launch(const std::vector<const engine::DeviceChannel*>& channels,
                  const std::vector<std::pair<const void*, void*>>& buffers, uint64_t timeoutNs) {
    engine::EngineArgs a{};
    for (size_t i = 0; i < channels.size(); ++i) {
      engine::EngineCall& call = a.calls[i];
      call.channels = channels[i];
      call.firstBlock = static_cast<uint32_t>(i);
      call.nchannels = 1;
      call.input = buffers[i].first;
      call.output = buffers[i].second;
      call.sliceElems = kSliceElems;
      call.elemBytes = sizeof(uint32_t);
      call.type = static_cast<uint8_t>(DataType::kUint32);
      call.op = static_cast<uint8_t>(RedOp::kSum);
      call.protocol = static_cast<uint8_t>(engine::FifoProtocol::kLl);
      call.args.nranks = 2;
    }
    a.ncalls = static_cast<uint32_t>(channels.size());
    a.type = static_cast<uint8_t>(DataType::kUint32);
    a.op = static_cast<uint8_t>(RedOp::kSum);
    a.abortFlag = abort_;
    a.fault = fault_;
    a.timeoutNs = timeoutNs;
    memset(fault_, 0, sizeof *fault_);
    EXPECT_TRUE(
        testing::launchEngine(rt(), a, static_cast<unsigned>(channels.size()), stream_).ok());
    EXPECT_TRUE(rt().streamSynchronize(stream_).ok());
    return engine::loadAcquire(&fault_->code);
  }

  std::vector<uint32_t> fetch(const void* device, size_t n) {
    std::vector<uint32_t> host(n);
    EXPECT_TRUE(rt().copy(host.data(), device, n * sizeof(uint32_t), stream_).ok());
    EXPECT_TRUE(rt().streamSynchronize(stream_).ok());
    return host;
  }

  gpu::Stream stream_ = nullptr;
  uint32_t* abort_ = nullptr;
  engine::FaultRecord* fault_ = nullptr;
  engine::FifoCursor* cursors_ = nullptr;
  std::unique_ptr<GpuRecvEnd> recv_;
  std::unique_ptr<GpuSendEnd> send_;
  std::vector<std::unique_ptr<exec::DeviceProgram>> programs_;
  std::vector<void*> device_;
};

TEST_F(EngineLl, MessagesOfEverySizeArriveAcrossFlagWrapsAndLaunches) {
  std::mt19937_64 rng(0x11);
  for (int round = 0; round < 2; ++round) {
    SCOPED_TRACE("launch " + std::to_string(round));
    // Sizes from one element to several slices, ending on partial slices and whole ones.
    std::vector<Message> run;
    size_t at = 0;
    for (int i = 0; i < 60; ++i) {
      const size_t count = 1 + rng() % (3 * kSliceElems);
      run.push_back({at, count, rng() % 2 == 0});
      at += count;
    }
    std::vector<uint32_t> sent(at), own(at), expect(at);
    for (size_t i = 0; i < at; ++i) {
      sent[i] = static_cast<uint32_t>(rng());
      own[i] = static_cast<uint32_t>(rng());
    }
    std::vector<engine::Instruction> sends, recvs;
    for (const Message& m : run) {
      sends.push_back(step(engine::StepOp::kSend, m));
      recvs.push_back(step(m.reduce ? engine::StepOp::kRecvReduceCopy : engine::StepOp::kRecv, m));
      for (size_t i = m.offset; i < m.offset + m.count; ++i) {
        expect[i] = m.reduce ? sent[i] + own[i] : sent[i];
      }
    }
    const engine::DeviceChannel* sender = upload(sends, true);
    const engine::DeviceChannel* receiver = upload(recvs, false);
    ASSERT_TRUE(sender && receiver);
    void* dsent = deviceCopy(sent);
    void* down = deviceCopy(own);
    void* dout = deviceCopy(std::vector<uint32_t>(at, 0xdeadbeef));
    const uint32_t fault = launch({sender, receiver}, {{dsent, nullptr}, {down, dout}},
                                  uint64_t{30} * 1000 * 1000 * 1000);
    ASSERT_EQ(fault, 0u) << "fault " << fault << " in block " << fault_->block << " (peer "
                         << fault_->peer << ")";
    const std::vector<uint32_t> got = fetch(dout, at);
    size_t wrong = 0;
    for (size_t i = 0; i < at; ++i) wrong += got[i] != expect[i];
    EXPECT_EQ(wrong, 0u) << "of " << at << " elements";
  }
}

TEST_F(EngineLl, AWaitForAMessageNobodySendsEndsAtTheDeadlineNamingThePeer) {
  const Message m{0, 10, false};
  const engine::DeviceChannel* receiver = upload({step(engine::StepOp::kRecv, m)}, false);
  ASSERT_NE(receiver, nullptr);
  void* dout = deviceCopy(std::vector<uint32_t>(m.count, 0));
  const uint32_t fault = launch({receiver}, {{nullptr, dout}}, uint64_t{50} * 1000 * 1000);
  EXPECT_EQ(fault, static_cast<uint32_t>(engine::FaultCode::kTimedOut));
  EXPECT_EQ(fault_->peer, 0);
}

TEST_F(EngineLl, AMessageOfAnotherSizeIsASliceMismatchWithBothSizes) {
  const engine::DeviceChannel* sender = upload({step(engine::StepOp::kSend, {0, 10, false})}, true);
  const engine::DeviceChannel* receiver =
      upload({step(engine::StepOp::kRecv, {0, 12, false})}, false);
  ASSERT_TRUE(sender && receiver);
  void* din = deviceCopy(std::vector<uint32_t>(12, 7));
  void* dout = deviceCopy(std::vector<uint32_t>(12, 0));
  const uint32_t fault = launch({sender, receiver}, {{din, nullptr}, {nullptr, dout}},
                                uint64_t{5} * 1000 * 1000 * 1000);
  EXPECT_EQ(fault, static_cast<uint32_t>(engine::FaultCode::kSliceMismatch));
  EXPECT_EQ(fault_->got, engine::sliceWord(10 * sizeof(uint32_t), true));
  EXPECT_EQ(fault_->expected, engine::sliceWord(12 * sizeof(uint32_t), true));
}

}  // namespace
}  // namespace braid
