// The table of host loops, one HostOp per (type, op, instruction set), and
// the byte copies the executors use.
//
// Every (type, op) pair has a portable, an AVX2 and an AVX-512 build of its
// loops (host_loops.h); the 16- and 8-bit float types have hand-written
// conversions instead in the AVX2+F16C build (eight lanes, host_narrow_simd.h)
// and the AVX-512 one (bfloat16 32 elements a step, host_narrow_avx512.h; fp8
// 64, with VBMI, host_fp8_avx512.h; float16 keeps the eight-lane loops there).
// The best the CPU supports is decided once per process.
#include "kernels/host_reduce.h"

#if defined(__x86_64__)
#include <cpuid.h>
#include <emmintrin.h>
#endif

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>

#include "kernels/dispatch.h"
#include "kernels/host_fp8_avx512.h"
#include "kernels/host_loops.h"
#include "kernels/host_narrow_avx512.h"
#include "kernels/host_narrow_simd.h"

namespace braid::kernels {
namespace {

struct CpuFeatures {
  bool avx2 = false;
  bool f16c = false;
  bool avx512 = false;  ///< F, BW and VL, with the OS saving the registers
  bool avx512vbmi = false;
};

CpuFeatures detectCpu() {
  CpuFeatures cpu;
#if defined(__x86_64__)
  cpu.avx2 = __builtin_cpu_supports("avx2");
  // F16C from CPUID leaf 1 (ECX bit 29) rather than __builtin_cpu_supports("f16c"), which
  // clang before 16 does not know (the fuzz build, scripts/fuzz, uses Debian's clang 14).
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  cpu.f16c = cpu.avx2 && __get_cpuid(1, &eax, &ebx, &ecx, &edx) != 0 && (ecx & bit_F16C) != 0;
  // __builtin_cpu_supports reports AVX-512 only where the OS saves the zmm
  // and mask registers (XCR0), so a kernel without that support is safe.
  cpu.avx512 = cpu.f16c && __builtin_cpu_supports("avx512f") &&
               __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl");
  cpu.avx512vbmi = cpu.avx512 && __builtin_cpu_supports("avx512vbmi");
#endif
  return cpu;
}

const CpuFeatures& cpuFeatures() {
  static const CpuFeatures cpu = detectCpu();
  return cpu;
}

HostIsa resolve(HostIsa isa) {
  if (isa != HostIsa::kBest) return isa;
  const CpuFeatures& cpu = cpuFeatures();
  if (cpu.avx512) return HostIsa::kAvx512;
  if (cpu.f16c) return HostIsa::kAvx2F16c;
  return cpu.avx2 ? HostIsa::kAvx2 : HostIsa::kPortable;
}

HostOp lookup(DataType type, RedOp op, const OpArgs& args, HostIsa isa) {
  return dispatchTypeAndOp(type, op, HostOp{}, [&](auto t, auto o) {
    using T = typename decltype(t)::Type;
    using O = decltype(o);
#if defined(__x86_64__)
    // float16's 256-bit F16C loops outran 512-bit ones (host_narrow_avx512.h).
    // fp8's AVX-512 loops need VBMI, and run the AVX2+F16C ones without it; so
    // do fp8 max and min, which compare codes faster in 256-bit registers.
    if constexpr (std::is_same<T, Bfloat16>::value) {
      if (isa == HostIsa::kAvx512) return loops::makeHostOp<loops::NarrowAvx512Loops, T, O>(args);
    }
    if constexpr (std::is_same<T, Float8e4m3>::value || std::is_same<T, Float8e5m2>::value) {
      constexpr bool kOnCodes = loops::simd::CodeOrder<T, typename O::template Func<T>>::kOn;
      if (!kOnCodes && isa == HostIsa::kAvx512 && cpuFeatures().avx512vbmi) {
        return loops::makeHostOp<loops::Fp8Avx512Loops, T, O>(args);
      }
    }
    if constexpr (kIsNarrowFloat<T>) {
      if (isa == HostIsa::kAvx2F16c || isa == HostIsa::kAvx512) {
        return loops::makeHostOp<loops::NarrowSimdLoops, T, O>(args);
      }
    }
    if (isa == HostIsa::kAvx512) return loops::makeHostOp<loops::Avx512Loops, T, O>(args);
    if (isa != HostIsa::kPortable) return loops::makeHostOp<loops::Avx2Loops, T, O>(args);
#endif
    return loops::makeHostOp<loops::PortableLoops, T, O>(args);
  });
}

}  // namespace

bool hostIsaSupported(HostIsa isa) {
  switch (isa) {
    case HostIsa::kBest:
    case HostIsa::kPortable:
      return true;
    case HostIsa::kAvx2:
      return cpuFeatures().avx2;
    case HostIsa::kAvx2F16c:
      return cpuFeatures().f16c;
    case HostIsa::kAvx512:
      return cpuFeatures().avx512;
  }
  return false;
}

const char* hostIsaName(HostIsa isa) {
  switch (isa) {
    case HostIsa::kBest:
      return "best";
    case HostIsa::kPortable:
      return "portable";
    case HostIsa::kAvx2:
      return "avx2";
    case HostIsa::kAvx2F16c:
      return "avx2+f16c";
    case HostIsa::kAvx512:
      return "avx512";
  }
  return "unknown";
}

Result<HostOp> hostOp(DataType type, RedOp op, const OpArgs& args, HostIsa isa) {
  const int t = static_cast<int>(type);
  if (t < 0 || t >= kNumDataTypes) return invalidArgument("unknown datatype " + std::to_string(t));
  const int o = static_cast<int>(op);
  if (o < 0 || o > static_cast<int>(RedOp::kPreMulSum)) {
    return invalidArgument("unknown reduction op " + std::to_string(o));
  }
  if (op == RedOp::kAvg && args.nranks < 1) {
    return invalidArgument("avg needs a rank count of at least 1, got " +
                           std::to_string(args.nranks));
  }
  if (!hostIsaSupported(isa)) {
    return invalidUsage("this CPU cannot run the requested build of the reduction loops");
  }
  HostOp fns = lookup(type, op, args, resolve(isa));
  if (fns.reduce == nullptr) {
    return internalError(std::string("no host loops for ") + dataTypeName(type) + " " +
                         redOpName(op));
  }
  // Only premulsum has a pre; its loaded values combine by plain sum.
  fns.combine =
      op == RedOp::kPreMulSum ? lookup(type, RedOp::kSum, args, resolve(isa)).reduce : fns.reduce;
  return fns;
}

void HostOp::loadInput(void* dst, const void* in, size_t count, size_t elemBytes) const {
  if (load != nullptr) {
    load(args, dst, in, count);
  } else if (dst != in) {
    copyBytes(dst, in, count * elemBytes);
  }
}

namespace {

// 8-byte words while they last (vectorized by the compiler), then bytes.
inline void copyWords(unsigned char* d, const unsigned char* s, size_t bytes) {
  const size_t words = bytes / 8;
  for (size_t i = 0; i < words; ++i) {
    uint64_t w;
    memcpy(&w, s + 8 * i, 8);
    memcpy(d + 8 * i, &w, 8);
  }
  for (size_t i = words * 8; i < bytes; ++i) d[i] = s[i];
}

#if defined(__x86_64__)
__attribute__((target("avx2"))) void copyWordsAvx2(unsigned char* d, const unsigned char* s,
                                                   size_t bytes) {
  copyWords(d, s, bytes);
}
#endif

using CopyFn = void (*)(unsigned char*, const unsigned char*, size_t);

CopyFn pickCopy() {
#if defined(__x86_64__)
  if (cpuFeatures().avx2) return copyWordsAvx2;
#endif
  return copyWords;
}

// Non-temporal stores of 64 bytes a turn where dst is 16-byte aligned, plain byte stores for the
// head up to that alignment and for the tail: inline, so a piece costs no call per destination.
inline void streamInline(unsigned char* d, const unsigned char* s, size_t bytes) {
#if defined(__SSE2__)
  const size_t head = std::min(bytes, (16 - reinterpret_cast<uintptr_t>(d) % 16) % 16);
  for (size_t k = 0; k < head; ++k) d[k] = s[k];
  size_t i = head;
  for (; i + 64 <= bytes; i += 64) {
    const auto* from = reinterpret_cast<const __m128i*>(s + i);
    auto* to = reinterpret_cast<__m128i*>(d + i);
    const __m128i a = _mm_loadu_si128(from);
    const __m128i b = _mm_loadu_si128(from + 1);
    const __m128i c = _mm_loadu_si128(from + 2);
    const __m128i e = _mm_loadu_si128(from + 3);
    _mm_stream_si128(to, a);
    _mm_stream_si128(to + 1, b);
    _mm_stream_si128(to + 2, c);
    _mm_stream_si128(to + 3, e);
  }
  for (; i < bytes; ++i) d[i] = s[i];
#else
  copyBytes(d, s, bytes);
#endif
}

}  // namespace

void copyBytes(void* dst, const void* src, size_t bytes) {
  static const CopyFn copy = pickCopy();
  copy(static_cast<unsigned char*>(dst), static_cast<const unsigned char*>(src), bytes);
}

void streamToEach(char* const* dsts, int ndsts, size_t offset, const void* src, size_t bytes) {
  const auto* s = static_cast<const unsigned char*>(src);
  for (int k = 0; k < ndsts; ++k) {
    streamInline(reinterpret_cast<unsigned char*>(dsts[k] + offset), s, bytes);
  }
}

void storeFence() {
#if defined(__SSE2__)
  _mm_sfence();
#else
  std::atomic_thread_fence(std::memory_order_release);
#endif
}

void streamBytes(void* dst, const void* src, size_t bytes) {
  streamInline(static_cast<unsigned char*>(dst), static_cast<const unsigned char*>(src), bytes);
  storeFence();
}

void copyTwice(void* dst1, void* dst2, const void* src, size_t bytes) {
  // 8-byte words while they last (vectorized by the compiler), then bytes.
  const size_t words = bytes / 8;
  auto* d1 = static_cast<unsigned char*>(dst1);
  auto* d2 = static_cast<unsigned char*>(dst2);
  const auto* s = static_cast<const unsigned char*>(src);
  for (size_t i = 0; i < words; ++i) {
    uint64_t w;
    memcpy(&w, s + 8 * i, 8);
    memcpy(d1 + 8 * i, &w, 8);
    memcpy(d2 + 8 * i, &w, 8);
  }
  for (size_t i = words * 8; i < bytes; ++i) d1[i] = d2[i] = s[i];
}

}  // namespace braid::kernels
