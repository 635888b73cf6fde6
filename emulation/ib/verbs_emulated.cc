// The emulated HCA's verbs table: the device list, the queries, and each call handed to the
// object that carries it out (emulated_context.h, emulated_qp.h, emulated_cq.h).
#include "emulation/ib/verbs_emulated.h"

#include <endian.h>
#include <errno.h>

#include <atomic>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "base/log.h"
#include "emulation/ib/emulated_context.h"
#include "emulation/ib/emulated_device_kinds.h"
#include "emulation/ib/emulated_limits.h"

namespace braid::transport::ib {
namespace {

using emulated::CompletionQueue;
using emulated::Context;
using emulated::DeviceKind;
using emulated::QueuePair;

/// An ibv_device of the list, with the device number it stands for.
struct DeviceSlot {
  ibv_device device;  // first: an ibv_device* of the list points to its slot
  int index;
};

/// What getDeviceList hands out: the NULL-terminated array first, so that freeDeviceList finds
/// the whole from it.
struct DeviceList {
  ibv_device* pointers[emulated::kMaxDevices + 1];
  DeviceSlot slots[emulated::kMaxDevices];
};

/// How many devices getDeviceList lists: emulateDevices' word, 0 until it speaks.
std::atomic<int> deviceCount{0};

ibv_device** getDeviceList(int* count) {
  const int n = deviceCount.load();
  auto list = std::make_unique<DeviceList>();
  for (int i = 0; i < n; ++i) {
    DeviceSlot& slot = list->slots[i];
    slot.index = i;
    // What the kernel tells libibverbs of the device: EFA is neither a CA nor IB transport.
    const bool efa = emulated::deviceKind(i) == DeviceKind::kEfa;
    slot.device.node_type = efa ? IBV_NODE_UNSPECIFIED : IBV_NODE_CA;
    slot.device.transport_type = efa ? IBV_TRANSPORT_UNSPECIFIED : IBV_TRANSPORT_IB;
    snprintf(slot.device.name, sizeof(slot.device.name), "emu_%d", i);
    snprintf(slot.device.dev_name, sizeof(slot.device.dev_name), "uverbs_emu_%d", i);
    list->pointers[i] = &slot.device;
  }
  if (count != nullptr) *count = n;
  // Ownership passes to the caller, who gives it back to freeDeviceList (a C interface).
  return list.release()->pointers;
}

void freeDeviceList(ibv_device** list) {
  std::unique_ptr<DeviceList> owned(reinterpret_cast<DeviceList*>(list));
}

const char* getDeviceName(ibv_device* device) { return device->name; }

ibv_context* openDevice(ibv_device* device) {
  int index = reinterpret_cast<DeviceSlot*>(device)->index;
  Result<std::unique_ptr<Context>> context = Context::open(*device, index);
  if (!context.ok()) {
    BRAID_WARN("emulated HCA emu_%d: cannot open: %s", index, context.status().message().c_str());
    errno = EIO;
    return nullptr;
  }
  // Owned by the application from here until closeDevice.
  return std::move(context).value().release()->verbs();
}

int closeDevice(ibv_context* context) {
  std::unique_ptr<Context> owned(Context::from(context));
  return 0;
}

int queryDevice(ibv_context* context, ibv_device_attr* attr) {
  int index = Context::from(context)->deviceIndex();
  *attr = ibv_device_attr{};
  snprintf(attr->fw_ver, sizeof(attr->fw_ver), "braid-emulated");
  attr->node_guid = htobe64(emulated::deviceGuid(index));
  attr->sys_image_guid = attr->node_guid;
  attr->max_mr_size = emulated::kMaxMrSize;
  attr->page_size_cap = 4096;
  const bool efa = emulated::deviceKind(index) == DeviceKind::kEfa;
  attr->vendor_id = efa ? emulated::kAmazonVendorId : 0;
  attr->vendor_part_id = efa ? emulated::kEfaPartId : 0;
  attr->max_qp = emulated::kMaxQp;
  attr->max_qp_wr = emulated::kMaxQpWr;
  attr->max_sge = emulated::kMaxSge;
  attr->max_cq = emulated::kMaxCq;
  attr->max_cqe = emulated::kMaxCqe;
  attr->max_mr = emulated::kMaxMr;
  attr->max_pd = emulated::kMaxPd;
  attr->max_qp_rd_atom = emulated::kMaxQpRdAtom;
  attr->max_qp_init_rd_atom = emulated::kMaxQpRdAtom;
  attr->max_res_rd_atom = emulated::kMaxQpRdAtom * emulated::kMaxQp;
  attr->atomic_cap = IBV_ATOMIC_NONE;
  attr->max_pkeys = 1;
  attr->phys_port_cnt = 1;
  return 0;
}

int queryPort(ibv_context* context, uint8_t port, ibv_port_attr* attr) {
  if (port != 1) return EINVAL;
  *attr = ibv_port_attr{};
  const DeviceKind kind = emulated::deviceKind(Context::from(context)->deviceIndex());
  const bool down =
      kind == DeviceKind::kPortDown || Context::from(context)->hca().portEvents().down(port);
  attr->state = down ? IBV_PORT_DOWN : IBV_PORT_ACTIVE;
  attr->max_mtu = IBV_MTU_4096;
  attr->active_mtu = IBV_MTU_4096;
  attr->gid_tbl_len = static_cast<int>(Context::from(context)->gids().size());
  attr->max_msg_sz = static_cast<uint32_t>(emulated::kMaxMsgSize);
  attr->pkey_tbl_len = 1;
  attr->lid = 0;  // RoCE has no LIDs
  attr->max_vl_num = 1;
  attr->active_width = 2;   // 4x
  attr->active_speed = 32;  // EDR: 25 Gb/s per lane, 100 Gb/s at 4x
  attr->phys_state = kind == DeviceKind::kPortDown ? 2 : 5;  // Polling (no link), LinkUp
  // EFA's kernel driver reports no link layer: it is neither InfiniBand nor Ethernet to verbs.
  attr->link_layer =
      kind == DeviceKind::kEfa ? IBV_LINK_LAYER_UNSPECIFIED : IBV_LINK_LAYER_ETHERNET;
  return 0;
}

int queryGid(ibv_context* context, uint8_t port, int index, ibv_gid* gid) {
  const auto& gids = Context::from(context)->gids();
  if (port != 1 || index < 0 || static_cast<size_t>(index) >= gids.size()) return EINVAL;
  *gid = gids[index].gid;
  return 0;
}

GidType gidType(ibv_context* context, uint8_t port, int index) {
  const auto& gids = Context::from(context)->gids();
  if (port != 1 || index < 0 || static_cast<size_t>(index) >= gids.size()) {
    return GidType::kUnknown;
  }
  return gids[index].type;
}

ibv_pd* allocPd(ibv_context* context) { return Context::from(context)->allocPd(); }
int deallocPd(ibv_pd* pd) { return Context::from(pd->context)->deallocPd(pd); }

ibv_mr* regMr(ibv_pd* pd, void* addr, size_t length, int access) {
  return Context::from(pd->context)->regMr(pd, addr, length, access);
}
ibv_mr* regDmabufMr(ibv_pd* pd, uint64_t offset, size_t length, uint64_t iova, int fd, int access) {
  return Context::from(pd->context)->regDmabufMr(pd, offset, length, iova, fd, access);
}
int deregMr(ibv_mr* mr) { return Context::from(mr->context)->deregMr(mr); }

ibv_cq* createCq(ibv_context* context, int cqe) { return Context::from(context)->createCq(cqe); }
int resizeCq(ibv_cq* cq, int cqe) { return CompletionQueue::from(cq)->resize(cqe); }
int destroyCq(ibv_cq* cq) { return Context::from(cq->context)->destroyCq(cq); }

ibv_qp* createQp(ibv_pd* pd, ibv_qp_init_attr* attr) {
  return Context::from(pd->context)->createQp(pd, attr);
}
int modifyQp(ibv_qp* qp, ibv_qp_attr* attr, int attrMask) {
  if (attr == nullptr) return EINVAL;
  return QueuePair::from(qp)->modify(*attr, attrMask);
}
int destroyQp(ibv_qp* qp) { return Context::from(qp->context)->destroyQp(qp); }

int postSend(ibv_qp* qp, ibv_send_wr* wr, ibv_send_wr** bad) {
  return QueuePair::from(qp)->postSend(wr, bad);
}
int postRecv(ibv_qp* qp, ibv_recv_wr* wr, ibv_recv_wr** bad) {
  return QueuePair::from(qp)->postRecv(wr, bad);
}
int pollCq(ibv_cq* cq, int entries, ibv_wc* wc) {
  return CompletionQueue::from(cq)->poll(entries, wc);
}

int getAsyncEvent(ibv_context* context, ibv_async_event* event) {
  return Context::from(context)->getAsyncEvent(event);
}
// The emulation raises port events only, which hold nothing that an acknowledgement releases
// (libibverbs counts acknowledgements for QP, CQ, SRQ and WQ events alone).
void ackAsyncEvent(ibv_async_event*) {}

}  // namespace

void emulateDevices(int count, const std::string& kinds) {
  if (count < 0 || count > emulated::kMaxDevices) {
    BRAID_WARN("emulated HCA: %d devices asked for; from 0 to %d can be; none emulated", count,
               emulated::kMaxDevices);
    count = 0;
  }
  Result<std::vector<DeviceKind>> parsed = emulated::parseDeviceKinds(kinds);
  if (!parsed.ok()) {
    BRAID_WARN("emulated HCA: %s; every device a good RoCE one", parsed.status().message().c_str());
  }
  emulated::setDeviceKinds(parsed.ok() ? std::move(parsed).value() : std::vector<DeviceKind>{});
  deviceCount.store(count);
}

const VerbsApi& emulatedVerbs() {
  static const VerbsApi api = {
      "emulated",    getDeviceList, freeDeviceList, getDeviceName, openDevice, closeDevice,
      queryDevice,   queryPort,     queryGid,       gidType,       allocPd,    deallocPd,
      regMr,         deregMr,       regDmabufMr,    createCq,      resizeCq,   destroyCq,
      createQp,      modifyQp,      destroyQp,      postSend,      postRecv,   pollCq,
      getAsyncEvent, ackAsyncEvent,
  };
  return api;
}

}  // namespace braid::transport::ib
