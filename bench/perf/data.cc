#include "perf/data.h"

#include <type_traits>

namespace braid::perf {
namespace {

// A small integer per (rank, element): in [-8, 8] for sum/max/min, in
// {-1, 1, 2} for prod so that products of many ranks stay exact.
int64_t smallValue(int rank, size_t i, uint64_t seed, ncclRedOp_t op) {
  uint64_t h = (i + 1) * 0x9E3779B97F4A7C15ull ^
               (static_cast<uint64_t>(rank) + seed) * 0xC2B2AE3D27D4EB4Full;
  h ^= h >> 29;
  if (op == ncclProd) {
    static const int64_t kProdValues[] = {-1, 1, 2, 1};
    return kProdValues[h & 3];
  }
  return static_cast<int64_t>(h % 17) - 8;
}

template <typename T>
T asType(int64_t v) {
  if (std::is_unsigned<T>::value && v < 0) v = -v;
  return static_cast<T>(v);
}

// Integer results wrap, as NCCL's do: compute on the unsigned type.
template <typename T, bool = std::is_integral<T>::value>
struct Wrap {
  using type = T;
};
template <typename T>
struct Wrap<T, true> {
  using type = std::make_unsigned_t<T>;
};

template <typename T>
T combine(T a, T b, ncclRedOp_t op) {
  using W = typename Wrap<T>::type;
  switch (op) {
    case ncclSum:
      return static_cast<T>(static_cast<W>(static_cast<W>(a) + static_cast<W>(b)));
    case ncclProd:
      return static_cast<T>(static_cast<W>(static_cast<W>(a) * static_cast<W>(b)));
    case ncclMax:
      return a < b ? b : a;
    default:
      return b < a ? b : a;
  }
}

template <typename T>
void fillT(T* buf, size_t count, ncclRedOp_t op, int rank, uint64_t seed) {
  for (size_t i = 0; i < count; ++i) buf[i] = asType<T>(smallValue(rank, i, seed, op));
}

template <typename T>
int64_t checkT(const T* buf, size_t count, ncclRedOp_t op, int nranks, uint64_t seed) {
  int64_t wrong = 0;
  for (size_t i = 0; i < count; ++i) {
    T want = asType<T>(smallValue(0, i, seed, op));
    for (int r = 1; r < nranks; ++r)
      want = combine(want, asType<T>(smallValue(r, i, seed, op)), op);
    if (!(buf[i] == want)) ++wrong;
  }
  return wrong;
}

template <template <typename> class Fn, typename... Args>
auto dispatch(ncclDataType_t type, Args&&... args) {
  switch (type) {
    case ncclInt8:
      return Fn<int8_t>()(args...);
    case ncclUint8:
      return Fn<uint8_t>()(args...);
    case ncclInt32:
      return Fn<int32_t>()(args...);
    case ncclUint32:
      return Fn<uint32_t>()(args...);
    case ncclInt64:
      return Fn<int64_t>()(args...);
    case ncclUint64:
      return Fn<uint64_t>()(args...);
    case ncclFloat64:
      return Fn<double>()(args...);
    default:
      return Fn<float>()(args...);
  }
}

template <typename T>
struct Fill {
  int64_t operator()(void* buf, size_t count, ncclRedOp_t op, int rank, uint64_t seed) {
    fillT(static_cast<T*>(buf), count, op, rank, seed);
    return 0;
  }
};

template <typename T>
struct Check {
  int64_t operator()(const void* buf, size_t count, ncclRedOp_t op, int nranks, uint64_t seed) {
    return checkT(static_cast<const T*>(buf), count, op, nranks, seed);
  }
};

}  // namespace

bool typeSupported(ncclDataType_t type) {
  switch (type) {
    case ncclInt8:
    case ncclUint8:
    case ncclInt32:
    case ncclUint32:
    case ncclInt64:
    case ncclUint64:
    case ncclFloat32:
    case ncclFloat64:
      return true;
    default:
      return false;
  }
}

void fillInput(void* buf, size_t count, ncclDataType_t type, ncclRedOp_t op, int rank,
               uint64_t seed) {
  dispatch<Fill>(type, buf, count, op, rank, seed);
}

int64_t countWrongAllReduce(const void* buf, size_t count, ncclDataType_t type, ncclRedOp_t op,
                            int nranks, uint64_t seed) {
  return dispatch<Check>(type, buf, count, op, nranks, seed);
}

}  // namespace braid::perf
