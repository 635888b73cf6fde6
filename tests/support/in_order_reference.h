// The reference the board tests (one-shot, zero-copy) check every output against: the fold of
// every rank's loaded input in the in-order tree's order (algo::foldInOrder), computed on whole
// buffers, with avg's finish applied. Integer sums, whose value cannot depend on the order, are
// also checked against a plain loop, so a reference that skipped or repeated a rank would fail
// on its own.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "algo/tree.h"
#include "braid/types.h"
#include "kernels/float_types.h"
#include "kernels/host_reduce.h"

namespace braid::testing {

/// splitmix64's finalizer: independent seeds for (scenario, call, rank).
inline uint64_t mixSeed(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

/// `count` values of `type` over 12 binary orders of magnitude, so that float sums show the
/// order of their terms; integers get random bits.
inline std::vector<unsigned char> spreadInput(DataType type, size_t count, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> mantissa(-1.0f, 1.0f);
  std::uniform_int_distribution<int> exponent(-6, 6);
  const size_t elem = dataTypeSize(type);
  std::vector<unsigned char> bytes(count * elem);
  for (size_t i = 0; i < count; ++i) {
    const float f = std::ldexp(mantissa(rng), exponent(rng));
    if (type == DataType::kFloat32) {
      memcpy(&bytes[i * 4], &f, 4);
    } else if (type == DataType::kFloat64) {
      const double d = f;
      memcpy(&bytes[i * 8], &d, 8);
    } else if (type == DataType::kBfloat16) {
      const uint16_t bits = kernels::Bfloat16::fromFloat(f).bits;
      memcpy(&bytes[i * 2], &bits, 2);
    } else if (type == DataType::kFloat16) {
      const uint16_t bits = kernels::Float16::fromFloat(f).bits;
      memcpy(&bytes[i * 2], &bits, 2);
    } else {
      const uint64_t bits = rng();
      memcpy(&bytes[i * elem], &bits, elem);
    }
  }
  return bytes;
}

/// The in-order fold of `loaded` (one buffer of `count` elements per rank) with op.combine,
/// then op's finish.
inline std::vector<unsigned char> inOrderReference(
    const std::vector<std::vector<unsigned char>>& loaded, const kernels::HostOp& op, DataType type,
    RedOp redOp, size_t count) {
  using Bytes = std::vector<unsigned char>;
  const int nranks = static_cast<int>(loaded.size());
  Bytes result = algo::foldInOrder(
      nranks, [&](int r) { return loaded[r]; },
      [&](const Bytes& a, const Bytes& b) {
        Bytes sum(a.size());
        op.combine(op.args, sum.data(), a.data(), b.data(), count);
        return sum;
      });
  op.finishOutput(result.data(), count);
  if (type == DataType::kInt32 && redOp == RedOp::kSum) {
    for (size_t i = 0; i < count; ++i) {
      uint32_t expected = 0;
      for (int r = 0; r < nranks; ++r) {
        uint32_t x;
        memcpy(&x, &loaded[r][i * 4], 4);
        expected += x;
      }
      uint32_t got;
      memcpy(&got, &result[i * 4], 4);
      if (got != expected) {
        ADD_FAILURE() << "foldInOrder's int32 sum of " << nranks << " ranks is wrong at " << i;
        break;
      }
    }
  }
  return result;
}

}  // namespace braid::testing
