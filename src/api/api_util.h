// Shared pieces of the C shim: the ncclComm handle, the conversion of Status
// to ncclResult_t (the one place it happens), and the export macro.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "api/config_view.h"
#include "braid/comm.h"
#include "braid/status.h"
#include "nccl.h"

/// Defines `pnccl<name>` as the implementation and `nccl<name>` as a weak
/// alias of it, both exported, as NCCL does: a profiler may interpose the
/// nccl* name and still reach braid through pnccl*.
#define BRAID_NCCL_API(ret, func, ...)                                                             \
  extern "C" __attribute__((visibility("default"))) ret p##func(__VA_ARGS__);                      \
  extern "C" __attribute__((visibility("default"), weak, alias("p" #func))) ret func(__VA_ARGS__); \
  extern "C" __attribute__((visibility("default"))) ret p##func(__VA_ARGS__)

/// The object behind ncclComm_t.
struct ncclComm {
  static constexpr uint64_t kMagic = 0x6272616964636f6dull;  // "braidcom"
  uint64_t magic = kMagic;
  std::unique_ptr<braid::Comm> comm;
  /// What it was made with: a split, grow or shrink with no config gives the child the same.
  braid::api::CommSettings settings;

  // Non-blocking creation (ncclConfig_t.blocking = 0): the handle is
  // returned at once and `creator` makes `comm`; initDone says it finished,
  // initResult how. finishInit() joins it (destroy and abort do; other calls fail until then).
  std::thread creator;
  std::atomic<bool> initDone{true};
  /// Raised by ncclCommAbort while the creation runs: it gives up within milliseconds.
  std::shared_ptr<std::atomic<bool>> initStop = std::make_shared<std::atomic<bool>>(false);
  braid::Status initResult;
  std::mutex initMutex;
  /// Between ncclCommSuspend and ncclCommResume: calls that use the communicator fail.
  std::atomic<bool> suspended{false};
  /// The id ncclCommGetUniqueId made for the next ncclCommGrow, while it is unused.
  std::mutex growMutex;
  bool growIdPending = false;
  ncclUniqueId growId{};
  /// Waits for a non-blocking creation; returns how it ended.
  braid::Status finishInit() {
    std::lock_guard<std::mutex> lock(initMutex);
    if (creator.joinable()) creator.join();
    return initResult;
  }
  ~ncclComm() {
    if (creator.joinable()) creator.join();
  }
};

namespace braid::api {

/// A handle for a communicator made with `settings` (a split's, grow's or shrink's child).
inline ncclComm* newHandle(std::unique_ptr<Comm> comm, const CommSettings& settings) {
  auto handle = std::make_unique<ncclComm>();
  handle->comm = std::move(comm);
  handle->settings = settings;
  return handle.release();
}

/// Records `status` as this thread's last error (ncclGetLastError), logs it
/// at WARN and returns its ncclResult_t.
ncclResult_t report(const Status& status);

/// Records `status` as this thread's last error without logging it (an error polled for).
void remember(const Status& status);

/// This thread's last error message ("" when none).
const std::string& lastError();

/// The Comm behind a handle, or an error for NULL, a handle braid did not make, one whose
/// non-blocking creation has not ended (NCCL refuses those calls too), or, unless
/// `evenSuspended` (queries, resume), one suspended by ncclCommSuspend.
Result<Comm*> commFrom(const ncclComm_t comm, bool evenSuspended = false);

/// Converts and range-checks the C enums.
Result<DataType> dataTypeFrom(ncclDataType_t type);
Result<RedOp> redOpFrom(ncclRedOp_t op);

/// braid's RedOp for a ncclRedOpCreatePreMulSum handle, and back.
RedOp userOpFrom(int ncclValue);
int ncclValueOfUserOp(RedOp op);

/// The error for an entry point braid does not implement yet.
ncclResult_t notImplemented(const char* function, const char* plan);

}  // namespace braid::api
