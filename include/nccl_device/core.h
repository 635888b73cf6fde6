/*
 * braid: the types of NCCL's device API that host code fills and passes (NCCL 2.30's
 * nccl_device/core.h: names, values and the layouts of the versioned structs are NVIDIA's), and
 * the host functions that make device communicators and query a communicator.
 *
 * ncclDevCommRequirements and ncclCommProperties are versioned as ncclConfig_t is: their
 * initializers write the caller's size, NCCL_API_MAGIC and NCCL_VERSION_CODE, and braid reads
 * and writes no more than `size` bytes of them.
 *
 * What braid gives: device communicators on GPU communicators whose ranks share one host, with
 * LSA barriers (lsaBarrierCount). What it declines at ncclDevCommCreate, with a message: multimem
 * (lsaMultimem, teamRequirementsList), GPU-initiated networking (every gin* field, barrierCount,
 * railGinBarrierCount, worldGinBarrierCount), the LL all-to-all and resourceRequirementsList
 * buffers. docs/device-api.md has the list.
 */
#ifndef BRAID_NCCL_DEVICE_CORE_H_
#define BRAID_NCCL_DEVICE_CORE_H_

#include "../nccl.h"
#include "utility.h"

struct ncclDevComm;
typedef struct ncclDevComm ncclDevComm_t;
typedef struct ncclWindow_vidmem ncclWindow_vidmem_t;

/** A buffer of a devcomm's resources (resourceRequirementsList), by its place in them. */
typedef uint32_t ncclDevResourceHandle;
typedef ncclDevResourceHandle ncclDevResourceHandle_t;
/** GIN signals and counters, by index (braid has no GIN: declared so programs compile). */
typedef uint32_t ncclGinSignal_t;
typedef uint32_t ncclGinCounter_t;

/** A set of ranks: `nRanks` ranks `stride` apart in the world, this rank being `rank`. */
struct ncclTeam {
  int nRanks, rank, stride;
};
typedef struct ncclTeam ncclTeam_t;

#ifdef __cplusplus
/** The teams a devcomm knows without a handle, for the sessions' constructors. */
struct ncclTeamTagWorld {};
struct ncclTeamTagLsa {};
struct ncclTeamTagRail {};
#endif

/** A multicast object's base (multimem; braid has none). */
struct ncclMultimemHandle {
  void* mcBasePtr;
};
typedef struct ncclMultimemHandle ncclMultimemHandle_t;

/** Where a devcomm's LSA barriers' cells start in its resources, and how many barriers. */
struct ncclLsaBarrierHandle {
  ncclDevResourceHandle_t bufHandle;
  int nBarriers;
};
typedef struct ncclLsaBarrierHandle ncclLsaBarrierHandle_t;

/** A GIN barrier's cells (braid has no GIN). */
struct ncclGinBarrierHandle {
  ncclGinSignal_t signal0;
  ncclDevResourceHandle_t unused;
};
typedef struct ncclGinBarrierHandle ncclGinBarrierHandle_t;

struct ncclLLA2AHandle {
  ncclDevResourceHandle_t bufHandle;
  uint32_t nSlots;
};
typedef struct ncclLLA2AHandle ncclLLA2AHandle_t;

typedef struct ncclDevResourceRequirements ncclDevResourceRequirements_t;
typedef struct ncclTeamRequirements ncclTeamRequirements_t;

/** How a devcomm's GIN reaches its peers. */
typedef enum {
  NCCL_GIN_CONNECTION_NONE = 0,
  NCCL_GIN_CONNECTION_FULL = 1,
  NCCL_GIN_CONNECTION_RAIL = 2
} ncclGinConnectionType_t;

/** What a device communicator must hold. Fill it from NCCL_DEV_COMM_REQUIREMENTS_INITIALIZER. */
struct ncclDevCommRequirements {
  size_t size;          /**< sizeof as the caller compiled it: set by the initializer */
  unsigned int magic;   /**< NCCL_API_MAGIC: set by the initializer */
  unsigned int version; /**< NCCL_VERSION_CODE of the caller's header */
  ncclDevResourceRequirements_t* resourceRequirementsList; /**< extra buffers (braid: refused) */
  ncclTeamRequirements_t* teamRequirementsList;            /**< extra teams (braid: refused) */
  bool lsaMultimem;        /**< multimem on the LSA team (braid: refused) */
  int barrierCount;        /**< world barriers, which cross hosts by GIN (braid: refused) */
  int lsaBarrierCount;     /**< LSA barriers: ncclLsaBarrierSession's `index` below this */
  int railGinBarrierCount; /**< (braid: refused) */
  int lsaLLA2ABlockCount, lsaLLA2ASlotCount; /**< the LL all-to-all (braid: refused) */
  bool ginForceEnable;                       /**< (braid: refused) */
  int ginContextCount;                       /**< a hint; ignored without GIN */
  int ginSignalCount;                        /**< (braid: refused when not 0) */
  int ginCounterCount;                       /**< (braid: refused when not 0) */
  ncclGinConnectionType_t ginConnectionType; /**< (braid: refused unless NONE) */
  bool ginExclusiveContexts;
  int ginQueueDepth;
  int ginTrafficClass;
  int worldGinBarrierCount; /**< (braid: refused) */
  bool ginStrongSignalsRequired;
  bool ginVaSignalsRequired;
};
typedef struct ncclDevCommRequirements ncclDevCommRequirements_t;

/* One value a field, in the struct's order. */
#define NCCL_DEV_COMM_REQUIREMENTS_INITIALIZER                                                     \
  {                                                                                                \
    sizeof(ncclDevCommRequirements_t), NCCL_API_MAGIC, NCCL_VERSION_CODE, NULL, NULL, false, 0, 0, \
        0, 0, 0, false, 4, 0, 0, NCCL_GIN_CONNECTION_NONE, false, 0, NCCL_CONFIG_UNDEF_INT, 0,     \
        true, true                                                                                 \
  }

