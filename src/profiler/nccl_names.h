// NCCL's names for what its profiler events carry as strings (ncclFuncToString,
// ncclDatatypeToString, ncclAlgoToString, ncclProtoToString), and the numbers v1 plugins take
// instead (ncclFunc_t, ncclDataType_t, NCCL_ALGO_*, NCCL_PROTO_*).
#pragma once

#include <cstdint>
#include <cstring>

#include "profiler/profiler_abi.h"

namespace braid::profiler {

/// ncclDataType_t's names, by value (braid's DataType has the same values). NCCL itself says
/// "Unknown" for ncclUint8; braid names it.
inline constexpr const char* kDatatypeNames[] = {
    "ncclInt8",    "ncclUint8",   "ncclInt32",   "ncclUint32",   "ncclInt64",      "ncclUint64",
    "ncclFloat16", "ncclFloat32", "ncclFloat64", "ncclBfloat16", "ncclFloat8e4m3", "ncclFloat8e5m2",
};

inline const char* datatypeName(int type) {
  constexpr int n = sizeof(kDatatypeNames) / sizeof(kDatatypeNames[0]);
  return type >= 0 && type < n ? kDatatypeNames[type] : "Unknown";
}

/// v1's datatype number for a name (0xff for none known).
inline uint8_t datatypeNumber(const char* name) {
  constexpr int n = sizeof(kDatatypeNames) / sizeof(kDatatypeNames[0]);
  for (int t = 0; t < n; ++t) {
    if (strcmp(name, kDatatypeNames[t]) == 0) return static_cast<uint8_t>(t);
  }
  return 0xff;
}

/// v1's ncclFunc_t for a func name (0xff for one v1 had no number for).
inline uint8_t funcNumber(const char* func) {
  constexpr struct {
    const char* name;
    uint8_t number;
  } kFuncs[] = {
      {"Broadcast", profabi::kFuncBroadcast}, {"Reduce", profabi::kFuncReduce},
      {"AllGather", profabi::kFuncAllGather}, {"ReduceScatter", profabi::kFuncReduceScatter},
      {"AllReduce", profabi::kFuncAllReduce}, {"SendRecv", profabi::kFuncSendRecv},
      {"Send", profabi::kFuncSend},           {"Recv", profabi::kFuncRecv}};
  for (const auto& f : kFuncs) {
    if (strcmp(func, f.name) == 0) return f.number;
  }
  return 0xff;
}

/// v1's NCCL_ALGO_* for an algorithm name: braid's own (the one-shot, the zero-copy) have none.
inline uint8_t algoNumber(const char* algo) {
  if (strcmp(algo, "TREE") == 0) return profabi::kAlgoTree;
  if (strcmp(algo, "RING") == 0) return profabi::kAlgoRing;
  return profabi::kAlgoUndef;
}

/// v1's NCCL_PROTO_* for a protocol name.
inline uint8_t protoNumber(const char* proto) {
  if (strcmp(proto, "LL") == 0) return profabi::kProtoLl;
  if (strcmp(proto, "LL128") == 0) return profabi::kProtoLl128;
  if (strcmp(proto, "SIMPLE") == 0) return profabi::kProtoSimple;
  return profabi::kProtoUndef;
}

}  // namespace braid::profiler
