// The C API of communicator life: ids, creation, destruction and queries.
#include <cstddef>
#include <cstring>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "api/api_util.h"
#include "api/config_view.h"
#include "api/group.h"
#include "base/log.h"
#include "braid_ext.h"

using braid::Comm;
using braid::Status;
using braid::api::checkConfig;
using braid::api::commFrom;
using braid::api::CommSettings;
using braid::api::report;

namespace {

// Checks what creation needs of its arguments, before any thread starts.
Status checkInit(ncclComm_t* out, int nranks, int rank) {
  if (out == nullptr) return braid::invalidArgument("comm (the output pointer) is NULL");
  *out = nullptr;
  if (nranks <= 0)
    return braid::invalidArgument("nranks must be positive, got " + std::to_string(nranks));
  if (rank < 0 || rank >= nranks) {
    return braid::invalidArgument("rank " + std::to_string(rank) + " is outside [0, " +
                                  std::to_string(nranks) + ")");
  }
  return Status::success();
}

braid::Result<std::unique_ptr<Comm>> makeComm(int nranks, const ncclUniqueId& commId, int rank,
                                              const braid::CommOptions& options) {
  braid::UniqueId id;
  static_assert(sizeof(id.bytes) == sizeof(commId.internal), "unique id sizes differ");
  memcpy(id.bytes, commId.internal, sizeof(id.bytes));
  return Comm::create(id, nranks, rank, options);
}

// Creates the communicator with `settings` (its checked config's): at once, or with blocking = 0
// on a thread of its own, setting *inProgress (ncclInProgress: ncclCommGetAsyncError says
// when it is done; until then other calls on the handle fail with ncclInvalidArgument).
Status initRank(ncclComm_t* out, int nranks, const ncclUniqueId& commId, int rank,
                const CommSettings& settings, braid::CommOptions options, bool* inProgress) {
  *inProgress = false;
  BRAID_TRY(checkInit(out, nranks, rank));
  // The device is the calling thread's, also for a creation on another thread.
  if (options.device < 0) options.device = Comm::currentDevice();
  settings.applyTo(options);
  auto handle = std::make_unique<ncclComm>();
  handle->settings = settings;
  if (settings.blocking) {
    BRAID_ASSIGN_OR_RETURN(handle->comm, makeComm(nranks, commId, rank, options));
    *out = handle.release();
    return Status::success();
  }
  ncclComm* h = handle.release();
  h->initDone.store(false);
  options.stop = h->initStop;
  h->creator = std::thread([h, nranks, commId, rank, options] {
    auto made = makeComm(nranks, commId, rank, options);
    if (made.ok()) {
      h->comm = std::move(made).value();
    } else {
      h->initResult = made.status();
      BRAID_WARN("non-blocking ncclCommInitRank failed: %s", made.status().message().c_str());
    }
    h->initDone.store(true, std::memory_order_release);
  });
  *out = h;
  *inProgress = true;
  return Status::success();
}

// Inside a group, creation runs at ncclGroupEnd, concurrently with the
// creation of other ranks, which is how one thread creates several ranks.
ncclResult_t initRankOrDefer(ncclComm_t* comm, int nranks, const ncclUniqueId& commId, int rank,
                             const ncclConfig_t* config, bool hostMemory = false,
                             std::vector<braid::UniqueId> moreIds = {}) {
  braid::CommOptions options;
  options.hostMemory = hostMemory;
  options.moreIds = std::move(moreIds);
  Status checked = checkConfig(config);
  if (!checked.ok()) {
    if (comm != nullptr) *comm = nullptr;
    return report(checked);
  }
  // Read now: the caller's config need not outlive the call.
  CommSettings settings = CommSettings::of(config);
  if (braid::api::groupDepth() == 0) {
    bool inProgress = false;
    const Status s = initRank(comm, nranks, commId, rank, settings, options, &inProgress);
    if (!s.ok()) return report(s);
    return inProgress ? ncclInProgress : ncclSuccess;
  }
  if (comm == nullptr) return report(braid::invalidArgument("comm (the output pointer) is NULL"));
  *comm = nullptr;
  // In a group creation blocks until ncclGroupEnd, whatever the config says.
  settings.blocking = true;
  if (!hostMemory) options.device = Comm::currentDevice();
  return braid::api::runOrDefer(static_cast<const void*>(comm), [=] {
    bool inProgress = false;
    return initRank(comm, nranks, commId, rank, settings, options, &inProgress);
  });
}

}  // namespace

BRAID_NCCL_API(ncclResult_t, ncclGetVersion, int* version) {
  if (version == nullptr) return report(braid::invalidArgument("version is NULL"));
  *version = NCCL_VERSION_CODE;
  return ncclSuccess;
}

