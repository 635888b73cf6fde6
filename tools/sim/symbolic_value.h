// What the symbolic checker keeps instead of data: for each run of buffer
// positions, which element they hold and whose contributions are in it.
//
// Contributions. Every rank r draws two random keys k1[r], k2[r] modulo the
// prime p = 2^61 - 1. A value that is the reduction of the contributions of
// a multiset M of ranks is stored as (|M|, sum of k1 over M, sum of k2 over
// M) mod p: 20 bytes, whatever the rank count. Reducing two values adds
// them. Two multisets M != E give the same sums only if sum_r (m_r - e_r)
// k[r] = 0 mod p, a nonzero linear form in the keys (the multiplicity
// differences are far below p), which random keys satisfy with probability
// 1/p (Schwartz-Zippel); with two independent keys, 1/p^2 < 2^-121 per
// comparison. So equal digests prove, with overwhelming probability, that a
// value holds every expected contribution exactly once; the count also says
// plainly when one was counted twice or missed.
//
// Provenance. A Piece covers `len` consecutive positions and says that
// position i holds element src + i of each contribution: copies move the
// src along, and reducing two pieces whose src differ (element 7 of one
// rank with element 9 of another) is an error the checker reports at once.
// A buffer never written holds `unwritten` contributions.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace braid::sim {

inline constexpr uint64_t kDigestPrime = (uint64_t(1) << 61) - 1;

inline uint64_t addModPrime(uint64_t a, uint64_t b) {
  uint64_t s = a + b;  // both < 2^61, no overflow
  return s >= kDigestPrime ? s - kDigestPrime : s;
}

struct Contributions {
  static constexpr uint32_t kUnwritten = UINT32_MAX;
  uint32_t count = kUnwritten;
  uint64_t h1 = 0;
  uint64_t h2 = 0;

  bool unwritten() const { return count == kUnwritten; }
};

inline bool operator==(const Contributions& a, const Contributions& b) {
  return a.count == b.count && a.h1 == b.h1 && a.h2 == b.h2;
}
inline bool operator!=(const Contributions& a, const Contributions& b) { return !(a == b); }

/// The reduction of two values: the union of their multisets. Garbage in,
/// garbage out: anything reduced with an unwritten value is unwritten.
inline Contributions reduceContributions(const Contributions& a, const Contributions& b) {
  if (a.unwritten() || b.unwritten()) return Contributions{};
  return {a.count + b.count, addModPrime(a.h1, b.h1), addModPrime(a.h2, b.h2)};
}

/// Every rank's keys, drawn from `seed`.
class RankKeys {
 public:
  RankKeys(int nranks, uint64_t seed);
  /// The contribution of `rank` alone.
  Contributions single(int rank) const { return {1, k1_[rank], k2_[rank]}; }
  /// Every rank's contribution once.
  const Contributions& all() const { return all_; }

 private:
  std::vector<uint64_t> k1_;
  std::vector<uint64_t> k2_;
  Contributions all_;
};

/// `len` positions holding elements src, src+1, ... of `who`.
struct Piece {
  uint64_t len = 0;
  uint64_t src = 0;
  Contributions who;
};

/// Whether `b` continues `a` (so the two can be one piece).
inline bool continues(const Piece& a, const Piece& b) {
  if (a.who != b.who) return false;
  return a.who.unwritten() || a.src + a.len == b.src;
}

/// The value of a run of positions: pieces in order, adjacent ones merged.
/// Almost every slice is one piece, so two live inline: a FIFO slot then
/// holds its value without a separate allocation to miss in the cache.
class Value {
 public:
  Value() = default;
  Value(const Value& other) { *this = other; }
  Value& operator=(const Value& other) {
    if (this == &other) return *this;
    clear();
    for (const Piece& p : other) push_back(p);
    return *this;
  }

  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  void clear() { size_ = 0; }
  const Piece* begin() const { return data(); }
  const Piece* end() const { return data() + size_; }
  const Piece& operator[](size_t i) const { return data()[i]; }
  Piece& back() { return data()[size_ - 1]; }
  const Piece& back() const { return data()[size_ - 1]; }
  void push_back(const Piece& p) {
    if (!spilled_) {
      if (size_ < kInline) {
        inline_[size_++] = p;
        return;
      }
      heap_.assign(inline_, inline_ + size_);
      spilled_ = true;
    }
    heap_.resize(size_);
    heap_.push_back(p);
    ++size_;
  }

 private:
  static constexpr uint32_t kInline = 2;
  // Once a value outgrows kInline pieces, heap_ holds all of them, and keeps
  // doing so (with its capacity) after clear(), so that a slot spills once.
  const Piece* data() const { return spilled_ ? heap_.data() : inline_; }
  Piece* data() { return spilled_ ? heap_.data() : inline_; }

  uint32_t size_ = 0;
  bool spilled_ = false;
  Piece inline_[kInline];
  std::vector<Piece> heap_;
};

/// The positions `value` covers.
inline uint64_t totalLength(const Value& value) {
  uint64_t len = 0;
  for (const Piece& p : value) len += p.len;
  return len;
}

/// Appends `p` to `value`, merging it with the last piece where it continues it.
inline void appendPiece(Value& value, const Piece& p) {
  if (p.len == 0) return;
  if (!value.empty() && continues(value.back(), p)) {
    value.back().len += p.len;
  } else {
    value.push_back(p);
  }
}

}  // namespace braid::sim
