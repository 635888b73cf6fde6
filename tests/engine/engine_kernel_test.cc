// The engine's kernels (kernels/engine_launch.h) give the host loops' bits for every (datatype,
// op) pair: a receive-reduce-copy of a FIFO slot with the rank's input, then the operator's
// finish, launched through the CUDA seam on random inputs that include every special value of
// the 16- and 8-bit float types (premulsum's scalar applied, avg divided by 3). Also copies with
// every offset within a pack, which the loops take in the widest words the offset allows, the
// unaligned head, the packs and the tail. The one allowed difference: NaN payloads, since a GPU
// float operation returns its canonical NaN.
//
// Built twice: braid_engine_emulated_tests on an emulated GPU (label emulated-gpu), and, with
// CUDA, braid_gpu_tests on the real one (label gpu; skipped without a device), where these are
// the CUDA kernels' results against the host's.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include "exec/device_program.h"
#include "gpu/runtime.h"
#include "kernels/dispatch.h"
#include "kernels/engine/interpreter.h"
#include "kernels/engine/launch.h"
#include "kernels/engine_launch.h"
#include "kernels/float_types.h"
#include "kernels/host_reduce.h"
#include "support/engine_launch.h"
#include "support/uniform_real.h"

namespace braid {
namespace {

namespace engine = kernels::engine;

#if defined(BRAID_TEST_REAL_GPU)
constexpr const char* kWhere = "CUDA device";
gpu::Runtime& testRuntime() { return gpu::runtime(); }
#else
constexpr const char* kWhere = "emulated GPU";
gpu::Runtime& testRuntime() {
  static const std::unique_ptr<gpu::Runtime> emulated = gpu::makeEmulatedRuntime(1);
  return *emulated;
}
#endif

template <typename T>
bool isNan(T x) {
  if constexpr (kernels::kIsNarrowFloat<T>) {
    return std::isnan(x.toFloat());
  } else if constexpr (std::is_floating_point<T>::value) {
    return std::isnan(x);
  } else {
    return false;
  }
}

template <typename T>
T randomElement(std::mt19937_64& rng) {
  if constexpr (kernels::kIsNarrowFloat<T>) {
    return T{static_cast<decltype(T{}.bits)>(rng())};  // random bits: every class appears
  } else if constexpr (std::is_floating_point<T>::value) {
    if (rng() % 32 == 0) return std::numeric_limits<T>::infinity();
    return static_cast<T>(braid::testing::uniformReal(rng, -1e3, 1e3));
  } else {
    return static_cast<T>(rng());
  }
}

/// Elements of `device` that differ from `host`, NaN agreeing with NaN.
template <typename T>
size_t mismatches(const T* device, const T* host, size_t n) {
  size_t bad = 0;
  for (size_t i = 0; i < n; ++i) {
    if (memcmp(&device[i], &host[i], sizeof(T)) == 0) continue;
    if (!(isNan(device[i]) && isNan(host[i]))) ++bad;
  }
  return bad;
}

/// A GPU of the test's runtime with a stream, the abort word and fault record of a launch, and
/// a FIFO (kernels/engine/fifo.h) whose first slot the test fills as a peer would.
class EngineKernel : public ::testing::Test {
 protected:
  static constexpr size_t kSlotBytes = 64 << 10;
  static constexpr size_t kPage = 4096;

  void SetUp() override {
    const bool emulatedBinary = std::string(kWhere) == "emulated GPU";
    if (rt().deviceCount() == 0 || rt().emulated() != emulatedBinary) {
      if (emulatedBinary) {  // the test made the emulated runtime itself: no device is its failure
        FAIL() << "the emulated GPU did not come up (" << rt().describe() << ")";
      }
      GTEST_SKIP() << "no " << kWhere << " here (" << rt().describe() << ")";
    }
    ASSERT_TRUE(rt().setDevice(0).ok());
    stream_ = take(rt().streamCreate());
    abort_ = static_cast<uint32_t*>(take(rt().hostAlloc(sizeof(uint32_t))));
    fault_ = static_cast<engine::FaultRecord*>(take(rt().hostAlloc(sizeof(engine::FaultRecord))));
    fifo_ = take(rt().deviceAlloc(kPage + kSlotBytes));
    cursor_ = take(rt().deviceAlloc(sizeof(engine::FifoCursor)));
  }

  void TearDown() override {
    if (stream_ == nullptr) return;
    (void)rt().streamSynchronize(stream_);
    for (void* p : device_) (void)rt().deviceFree(p);
    (void)rt().deviceFree(fifo_);
    (void)rt().deviceFree(cursor_);
    (void)rt().hostFree(abort_);
    (void)rt().hostFree(fault_);
    (void)rt().streamDestroy(stream_);
  }

  static gpu::Runtime& rt() { return testRuntime(); }

  template <typename T>
  T take(Result<T> r) {
    EXPECT_TRUE(r.ok()) << r.status().message();
    return r.ok() ? r.value() : T{};
  }

