// ncclRedOpCreatePreMulSum / ncclRedOpDestroy: operators that multiply each
// rank's input by a scalar before summing, owned by one communicator.
#include <string>

#include "api/api_util.h"

using braid::api::report;

BRAID_NCCL_API(ncclResult_t, ncclRedOpCreatePreMulSum, ncclRedOp_t* op, void* scalar,
               ncclDataType_t datatype, ncclScalarResidence_t residence, ncclComm_t comm) {
  auto c = braid::api::commFrom(comm);
  if (!c.ok()) return report(c.status().withContext("ncclRedOpCreatePreMulSum"));
  if (op == nullptr) return report(braid::invalidArgument("ncclRedOpCreatePreMulSum: op is NULL"));
  auto type = braid::api::dataTypeFrom(datatype);
  if (!type.ok()) return report(type.status().withContext("ncclRedOpCreatePreMulSum"));
  if (residence != ncclScalarDevice && residence != ncclScalarHostImmediate) {
    return report(braid::invalidArgument("ncclRedOpCreatePreMulSum: unknown scalar residence " +
                                         std::to_string(static_cast<int>(residence))));
  }
  // On a host communicator "device" memory is the caller's memory: the scalar
  // is read there each time the op runs, as NCCL reads it when its kernel runs.
  auto made = c.value()->createPreMulSum(scalar, type.value(), residence == ncclScalarDevice);
  if (!made.ok()) return report(made.status().withContext("ncclRedOpCreatePreMulSum"));
  *op = static_cast<ncclRedOp_t>(braid::api::ncclValueOfUserOp(made.value()));
  return ncclSuccess;
}

BRAID_NCCL_API(ncclResult_t, ncclRedOpDestroy, ncclRedOp_t op, ncclComm_t comm) {
  auto c = braid::api::commFrom(comm);
  if (!c.ok()) return report(c.status().withContext("ncclRedOpDestroy"));
  auto parsed = braid::api::redOpFrom(op);  // refuses what is no operator (-1, say)
  if (!parsed.ok()) return report(parsed.status().withContext("ncclRedOpDestroy"));
  int value = static_cast<int>(op);
  if (value < ncclNumOps) {
    return report(braid::invalidArgument("ncclRedOpDestroy: op " + std::to_string(value) +
                                         " is a built-in operator"));
  }
  return report(c.value()->destroyOp(parsed.value()).withContext("ncclRedOpDestroy"));
}