/** An extra buffer of a devcomm's resources (braid declines them). */
struct ncclDevResourceRequirements {
  ncclDevResourceRequirements_t* next;
  size_t bufferSize, bufferAlign;
  ncclDevResourceHandle_t* outBufferHandle;
  int ginSignalCount;
  int ginCounterCount;
  ncclGinSignal_t* outGinSignalStart;
  ncclGinCounter_t* outGinCounterStart;
};

/** An extra team with multimem (braid declines them). */
struct ncclTeamRequirements {
  ncclTeamRequirements_t* next;
  ncclTeam_t team;
  bool multimem;
  ncclMultimemHandle_t* outMultimemHandle;
};

/** Which GPU-initiated networking a communicator has. */
typedef enum {
  NCCL_GIN_TYPE_NONE = 0,
  NCCL_GIN_TYPE_PROXY = 2,
  NCCL_GIN_TYPE_GDAKI = 3,
  NCCL_GIN_TYPE_GPI = 4
} ncclGinType_t;

/** What a communicator supports (ncclCommQueryProperties). */
struct ncclCommProperties {
  size_t size;          /**< set by NCCL_COMM_PROPERTIES_INITIALIZER */
  unsigned int magic;   /**< set by NCCL_COMM_PROPERTIES_INITIALIZER */
  unsigned int version; /**< set by NCCL_COMM_PROPERTIES_INITIALIZER */
  int rank;
  int nRanks;
  int cudaDev;           /**< -1 on a host communicator */
  int nvmlDev;           /**< -1: braid does not use NVML */
  bool deviceApiSupport; /**< whether ncclDevCommCreate can succeed */
  bool multimemSupport;  /**< false in braid */
  ncclGinType_t ginType; /**< NCCL_GIN_TYPE_NONE in braid */
  int nLsaTeams;         /**< hosts of the communicator (one LSA team each) */
  bool hostRmaSupport;   /**< false in braid */
  ncclGinType_t railedGinType;
};
typedef struct ncclCommProperties ncclCommProperties_t;

#define NCCL_COMM_PROPERTIES_INITIALIZER \
  { sizeof(ncclCommProperties_t), NCCL_API_MAGIC, NCCL_VERSION_CODE }

/** Fills `props` (initialized with NCCL_COMM_PROPERTIES_INITIALIZER) for `comm`. */
NCCL_EXTERN_C ncclResult_t ncclCommQueryProperties(ncclComm_t comm, ncclCommProperties_t* props);

/**
 * Makes a device communicator of `comm` as `reqs` asks (collective: every rank calls it, in a
 * group when one thread drives several ranks). Fails, leaving `outDevComm` untouched, for what
 * braid declines (see the top of this file) and for communicators on several hosts or on host
 * memory.
 */
NCCL_EXTERN_C ncclResult_t ncclDevCommCreate(ncclComm_t comm, ncclDevCommRequirements_t const* reqs,
                                             ncclDevComm_t* outDevComm);
/** Frees what ncclDevCommCreate made for `devComm`; no kernel may use it any more. */
NCCL_EXTERN_C ncclResult_t ncclDevCommDestroy(ncclComm_t comm, ncclDevComm_t const* devComm);

/** Device pointers of a window's memory, from the host (symmetric windows). */
NCCL_EXTERN_C ncclResult_t ncclGetLsaMultimemDevicePointer(ncclWindow_t window, size_t offset,
                                                           void** outPtr);
NCCL_EXTERN_C ncclResult_t ncclGetMultimemDevicePointer(ncclWindow_t window, size_t offset,
                                                        ncclMultimemHandle_t multimem,
                                                        void** outPtr);
NCCL_EXTERN_C ncclResult_t ncclGetLsaDevicePointer(ncclWindow_t window, size_t offset, int lsaRank,
                                                   void** outPtr);
NCCL_EXTERN_C ncclResult_t ncclGetPeerDevicePointer(ncclWindow_t window, size_t offset, int peer,
                                                    void** outPtr);

/** A communicator's teams, from the host. */
NCCL_EXTERN_C ncclTeam_t ncclTeamWorld(ncclComm_t comm);
NCCL_EXTERN_C ncclTeam_t ncclTeamLsa(ncclComm_t comm);
NCCL_EXTERN_C ncclTeam_t ncclTeamRail(ncclComm_t comm);
/** Team `team`'s rank `rank` as a world rank, or as a rank of this rank's LSA team (-1: none). */
NCCL_EXTERN_C int ncclTeamRankToWorld(ncclComm_t comm, ncclTeam_t team, int rank);
NCCL_EXTERN_C int ncclTeamRankToLsa(ncclComm_t comm, ncclTeam_t team, int rank);

/** Requirements of extra resources (braid declines them: ncclInvalidUsage, with a message). */
NCCL_EXTERN_C ncclResult_t ncclLsaBarrierCreateRequirement(ncclTeam_t team, int nBarriers,
                                                           ncclLsaBarrierHandle_t* outHandle,
                                                           ncclDevResourceRequirements_t* outReq);
NCCL_EXTERN_C ncclResult_t ncclLLA2ACreateRequirement(int nBlocks, int nSlots,
                                                      ncclLLA2AHandle_t* outHandle,
                                                      ncclDevResourceRequirements_t* outReq);
/** 8-byte slots for `maxElts` elements of up to `maxEltSize` bytes (the LL all-to-all). */
NCCL_EXTERN_C int ncclLLA2ACalcSlots(int maxElts, int maxEltSize);

#endif /* BRAID_NCCL_DEVICE_CORE_H_ */
