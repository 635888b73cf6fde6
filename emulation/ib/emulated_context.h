// An open context of an emulated HCA (what ibv_open_device returns) and the objects made on it:
// protection domains, memory regions, completion queues and queue pairs.
//
// The context owns them all, as the kernel does for a real verbs context: closing it destroys
// what the application left (queue pairs first, so that no thread of theirs outlives it). Each
// call checks that the objects it is given belong to this context; objects still in use cannot
// be destroyed (EBUSY), as libibverbs refuses.
#pragma once

#include <infiniband/verbs.h>
#include <sys/mman.h>

#include <memory>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "braid/status.h"
#include "emulation/ib/emulated_async_events.h"
#include "emulation/ib/emulated_cq.h"
#include "emulation/ib/emulated_gid_table.h"
#include "emulation/ib/emulated_handle.h"
#include "emulation/ib/emulated_hca.h"
#include "emulation/ib/emulated_qp.h"

namespace braid::transport::ib::emulated {

struct ProtectionDomain {
  VerbsHandle<ibv_pd, ProtectionDomain> handle;
  int regions = 0;     ///< guarded by the context's mutex
  int queuePairs = 0;  ///< likewise
};

struct MemoryRegion {
  VerbsHandle<ibv_mr, MemoryRegion> handle;
  ProtectionDomain* pd = nullptr;
  MrKeys keys;
  /// A dmabuf region's own mapping of the exported memory (the HCA's view of it), unmapped once
  /// the region is deregistered; none for ibv_reg_mr's.
  void* mapping = nullptr;
  size_t mappingBytes = 0;
  ~MemoryRegion() {
    if (mapping != nullptr) munmap(mapping, mappingBytes);
  }
};

class Context {
 public:
  /// Opens device `deviceIndex` (described by `device`): its GID table, read now, and its HCA.
  static Result<std::unique_ptr<Context>> open(const ibv_device& device, int deviceIndex);
  ~Context();
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;

  ibv_context* verbs() { return &handle_.verbs; }
  static Context* from(ibv_context* context) { return Handle::ownerOf(context); }
  int deviceIndex() const { return hca_->index(); }
  const std::vector<GidEntry>& gids() const { return gids_; }
  Hca& hca() const { return *hca_; }
  /// ibv_get_async_event on this context (its async_fd is the queue's eventfd).
  int getAsyncEvent(ibv_async_event* event) { return asyncEvents_.get(event); }

  // Each returns nullptr and sets errno, or returns an errno value, as libibverbs does.
  ibv_pd* allocPd();
  int deallocPd(ibv_pd* pd);
  ibv_mr* regMr(ibv_pd* pd, void* addr, size_t length, int access);
  /// ibv_reg_dmabuf_mr over an emulated GPU's export (emulation/gpu/emulated_dmabuf.h), with the
  /// kernel's refusals: EBADF for a descriptor that is not open, EINVAL for one that is no
  /// dmabuf, a range past its end, or an iova whose offset in its page is not the dmabuf
  /// offset's.
  ibv_mr* regDmabufMr(ibv_pd* pd, uint64_t offset, size_t length, uint64_t iova, int fd,
                      int access);
  int deregMr(ibv_mr* mr);
  ibv_cq* createCq(int cqe);
  int destroyCq(ibv_cq* cq);
  ibv_qp* createQp(ibv_pd* pd, ibv_qp_init_attr* attr);
  int destroyQp(ibv_qp* qp);

 private:
  using Handle = VerbsHandle<ibv_context, Context>;

  Context(const ibv_device& device, std::shared_ptr<Hca> hca, std::vector<GidEntry> gids);
  int checkQpInit(const ibv_qp_init_attr& attr) const;
  /// A region of `pd` for [addr, addr + length), whose bytes lie at `host`; nullptr with errno.
  ibv_mr* addRegion(ibv_pd* pd, uint64_t addr, size_t length, int access, uintptr_t host,
                    void* mapping, size_t mappingBytes);
  /// Stops a QP that is out of the table already, then lets go of its PD and CQs.
  void retire(std::unique_ptr<QueuePair> qp);

  Handle handle_;
  ibv_device device_;  ///< a copy: the application may free the device list
  const std::shared_ptr<Hca> hca_;
  const std::vector<GidEntry> gids_;
  AsyncEventQueue asyncEvents_;  ///< subscribed to hca_'s port events while open

  std::mutex mu_;
  std::unordered_map<ibv_pd*, std::unique_ptr<ProtectionDomain>> pds_;
  std::unordered_map<ibv_mr*, std::unique_ptr<MemoryRegion>> mrs_;
  std::unordered_map<ibv_cq*, std::unique_ptr<CompletionQueue>> cqs_;
  std::unordered_map<ibv_cq*, int> cqUsers_;  ///< QPs that use each CQ
  std::unordered_map<ibv_qp*, std::unique_ptr<QueuePair>> qps_;
};

}  // namespace braid::transport::ib::emulated
