// The seam between the verbs transport and libibverbs.
//
// The transport (ib_fifo.cc, ib_proxy.cc) calls libibverbs only through a VerbsApi: a table of
// the calls it makes, with rdma-core's own types (<infiniband/verbs.h>), so the code that would
// drive an HCA is the code the tests run. Two tables exist:
//
//   verbs_library.cc   libibverbs.so.1 loaded with dlopen (never linked, so braid loads on
//                      machines without rdma-core); the calls that are inline in verbs.h
//                      (post_send, post_recv, poll_cq) go through the provider's ops as there.
//   emulatedVerbs()    an emulated RoCE HCA in this process, for machines without RDMA
//                      hardware (BRAID_IB_EMULATE): RC queue pairs whose RDMA writes travel over
//                      TCP to the emulated HCA of the peer process, with the checks and the state
//                      machine of a real one. It lives apart, in emulation/ib/ (verbs_emulated.h
//                      describes it); this folder holds only what drives a real HCA.
//
// Only what the transport uses is here: RC queue pairs, RDMA write and RDMA write with
// immediate, RDMA read (the flush after a write into device memory), dmabuf registrations, polled
// completion queues, and the asynchronous events of a context (ib_async_events.h).
#pragma once

#include <infiniband/verbs.h>

#include <cstddef>
#include <cstdint>
#include <string>

namespace braid::transport::ib {

/// A GID table entry's kind, as the kernel reports it in
/// /sys/class/infiniband/<dev>/ports/<port>/gid_attrs/types/<index>.
enum class GidType { kUnknown, kInfiniband, kRoceV1, kRoceV2 };

struct VerbsApi {
  const char* name;  ///< "libibverbs.so.1" or "emulated", for messages

  ibv_device** (*getDeviceList)(int* count);
  void (*freeDeviceList)(ibv_device** list);
  const char* (*getDeviceName)(ibv_device* device);
  ibv_context* (*openDevice)(ibv_device* device);
  int (*closeDevice)(ibv_context* context);
  int (*queryDevice)(ibv_context* context, ibv_device_attr* attr);
  int (*queryPort)(ibv_context* context, uint8_t port, ibv_port_attr* attr);
  int (*queryGid)(ibv_context* context, uint8_t port, int index, ibv_gid* gid);
  GidType (*gidType)(ibv_context* context, uint8_t port, int index);

  ibv_pd* (*allocPd)(ibv_context* context);
  int (*deallocPd)(ibv_pd* pd);
  ibv_mr* (*regMr)(ibv_pd* pd, void* addr, size_t length, int access);
  int (*deregMr)(ibv_mr* mr);
  /// ibv_reg_dmabuf_mr: registers [offset, offset + length) of the dmabuf `fd` (device memory a
  /// GPU driver exported), addressed by the queue pairs at `iova`. Null where libibverbs lacks it
  /// (rdma-core before 34): GPUDirect RDMA then needs nvidia-peermem (regMr of a device pointer).
  ibv_mr* (*regDmabufMr)(ibv_pd* pd, uint64_t offset, size_t length, uint64_t iova, int fd,
                         int access);

  ibv_cq* (*createCq)(ibv_context* context, int cqe);
  /// Grows (or shrinks) `cq` to at least `cqe` entries, updating cq->cqe; an errno value.
  int (*resizeCq)(ibv_cq* cq, int cqe);
  int (*destroyCq)(ibv_cq* cq);
  ibv_qp* (*createQp)(ibv_pd* pd, ibv_qp_init_attr* attr);
  int (*modifyQp)(ibv_qp* qp, ibv_qp_attr* attr, int attrMask);
  int (*destroyQp)(ibv_qp* qp);

  // Return 0 or an errno value, and set *bad to the first request not taken, as libibverbs does.
  int (*postSend)(ibv_qp* qp, ibv_send_wr* wr, ibv_send_wr** bad);
  int (*postRecv)(ibv_qp* qp, ibv_recv_wr* wr, ibv_recv_wr** bad);
  /// Up to `entries` completions into `wc`; the count taken, or negative on a CQ error.
  int (*pollCq)(ibv_cq* cq, int entries, ibv_wc* wc);

  /// The context's oldest asynchronous event; 0, or -1 with errno set (EAGAIN: none waits, on
  /// an async_fd made non-blocking). Every event taken must be acknowledged.
  int (*getAsyncEvent)(ibv_context* context, ibv_async_event* event);
  void (*ackAsyncEvent)(ibv_async_event* event);
};

/// The emulated HCA's verbs table (emulation/ib/verbs_emulated.cc): every call thread safe, as
/// libibverbs' are.
const VerbsApi& emulatedVerbs();
/// How many devices (emu_0 ..) the emulated HCA lists from now on, in this process, and what
/// each presents: BRAID_IB_EMULATE and BRAID_IB_EMULATE_KINDS as Config read them (the emulation
/// reads no environment of its own; emulation/ib/emulated_device_kinds.h lists the kinds). 0
/// until set; a count outside 0..8 lists none, with a warning; no kinds, every one a good RoCE
/// device.
void emulateDevices(int count, const std::string& kinds = "");

}  // namespace braid::transport::ib