  void* deviceCopy(const void* host, size_t bytes) {
    void* d = take(rt().deviceAlloc(bytes));
    device_.push_back(d);
    EXPECT_TRUE(rt().copy(d, host, bytes, stream_).ok());
    EXPECT_TRUE(rt().streamSynchronize(stream_).ok());
    return d;
  }

  /// Puts `bytes` at `data` into the FIFO's first slot, posted as one whole message.
  void postSlot(const void* data, size_t bytes) {
    engine::FifoCounters counters{};
    counters.tail = 1;
    counters.bytes[0] = engine::sliceWord(bytes, true);
    ASSERT_TRUE(rt().fill(fifo_, 0, kPage, stream_).ok());
    ASSERT_TRUE(rt().copy(fifo_, &counters, sizeof counters, stream_).ok());
    ASSERT_TRUE(rt().copy(static_cast<char*>(fifo_) + kPage, data, bytes, stream_).ok());
    ASSERT_TRUE(rt().fill(cursor_, 0, sizeof(engine::FifoCursor), stream_).ok());
    ASSERT_TRUE(rt().streamSynchronize(stream_).ok());
  }

  /// Runs one channel of `instrs` (receiving on the FIFO) as one call of a launch of the
  /// kernel for (type, op), and waits for it.
  void launch(const std::vector<engine::Instruction>& instrs, DataType type, RedOp op,
              const kernels::OpArgs& args, const void* in, void* out, size_t elemBytes,
              size_t sliceElems) {
    exec::Program program;
    program.sliceElems = sliceElems;
    exec::ChannelProgram ch;
    ch.instrs = instrs;
    ch.recvPeers = {1};
    program.channels.push_back(ch);
    exec::ChannelPorts ports;
    engine::DevicePort port{};
    port.fifo.counters = static_cast<engine::FifoCounters*>(fifo_);
    port.fifo.slots = static_cast<char*>(fifo_) + kPage;
    port.fifo.stride = kSlotBytes;
    port.fifo.slotBytes = kSlotBytes;
    port.cursor = static_cast<engine::FifoCursor*>(cursor_);
    port.peer = 1;
    ports.recv.push_back(port);
    auto uploaded = exec::DeviceProgram::upload(rt(), program, {ports}, stream_);
    ASSERT_TRUE(uploaded.ok()) << uploaded.status().message();
    engine::EngineArgs a{};
    engine::EngineCall& call = a.calls[0];
    call.channels = uploaded.value().channels();
    call.nchannels = 1;
    call.input = in;
    call.output = out;
    call.sliceElems = sliceElems;
    call.elemBytes = static_cast<uint32_t>(elemBytes);
    call.type = static_cast<uint8_t>(type);
    call.op = static_cast<uint8_t>(op);
    call.args = args;
    a.ncalls = 1;
    a.type = call.type;
    a.op = call.op;
    a.abortFlag = abort_;
    a.fault = fault_;
    a.timeoutNs = uint64_t{10} * 1000 * 1000 * 1000;
    memset(fault_, 0, sizeof *fault_);
    ASSERT_TRUE(testing::launchEngine(rt(), a, 1, stream_).ok());
    ASSERT_TRUE(rt().streamSynchronize(stream_).ok());
    EXPECT_EQ(engine::loadAcquire(&fault_->code), 0u)
        << "the kernel stopped with fault " << fault_->code << " (peer " << fault_->peer << ")";
  }

  /// recvReduceCopy of `n` elements of T, then the finish, against the host loops. The input
  /// sits `inShift` elements past the start of its allocation (the slot and the output at it).
  template <typename T>
  void checkReduce(DataType type, RedOp op, size_t n, uint64_t seed, size_t inShift = 0) {
    std::mt19937_64 rng(seed);
    std::vector<T> recv(n), in(n);
    for (auto& x : recv) x = randomElement<T>(rng);
    for (auto& x : in) x = randomElement<T>(rng);
    kernels::OpArgs args;
    args.nranks = 3;
    const T scalar = randomElement<T>(rng);
    args.setScalar(&scalar, sizeof scalar);
    postSlot(recv.data(), n * sizeof(T));
    std::vector<T> shifted(inShift);
    shifted.insert(shifted.end(), in.begin(), in.end());
    void* din = static_cast<char*>(deviceCopy(shifted.data(), shifted.size() * sizeof(T))) +
                inShift * sizeof(T);
    std::vector<T> garbage(n);
    for (auto& x : garbage) x = randomElement<T>(rng);
    void* dout = deviceCopy(garbage.data(), n * sizeof(T));
    engine::Instruction step{};
    step.kind = engine::InstrKind::kStep;
    step.op = engine::StepOp::kRecvReduceCopy;
    step.count = n;
    step.recvPort = 0;
    step.sendPort = engine::kNoPort;
    engine::Instruction finish = step;
    finish.kind = engine::InstrKind::kFinish;
    finish.recvPort = engine::kNoPort;
    launch({step, finish}, type, op, args, din, dout, sizeof(T), n);
    std::vector<T> got(n);
    ASSERT_TRUE(rt().copy(got.data(), dout, n * sizeof(T), stream_).ok());
    ASSERT_TRUE(rt().streamSynchronize(stream_).ok());
    auto host = kernels::hostOp(type, op, args);
    ASSERT_TRUE(host.ok()) << host.status().message();
    std::vector<T> want(n);
    host.value().reduce(args, want.data(), recv.data(), in.data(), n);
    host.value().finishOutput(want.data(), n);
    EXPECT_EQ(mismatches(got.data(), want.data(), n), 0u)
        << dataTypeName(type) << " op " << static_cast<int>(op) << ", " << n << " elements";
  }

