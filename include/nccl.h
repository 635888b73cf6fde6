/*
 * nccl.h: the NCCL 2.32 C API as braid provides it.
 *
 * braid's libnccl.so.2 is meant to replace NVIDIA's library without recompiling anything, so
 * this header reproduces NCCL 2.32.3's public interface: the same names, constant values, enum
 * values, struct layouts and function signatures. A program built against either header runs
 * against either library, and so does one built against NCCL 2.28's to 2.31's: each release only
 * adds to the one before (ncclConfig_t grows at its end; the library reads as much of it as the
 * caller's `size` says). The wording and organisation of this file are braid's own.
 *
 * History: which release each part comes from, and where its facts were taken.
 *   - up to 2.28: the core API (communicators, collectives, point-to-point, groups, ncclConfig_t
 *     up to nvlinkCentricSched, ncclSimInfo_t, windows, CTA policies, shrink).
 *   - 2.29 / 2.30: ncclTimeout, revoke, grow and ncclCommGetUniqueId, suspend / resume / memory
 *     statistics, ncclWinGetUserPtr, one-sided put / signal / wait, NCCL_WIN_STRICT_ORDERING, the
 *     parameter API, ncclConfig_t's graphUsageMode .. graphStreamOrdering (NVIDIA/nccl v2.30.7-1).
 *   - 2.31 (2.31.2, 2026-08): ncclConfig_t's launchOrderImplicit, numRmaSig, rmaEagerInit and
 *     hostCftMode (the struct became ncclConfig_v23100), ncclHostCftMode_t, ncclConfigExt_t,
 *     ncclCollConfig_t (then 64 bytes, ending at userProfilerTag) with NCCL_COLLCONFIG_INITIALIZER
 *     and the eight nccl*Config collectives.
 *   - 2.32 (2.32.3, 2026-09): ncclConfig_t's nvlsHostMode and ncclNvlsHostMode_t (the struct keeps
 *     the name ncclConfig_v23100), ncclCollConfig_t's launchCompletionEvent (the struct became
 *     ncclCollConfig_v23200), NCCL_WIN_GIN_ONLY and NCCL_WIN_CFT_COUNTED.
 *   2.31's and 2.32's declarations were each read in at least two independent public sources that
 *   agree; tests/api/nccl_2_32_3_functions.txt names them. Not declared here: the device API's
 *   host functions, which NVIDIA declares in nccl_device.h rather than here.
 *   - 2.32: ncclSetEncryption and ncclEncryptionConfig_t. Sources that agree: NVIDIA's NCCL 2.32
 *     documentation (the API page: ncclSetEncryption(const ncclEncryptionConfig_t* config),
 *     process-wide, before ncclGetUniqueId; the types page: mode, psk, a NUL-terminated key of at
 *     least 32 bytes, NCCL_ENCRYPTION_CONFIG_INITIALIZER, NCCL_ENCRYPTION_MODE_PSK; its setup page:
 *     TLS 1.3 with the key on NCCL's own TCP sockets), NVIDIA's socket encryption source of 2.32
 *     (the config read through size, magic == NCCL_API_MAGIC and mode, NCCL_ENCRYPTION_MODE_NONE
 *     beside _PSK, psk a const char* defaulting to NCCL_CONFIG_UNDEF_PTR), and an independent
 *     re-export of NCCL's API whose ABI test fixes sizeof(ncclEncryptionConfig_t) at 32 bytes
 *     with size 32, mode NONE and psk NULL after the initializer. Those fix the layout below (size,
 *     magic, version as every NCCL config begins, then mode and psk: 32 bytes). The two modes'
 *     numbers (NONE 0, PSK 1) are the one part no source spells out: inferred from NONE being the
 *     initializer's (zero-like) default, and marked as such beside them.
 *
 * CUDA headers are optional. When <cuda_runtime.h> can be found, this header includes it (and
 * cuda_fp16.h / cuda_bf16.h / cuda_fp8.h, as NCCL's header does, so code that relies on getting
 * them transitively keeps compiling). Without them, or when BRAID_NCCL_H_NO_CUDA is defined, it
 * declares cudaStream_t and cudaEvent_t itself with the very typedefs the CUDA runtime uses, so
 * the declarations agree and a later #include <cuda_runtime.h> is still accepted in C++ and C11.
 *
 * The header is valid C99 and C++. Every function has a twin with a `p` prefix (pncclAllReduce,
 * ...) that has the same behaviour; profilers and tracers interpose the plain name and forward to
 * the twin.
 */
/* The same guard as NVIDIA's header, so that a program that reaches both includes only one. */
#ifndef NCCL_H_
#define NCCL_H_

#include <limits.h>
#include <stddef.h>
#include <stdint.h>

/* ---- CUDA types ------------------------------------------------------------------------------ */

#if !defined(BRAID_NCCL_H_NO_CUDA) && defined(__has_include)
#if __has_include(<cuda_runtime.h>)
#define BRAID_NCCL_H_INCLUDES_CUDA 1
#endif
#endif

/* NVIDIA's header includes these in this order. */
/* clang-format off */
#if defined(BRAID_NCCL_H_INCLUDES_CUDA)
#include <cuda_runtime.h>
#include <cuda_fp16.h>
#if CUDART_VERSION >= 11000
#include <cuda_bf16.h>
#endif
#if defined(__cplusplus) && CUDART_VERSION >= 11080
#include <cuda_fp8.h>
#endif
#elif !defined(__CUDA_RUNTIME_H__) && !defined(__DRIVER_TYPES_H__) && !defined(CUDART_VERSION)
/* No CUDA headers: declare the stream and event handles exactly as the CUDA runtime does (opaque
 * pointers to struct CUstream_st and CUevent_st), so binaries and later CUDA includes agree. */
typedef struct CUstream_st* cudaStream_t;
typedef struct CUevent_st* cudaEvent_t;
#endif
/* clang-format on */

/* ---- Version --------------------------------------------------------------------------------- */

/** Version of the NCCL API this header describes. */
#define NCCL_MAJOR 2
#define NCCL_MINOR 32
#define NCCL_PATCH 3
#define NCCL_SUFFIX ""

/** NCCL_VERSION(NCCL_MAJOR, NCCL_MINOR, NCCL_PATCH); ncclGetVersion reports the same code. */
#define NCCL_VERSION_CODE 23203

/** Encodes a version as one integer. Releases up to 2.8 used X*1000 + Y*100 + Z; since 2.9 the
 *  code is X*10000 + Y*100 + Z, so that minor versions above 9 stay ordered. */
#define NCCL_VERSION(X, Y, Z) \
  (((X) <= 2 && (Y) <= 8) ? (X)*1000 + (Y)*100 + (Z) : (X)*10000 + (Y)*100 + (Z))

/* ---- Attributes (not part of the NCCL API) --------------------------------------------------- */

#if defined(__GNUC__) || defined(__clang__)
/** Marks the API functions as exported even when a library is built with -fvisibility=hidden. */
#define BRAID_NCCL_EXPORT __attribute__((visibility("default")))
#define BRAID_NCCL_DEPRECATED(message) __attribute__((deprecated(message)))
#else
#define BRAID_NCCL_EXPORT
#define BRAID_NCCL_DEPRECATED(message)
#endif

/** The enums below hold whatever int a caller passes: C allows any int in an enum object, C++
 *  only the values of the enum's range (0..15 for ncclDataType_t), so a C++ library given 99
 *  by a C caller would read it with undefined behaviour before it could refuse it. Under C++
 *  the enums' type is int, which every value a C caller can pass fits; their size and the way
 *  they are passed do not change. */
#ifdef __cplusplus
#define BRAID_NCCL_ENUM_BASE : int
#else
#define BRAID_NCCL_ENUM_BASE
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* ---- Handles and identifiers ----------------------------------------------------------------- */

/** A communicator: one rank's membership in a group of ranks that run collectives together. */
typedef struct ncclComm* ncclComm_t;

/** A memory window registered with ncclCommWindowRegister. */
typedef struct ncclWindow_vidmem* ncclWindow_t;

/** The value of a communicator handle that refers to no communicator. */
#define NCCL_COMM_NULL NULL

/** Size in bytes of ncclUniqueId. */
#define NCCL_UNIQUE_ID_BYTES 128

/** Opaque rendezvous token made by ncclGetUniqueId on one rank and passed, by any out-of-band
 *  means, to every rank that joins the communicator. Plain bytes: safe to copy and send. */
