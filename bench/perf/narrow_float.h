// Conversions between double and NCCL's floating types narrower than float:
// float16 (IEEE binary16), bfloat16, and the OCP fp8 formats e4m3 and e5m2.
//
// braid-perf writes inputs and computes expected results in these types
// itself. It has its own small conversion rather than braid's kernels: a
// benchmark that checks a library should not borrow the arithmetic it checks,
// and braid-perf uses only the public C API.
#pragma once

#include <cstdint>

namespace braid::perf {

enum class NarrowFormat { kFloat16, kBfloat16, kFloat8e4m3, kFloat8e5m2 };

/// The bits of the `format` value nearest to x, rounding to nearest with ties
/// to even (subnormals included). float16 and bfloat16 overflow to infinity;
/// the fp8 formats saturate to their largest finite value, infinities
/// included, as NCCL's conversions with __NV_SATFINITE do. NaN stays NaN.
uint32_t narrowFromDouble(double x, NarrowFormat format);

/// The exact value of `bits` in `format` (NaN for its NaN codes).
double narrowToDouble(uint32_t bits, NarrowFormat format);

}  // namespace braid::perf
