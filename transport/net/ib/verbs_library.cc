#include "transport/net/ib/verbs_library.h"

#include <fstream>
#include <mutex>
#include <string>

#include "topology/libibverbs.h"

namespace braid::transport::ib {
namespace {

// The exported calls, resolved by name. Declared with verbs.h's own signatures so a mismatch is
// a compile error. ibv_query_port and ibv_reg_mr are macros in verbs.h over these same symbols.
struct Exported {
  ibv_device** (*getDeviceList)(int*);
  void (*freeDeviceList)(ibv_device**);
  const char* (*getDeviceName)(ibv_device*);
  ibv_context* (*openDevice)(ibv_device*);
  int (*closeDevice)(ibv_context*);
  int (*queryDevice)(ibv_context*, ibv_device_attr*);
  int (*queryPort)(ibv_context*, uint8_t, ibv_port_attr*);
  int (*queryGid)(ibv_context*, uint8_t, int, ibv_gid*);
  ibv_pd* (*allocPd)(ibv_context*);
  int (*deallocPd)(ibv_pd*);
  ibv_mr* (*regMr)(ibv_pd*, void*, size_t, int);
  int (*deregMr)(ibv_mr*);
  ibv_mr* (*regDmabufMr)(ibv_pd*, uint64_t, size_t, uint64_t, int, int);  // optional
  ibv_cq* (*createCq)(ibv_context*, int, void*, ibv_comp_channel*, int);
  int (*resizeCq)(ibv_cq*, int);
  int (*destroyCq)(ibv_cq*);
  ibv_qp* (*createQp)(ibv_pd*, ibv_qp_init_attr*);
  int (*modifyQp)(ibv_qp*, ibv_qp_attr*, int);
  int (*destroyQp)(ibv_qp*);
  int (*getAsyncEvent)(ibv_context*, ibv_async_event*);
  void (*ackAsyncEvent)(ibv_async_event*);
};

Exported exported{};

// The kernel says what each GID table entry is in sysfs; libibverbs before rdma-core 37 has no
// call for it.
GidType sysfsGidType(ibv_context* context, uint8_t port, int index) {
  const std::string path = std::string("/sys/class/infiniband/") +
                           exported.getDeviceName(context->device) + "/ports/" +
                           std::to_string(port) + "/gid_attrs/types/" + std::to_string(index);
  std::ifstream file(path);
  std::string type;
  if (!std::getline(file, type)) return GidType::kUnknown;
  if (type.find("RoCE v2") != std::string::npos) return GidType::kRoceV2;
  if (type.find("RoCE") != std::string::npos) return GidType::kRoceV1;  // "IB/RoCE v1"
  return GidType::kUnknown;
}

GidType gidType(ibv_context* context, uint8_t port, int index) {
  ibv_port_attr attr{};
  if (exported.queryPort(context, port, &attr) == 0 &&
      attr.link_layer == IBV_LINK_LAYER_INFINIBAND) {
    return GidType::kInfiniband;
  }
  return sysfsGidType(context, port, index);
}

ibv_cq* createCq(ibv_context* context, int cqe) {
  return exported.createCq(context, cqe, nullptr, nullptr, 0);
}

// Inline in verbs.h: they call the provider through the context's ops, with no library symbol.
int postSend(ibv_qp* qp, ibv_send_wr* wr, ibv_send_wr** bad) { return ibv_post_send(qp, wr, bad); }
int postRecv(ibv_qp* qp, ibv_recv_wr* wr, ibv_recv_wr** bad) { return ibv_post_recv(qp, wr, bad); }
int pollCq(ibv_cq* cq, int entries, ibv_wc* wc) { return ibv_poll_cq(cq, entries, wc); }

Result<const VerbsApi*> load() {
  // The process's one handle, shared with topology discovery; ibv_fork_init ran when it opened.
  BRAID_ASSIGN_OR_RETURN(const topology::DynamicLibrary* opened, topology::libibverbs());
  const topology::DynamicLibrary& library = *opened;
  Exported& e = exported;
  BRAID_TRY(library.resolve("ibv_get_device_list", &e.getDeviceList));
  BRAID_TRY(library.resolve("ibv_free_device_list", &e.freeDeviceList));
  BRAID_TRY(library.resolve("ibv_get_device_name", &e.getDeviceName));
  BRAID_TRY(library.resolve("ibv_open_device", &e.openDevice));
  BRAID_TRY(library.resolve("ibv_close_device", &e.closeDevice));
  BRAID_TRY(library.resolve("ibv_query_device", &e.queryDevice));
  BRAID_TRY(library.resolve("ibv_query_port", &e.queryPort));
  BRAID_TRY(library.resolve("ibv_query_gid", &e.queryGid));
  BRAID_TRY(library.resolve("ibv_alloc_pd", &e.allocPd));
  BRAID_TRY(library.resolve("ibv_dealloc_pd", &e.deallocPd));
  BRAID_TRY(library.resolve("ibv_reg_mr", &e.regMr));
  BRAID_TRY(library.resolve("ibv_dereg_mr", &e.deregMr));
  // rdma-core 34 added it: older libraries load, and GPUDirect RDMA goes without dmabuf there.
  if (!library.resolve("ibv_reg_dmabuf_mr", &e.regDmabufMr).ok()) e.regDmabufMr = nullptr;
  BRAID_TRY(library.resolve("ibv_create_cq", &e.createCq));
  BRAID_TRY(library.resolve("ibv_resize_cq", &e.resizeCq));
  BRAID_TRY(library.resolve("ibv_destroy_cq", &e.destroyCq));
  BRAID_TRY(library.resolve("ibv_create_qp", &e.createQp));
  BRAID_TRY(library.resolve("ibv_modify_qp", &e.modifyQp));
  BRAID_TRY(library.resolve("ibv_destroy_qp", &e.destroyQp));
  BRAID_TRY(library.resolve("ibv_get_async_event", &e.getAsyncEvent));
  BRAID_TRY(library.resolve("ibv_ack_async_event", &e.ackAsyncEvent));
  static VerbsApi api{};
  api.name = "libibverbs.so.1";
  api.getDeviceList = e.getDeviceList;
  api.freeDeviceList = e.freeDeviceList;
  api.getDeviceName = e.getDeviceName;
  api.openDevice = e.openDevice;
  api.closeDevice = e.closeDevice;
  api.queryDevice = e.queryDevice;
  api.queryPort = e.queryPort;
  api.queryGid = e.queryGid;
  api.gidType = gidType;
  api.allocPd = e.allocPd;
  api.deallocPd = e.deallocPd;
  api.regMr = e.regMr;
  api.deregMr = e.deregMr;
  api.regDmabufMr = e.regDmabufMr;
  api.createCq = createCq;
  api.resizeCq = e.resizeCq;
  api.destroyCq = e.destroyCq;
  api.createQp = e.createQp;
  api.modifyQp = e.modifyQp;
  api.destroyQp = e.destroyQp;
  api.postSend = postSend;
  api.postRecv = postRecv;
  api.pollCq = pollCq;
  api.getAsyncEvent = e.getAsyncEvent;
  api.ackAsyncEvent = e.ackAsyncEvent;
  return static_cast<const VerbsApi*>(&api);
}

}  // namespace

Result<const VerbsApi*> libraryVerbs() {
  static std::once_flag once;
  static Result<const VerbsApi*> loaded = internalError("libibverbs not loaded yet");
  std::call_once(once, [] { loaded = load(); });
  return loaded;
}

}  // namespace braid::transport::ib