typedef struct {
  char internal[NCCL_UNIQUE_ID_BYTES];
} ncclUniqueId;

/* ---- Results --------------------------------------------------------------------------------- */

/** Outcome of every API call. */
typedef enum BRAID_NCCL_ENUM_BASE {
  ncclSuccess = 0,            /**< The call did what it was asked. */
  ncclUnhandledCudaError = 1, /**< A CUDA call failed. */
  ncclSystemError = 2,        /**< A system call failed (memory, sockets, files, ...). */
  ncclInternalError = 3,      /**< The library reached a state it cannot handle. */
  ncclInvalidArgument = 4,    /**< An argument was out of range or inconsistent. */
  ncclInvalidUsage = 5,       /**< Calls were made in an order or context that is not allowed. */
  ncclRemoteError = 6,        /**< A peer failed, disconnected or timed out. */
  ncclInProgress = 7,         /**< A non-blocking operation has not finished yet. */
  ncclTimeout = 8,            /**< An operation did not finish in the time allowed (2.30). */
  ncclNumResults = 9          /**< Number of result codes; not a result itself. */
} ncclResult_t;

/* ---- Constants ------------------------------------------------------------------------------- */

/** "Not set" markers used by NCCL_CONFIG_INITIALIZER: the library picks its default. */
#define NCCL_CONFIG_UNDEF_INT INT_MIN
#define NCCL_CONFIG_UNDEF_PTR NULL

/** Color for ncclCommSplit meaning "this rank joins no new communicator". */
#define NCCL_SPLIT_NOCOLOR (-1)

/** "Not set" marker for float fields (ncclSimInfo_t::estimatedTime). */
#define NCCL_UNDEF_FLOAT (-1.0f)

/** The value of the `magic` field of the versioned structs (ncclConfig_t, and the device API's
 *  ncclCommProperties_t): marks one initialized with its initializer. */
#define NCCL_API_MAGIC 0xcafebeef

/** Flags of ncclCommWindowRegister: a plain window, or one that every rank registers with the
 *  same size so that collectives can address peers' windows directly. */
#define NCCL_WIN_DEFAULT 0x00
#define NCCL_WIN_COLL_SYMMETRIC 0x01
/** Flag of ncclCommWindowRegister (2.30): one-sided operations on the window complete in the
 *  order they were issued. */
#define NCCL_WIN_STRICT_ORDERING 0x02
/** Flags of ncclCommWindowRegister (2.32): register the window for GPU-initiated networking
 *  (GIN) only, or for counted Compute Fabric Transport (CFT) writes only, instead of for every
 *  capability the library has. */
#define NCCL_WIN_GIN_ONLY 0x04
#define NCCL_WIN_CFT_COUNTED 0x08

/** Alignment, in bytes, that a window's buffer must have. */
#define NCCL_WIN_REQUIRED_ALIGNMENT 4096

/** Values of ncclConfig_t::CTAPolicy: how many GPU thread blocks the library may use. The
 *  default favours speed, EFFICIENCY favours leaving resources to the user's kernels, ZERO asks
 *  for no thread blocks at all where the operation allows it. */
#define NCCL_CTA_POLICY_DEFAULT 0x00
#define NCCL_CTA_POLICY_EFFICIENCY 0x01
#define NCCL_CTA_POLICY_ZERO 0x02

/** Flags of ncclCommShrink: DEFAULT shrinks a healthy communicator; ABORT first stops the
 *  parent's pending operations, for use after a rank has failed. */
#define NCCL_SHRINK_DEFAULT 0x00
#define NCCL_SHRINK_ABORT 0x01

/** Flags of ncclCommRevoke; only DEFAULT (0) is defined. */
#define NCCL_REVOKE_DEFAULT 0x00

/** Flag of ncclCommSuspend: release the memory the communicator can give back. */
#define NCCL_SUSPEND_MEM 0x01

/* ---- Communicator configuration -------------------------------------------------------------- */

/** Values of ncclConfig_t::hostCftMode (2.31): whether the communicator sets up host-side Compute
 *  Fabric Transport endpoints at its first window registration (Enable), never (Disable), or
 *  tries and goes on without them on failure (Fallback). Default leaves it to the library. */
typedef enum BRAID_NCCL_ENUM_BASE {
  ncclHostCftDefault = NCCL_CONFIG_UNDEF_INT,
  ncclHostCftEnable = 1,
  ncclHostCftDisable = 2,
  ncclHostCftFallback = 3
} ncclHostCftMode_t;

/** Values of ncclConfig_t::nvlsHostMode (2.32): which host-side uses of NVLink SHARP the
 *  communicator gives up. The two component bits combine with |; Disable sets every bit, present
 *  and future; Enable (0) keeps them all. */
typedef enum BRAID_NCCL_ENUM_BASE {
  ncclNvlsHostModeDefault = NCCL_CONFIG_UNDEF_INT,
  ncclNvlsHostModeEnable = 0,
  ncclNvlsHostModeDisableTransport = 1 << 0,         /**< the NVLS transport and its registration */
  ncclNvlsHostModeDisableSymmetricMultimem = 1 << 1, /**< multimem in symmetric kernels and CE */
  ncclNvlsHostModeDisable = INT_MAX
} ncclNvlsHostMode_t;

/** Options for creating a communicator. Always start from NCCL_CONFIG_INITIALIZER, then set the
 *  fields you care about; fields left at their "undefined" marker take the library default.
 *  The first three fields identify the struct's version and must not be changed by hand. */
typedef struct ncclConfig_v23100 {
  size_t size;             /**< sizeof(ncclConfig_t) as the caller compiled it. */
  unsigned int magic;      /**< Marks an initialized struct. */
  unsigned int version;    /**< NCCL_VERSION_CODE of the caller's header. */
  int blocking;            /**< 0: calls may return ncclInProgress; 1 (default): calls block. */
  int cgaClusterSize;      /**< CUDA thread block cluster size for the library's kernels. */
  int minCTAs;             /**< Lower bound on thread blocks (channels) per operation. */
  int maxCTAs;             /**< Upper bound on thread blocks (channels) per operation. */
  const char* netName;     /**< Network plugin or transport to use, by name. */
  int splitShare;          /**< Let communicators made by ncclCommSplit share the parent's
                                resources. */
  int trafficClass;        /**< Network traffic class (e.g. InfiniBand service level). */
  const char* commName;    /**< Name shown in logs and traces. */
  int collnetEnable;       /**< Allow in-network (CollNet/SHARP) reductions. */
  int CTAPolicy;           /**< One of NCCL_CTA_POLICY_*. */
  int shrinkShare;         /**< Let communicators made by ncclCommShrink share the parent's
                                resources. */
  int nvlsCTAs;            /**< Thread blocks for NVLink SHARP (NVLS) operations. */
  int nChannelsPerNetPeer; /**< Channels used per network peer. */
  int nvlinkCentricSched;  /**< Prefer NVLink-centric scheduling of operations. */
  /* Since 2.30. A caller built against an older header passes a smaller `size`; the library
   * then takes these as not set. */
  int graphUsageMode;      /**< How the communicator's work is captured into CUDA graphs. */
  int numRmaCtx;           /**< Contexts for one-sided (put / signal) operations. */
  int maxP2pPeers;         /**< Most peers of point-to-point operations at once. */
  int graphStreamOrdering; /**< Order captured work with the capturing stream's. */
  /* Since 2.31. */
  int launchOrderImplicit; /**< Let this communicator's launches overlap those of others that
                                set it, ordered by the host calls alone (1), or not (0). */
  int numRmaSig;           /**< One-sided signal indexes per context. */
  int rmaEagerInit;        /**< Set up one-sided signals when the communicator is made (1) rather
                                than at the first window registration (0). */
  int hostCftMode;         /**< One of ncclHostCftMode_t. */
  /* Since 2.32. */
  int nvlsHostMode; /**< ncclNvlsHostMode_t bits. */
} ncclConfig_t;

