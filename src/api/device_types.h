// The types of NVIDIA's device API headers (nccl_device.h, nccl_device/*.h) that the host entry
// points of device_team_api.cc and device_pointer_api.cc take. nccl.h does not declare them, and
// braid does not ship those headers; the declarations repeat NVIDIA's, with their layouts (a team
// is three ints), once for both files.
#pragma once

extern "C" {
struct ncclTeam {
  int nRanks, rank, stride;
};
typedef struct ncclTeam ncclTeam_t;
struct ncclDevComm;
struct ncclDevCommRequirements;
struct ncclDevResourceRequirements;
struct ncclLsaBarrierHandle;
struct ncclGinBarrierHandle;
struct ncclLLA2AHandle;
struct ncclGinOutboxHandle;
struct ncclGinInboxA2AHandle;
struct ncclCftBarrierHandle;
}
