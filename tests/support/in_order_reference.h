// The reference the board tests (one-shot, zero-copy) check every output against: the fold of
// every rank's loaded input in the in-order tree's order (algo::foldInOrder), computed on whole
// buffers, with avg's finish applied. Integer sums, whose value cannot depend on the order, are
// also checked against a plain loop, so a reference that skipped or repeated a rank would fail
// on its own.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
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

/// `count` values of `type` over 13 binary orders of magnitude, so that float sums show the
/// order of their terms; integers get random bits. One draw of the generator per element (per
/// eight bytes for integers): the board tests make tens of MiB of these per call, and the
/// distributions' own arithmetic was most of their time under the sanitizers.
inline std::vector<unsigned char> spreadInput(DataType type, size_t count, uint64_t seed) {
  std::mt19937_64 rng(seed);
  const size_t elem = dataTypeSize(type);
  std::vector<unsigned char> bytes(count * elem);
  const bool floating = type == DataType::kFloat32 || type == DataType::kFloat64 ||
                        type == DataType::kBfloat16 || type == DataType::kFloat16;
  if (!floating) {
    for (size_t at = 0; at < bytes.size(); at += 8) {
      const uint64_t bits = rng();
      memcpy(&bytes[at], &bits, std::min<size_t>(8, bytes.size() - at));
    }
    return bytes;
  }
  // 2^-6 .. 2^6, exact scalings of a float.
  constexpr float kScales[] = {1.0f / 64, 1.0f / 32, 1.0f / 16, 1.0f / 8, 1.0f / 4, 1.0f / 2, 1.0f,
                               2.0f,      4.0f,      8.0f,      16.0f,    32.0f,    64.0f};
  for (size_t i = 0; i < count; ++i) {
    const uint64_t bits = rng();
    // A mantissa in [-1, 1) from 24 bits, a scale from the next 32.
    const float mantissa =
        static_cast<float>(static_cast<int32_t>(bits & 0xffffff) - 0x800000) / 8388608.0f;
    const float f = mantissa * kScales[(bits >> 24) % 13];
    if (type == DataType::kFloat32) {
      memcpy(&bytes[i * 4], &f, 4);
    } else if (type == DataType::kFloat64) {
      const double d = f;
      memcpy(&bytes[i * 8], &d, 8);
    } else if (type == DataType::kBfloat16) {
      const uint16_t b = kernels::Bfloat16::fromFloat(f).bits;
      memcpy(&bytes[i * 2], &b, 2);
    } else {
      const uint16_t b = kernels::Float16::fromFloat(f).bits;
      memcpy(&bytes[i * 2], &b, 2);
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

/// The fold of every rank's input (`inputs`, `count` elements of `type` each) loaded by `redOp`
/// with `args`, from rank 0 up, then its finish: what the symmetric kernels give every rank.
inline std::vector<unsigned char> rankOrderReference(
    DataType type, RedOp redOp, const kernels::OpArgs& args,
    const std::vector<std::vector<unsigned char>>& inputs, size_t count) {
  const Result<kernels::HostOp> h = kernels::hostOp(type, redOp, args);
  EXPECT_TRUE(h.ok());
  if (!h.ok()) return {};
  std::vector<unsigned char> acc(count * dataTypeSize(type));
  h.value().loadInput(acc.data(), inputs[0].data(), count, dataTypeSize(type));
  for (size_t r = 1; r < inputs.size(); ++r) {
    std::vector<unsigned char> loaded(acc.size());
    h.value().loadInput(loaded.data(), inputs[r].data(), count, dataTypeSize(type));
    h.value().combine(h.value().args, acc.data(), acc.data(), loaded.data(), count);
  }
  h.value().finishOutput(acc.data(), count);
  return acc;
}

}  // namespace braid::testing