/** Value to initialize every ncclConfig_t with. */
/* clang-format off */
#define NCCL_CONFIG_INITIALIZER {                                                \
  sizeof(ncclConfig_t),                                /* size */                \
  NCCL_API_MAGIC,                                      /* magic */               \
  NCCL_VERSION_CODE,                                   /* version */             \
  NCCL_CONFIG_UNDEF_INT,                               /* blocking */            \
  NCCL_CONFIG_UNDEF_INT,                               /* cgaClusterSize */      \
  NCCL_CONFIG_UNDEF_INT,                               /* minCTAs */             \
  NCCL_CONFIG_UNDEF_INT,                               /* maxCTAs */             \
  NCCL_CONFIG_UNDEF_PTR,                               /* netName */             \
  NCCL_CONFIG_UNDEF_INT,                               /* splitShare */          \
  NCCL_CONFIG_UNDEF_INT,                               /* trafficClass */        \
  NCCL_CONFIG_UNDEF_PTR,                               /* commName */            \
  NCCL_CONFIG_UNDEF_INT,                               /* collnetEnable */       \
  NCCL_CONFIG_UNDEF_INT,                               /* CTAPolicy */           \
  NCCL_CONFIG_UNDEF_INT,                               /* shrinkShare */         \
  NCCL_CONFIG_UNDEF_INT,                               /* nvlsCTAs */            \
  NCCL_CONFIG_UNDEF_INT,                               /* nChannelsPerNetPeer */ \
  NCCL_CONFIG_UNDEF_INT,                               /* nvlinkCentricSched */  \
  NCCL_CONFIG_UNDEF_INT,                               /* graphUsageMode */      \
  NCCL_CONFIG_UNDEF_INT,                               /* numRmaCtx */           \
  NCCL_CONFIG_UNDEF_INT,                               /* maxP2pPeers */         \
  NCCL_CONFIG_UNDEF_INT,                               /* graphStreamOrdering */ \
  NCCL_CONFIG_UNDEF_INT,                               /* launchOrderImplicit */ \
  NCCL_CONFIG_UNDEF_INT,                               /* numRmaSig */           \
  NCCL_CONFIG_UNDEF_INT,                               /* rmaEagerInit */        \
  NCCL_CONFIG_UNDEF_INT,                               /* hostCftMode */         \
  NCCL_CONFIG_UNDEF_INT                                /* nvlsHostMode */        \
}
/* clang-format on */

/* ---- Per-collective configuration (2.31) ----------------------------------------------------- */

/** One vendor-specific option of a ncclCollConfig_t: a key (the vendor's id, non-zero and below
 *  2^24, and the option's id within it) and one value. Options chain through `next` into a list
 *  without cycles or repeated keys. A library reads only the options of its own vendor id; NVIDIA's
 *  reads none (braid's id: braid_ext.h). */
typedef struct ncclConfigExt {
  struct ncclConfigExt* next; /**< The next option, or NULL. */
  struct {
    int vendorId; /**< The vendor the option belongs to. */
    int optionId; /**< Which of that vendor's options. */
  } key;
  union {
    int i;         /**< An integer value. */
    const char* s; /**< A NUL-terminated string. */
    void* raw;     /**< Anything pointer-sized. */
  } val;
} ncclConfigExt_t;

/** Options of one collective call, passed to the nccl*Config collectives. Start from
 *  NCCL_COLLCONFIG_INITIALIZER; fields left unset (NCCL_CONFIG_UNDEF_INT / NULL) fall through to
 *  the communicator's setting. Every rank must pass the same options; the caller keeps the struct
 *  and its ext list alive for the call. Like ncclConfig_t it only grows at its end: 2.31's ended
 *  at userProfilerTag (64 bytes). */
typedef struct ncclCollConfig_v23200 {
  size_t size;              /**< sizeof(ncclCollConfig_t) as the caller compiled it. */
  unsigned int magic;       /**< Marks an initialized struct. */
  unsigned int version;     /**< NCCL_VERSION_CODE of the caller's header. */
  ncclConfigExt_t* ext;     /**< Vendor-specific options, or NULL. */
  int minCTAs;              /**< Lower bound on thread blocks (channels) for this call. */
  int maxCTAs;              /**< Upper bound on them; the communicator's bound still holds. */
  int nvlsCTAs;             /**< Thread blocks of NVLS algorithms for this call. */
  int cgaClusterSize;       /**< Thread block cluster size; the same for every call of a group. */
  const char* algSelection; /**< Which algorithms the call may use: names (matched by their
                                 beginning, case-insensitive) joined by ',' (or), '+' (and) and
                                 '^' (not); NULL or "" for any. */
  int forceAlgSelection; /**< 1 (default): a selection that cannot be honoured is an error; 0: the
                              library chooses as if none were given. */
  int CTAPolicy;         /**< NCCL_CTA_POLICY_* bits for this call; unset: the communicator's. */
  uint64_t userProfilerTag; /**< Opaque value handed to profiler plugins; 0: untagged. */
  /* Since 2.32. */
  cudaEvent_t launchCompletionEvent; /**< Recorded once the call's kernel is launched (see
                                          docs/dropin.md for braid's point of recording); NULL:
                                          none. The same presence on every rank. */
} ncclCollConfig_t;

/** Value to initialize every ncclCollConfig_t with. */
/* clang-format off */
#define NCCL_COLLCONFIG_INITIALIZER {                                              \
  sizeof(ncclCollConfig_t),                            /* size */                  \
  NCCL_API_MAGIC,                                      /* magic */                 \
  NCCL_VERSION_CODE,                                   /* version */               \
  NCCL_CONFIG_UNDEF_PTR,                               /* ext */                   \
  NCCL_CONFIG_UNDEF_INT,                               /* minCTAs */               \
  NCCL_CONFIG_UNDEF_INT,                               /* maxCTAs */               \
  NCCL_CONFIG_UNDEF_INT,                               /* nvlsCTAs */              \
  NCCL_CONFIG_UNDEF_INT,                               /* cgaClusterSize */        \
  NCCL_CONFIG_UNDEF_PTR,                               /* algSelection */          \
  1,                                                   /* forceAlgSelection */     \
  NCCL_CONFIG_UNDEF_INT,                               /* CTAPolicy */             \
  0,                                                   /* userProfilerTag */       \
  NCCL_CONFIG_UNDEF_PTR                                /* launchCompletionEvent */ \
}
/* clang-format on */

/* ---- Encryption of the library's sockets (2.32) ---------------------------------------------- */

/* The numbers of the two modes are not spelled out by the sources this header was written from
 * (see the history above): NONE is the initializer's default, PSK the one other mode. */
#define NCCL_ENCRYPTION_MODE_NONE 0 /**< No encryption: the library's sockets carry plaintext. */
#define NCCL_ENCRYPTION_MODE_PSK 1  /**< Authenticate and encrypt with a pre-shared key. */

/** What ncclSetEncryption is given. Start from NCCL_ENCRYPTION_CONFIG_INITIALIZER; the first
 *  three fields identify the struct's version, as ncclConfig_t's do. */
typedef struct {
  size_t size;          /**< sizeof(ncclEncryptionConfig_t) as the caller compiled it. */
  unsigned int magic;   /**< Marks an initialized struct. */
  unsigned int version; /**< NCCL_VERSION_CODE of the caller's header. */
  int mode;             /**< NCCL_ENCRYPTION_MODE_*. */
  const char* psk;      /**< With NCCL_ENCRYPTION_MODE_PSK: the key, a NUL-terminated string of
                             at least 32 bytes, the same in every process of the job. */
} ncclEncryptionConfig_t;

/** Value to initialize every ncclEncryptionConfig_t with: no encryption. */
/* clang-format off */
#define NCCL_ENCRYPTION_CONFIG_INITIALIZER {                                       \
  sizeof(ncclEncryptionConfig_t),                      /* size */                  \
  NCCL_API_MAGIC,                                      /* magic */                 \
  NCCL_VERSION_CODE,                                   /* version */               \
  NCCL_ENCRYPTION_MODE_NONE,                           /* mode */                  \
  NCCL_CONFIG_UNDEF_PTR                                /* psk */                   \
}
/* clang-format on */

/* ---- Simulation ------------------------------------------------------------------------------ */

/** What ncclGroupSimulateEnd reports about a group of operations it did not run. Start from
 *  NCCL_SIM_INFO_INITIALIZER; the first three fields identify the struct's version. */
typedef struct ncclSimInfo_v22200 {
  size_t size;          /**< sizeof(ncclSimInfo_t) as the caller compiled it. */
  unsigned int magic;   /**< Marks an initialized struct. */
  unsigned int version; /**< NCCL_VERSION_CODE of the caller's header. */
  float estimatedTime;  /**< Predicted duration of the group, in microseconds. */
} ncclSimInfo_t;