BRAID_NCCL_API(ncclResult_t, ncclGetUniqueId, ncclUniqueId* uniqueId) {
  if (uniqueId == nullptr) return report(braid::invalidArgument("uniqueId is NULL"));
  auto id = Comm::newUniqueId();
  if (!id.ok()) return report(id.status());
  memcpy(uniqueId->internal, id.value().bytes, sizeof(uniqueId->internal));
  return ncclSuccess;
}

BRAID_NCCL_API(ncclResult_t, ncclCommInitRankConfig, ncclComm_t* comm, int nranks,
               ncclUniqueId commId, int rank, ncclConfig_t* config) {
  return initRankOrDefer(comm, nranks, commId, rank, config);
}

// Every rank holds the same nId ids; as NCCL, braid spreads the rendezvous over their roots,
// each meeting one contiguous block of the ranks (bootstrap/root_blocks.h). The communicator is
// the first id's.
BRAID_NCCL_API(ncclResult_t, ncclCommInitRankScalable, ncclComm_t* newcomm, int nranks, int myrank,
               int nId, ncclUniqueId* commIds, ncclConfig_t* config) {
  if (nId < 1)
    return report(braid::invalidArgument("nId must be at least 1, got " + std::to_string(nId)));
  if (commIds == nullptr) return report(braid::invalidArgument("commIds is NULL"));
  if (nId > nranks && nranks >= 1) {
    return report(braid::invalidArgument("ncclCommInitRankScalable: nId " + std::to_string(nId) +
                                         " is more than the " + std::to_string(nranks) +
                                         " ranks: each id's root must meet at least one rank"));
  }
  std::vector<braid::UniqueId> moreIds(nId > 1 ? nId - 1 : 0);
  for (int i = 1; i < nId; ++i)
    memcpy(moreIds[i - 1].bytes, commIds[i].internal, sizeof(commIds[i].internal));
  return initRankOrDefer(newcomm, nranks, commIds[0], myrank, config, false, std::move(moreIds));
}

BRAID_NCCL_API(ncclResult_t, ncclCommInitRank, ncclComm_t* comm, int nranks, ncclUniqueId commId,
               int rank) {
  return initRankOrDefer(comm, nranks, commId, rank, nullptr);
}

// braid_ext.h: what ncclCommInitRankConfig makes, on host memory whatever
// device is current (the PyTorch backend's communicators for CPU tensors).
extern "C" __attribute__((visibility("default"))) ncclResult_t braidCommInitRankHost(
    ncclComm_t* comm, int nranks, ncclUniqueId commId, int rank, ncclConfig_t* config) {
  return initRankOrDefer(comm, nranks, commId, rank, config, /*hostMemory=*/true);
}

// Rank i runs on devlist[i] (device i without a list); several ranks may
// share a device. On a machine without GPUs the ranks run on host memory
// and the list only sets their count.
BRAID_NCCL_API(ncclResult_t, ncclCommInitAll, ncclComm_t* comm, int ndev, const int* devlist) {
  if (comm == nullptr) return report(braid::invalidArgument("comm array is NULL"));
  if (ndev <= 0) {
    return report(braid::invalidArgument("ndev must be positive, got " + std::to_string(ndev)));
  }
  const bool gpus = Comm::currentDevice() >= 0;
  // A rank whose device is wrong would fail alone and leave the others
  // waiting for it: check the list before any rank starts.
  if (gpus && devlist != nullptr) {
    const int count = braidGetDeviceApi()->deviceCount();
    for (int i = 0; i < ndev; ++i) {
      if (devlist[i] < 0 || devlist[i] >= count) {
        return report(braid::invalidArgument("ncclCommInitAll: devlist[" + std::to_string(i) +
                                             "] is device " + std::to_string(devlist[i]) +
                                             ", outside the " + std::to_string(count) +
                                             " devices here"));
      }
    }
  }
  ncclUniqueId id;
  ncclResult_t r = pncclGetUniqueId(&id);
  if (r != ncclSuccess) return r;
  // Creation blocks until every rank has joined, so each rank needs a thread.
  std::vector<Status> results(ndev);
  std::vector<std::thread> threads;
  for (int i = 0; i < ndev; ++i) {
    braid::CommOptions options;
    if (gpus) options.device = devlist != nullptr ? devlist[i] : i;
    threads.emplace_back([&, i, options] {
      bool inProgress = false;
      results[i] = initRank(&comm[i], ndev, id, i, CommSettings{}, options, &inProgress);
    });
  }
  for (auto& t : threads) t.join();
  for (int i = 0; i < ndev; ++i) {
    if (!results[i].ok()) {
      for (int j = 0; j < ndev; ++j) {
        delete comm[j];
        comm[j] = nullptr;
      }
      return report(results[i].withContext("ncclCommInitAll, rank " + std::to_string(i)));
    }
  }
  return ncclSuccess;
}

