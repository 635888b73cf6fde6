// braid/types.h: element types and reduction operators of the C++ API.
//
// The numeric values equal NCCL's ncclDataType_t and ncclRedOp_t, so the C
// shim converts by value after checking the range.
#pragma once

#include <cstddef>
#include <cstdint>

namespace braid {

/// Element type of a buffer.
enum class DataType : int {
  kInt8 = 0,
  kUint8 = 1,
  kInt32 = 2,
  kUint32 = 3,
  kInt64 = 4,
  kUint64 = 5,
  kFloat16 = 6,
  kFloat32 = 7,
  kFloat64 = 8,
  kBfloat16 = 9,
  kFloat8e4m3 = 10,
  kFloat8e5m2 = 11,
};
inline constexpr int kNumDataTypes = 12;

/// Reduction operators: the built-in ones (values equal to ncclRedOp_t's),
/// then premulsum, which NCCL only offers through ncclRedOpCreatePreMulSum
/// (its handles start at ncclNumOps; braid maps them to kPreMulSum plus a scalar).
enum class RedOp : int {
  kSum = 0,
  kProd = 1,
  kMax = 2,
  kMin = 3,
  kAvg = 4,
  kPreMulSum = 5,  ///< sum of scalar * input; not a built-in ncclRedOp_t value
};
/// Number of built-in operators (ncclNumOps); kPreMulSum is not one of them.
inline constexpr int kNumRedOps = 5;
/// RedOp values from here on name operators a communicator made
/// (Comm::createPreMulSum), not built-ins.
inline constexpr int kFirstUserOp = 256;

/// Size in bytes of one element of `type` (0 for a value out of range).
inline size_t dataTypeSize(DataType type) {
  switch (type) {
    case DataType::kInt8:
    case DataType::kUint8:
    case DataType::kFloat8e4m3:
    case DataType::kFloat8e5m2:
      return 1;
    case DataType::kFloat16:
    case DataType::kBfloat16:
      return 2;
    case DataType::kInt32:
    case DataType::kUint32:
    case DataType::kFloat32:
      return 4;
    case DataType::kInt64:
    case DataType::kUint64:
    case DataType::kFloat64:
      return 8;
  }
  return 0;
}

/// Lower-case name as nccl-tests prints it: "float", "bfloat16", "int8", ...
inline const char* dataTypeName(DataType type) {
  static const char* const kNames[kNumDataTypes] = {"int8",   "uint8",    "int32",  "uint32",
                                                    "int64",  "uint64",   "half",   "float",
                                                    "double", "bfloat16", "f8e4m3", "f8e5m2"};
  int i = static_cast<int>(type);
  return i >= 0 && i < kNumDataTypes ? kNames[i] : "unknown";
}

/// Lower-case name: "sum", "prod", "max", "min", "avg", "premulsum".
inline const char* redOpName(RedOp op) {
  static const char* const kNames[] = {"sum", "prod", "max", "min", "avg", "premulsum"};
  int i = static_cast<int>(op);
  return i >= 0 && i <= static_cast<int>(RedOp::kPreMulSum) ? kNames[i] : "unknown";
}

/// Collectives, used in schedules, logs and the tuner.
enum class Collective : int {
  kAllReduce,
  kReduceScatter,
  kAllGather,
  kBroadcast,
  kReduce,
};
/// Whether the collective combines values with an operator (and so has one).
inline bool reduces(Collective c) {
  return c == Collective::kAllReduce || c == Collective::kReduceScatter || c == Collective::kReduce;
}
inline const char* collectiveName(Collective c) {
  switch (c) {
    case Collective::kAllReduce:
      return "AllReduce";
    case Collective::kReduceScatter:
      return "ReduceScatter";
    case Collective::kAllGather:
      return "AllGather";
    case Collective::kBroadcast:
      return "Broadcast";
    case Collective::kReduce:
      return "Reduce";
  }
  return "unknown";
}
/// The spelling of command lines (braid-perf, braid-sim, nccl-tests' binaries): "all_reduce".
inline const char* collectiveFlagName(Collective c) {
  switch (c) {
    case Collective::kAllReduce:
      return "all_reduce";
    case Collective::kReduceScatter:
      return "reduce_scatter";
    case Collective::kAllGather:
      return "all_gather";
    case Collective::kBroadcast:
      return "broadcast";
    case Collective::kReduce:
      return "reduce";
  }
  return "unknown";
}

}  // namespace braid