/** Value to initialize every ncclSimInfo_t with. */
/* clang-format off */
#define NCCL_SIM_INFO_INITIALIZER {                                        \
  sizeof(ncclSimInfo_t),                               /* size */          \
  0x74685283,                                          /* magic */         \
  NCCL_VERSION_CODE,                                   /* version */       \
  NCCL_UNDEF_FLOAT                                     /* estimatedTime */ \
}
/* clang-format on */

/* ---- Reduction operators and element types --------------------------------------------------- */

/** Helper that exists only so that sizeof can be applied to an enum of the same kind as
 *  ncclRedOp_t before ncclRedOp_t is complete; ncclMaxRedOp uses it. */
typedef enum BRAID_NCCL_ENUM_BASE { ncclNumOps_dummy = 5 } ncclRedOp_dummy_t;

/** Reduction operator. Values from ncclNumOps up are handles returned by
 *  ncclRedOpCreatePreMulSum and are valid only on the communicator that created them. */
typedef enum BRAID_NCCL_ENUM_BASE {
  ncclSum = 0,    /**< Sum. */
  ncclProd = 1,   /**< Product. */
  ncclMax = 2,    /**< Maximum. */
  ncclMin = 3,    /**< Minimum. */
  ncclAvg = 4,    /**< Sum divided by the number of ranks. */
  ncclNumOps = 5, /**< Number of built-in operators; the first user-created handle. */
  /** Largest value an operator handle can take: the largest positive value of an enum of this
   *  size, so that adding it never makes ncclRedOp_t wider than it was in older releases. */
  ncclMaxRedOp = 0x7fffffff >> (32 - 8 * sizeof(ncclRedOp_dummy_t))
} ncclRedOp_t;

/** Element type of a buffer. Several names share a value for compatibility with old code. */
typedef enum BRAID_NCCL_ENUM_BASE {
  ncclInt8 = 0,        /**< Signed 8-bit integer. */
  ncclChar = 0,        /**< Alias of ncclInt8. */
  ncclUint8 = 1,       /**< Unsigned 8-bit integer. */
  ncclInt32 = 2,       /**< Signed 32-bit integer. */
  ncclInt = 2,         /**< Alias of ncclInt32. */
  ncclUint32 = 3,      /**< Unsigned 32-bit integer. */
  ncclInt64 = 4,       /**< Signed 64-bit integer. */
  ncclUint64 = 5,      /**< Unsigned 64-bit integer. */
  ncclFloat16 = 6,     /**< IEEE 754 half precision. */
  ncclHalf = 6,        /**< Alias of ncclFloat16. */
  ncclFloat32 = 7,     /**< IEEE 754 single precision. */
  ncclFloat = 7,       /**< Alias of ncclFloat32. */
  ncclFloat64 = 8,     /**< IEEE 754 double precision. */
  ncclDouble = 8,      /**< Alias of ncclFloat64. */
  ncclBfloat16 = 9,    /**< bfloat16: 8 exponent bits, 7 mantissa bits. */
  ncclFloat8e4m3 = 10, /**< 8-bit float, 4 exponent and 3 mantissa bits (OCP FP8 E4M3). */
  ncclFloat8e5m2 = 11, /**< 8-bit float, 5 exponent and 2 mantissa bits (OCP FP8 E5M2). */
  ncclNumTypes = 12    /**< Number of element types; not a type itself. */
} ncclDataType_t;

/** Where the scalar given to ncclRedOpCreatePreMulSum lives, and so when it is read. */
typedef enum BRAID_NCCL_ENUM_BASE {
  /** In device-accessible memory; read by each collective while it runs, so the value may be
   *  changed between collectives without creating a new operator. */
  ncclScalarDevice = 0,
  /** In host memory; read once, before ncclRedOpCreatePreMulSum returns. */
  ncclScalarHostImmediate = 1
} ncclScalarResidence_t;

/* ---- Memory ---------------------------------------------------------------------------------- */

/** Allocates `size` bytes of device memory suited to every optimization the library offers
 *  (buffer registration, windows, NVLink SHARP). The allocation may be rounded up. */
BRAID_NCCL_EXPORT ncclResult_t ncclMemAlloc(void** ptr, size_t size);
BRAID_NCCL_EXPORT ncclResult_t pncclMemAlloc(void** ptr, size_t size);

/** Frees memory obtained from ncclMemAlloc. */
BRAID_NCCL_EXPORT ncclResult_t ncclMemFree(void* ptr);
BRAID_NCCL_EXPORT ncclResult_t pncclMemFree(void* ptr);

/* ---- Library information --------------------------------------------------------------------- */

/** Stores the library's version code (see NCCL_VERSION) in *version. The library's version may
 *  differ from NCCL_VERSION_CODE of the header the program was compiled with. */
BRAID_NCCL_EXPORT ncclResult_t ncclGetVersion(int* version);
BRAID_NCCL_EXPORT ncclResult_t pncclGetVersion(int* version);

/** Returns a static description of a result code. */
BRAID_NCCL_EXPORT const char* ncclGetErrorString(ncclResult_t result);
BRAID_NCCL_EXPORT const char* pncclGetErrorString(ncclResult_t result);

/** Returns a human-readable description of the most recent error the library reported to the
 *  calling thread, with more detail than the result code carries. `comm` may be NULL. The string
 *  is owned by the library. */
BRAID_NCCL_EXPORT const char* ncclGetLastError(ncclComm_t comm);
BRAID_NCCL_EXPORT const char* pncclGetLastError(ncclComm_t comm);

/** Re-reads the environment variables that control logging. Not a supported part of the API. */
/* clang-format off */
BRAID_NCCL_EXPORT BRAID_NCCL_DEPRECATED("ncclResetDebugInit is not a supported NCCL API")
void ncclResetDebugInit(void);
BRAID_NCCL_EXPORT BRAID_NCCL_DEPRECATED("pncclResetDebugInit is not a supported NCCL API")
void pncclResetDebugInit(void);
/* clang-format on */

/* ---- Communicator creation ------------------------------------------------------------------- */

/** Sets, for the whole process, how the library's sockets are protected (since 2.32). With
 *  NCCL_ENCRYPTION_MODE_PSK every connection made from then on (bootstrap, the socket transport,
 *  the handles network plugins trade) is authenticated and encrypted with keys derived from the
 *  key; NULL or NCCL_ENCRYPTION_MODE_NONE turns it off. Call it before ncclGetUniqueId, with the
 *  same key in every process, and keep it for the job; a peer with another key is refused at
 *  connection. ncclInvalidArgument for a config not made with the initializer, an unknown mode,
 *  or a key missing or shorter than 32 bytes; ncclSystemError where OpenSSL 3's libcrypto cannot
 *  be loaded (the library then refuses rather than run unencrypted). */
BRAID_NCCL_EXPORT ncclResult_t ncclSetEncryption(const ncclEncryptionConfig_t* config);
BRAID_NCCL_EXPORT ncclResult_t pncclSetEncryption(const ncclEncryptionConfig_t* config);

/** Makes a fresh unique id. Call it on one rank and give the result to all ranks before they
 *  call ncclCommInitRank*. */
BRAID_NCCL_EXPORT ncclResult_t ncclGetUniqueId(ncclUniqueId* uniqueId);
BRAID_NCCL_EXPORT ncclResult_t pncclGetUniqueId(ncclUniqueId* uniqueId);

/** Like ncclCommInitRank, with options. `config` may be NULL for the defaults; otherwise it
 *  must have been initialized with NCCL_CONFIG_INITIALIZER. With config->blocking == 0 the call
 *  may return ncclInProgress; poll ncclCommGetAsyncError until it reports the outcome. */
BRAID_NCCL_EXPORT ncclResult_t ncclCommInitRankConfig(ncclComm_t* comm, int nranks,
                                                      ncclUniqueId commId, int rank,
                                                      ncclConfig_t* config);
BRAID_NCCL_EXPORT ncclResult_t pncclCommInitRankConfig(ncclComm_t* comm, int nranks,
                                                       ncclUniqueId commId, int rank,
                                                       ncclConfig_t* config);

/** Joins rank `rank` (0 <= rank < nranks) of a new communicator of `nranks` ranks identified by
 *  `commId`, using the current CUDA device. The call waits for all ranks to arrive, so ranks
 *  must call it from separate threads or processes, or inside one ncclGroupStart/End. */