// Every rank of `comm` takes part; in a group the split runs at ncclGroupEnd
// with the parent's other operations, concurrently with other parents', so
// one thread can split several ranks. The new communicator runs where the
// parent does and reads the environment as any new one; a non-blocking
// config's split completes before it returns.
BRAID_NCCL_API(ncclResult_t, ncclCommSplit, ncclComm_t comm, int color, int key,
               ncclComm_t* newcomm, ncclConfig_t* config) {
  auto c = commFrom(comm);
  if (!c.ok()) return report(c.status());
  if (newcomm == nullptr) return report(braid::invalidArgument("newcomm is NULL"));
  *newcomm = nullptr;
  Status checked = checkConfig(config);
  if (!checked.ok()) return report(checked);
  const CommSettings settings = CommSettings::forChild(config, comm->settings);
  braid::Comm* parent = c.value();
  return braid::api::runOrDefer(parent, [parent, color, key, newcomm, settings] {
    braid::CommOptions child;
    settings.applyTo(child);
    BRAID_ASSIGN_OR_RETURN(std::unique_ptr<Comm> made, parent->split(color, key, child));
    if (made) *newcomm = braid::api::newHandle(std::move(made), settings);
    return Status::success();  // no communicator for NCCL_SPLIT_NOCOLOR
  });
}

// Revoking stops what runs on this rank's communicator and waits for it; it does not wait for
// other ranks, which revoke their own (as NCCL's, the call is local).
BRAID_NCCL_API(ncclResult_t, ncclCommRevoke, ncclComm_t comm, int revokeFlags) {
  auto c = commFrom(comm);
  if (!c.ok()) return report(c.status());
  if (revokeFlags != NCCL_REVOKE_DEFAULT) {
    return report(braid::invalidArgument("revokeFlags must be NCCL_REVOKE_DEFAULT (0), got " +
                                         std::to_string(revokeFlags)));
  }
  return report(c.value()->revoke());
}

// Every rank not excluded takes part, with the same list; the excluded ones may be dead. Like a
// split, a shrink in a group runs at ncclGroupEnd, and a non-blocking config's completes before
// it returns.
BRAID_NCCL_API(ncclResult_t, ncclCommShrink, ncclComm_t comm, int* excludeRanksList,
               int excludeRanksCount, ncclComm_t* newcomm, ncclConfig_t* config, int shrinkFlags) {
  auto c = commFrom(comm);
  if (!c.ok()) return report(c.status());
  if (newcomm == nullptr) return report(braid::invalidArgument("newcomm is NULL"));
  *newcomm = nullptr;
  if (excludeRanksCount <= 0) {
    return report(braid::invalidArgument("excludeRanksCount must be positive, got " +
                                         std::to_string(excludeRanksCount)));
  }
  if (excludeRanksList == nullptr) {
    return report(braid::invalidArgument("excludeRanksList is NULL"));
  }
  if (shrinkFlags != NCCL_SHRINK_DEFAULT && shrinkFlags != NCCL_SHRINK_ABORT) {
    return report(braid::invalidArgument(
        "shrinkFlags must be NCCL_SHRINK_DEFAULT or NCCL_SHRINK_ABORT, got " +
        std::to_string(shrinkFlags)));
  }
  Status checked = checkConfig(config);
  if (!checked.ok()) return report(checked);
  const CommSettings settings = CommSettings::forChild(config, comm->settings);
  std::vector<int> exclude(excludeRanksList, excludeRanksList + excludeRanksCount);
  braid::Comm* parent = c.value();
  const bool abortFirst = shrinkFlags == NCCL_SHRINK_ABORT;
  return braid::api::runOrDefer(parent, [parent, exclude, abortFirst, newcomm, settings] {
    braid::CommOptions child;
    settings.applyTo(child);
    BRAID_ASSIGN_OR_RETURN(std::unique_ptr<Comm> made, parent->shrink(exclude, abortFirst, child));
    *newcomm = braid::api::newHandle(std::move(made), settings);
    return Status::success();
  });
}

// Finalizing waits for every rank, so one thread finalizing several ranks
// does it in a group: the finalizes then run together at ncclGroupEnd.
BRAID_NCCL_API(ncclResult_t, ncclCommFinalize, ncclComm_t comm) {
  auto c = commFrom(comm);
  if (!c.ok()) return report(c.status());
  braid::Comm* raw = c.value();
  return braid::api::runOrDefer(raw, [raw] { return raw->finalize(); });
}

