// Windows: a GPU communicator's symmetric memory windows (ncclCommWindowRegister), and the
// registry that finds the window holding a range of memory.
//
// A window is a buffer of every rank, registered together (a collective call), that every rank
// can load from and store to: each rank maps every peer's buffer into its own address space
// (window_exchange.h), so a kernel reaches a peer's memory through a pointer. The window's
// handle (ncclWindow_t) points to a struct ncclWindow_vidmem (include/nccl_device/
// window_layout.h) in this rank's device memory, whose lsaBases is a table, also in device
// memory, of where each rank's buffer is mapped here. Windows keeps a host copy of both.
//
// Windows are made where NCCL 2.30.7 makes them: every rank on one host (the load/store team is
// the whole communicator), every GPU reaching every other by peer access, and every buffer in
// shareable memory (ncclMemAlloc's). A communicator spanning hosts, or whose GPUs do not all
// reach each other, declines as NCCL's does without symmetric support: success and no window
// (NULL), said at INFO. A buffer not in shareable memory (cudaMalloc'd) fails, as NCCL's fails
// for it. docs/symmetric-memory.md has the whole story.
//
// It owns its windows (each one's device struct and table, and its mappings of the peers'
// buffers), uses the members (bootstrap, peers) and the GPU side (runtime, device, peer reach),
// and is reached by Comm's window methods (registration.cc). The windows left registered are
// released when it goes (ncclCommDestroy).
#pragma once

#include <cstddef>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

#include "braid/comm.h"  // WindowInfo
#include "braid/status.h"
#include "comm/members.h"
#include "comm/window_exchange.h"
#include "config.h"
#include "gpu/runtime.h"
#include "nccl_device/window_layout.h"

namespace braid::comm {

class GpuSide;

class Windows {
 public:
  Windows(const Config& config, const Members& members, const GpuSide& gpu)
      : config_(config), members_(members), gpu_(gpu) {}
  /// Releases every window left registered.
  ~Windows();
  Windows(const Windows&) = delete;
  Windows& operator=(const Windows&) = delete;

  /// Registers `bytes` at `buffer` as a window with `flags` (collective over the communicator):
  /// its handle, or null where the communicator declines windows (said at INFO).
  Result<ncclWindow_vidmem*> add(void* buffer, size_t bytes, int flags);
  /// Unmaps the peers' buffers, frees the window's struct and table; fails for a handle that is
  /// not a live window of this communicator (never one, or deregistered already).
  Status remove(const void* handle);
  /// This rank's buffer of the window `handle`; fails for one not live here.
  Result<void*> userPointer(const void* handle) const;
  /// The window holding [p, p + bytes), and where in it p is; nullopt where none holds it all.
  std::optional<WindowedBuffer> find(const void* p, size_t bytes) const;
  /// Whether this communicator makes no windows (spanning hosts, or GPUs that do not all reach
  /// each other, as a registration found).
  bool declines() const;

 private:
  /// One registered window: its device struct and table, their host copies, and the mappings
  /// of the peers' buffers it made.
  struct Window {
    ncclWindow_vidmem host{};
    std::vector<char*> lsaBases;
    ncclWindow_vidmem* device = nullptr;
    std::vector<void*> mappings;
  };
  /// Why this communicator declines windows before asking its peers; empty where it does not.
  std::string declinedBefore() const;
  /// What this rank tells the others of `buffer`; `*unshareable` gets why it is not shareable
  /// memory, where it is not.
  WindowOffer offer(void* buffer, size_t bytes, int flags, Status* unshareable) const;
  /// The struct a window of this rank's `buffer` points to, its table not yet placed.
  ncclWindow_vidmem hostStruct(void* buffer, size_t bytes, int flags) const;
  /// Whether every rank made its window (collective: each tells `mine`, its own outcome): every
  /// rank has mapped every buffer before any returns, and a rank that failed leaves none of
  /// the others waiting for it or holding half a window. `mine` where it failed.
  Status agree(const Status& mine) const;
  /// Publishes `w` (publish), agrees with the other ranks, and keeps it: its handle. `w` is
  /// released if that fails.
  Result<ncclWindow_vidmem*> keep(std::unique_ptr<Window> w);
  /// The window's struct and table in device memory, from its host copy.
  Status publish(Window& w);
  /// Frees what `w` holds; the first failure returned.
  Status release(Window& w);

  const Config& config_;
  const Members& members_;
  const GpuSide& gpu_;
  mutable std::mutex mutex_;
  /// By handle (several windows may hold one buffer, as NCCL allows).
  std::map<const void*, std::unique_ptr<Window>> windows_;
  bool declined_ = false;  ///< a registration found the GPUs do not all reach each other
};

/// The live window `handle` of any communicator of this process, for the pointer queries that
/// get only the handle (Comm::lookupWindow); fails for one that is not.
Result<WindowInfo> lookupWindow(const void* handle);

}  // namespace braid::comm