BRAID_NCCL_EXPORT ncclResult_t ncclCommInitRank(ncclComm_t* comm, int nranks, ncclUniqueId commId,
                                                int rank);
BRAID_NCCL_EXPORT ncclResult_t pncclCommInitRank(ncclComm_t* comm, int nranks, ncclUniqueId commId,
                                                 int rank);

/** Creates all `ndev` ranks of a communicator in this process at once, rank i on device
 *  devlist[i] (or device i when devlist is NULL). `comm` must have room for ndev handles. */
BRAID_NCCL_EXPORT ncclResult_t ncclCommInitAll(ncclComm_t* comm, int ndev, const int* devlist);
BRAID_NCCL_EXPORT ncclResult_t pncclCommInitAll(ncclComm_t* comm, int ndev, const int* devlist);

/** Like ncclCommInitRankConfig, but with `nId` unique ids (the same ids, in the same order, on
 *  every rank) so that the rendezvous work is spread over several roots. */
BRAID_NCCL_EXPORT ncclResult_t ncclCommInitRankScalable(ncclComm_t* newcomm, int nranks, int myrank,
                                                        int nId, ncclUniqueId* commIds,
                                                        ncclConfig_t* config);
BRAID_NCCL_EXPORT ncclResult_t pncclCommInitRankScalable(ncclComm_t* newcomm, int nranks,
                                                         int myrank, int nId, ncclUniqueId* commIds,
                                                         ncclConfig_t* config);

/** Splits `comm` into new communicators, one per distinct `color`; within each, ranks are
 *  ordered by `key` (ties by their rank in `comm`). A rank passing NCCL_SPLIT_NOCOLOR gets
 *  *newcomm == NULL. With `config` NULL the new communicators inherit comm's configuration.
 *  Every rank of `comm` must call it. */
BRAID_NCCL_EXPORT ncclResult_t ncclCommSplit(ncclComm_t comm, int color, int key,
                                             ncclComm_t* newcomm, ncclConfig_t* config);
BRAID_NCCL_EXPORT ncclResult_t pncclCommSplit(ncclComm_t comm, int color, int key,
                                              ncclComm_t* newcomm, ncclConfig_t* config);

/** Makes a new communicator from `comm` without the `excludeRanksCount` ranks listed in
 *  `excludeRanksList`; the remaining ranks keep their order and are renumbered densely. With
 *  `config` NULL the new communicator inherits comm's configuration. `shrinkFlags` is one of
 *  NCCL_SHRINK_*. Every remaining rank must call it. */
BRAID_NCCL_EXPORT ncclResult_t ncclCommShrink(ncclComm_t comm, int* excludeRanksList,
                                              int excludeRanksCount, ncclComm_t* newcomm,
                                              ncclConfig_t* config, int shrinkFlags);
BRAID_NCCL_EXPORT ncclResult_t pncclCommShrink(ncclComm_t comm, int* excludeRanksList,
                                               int excludeRanksCount, ncclComm_t* newcomm,
                                               ncclConfig_t* config, int shrinkFlags);

/** Makes the unique id with which new ranks join `comm` in ncclCommGrow (2.30). Called on the
 *  one existing rank that will pass it to ncclCommGrow (the grow's root); a second id may not be
 *  made before the first has been used by a grow. */
BRAID_NCCL_EXPORT ncclResult_t ncclCommGetUniqueId(ncclComm_t comm, ncclUniqueId* uniqueId);
BRAID_NCCL_EXPORT ncclResult_t pncclCommGetUniqueId(ncclComm_t comm, ncclUniqueId* uniqueId);

/** Makes a communicator of `nRanks` ranks from `comm`'s ranks and new ones (2.30). The ranks of
 *  `comm` call it with rank = -1 (the root with the id from ncclCommGetUniqueId, the others with
 *  uniqueId NULL) and keep their ranks; each new rank calls it with comm NULL, the id, and its
 *  rank (from comm's size up). The id is used up by the grow. */
BRAID_NCCL_EXPORT ncclResult_t ncclCommGrow(ncclComm_t comm, int nRanks,
                                            const ncclUniqueId* uniqueId, int rank,
                                            ncclComm_t* newcomm, ncclConfig_t* config);
BRAID_NCCL_EXPORT ncclResult_t pncclCommGrow(ncclComm_t comm, int nRanks,
                                             const ncclUniqueId* uniqueId, int rank,
                                             ncclComm_t* newcomm, ncclConfig_t* config);

/* ---- Communicator teardown and errors -------------------------------------------------------- */

/** Completes every operation issued on `comm` and releases the resources it shares with other
 *  ranks. A non-blocking communicator reports ncclInProgress until that is done. Afterwards
 *  ncclCommDestroy frees the rest without waiting for peers. */
BRAID_NCCL_EXPORT ncclResult_t ncclCommFinalize(ncclComm_t comm);
BRAID_NCCL_EXPORT ncclResult_t pncclCommFinalize(ncclComm_t comm);

/** Frees this rank's communicator object and its local resources. */
BRAID_NCCL_EXPORT ncclResult_t ncclCommDestroy(ncclComm_t comm);
BRAID_NCCL_EXPORT ncclResult_t pncclCommDestroy(ncclComm_t comm);

/** Frees the communicator like ncclCommDestroy, first stopping any operation still pending or
 *  running. Used to recover from errors, e.g. a failed peer. */
BRAID_NCCL_EXPORT ncclResult_t ncclCommAbort(ncclComm_t comm);
BRAID_NCCL_EXPORT ncclResult_t pncclCommAbort(ncclComm_t comm);

/** Stops every operation in flight on `comm` and leaves it usable only for destroy, split and
 *  shrink (without resource sharing); ncclCommFinalize is not allowed afterwards. A non-blocking
 *  communicator reports ncclInProgress until it is quiet. `revokeFlags` must be
 *  NCCL_REVOKE_DEFAULT. */
BRAID_NCCL_EXPORT ncclResult_t ncclCommRevoke(ncclComm_t comm, int revokeFlags);
BRAID_NCCL_EXPORT ncclResult_t pncclCommRevoke(ncclComm_t comm, int revokeFlags);

/** Stores in *asyncError the communicator's state: ncclSuccess, ncclInProgress while a
 *  non-blocking call is still running, or the error an asynchronous operation hit. */
BRAID_NCCL_EXPORT ncclResult_t ncclCommGetAsyncError(ncclComm_t comm, ncclResult_t* asyncError);
BRAID_NCCL_EXPORT ncclResult_t pncclCommGetAsyncError(ncclComm_t comm, ncclResult_t* asyncError);

/* ---- Communicator queries -------------------------------------------------------------------- */

/** Stores the number of ranks of `comm` in *count. */
BRAID_NCCL_EXPORT ncclResult_t ncclCommCount(const ncclComm_t comm, int* count);
BRAID_NCCL_EXPORT ncclResult_t pncclCommCount(const ncclComm_t comm, int* count);

/** Stores the CUDA device of this rank of `comm` in *device. */
BRAID_NCCL_EXPORT ncclResult_t ncclCommCuDevice(const ncclComm_t comm, int* device);
BRAID_NCCL_EXPORT ncclResult_t pncclCommCuDevice(const ncclComm_t comm, int* device);

/** Stores this process's rank in `comm` in *rank. */
BRAID_NCCL_EXPORT ncclResult_t ncclCommUserRank(const ncclComm_t comm, int* rank);
BRAID_NCCL_EXPORT ncclResult_t pncclCommUserRank(const ncclComm_t comm, int* rank);

/* ---- Buffer registration --------------------------------------------------------------------- */

/** Registers `size` bytes at `buff` with `comm` so that later operations on that buffer can
 *  avoid intermediate copies; *handle identifies the registration. */
BRAID_NCCL_EXPORT ncclResult_t ncclCommRegister(const ncclComm_t comm, void* buff, size_t size,
                                                void** handle);
BRAID_NCCL_EXPORT ncclResult_t pncclCommRegister(const ncclComm_t comm, void* buff, size_t size,
                                                 void** handle);

/** Undoes ncclCommRegister. */
BRAID_NCCL_EXPORT ncclResult_t ncclCommDeregister(const ncclComm_t comm, void* handle);
BRAID_NCCL_EXPORT ncclResult_t pncclCommDeregister(const ncclComm_t comm, void* handle);

/** Gives back the memory the communicator can release (flags: NCCL_SUSPEND_MEM) until
 *  ncclCommResume (2.30); the communicator cannot be used meanwhile. */