// In a group the handle goes once the group's operations have run, the
// ones queued for this communicator (a finalize) among them.
BRAID_NCCL_API(ncclResult_t, ncclCommDestroy, ncclComm_t comm) {
  if (comm == nullptr) return ncclSuccess;  // as NCCL: destroying NULL is a no-op
  if (comm->magic != ncclComm::kMagic) return report(commFrom(comm).status());
  comm->magic = 0;  // no call after this one may use the handle
  braid::api::runAfterGroup([comm] {
    (void)comm->finishInit();  // a failed non-blocking creation still has a handle to free
    delete comm;
  });
  return ncclSuccess;
}

BRAID_NCCL_API(ncclResult_t, ncclCommAbort, ncclComm_t comm) {
  if (comm == nullptr) return ncclSuccess;
  if (comm->magic != ncclComm::kMagic) return report(commFrom(comm).status());
  // A creation still running (blocking = 0) gives up at once rather than be waited for.
  comm->initStop->store(true);
  (void)comm->finishInit();
  if (comm->comm) comm->comm->abort();
  comm->magic = 0;
  delete comm;
  return ncclSuccess;
}

BRAID_NCCL_API(ncclResult_t, ncclCommCount, const ncclComm_t comm, int* count) {
  auto c = commFrom(comm, /*evenSuspended=*/true);
  if (!c.ok()) return report(c.status());
  if (count == nullptr) return report(braid::invalidArgument("count is NULL"));
  *count = c.value()->size();
  return ncclSuccess;
}

BRAID_NCCL_API(ncclResult_t, ncclCommUserRank, const ncclComm_t comm, int* rank) {
  auto c = commFrom(comm, /*evenSuspended=*/true);
  if (!c.ok()) return report(c.status());
  if (rank == nullptr) return report(braid::invalidArgument("rank is NULL"));
  *rank = c.value()->rank();
  return ncclSuccess;
}

BRAID_NCCL_API(ncclResult_t, ncclCommCuDevice, const ncclComm_t comm, int* device) {
  auto c = commFrom(comm, /*evenSuspended=*/true);
  if (!c.ok()) return report(c.status());
  if (device == nullptr) return report(braid::invalidArgument("device is NULL"));
  *device = c.value()->cudaDevice();
  return ncclSuccess;
}

BRAID_NCCL_API(ncclResult_t, ncclCommGetAsyncError, ncclComm_t comm, ncclResult_t* asyncError) {
  // A non-blocking creation in progress is ncclInProgress, its failure the error.
  if (comm != nullptr && comm->magic == ncclComm::kMagic && asyncError != nullptr) {
    if (!comm->initDone.load(std::memory_order_acquire)) {
      *asyncError = ncclInProgress;
      return ncclSuccess;
    }
    if (!comm->comm) {
      (void)comm->finishInit();
      *asyncError = static_cast<ncclResult_t>(comm->initResult.code());
      return ncclSuccess;
    }
  }
  auto c = commFrom(comm);
  if (!c.ok()) return report(c.status());
  if (asyncError == nullptr) return report(braid::invalidArgument("asyncError is NULL"));
  const Status error = c.value()->asyncError();
  // The error's words go where ncclGetLastError finds them, as NCCL's do: a watchdog that polls
  // this call learns why (a lost peer, a kernel that gave up) without another call.
  if (!error.ok()) braid::api::remember(error);
  *asyncError = static_cast<ncclResult_t>(error.code());
  return ncclSuccess;
}

BRAID_NCCL_API(const char*, ncclGetErrorString, ncclResult_t result) {
  switch (result) {
    case ncclSuccess:
      return "no error";
    case ncclUnhandledCudaError:
      return "unhandled cuda error (run with BRAID_DEBUG=INFO for details)";
    case ncclSystemError:
      return "unhandled system error (run with BRAID_DEBUG=INFO for details)";
    case ncclInternalError:
      return "internal error - please report this issue to the braid developers";
    case ncclInvalidArgument:
      return "invalid argument (see ncclGetLastError or BRAID_DEBUG=WARN)";
    case ncclInvalidUsage:
      return "invalid usage (see ncclGetLastError or BRAID_DEBUG=WARN)";
    case ncclRemoteError:
      return "remote process exited, timed out or there was a network error";
    case ncclInProgress:
      return "operation in progress";
    case ncclTimeout:
      return "operation timed out";
    default:
      return "unknown result code";
  }
}

BRAID_NCCL_API(const char*, ncclGetLastError, ncclComm_t comm) {
  (void)comm;  // errors are kept per thread, which is what a caller checking its own call wants
  return braid::api::lastError().c_str();
}

BRAID_NCCL_API(void, ncclResetDebugInit) {
  // braid reads BRAID_DEBUG once per process; re-reading is not supported
  // (the call is deprecated in NCCL too).
}