  gpu::Stream stream_ = nullptr;
  uint32_t* abort_ = nullptr;
  engine::FaultRecord* fault_ = nullptr;
  void* fifo_ = nullptr;
  void* cursor_ = nullptr;
  std::vector<void*> device_;
};

// An input one element past a pack boundary while the slot and the output sit on one: the
// pointers disagree modulo 16 (for every type narrower than a pack), so the loops take their
// unrolled element turns (elementwise.h) instead of packs, and must compute the same bits.
TEST_F(EngineKernel, ReductionsOfPointersAtDifferentOffsetsWithinAPackMatchTheHostLoops) {
  for (int t = 0; t < kNumDataTypes; ++t) {
    for (RedOp op : {RedOp::kSum, RedOp::kMax, RedOp::kPreMulSum}) {
      const auto type = static_cast<DataType>(t);
      SCOPED_TRACE(std::string(dataTypeName(type)) + " op " + std::to_string(static_cast<int>(op)));
      kernels::dispatchType(type, 0, [&](auto tag) {
        using T = typename decltype(tag)::Type;
        checkReduce<T>(type, op, (kSlotBytes / sizeof(T)) - 5, 77 * t + static_cast<int>(op), 1);
        return 0;
      });
      if (HasFatalFailure()) return;
    }
  }
}

TEST_F(EngineKernel, EveryTypeAndOpMatchesTheHostLoopsBitForBit) {
  for (int t = 0; t < kNumDataTypes; ++t) {
    for (RedOp op :
         {RedOp::kSum, RedOp::kProd, RedOp::kMax, RedOp::kMin, RedOp::kAvg, RedOp::kPreMulSum}) {
      const auto type = static_cast<DataType>(t);
      SCOPED_TRACE(std::string(dataTypeName(type)) + " op " + std::to_string(static_cast<int>(op)));
      kernels::dispatchType(type, 0, [&](auto tag) {
        using T = typename decltype(tag)::Type;
        // A count that is no multiple of any pack, so the tail runs too.
        const size_t n = (kSlotBytes / sizeof(T)) - 5;
        checkReduce<T>(type, op, n, 1000 * t + static_cast<int>(op));
        return 0;
      });
      if (HasFatalFailure()) return;
    }
  }
}

TEST_F(EngineKernel, CopiesAtEveryOffsetWithinAPack) {
  // kRecv copies the slot to the output at `offset` bytes into a buffer: every offset within 16
  // bytes, so the packs run at 0, 8-byte words at 8, 4-byte words at 4 and 12, 2-byte words at
  // the other even offsets and bytes at the odd ones (elementwise.h copyBytes); lengths around
  // pack multiples, and one of several turns of every thread.
  std::mt19937_64 rng(7);
  for (size_t offset = 0; offset < 16; ++offset) {
    for (size_t bytes :
         {size_t{1}, size_t{15}, size_t{16}, size_t{17}, size_t{4099}, kSlotBytes - 3}) {
      std::vector<unsigned char> data(bytes);
      for (auto& b : data) b = static_cast<unsigned char>(rng());
      postSlot(data.data(), bytes);
      std::vector<unsigned char> before(bytes + 32, 0xa5);
      void* dout = deviceCopy(before.data(), before.size());
      engine::Instruction recv{};
      recv.kind = engine::InstrKind::kStep;
      recv.op = engine::StepOp::kRecv;
      recv.outOffset = offset;
      recv.count = bytes;
      recv.recvPort = 0;
      recv.sendPort = engine::kNoPort;
      launch({recv}, DataType::kInt8, RedOp::kSum, kernels::OpArgs{}, nullptr, dout, 1, bytes);
      std::vector<unsigned char> got(before.size());
      ASSERT_TRUE(rt().copy(got.data(), dout, got.size(), stream_).ok());
      ASSERT_TRUE(rt().streamSynchronize(stream_).ok());
      std::vector<unsigned char> want = before;
      memcpy(want.data() + offset, data.data(), bytes);
      EXPECT_EQ(got, want) << "offset " << offset << ", " << bytes << " bytes";
    }
  }
}

}  // namespace
}  // namespace braid