BRAID_NCCL_EXPORT ncclResult_t ncclCommSuspend(ncclComm_t comm, int flags);
BRAID_NCCL_EXPORT ncclResult_t pncclCommSuspend(ncclComm_t comm, int flags);

/** Restores what ncclCommSuspend released (2.30). */
BRAID_NCCL_EXPORT ncclResult_t ncclCommResume(ncclComm_t comm);
BRAID_NCCL_EXPORT ncclResult_t pncclCommResume(ncclComm_t comm);

/** What ncclCommMemStats reports (2.30). */
typedef enum BRAID_NCCL_ENUM_BASE {
  ncclStatGpuMemSuspend = 0,   /**< Bytes of GPU memory that ncclCommSuspend can release. */
  ncclStatGpuMemSuspended = 1, /**< 1 while the memory is suspended, else 0. */
  ncclStatGpuMemPersist = 2,   /**< Bytes of GPU memory that stay while suspended. */
  ncclStatGpuMemTotal = 3      /**< Bytes of GPU memory the communicator holds. */
} ncclCommMemStat_t;

/** Stores one of the communicator's memory figures in *value (2.30). */
BRAID_NCCL_EXPORT ncclResult_t ncclCommMemStats(ncclComm_t comm, ncclCommMemStat_t stat,
                                                uint64_t* value);
BRAID_NCCL_EXPORT ncclResult_t pncclCommMemStats(ncclComm_t comm, ncclCommMemStat_t stat,
                                                 uint64_t* value);

/** Registers `size` bytes at `buff` as a memory window of `comm`; collective over the ranks of
 *  comm. `winFlags` is a combination of NCCL_WIN_*; `buff` must be aligned to
 *  NCCL_WIN_REQUIRED_ALIGNMENT. */
BRAID_NCCL_EXPORT ncclResult_t ncclCommWindowRegister(ncclComm_t comm, void* buff, size_t size,
                                                      ncclWindow_t* win, int winFlags);
BRAID_NCCL_EXPORT ncclResult_t pncclCommWindowRegister(ncclComm_t comm, void* buff, size_t size,
                                                       ncclWindow_t* win, int winFlags);

/** Undoes ncclCommWindowRegister. */
BRAID_NCCL_EXPORT ncclResult_t ncclCommWindowDeregister(ncclComm_t comm, ncclWindow_t win);
BRAID_NCCL_EXPORT ncclResult_t pncclCommWindowDeregister(ncclComm_t comm, ncclWindow_t win);

/** Stores in *outUserPtr the buffer this rank registered as `win` (2.30). */
BRAID_NCCL_EXPORT ncclResult_t ncclWinGetUserPtr(ncclComm_t comm, ncclWindow_t win,
                                                 void** outUserPtr);
BRAID_NCCL_EXPORT ncclResult_t pncclWinGetUserPtr(ncclComm_t comm, ncclWindow_t win,
                                                  void** outUserPtr);

/* ---- Custom reduction operators -------------------------------------------------------------- */

/** Creates an operator that multiplies each rank's input by *scalar (of type `datatype`) and
 *  then sums across ranks, for use with `datatype` on `comm` only. `residence` says when the
 *  scalar is read. The new handle is stored in *op. */
BRAID_NCCL_EXPORT ncclResult_t ncclRedOpCreatePreMulSum(ncclRedOp_t* op, void* scalar,
                                                        ncclDataType_t datatype,
                                                        ncclScalarResidence_t residence,
                                                        ncclComm_t comm);
BRAID_NCCL_EXPORT ncclResult_t pncclRedOpCreatePreMulSum(ncclRedOp_t* op, void* scalar,
                                                         ncclDataType_t datatype,
                                                         ncclScalarResidence_t residence,
                                                         ncclComm_t comm);

/** Destroys an operator made by ncclRedOpCreatePreMulSum on `comm`. It may be destroyed as soon
 *  as the last call that was given it has returned. */
BRAID_NCCL_EXPORT ncclResult_t ncclRedOpDestroy(ncclRedOp_t op, ncclComm_t comm);
BRAID_NCCL_EXPORT ncclResult_t pncclRedOpDestroy(ncclRedOp_t op, ncclComm_t comm);

/* ---- Collectives ------------------------------------------------------------------------------
 *
 * Every rank of the communicator must make the same sequence of collective calls with matching
 * arguments. A call returns once the operation is queued on `stream`; it completes in stream
 * order. Counts are in elements of `datatype`. Because the ranks wait for each other, one thread
 * that drives several ranks must enclose their calls in ncclGroupStart / ncclGroupEnd.
 */

/** Reduces `count` elements from every rank's sendbuff with `op`; the result lands in recvbuff
 *  of rank `root` only (recvbuff is ignored elsewhere). In place when sendbuff == recvbuff. */
BRAID_NCCL_EXPORT ncclResult_t ncclReduce(const void* sendbuff, void* recvbuff, size_t count,
                                          ncclDataType_t datatype, ncclRedOp_t op, int root,
                                          ncclComm_t comm, cudaStream_t stream);
BRAID_NCCL_EXPORT ncclResult_t pncclReduce(const void* sendbuff, void* recvbuff, size_t count,
                                           ncclDataType_t datatype, ncclRedOp_t op, int root,
                                           ncclComm_t comm, cudaStream_t stream);

/** Older in-place form of ncclBroadcast: copies `count` elements of root's buff into buff on
 *  every other rank. */
BRAID_NCCL_EXPORT ncclResult_t ncclBcast(void* buff, size_t count, ncclDataType_t datatype,
                                         int root, ncclComm_t comm, cudaStream_t stream);
BRAID_NCCL_EXPORT ncclResult_t pncclBcast(void* buff, size_t count, ncclDataType_t datatype,
                                          int root, ncclComm_t comm, cudaStream_t stream);

/** Copies `count` elements from sendbuff of rank `root` into recvbuff of every rank. In place
 *  when sendbuff == recvbuff. */
BRAID_NCCL_EXPORT ncclResult_t ncclBroadcast(const void* sendbuff, void* recvbuff, size_t count,
                                             ncclDataType_t datatype, int root, ncclComm_t comm,
                                             cudaStream_t stream);
BRAID_NCCL_EXPORT ncclResult_t pncclBroadcast(const void* sendbuff, void* recvbuff, size_t count,
                                              ncclDataType_t datatype, int root, ncclComm_t comm,
                                              cudaStream_t stream);

/** Reduces `count` elements from every rank's sendbuff with `op` and leaves the result in
 *  recvbuff of every rank. In place when sendbuff == recvbuff. */
BRAID_NCCL_EXPORT ncclResult_t ncclAllReduce(const void* sendbuff, void* recvbuff, size_t count,
                                             ncclDataType_t datatype, ncclRedOp_t op,
                                             ncclComm_t comm, cudaStream_t stream);
BRAID_NCCL_EXPORT ncclResult_t pncclAllReduce(const void* sendbuff, void* recvbuff, size_t count,
                                              ncclDataType_t datatype, ncclRedOp_t op,
                                              ncclComm_t comm, cudaStream_t stream);

/** Reduces nranks * recvcount elements from every rank's sendbuff with `op`; rank i receives
 *  block i (recvcount elements) of the result. In place when
 *  recvbuff == sendbuff + rank * recvcount elements. */
BRAID_NCCL_EXPORT ncclResult_t ncclReduceScatter(const void* sendbuff, void* recvbuff,
                                                 size_t recvcount, ncclDataType_t datatype,
                                                 ncclRedOp_t op, ncclComm_t comm,
                                                 cudaStream_t stream);
BRAID_NCCL_EXPORT ncclResult_t pncclReduceScatter(const void* sendbuff, void* recvbuff,
                                                  size_t recvcount, ncclDataType_t datatype,
                                                  ncclRedOp_t op, ncclComm_t comm,
                                                  cudaStream_t stream);

/** Every rank contributes `sendcount` elements; recvbuff of every rank receives all
 *  contributions ordered by rank (rank i's at offset i * sendcount). In place when
 *  sendbuff == recvbuff + rank * sendcount elements. */
BRAID_NCCL_EXPORT ncclResult_t ncclAllGather(const void* sendbuff, void* recvbuff, size_t sendcount,
                                             ncclDataType_t datatype, ncclComm_t comm,
                                             cudaStream_t stream);
BRAID_NCCL_EXPORT ncclResult_t pncclAllGather(const void* sendbuff, void* recvbuff,
                                              size_t sendcount, ncclDataType_t datatype,
                                              ncclComm_t comm, cudaStream_t stream);

/** Every rank sends block j (`count` elements at sendbuff + j * count) to rank j, and receives
 *  rank i's block for it at recvbuff + i * count. */
BRAID_NCCL_EXPORT ncclResult_t ncclAlltoAll(const void* sendbuff, void* recvbuff, size_t count,
                                            ncclDataType_t datatype, ncclComm_t comm,
                                            cudaStream_t stream);
BRAID_NCCL_EXPORT ncclResult_t pncclAlltoAll(const void* sendbuff, void* recvbuff, size_t count,
                                             ncclDataType_t datatype, ncclComm_t comm,
                                             cudaStream_t stream);

/** Every rank sends `count` elements to `root`, which stores rank i's at recvbuff + i * count
 *  (recvbuff is ignored elsewhere). In place when sendbuff == recvbuff + root * count. */
BRAID_NCCL_EXPORT ncclResult_t ncclGather(const void* sendbuff, void* recvbuff, size_t count,
                                          ncclDataType_t datatype, int root, ncclComm_t comm,
                                          cudaStream_t stream);
BRAID_NCCL_EXPORT ncclResult_t pncclGather(const void* sendbuff, void* recvbuff, size_t count,
                                           ncclDataType_t datatype, int root, ncclComm_t comm,
                                           cudaStream_t stream);

/** `root` sends block i (`count` elements at sendbuff + i * count) to rank i, which stores it in
 *  recvbuff (sendbuff is ignored off the root). In place when
 *  recvbuff == sendbuff + root * count. */
BRAID_NCCL_EXPORT ncclResult_t ncclScatter(const void* sendbuff, void* recvbuff, size_t count,
                                           ncclDataType_t datatype, int root, ncclComm_t comm,
                                           cudaStream_t stream);
BRAID_NCCL_EXPORT ncclResult_t pncclScatter(const void* sendbuff, void* recvbuff, size_t count,
                                            ncclDataType_t datatype, int root, ncclComm_t comm,
                                            cudaStream_t stream);

/* ---- Collectives with per-call options (2.31) ------------------------------------------------
 *
 * Each collective above has a form that takes a trailing ncclCollConfig_t (initialized with
 * NCCL_COLLCONFIG_INITIALIZER, the same on every rank); config == NULL is the plain call.
 */

BRAID_NCCL_EXPORT ncclResult_t ncclAllReduceConfig(const void* sendbuff, void* recvbuff,
                                                   size_t count, ncclDataType_t datatype,
                                                   ncclRedOp_t op, ncclComm_t comm,
                                                   cudaStream_t stream,
                                                   const ncclCollConfig_t* config);
BRAID_NCCL_EXPORT ncclResult_t pncclAllReduceConfig(const void* sendbuff, void* recvbuff,
                                                    size_t count, ncclDataType_t datatype,
                                                    ncclRedOp_t op, ncclComm_t comm,
                                                    cudaStream_t stream,
                                                    const ncclCollConfig_t* config);

BRAID_NCCL_EXPORT ncclResult_t ncclBroadcastConfig(const void* sendbuff, void* recvbuff,
                                                   size_t count, ncclDataType_t datatype, int root,
                                                   ncclComm_t comm, cudaStream_t stream,
                                                   const ncclCollConfig_t* config);
BRAID_NCCL_EXPORT ncclResult_t pncclBroadcastConfig(const void* sendbuff, void* recvbuff,
                                                    size_t count, ncclDataType_t datatype, int root,
                                                    ncclComm_t comm, cudaStream_t stream,
                                                    const ncclCollConfig_t* config);

BRAID_NCCL_EXPORT ncclResult_t ncclReduceConfig(const void* sendbuff, void* recvbuff, size_t count,
                                                ncclDataType_t datatype, ncclRedOp_t op, int root,
                                                ncclComm_t comm, cudaStream_t stream,
                                                const ncclCollConfig_t* config);
BRAID_NCCL_EXPORT ncclResult_t pncclReduceConfig(const void* sendbuff, void* recvbuff, size_t count,
                                                 ncclDataType_t datatype, ncclRedOp_t op, int root,
                                                 ncclComm_t comm, cudaStream_t stream,
                                                 const ncclCollConfig_t* config);

BRAID_NCCL_EXPORT ncclResult_t ncclAllGatherConfig(const void* sendbuff, void* recvbuff,
                                                   size_t sendcount, ncclDataType_t datatype,
                                                   ncclComm_t comm, cudaStream_t stream,
                                                   const ncclCollConfig_t* config);
BRAID_NCCL_EXPORT ncclResult_t pncclAllGatherConfig(const void* sendbuff, void* recvbuff,
                                                    size_t sendcount, ncclDataType_t datatype,
                                                    ncclComm_t comm, cudaStream_t stream,
                                                    const ncclCollConfig_t* config);

BRAID_NCCL_EXPORT ncclResult_t ncclReduceScatterConfig(const void* sendbuff, void* recvbuff,
                                                       size_t recvcount, ncclDataType_t datatype,
                                                       ncclRedOp_t op, ncclComm_t comm,
                                                       cudaStream_t stream,
                                                       const ncclCollConfig_t* config);
BRAID_NCCL_EXPORT ncclResult_t pncclReduceScatterConfig(const void* sendbuff, void* recvbuff,
                                                        size_t recvcount, ncclDataType_t datatype,
                                                        ncclRedOp_t op, ncclComm_t comm,
                                                        cudaStream_t stream,
                                                        const ncclCollConfig_t* config);

BRAID_NCCL_EXPORT ncclResult_t ncclAlltoAllConfig(const void* sendbuff, void* recvbuff,
                                                  size_t count, ncclDataType_t datatype,
                                                  ncclComm_t comm, cudaStream_t stream,
                                                  const ncclCollConfig_t* config);
BRAID_NCCL_EXPORT ncclResult_t pncclAlltoAllConfig(const void* sendbuff, void* recvbuff,
                                                   size_t count, ncclDataType_t datatype,
                                                   ncclComm_t comm, cudaStream_t stream,
                                                   const ncclCollConfig_t* config);

BRAID_NCCL_EXPORT ncclResult_t ncclGatherConfig(const void* sendbuff, void* recvbuff, size_t count,
                                                ncclDataType_t datatype, int root, ncclComm_t comm,
                                                cudaStream_t stream,
                                                const ncclCollConfig_t* config);
BRAID_NCCL_EXPORT ncclResult_t pncclGatherConfig(const void* sendbuff, void* recvbuff, size_t count,
                                                 ncclDataType_t datatype, int root, ncclComm_t comm,
                                                 cudaStream_t stream,
                                                 const ncclCollConfig_t* config);

BRAID_NCCL_EXPORT ncclResult_t ncclScatterConfig(const void* sendbuff, void* recvbuff, size_t count,
                                                 ncclDataType_t datatype, int root, ncclComm_t comm,
                                                 cudaStream_t stream,
                                                 const ncclCollConfig_t* config);
BRAID_NCCL_EXPORT ncclResult_t pncclScatterConfig(const void* sendbuff, void* recvbuff,
                                                  size_t count, ncclDataType_t datatype, int root,
                                                  ncclComm_t comm, cudaStream_t stream,
                                                  const ncclCollConfig_t* config);

/* ---- Point-to-point -------------------------------------------------------------------------- */

/** Sends `count` elements from sendbuff to rank `peer`, which must post a matching ncclRecv.
 *  The stream waits until the transfer is done; sends and receives that must make progress
 *  together (an exchange, a ring shift) belong in one ncclGroupStart / ncclGroupEnd. */
BRAID_NCCL_EXPORT ncclResult_t ncclSend(const void* sendbuff, size_t count, ncclDataType_t datatype,
                                        int peer, ncclComm_t comm, cudaStream_t stream);
BRAID_NCCL_EXPORT ncclResult_t pncclSend(const void* sendbuff, size_t count,
                                         ncclDataType_t datatype, int peer, ncclComm_t comm,
                                         cudaStream_t stream);

/** Receives `count` elements from rank `peer` into recvbuff; the counterpart of ncclSend. */
BRAID_NCCL_EXPORT ncclResult_t ncclRecv(void* recvbuff, size_t count, ncclDataType_t datatype,
                                        int peer, ncclComm_t comm, cudaStream_t stream);
BRAID_NCCL_EXPORT ncclResult_t pncclRecv(void* recvbuff, size_t count, ncclDataType_t datatype,
                                         int peer, ncclComm_t comm, cudaStream_t stream);

/* ---- One-sided operations (2.30) ------------------------------------------------------------ */

/** Writes `count` elements from localbuff into rank `peer`'s part of the window `peerWin`, at
 *  `peerWinOffset` bytes, without a matching call on the peer, then raises signal `sigIdx` of
 *  context `ctx` there. `flags` is reserved (0). */
BRAID_NCCL_EXPORT ncclResult_t ncclPutSignal(const void* localbuff, size_t count,
                                             ncclDataType_t datatype, int peer,
                                             ncclWindow_t peerWin, size_t peerWinOffset, int sigIdx,
                                             int ctx, unsigned int flags, ncclComm_t comm,
                                             cudaStream_t stream);
BRAID_NCCL_EXPORT ncclResult_t pncclPutSignal(const void* localbuff, size_t count,
                                              ncclDataType_t datatype, int peer,
                                              ncclWindow_t peerWin, size_t peerWinOffset,
                                              int sigIdx, int ctx, unsigned int flags,
                                              ncclComm_t comm, cudaStream_t stream);

/** Raises signal `sigIdx` of context `ctx` on rank `peer`, moving no data. */
BRAID_NCCL_EXPORT ncclResult_t ncclSignal(int peer, int sigIdx, int ctx, unsigned int flags,
                                          ncclComm_t comm, cudaStream_t stream);
BRAID_NCCL_EXPORT ncclResult_t pncclSignal(int peer, int sigIdx, int ctx, unsigned int flags,
                                           ncclComm_t comm, cudaStream_t stream);

/** One thing ncclWaitSignal waits for: `opCnt` signals from `peer` on (sigIdx, ctx). */
typedef struct {
  int opCnt;  /**< Signals to wait for. */
  int peer;   /**< The rank that raises them. */
  int sigIdx; /**< The signal. */
  int ctx;    /**< Its context. */
} ncclWaitSignalDesc_t;

/** Makes `stream` wait until every one of the `nDesc` descriptors is satisfied. */
BRAID_NCCL_EXPORT ncclResult_t ncclWaitSignal(int nDesc, ncclWaitSignalDesc_t* signalDescs,
                                              ncclComm_t comm, cudaStream_t stream);
BRAID_NCCL_EXPORT ncclResult_t pncclWaitSignal(int nDesc, ncclWaitSignalDesc_t* signalDescs,
                                               ncclComm_t comm, cudaStream_t stream);

/* ---- Groups -----------------------------------------------------------------------------------
 *
 * Calls between ncclGroupStart and the matching ncclGroupEnd are collected and launched
 * together at ncclGroupEnd. This lets one thread drive several ranks without deadlock, lets
 * sends and receives progress concurrently, and lets several operations be fused. Groups nest;
 * only the outermost ncclGroupEnd launches. Communicator creation may be grouped too, but not in
 * the same group as operations.
 */

/** Opens a group. */
BRAID_NCCL_EXPORT ncclResult_t ncclGroupStart(void);
BRAID_NCCL_EXPORT ncclResult_t pncclGroupStart(void);

/** Closes a group and, if it is the outermost, queues all its operations on their streams. It
 *  does not wait for them to finish. */
BRAID_NCCL_EXPORT ncclResult_t ncclGroupEnd(void);
BRAID_NCCL_EXPORT ncclResult_t pncclGroupEnd(void);

/** Closes a group like ncclGroupEnd but runs nothing: it only estimates how long the group's
 *  operations would take and reports it in *simInfo (initialized with
 *  NCCL_SIM_INFO_INITIALIZER). */
BRAID_NCCL_EXPORT ncclResult_t ncclGroupSimulateEnd(ncclSimInfo_t* simInfo);
BRAID_NCCL_EXPORT ncclResult_t pncclGroupSimulateEnd(ncclSimInfo_t* simInfo);

/* ---- Parameters (2.30) -----------------------------------------------------------------------
 *
 * The library's settings, by key: the NCCL_* (or BRAID_*) environment variable's name. Values
 * are what a communicator created now would use. Returned strings and tables belong to the
 * library and stay valid until the same call is made again on the same thread.
 */

/** A parameter, as ncclParamBind finds it. The library owns it; never free it. */
typedef struct ncclParamHandle* ncclParamHandle_t;

/** Finds the parameter called `key`. */
BRAID_NCCL_EXPORT ncclResult_t ncclParamBind(ncclParamHandle_t* out, const char* key);
BRAID_NCCL_EXPORT ncclResult_t pncclParamBind(ncclParamHandle_t* out, const char* key);

/** Reads a parameter of that integer type; a parameter of another type is refused. */
BRAID_NCCL_EXPORT ncclResult_t ncclParamGetI8(ncclParamHandle_t h, int8_t* out);
BRAID_NCCL_EXPORT ncclResult_t pncclParamGetI8(ncclParamHandle_t h, int8_t* out);
BRAID_NCCL_EXPORT ncclResult_t ncclParamGetI16(ncclParamHandle_t h, int16_t* out);
BRAID_NCCL_EXPORT ncclResult_t pncclParamGetI16(ncclParamHandle_t h, int16_t* out);
BRAID_NCCL_EXPORT ncclResult_t ncclParamGetI32(ncclParamHandle_t h, int32_t* out);
BRAID_NCCL_EXPORT ncclResult_t pncclParamGetI32(ncclParamHandle_t h, int32_t* out);
BRAID_NCCL_EXPORT ncclResult_t ncclParamGetI64(ncclParamHandle_t h, int64_t* out);
BRAID_NCCL_EXPORT ncclResult_t pncclParamGetI64(ncclParamHandle_t h, int64_t* out);
BRAID_NCCL_EXPORT ncclResult_t ncclParamGetU8(ncclParamHandle_t h, uint8_t* out);
BRAID_NCCL_EXPORT ncclResult_t pncclParamGetU8(ncclParamHandle_t h, uint8_t* out);
BRAID_NCCL_EXPORT ncclResult_t ncclParamGetU16(ncclParamHandle_t h, uint16_t* out);
BRAID_NCCL_EXPORT ncclResult_t pncclParamGetU16(ncclParamHandle_t h, uint16_t* out);
BRAID_NCCL_EXPORT ncclResult_t ncclParamGetU32(ncclParamHandle_t h, uint32_t* out);
BRAID_NCCL_EXPORT ncclResult_t pncclParamGetU32(ncclParamHandle_t h, uint32_t* out);
BRAID_NCCL_EXPORT ncclResult_t ncclParamGetU64(ncclParamHandle_t h, uint64_t* out);
BRAID_NCCL_EXPORT ncclResult_t pncclParamGetU64(ncclParamHandle_t h, uint64_t* out);

/** Reads a string parameter. */
BRAID_NCCL_EXPORT ncclResult_t ncclParamGetStr(ncclParamHandle_t h, const char** out);
BRAID_NCCL_EXPORT ncclResult_t pncclParamGetStr(ncclParamHandle_t h, const char** out);

/** Copies a parameter's value, as raw bytes of its type, into out (maxLen bytes of room); its
 *  length goes to *len. */
BRAID_NCCL_EXPORT ncclResult_t ncclParamGet(ncclParamHandle_t h, void* out, int maxLen, int* len);
BRAID_NCCL_EXPORT ncclResult_t pncclParamGet(ncclParamHandle_t h, void* out, int maxLen, int* len);

/** A parameter's value as text, by key. */
BRAID_NCCL_EXPORT ncclResult_t ncclParamGetParameter(const char* key, const char** value,
                                                     int* valueLen);
BRAID_NCCL_EXPORT ncclResult_t pncclParamGetParameter(const char* key, const char** value,
                                                      int* valueLen);

/** Every parameter's key. */
BRAID_NCCL_EXPORT ncclResult_t ncclParamGetAllParameterKeys(const char*** table, int* tableLen);
BRAID_NCCL_EXPORT ncclResult_t pncclParamGetAllParameterKeys(const char*** table, int* tableLen);

/** Prints every parameter and its value to standard output. */
BRAID_NCCL_EXPORT void ncclParamDumpAll(void);
BRAID_NCCL_EXPORT void pncclParamDumpAll(void);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* NCCL_H_ */
