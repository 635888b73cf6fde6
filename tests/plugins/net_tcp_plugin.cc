// A network plugin over plain TCP, written here to test braid's plugin loader and transport
// (transport/net/plugin) as a real plugin is used: a shared library that braid finds with
// dlopen, knowing nothing of braid. tests/CMakeLists.txt builds it several times from this one
// file, the variants chosen by macros:
//
//   BRAID_TEST_PLUGIN_V12        exports ncclNetPlugin_v12 beside ncclNetPlugin_v6, so the loader
//                                must take the newer one (without it: v6 only)
//   BRAID_TEST_PLUGIN_NO_DEVICE  initializes but reports no device (braid falls back)
//   BRAID_TEST_PLUGIN_FAILING    isend fails after BRAID_TEST_NET_PLUGIN_FAIL_AFTER calls
//   BRAID_TEST_PLUGIN_GDR        reaches GPU memory as a GPUDirect RDMA NIC does: ptrSupport
//                                HOST|CUDA|DMABUF (no CUDA with BRAID_TEST_NET_PLUGIN_NO_CUDA=1;
//                                forceFlush with BRAID_TEST_NET_PLUGIN_FORCE_FLUSH=1, v12),
//                                regMr of NCCL_PTR_CUDA pointers, regMrDmaBuf, which maps the
//                                dmabuf and moves the region's bytes through that mapping (as a
//                                NIC through the pages the dma-buf framework gives it), and an
//                                iflush of what landed in device memory; regMrDmaBuf fails
//                                with BRAID_TEST_NET_PLUGIN_FAIL_DMABUF=1
//
// It behaves as the API asks and checks that braid does too: connect and accept never block
// (connect says "not yet" at least once, so braid's retry is used), isend returns a null request
// now and then and whenever 32 are in flight (braid must ask again), isend and irecv take only
// memory registered with regMr as host memory, and transfers complete in order per comm.
// BRAID_TEST_NET_PLUGIN_RECORD, where set, names a file each process appends to: "init vN" at
// init, "sent N" at each closeSend, "listen dev N" and "connect dev N" as comms are made, so a
// test sees which table was used, that bytes went through it and on which device; the GDR
// variant adds "regMrDmaBuf N" (bytes), "regMr cuda N" and "iflush N" (bytes). listenAddress()
// says where it listens. Its devices (all the same TCP stack) are one with no PCI path, or one
// per entry of BRAID_TEST_NET_PLUGIN_DEVICES (comma-separated PCI paths, as a NIC's sysfs path),
// each of BRAID_TEST_NET_PLUGIN_SPEED_MBPS (10000) and BRAID_TEST_NET_PLUGIN_LATENCY_US (0).
#include <arpa/inet.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <mutex>

#include "transport/net/plugin/net_plugin_abi.h"

namespace {

using namespace braid::netabi;  // NOLINT(google-build-using-namespace): the ABI's names

constexpr int kMaxRequests = 32;
constexpr const char* kName = "braidtest";

ncclDebugLogger_t logger = nullptr;
ncclProfilerCallback_t profiler = nullptr;  // v12: NCCL's profiler callback
std::atomic<long> isendCalls{0};

void record(const char* fmt, long value) {
  const char* path = getenv("BRAID_TEST_NET_PLUGIN_RECORD");
  if (path == nullptr) return;
  FILE* f = fopen(path, "a");
  if (f == nullptr) return;
  fprintf(f, fmt, value);
  fclose(f);
}

// What the handle carries: the listener's address and, for the sender's retries, its progress.
struct Handle {
  sockaddr_in address;
  int stage;  // 0: nothing yet; 1: connecting
  int fd;
};
static_assert(sizeof(Handle) <= kHandleMaxSize, "the handle must fit NCCL's");

// A registered region: where the caller sees it, and where this plugin moves its bytes (`io`: the
// same, or the mapping of a dmabuf, unmapped at deregMr).
struct Region {
  const char* data;
  size_t size;
  int type;
  char* io;
  void* mapping;
  size_t mappingBytes;
};

struct Comm;
struct Request {
  Comm* comm;
  bool sending;
  char* data;
  size_t capacity;  // a receive's buffer
  size_t size;      // what moves: a send's bytes, a receive's once its header came
  uint64_t header;
  size_t moved;  // of header then payload
  bool done;
  void* profEvent = nullptr;  // its event through NCCL's profiler callback (v12), while it runs
};

struct Comm {
  int fd;
  std::deque<Request*> queue;  // in the order posted; the head moves first
  int inFlight;                // posted and not yet returned done by test
  long sent;
};

bool owns(const void* mhandle, const void* data, size_t size) {
  const auto* r = static_cast<const Region*>(mhandle);
  const char* p = static_cast<const char*>(data);
  return r != nullptr && p >= r->data && p + size <= r->data + r->size;
}

// Moves what it can of `r` without blocking: 1 done, 0 not yet, -1 failed.
int advance(Request* r) {
  const int fd = r->comm->fd;
  while (r->moved < sizeof(r->header) + r->size) {
    const bool inHeader = r->moved < sizeof(r->header);
    char* at = inHeader ? reinterpret_cast<char*>(&r->header) + r->moved
                        : r->data + (r->moved - sizeof(r->header));
    const size_t left =
        inHeader ? sizeof(r->header) - r->moved : sizeof(r->header) + r->size - r->moved;
    const ssize_t n = r->sending ? send(fd, at, left, MSG_DONTWAIT | MSG_NOSIGNAL)
                                 : recv(fd, at, left, MSG_DONTWAIT);
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) return 0;
    if (n <= 0) return -1;
    r->moved += static_cast<size_t>(n);
    if (!r->sending && r->moved == sizeof(r->header)) {
      if (r->header > r->capacity) return -1;
      r->size = r->header;
    }
  }
  return 1;
}

ncclResult_t initCommon() {
  if (logger != nullptr) logger(NCCL_LOG_INFO, 0, __FILE__, __LINE__, "braidtest plugin ready");
  return ncclSuccess;
}

constexpr int kMaxDevices = 8;

// The devices' PCI paths (BRAID_TEST_NET_PLUGIN_DEVICES), read once; one null path where unset.
struct Devices {
  int count = 1;
  char paths[kMaxDevices][256] = {};
  bool hasPath = false;
  Devices() {
    const char* list = getenv("BRAID_TEST_NET_PLUGIN_DEVICES");
    if (list == nullptr || list[0] == '\0') return;
    hasPath = true;
    count = 0;
    for (const char* at = list; count < kMaxDevices && *at != '\0';) {
      const char* comma = strchr(at, ',');
      const size_t length = comma != nullptr ? static_cast<size_t>(comma - at) : strlen(at);
      snprintf(paths[count++], sizeof(paths[0]), "%.*s", static_cast<int>(length), at);
      at += length + (comma != nullptr ? 1 : 0);
    }
  }
};

const Devices& theDevices() {
  static const Devices devices;
  return devices;
}

bool validDev(int dev) { return dev >= 0 && dev < theDevices().count; }

int envInt(const char* name, int fallback) {
  const char* value = getenv(name);
  return value != nullptr ? atoi(value) : fallback;
}

ncclResult_t devices(int* ndev) {
#ifdef BRAID_TEST_PLUGIN_NO_DEVICE
  *ndev = 0;
#else
  *ndev = theDevices().count;
#endif
  return ncclSuccess;
}

template <typename Props>
void fillCommon(int dev, Props* p) {
  static char names[kMaxDevices][16];
  snprintf(names[dev], sizeof(names[0]), "braidtest%d", dev);
  memset(p, 0, sizeof(*p));
  p->name = names[dev];
  p->pciPath = theDevices().hasPath ? const_cast<char*>(theDevices().paths[dev]) : nullptr;
  p->guid = 0xb4a1d + dev;
  p->ptrSupport = kPtrHost;
#ifdef BRAID_TEST_PLUGIN_GDR
  p->ptrSupport |= kPtrDmabuf;
  if (envInt("BRAID_TEST_NET_PLUGIN_NO_CUDA", 0) == 0) p->ptrSupport |= kPtrCuda;
#endif
  p->speed = envInt("BRAID_TEST_NET_PLUGIN_SPEED_MBPS", 10000);
  p->port = 1;
  p->latency = static_cast<float>(envInt("BRAID_TEST_NET_PLUGIN_LATENCY_US", 0));
  p->maxComms = 65536;
  p->maxRecvs = 1;
}

ncclResult_t getPropertiesV6(int dev, ncclNetProperties_v6_t* props) {
  if (!validDev(dev)) return ncclInvalidArgument;
  fillCommon(dev, props);
  return ncclSuccess;
}

#ifdef BRAID_TEST_PLUGIN_V12
ncclResult_t getPropertiesV12(int dev, ncclNetProperties_v12_t* props) {
  if (!validDev(dev)) return ncclInvalidArgument;
  fillCommon(dev, props);
  props->netDeviceType = NCCL_NET_DEVICE_HOST;
  props->forceFlush = envInt("BRAID_TEST_NET_PLUGIN_FORCE_FLUSH", 0);
  props->maxP2pBytes = size_t{1} << 30;
  props->maxCollBytes = size_t{1} << 30;
  props->maxMultiRequestSize = 1;
  props->vProps.ndevs = 1;
  return ncclSuccess;
}
#endif

// The address listen() binds: BRAID_TEST_NET_PLUGIN_ADDR, else the first IPv4 address of an
// interface whose name starts with BRAID_TEST_NET_PLUGIN_IFNAME (a namespace host's bveth0),
// else loopback.
in_addr listenAddress() {
  in_addr out{};
  inet_pton(AF_INET, "127.0.0.1", &out);
  const char* address = getenv("BRAID_TEST_NET_PLUGIN_ADDR");
  if (address != nullptr) {
    inet_pton(AF_INET, address, &out);
    return out;
  }
  const char* prefix = getenv("BRAID_TEST_NET_PLUGIN_IFNAME");
  ifaddrs* list = nullptr;
  if (prefix == nullptr || getifaddrs(&list) != 0) return out;
  for (ifaddrs* i = list; i != nullptr; i = i->ifa_next) {
    if (i->ifa_addr != nullptr && i->ifa_addr->sa_family == AF_INET &&
        strncmp(i->ifa_name, prefix, strlen(prefix)) == 0) {
      out = reinterpret_cast<sockaddr_in*>(i->ifa_addr)->sin_addr;
      break;
    }
  }
  freeifaddrs(list);
  return out;
}

ncclResult_t listenCommon(int dev, void* opaque, void** listenComm) {
  if (!validDev(dev)) return ncclInvalidArgument;
  record("listen dev %ld\n", dev);
  Handle handle{};
  handle.address.sin_family = AF_INET;
  handle.address.sin_addr = listenAddress();
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  socklen_t length = sizeof(handle.address);
  if (fd < 0 || bind(fd, reinterpret_cast<sockaddr*>(&handle.address), length) != 0 ||
      listen(fd, 16) != 0 ||
      getsockname(fd, reinterpret_cast<sockaddr*>(&handle.address), &length) != 0) {
    if (fd >= 0) close(fd);
    return ncclSystemError;
  }
  handle.fd = -1;
  memset(opaque, 0, kHandleMaxSize);
  memcpy(opaque, &handle, sizeof(handle));
  *listenComm = new int(fd);
  return ncclSuccess;
}

Comm* newComm(int fd) {
  const int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  return new Comm{fd, {}, 0, 0};
}

// Never blocks: the first call starts a non-blocking connect and says "not yet".
ncclResult_t connectCommon(int dev, void* opaque, void** sendComm) {
  *sendComm = nullptr;
  if (!validDev(dev)) return ncclInvalidArgument;
  auto* handle = static_cast<Handle*>(opaque);
  if (handle->stage == 0) {
    record("connect dev %ld\n", dev);
    handle->fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
    if (handle->fd < 0) return ncclSystemError;
    if (connect(handle->fd, reinterpret_cast<sockaddr*>(&handle->address),
                sizeof(handle->address)) != 0 &&
        errno != EINPROGRESS) {
      return ncclSystemError;
    }
    handle->stage = 1;
    return ncclSuccess;
  }
  pollfd p{handle->fd, POLLOUT, 0};
  if (poll(&p, 1, 0) == 0) return ncclSuccess;
  int error = 0;
  socklen_t length = sizeof(error);
  if (getsockopt(handle->fd, SOL_SOCKET, SO_ERROR, &error, &length) != 0 || error != 0) {
    return ncclSystemError;
  }
  fcntl(handle->fd, F_SETFL, fcntl(handle->fd, F_GETFL) & ~O_NONBLOCK);
  *sendComm = newComm(handle->fd);
  return ncclSuccess;
}

ncclResult_t acceptCommon(void* listenComm, void** recvComm) {
  *recvComm = nullptr;
  const int listener = *static_cast<int*>(listenComm);
  pollfd p{listener, POLLIN, 0};
  if (poll(&p, 1, 0) == 0) return ncclSuccess;
  const int fd = accept(listener, nullptr, nullptr);
  if (fd < 0) return ncclSystemError;
  *recvComm = newComm(fd);
  return ncclSuccess;
}

#ifdef BRAID_TEST_PLUGIN_GDR
constexpr bool kGdr = true;
#else
constexpr bool kGdr = false;
#endif

// Host memory, and (GDR) device pointers, which the emulated GPU's process can reach as they are,
// as a NIC reaches them through nvidia-peermem.
ncclResult_t regMrCommon(void* comm, void* data, size_t size, int type, void** mhandle) {
  if (comm == nullptr || (type != kPtrHost && !(kGdr && type == kPtrCuda))) {
    return ncclInternalError;
  }
  if (type == kPtrCuda) record("regMr cuda %ld\n", static_cast<long>(size));
  *mhandle =
      new Region{static_cast<const char*>(data), size, type, static_cast<char*>(data), nullptr, 0};
  return ncclSuccess;
}
ncclResult_t regMrV6(void* comm, void* data, int size, int type, void** mhandle) {
  return regMrCommon(comm, data, static_cast<size_t>(size), type, mhandle);
}
// Maps the dmabuf's pages from `offset` (where the emulated GPU's export starts in its file: the
// descriptor's position, emulation/gpu/emulated_dmabuf.h) and moves the region's bytes through
// that mapping, never through `data`: a wrong fd or offset shows as wrong results.
ncclResult_t regMrDmaBuf(void* comm, void* data, size_t size, int type, uint64_t offset, int fd,
                         void** mhandle) {
  if (!kGdr || comm == nullptr || type != kPtrDmabuf || fd < 0 || size == 0) {
    return ncclInternalError;
  }
  if (envInt("BRAID_TEST_NET_PLUGIN_FAIL_DMABUF", 0) != 0) {
    if (logger)
      logger(NCCL_LOG_WARN, 0, __FILE__, __LINE__, "braidtest: regMrDmaBuf fails on purpose");
    return ncclSystemError;
  }
  const off_t start = lseek(fd, 0, SEEK_CUR);
  if (start < 0) return ncclSystemError;
  const uint64_t page = static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
  const uint64_t at = static_cast<uint64_t>(start) + offset;
  const uint64_t first = at / page * page;
  const size_t bytes = static_cast<size_t>((at + size - first + page - 1) / page * page);
  void* mapping =
      mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, static_cast<off_t>(first));
  if (mapping == MAP_FAILED) return ncclSystemError;
  record("regMrDmaBuf %ld\n", static_cast<long>(size));
  *mhandle = new Region{static_cast<const char*>(data),
                        size,
                        type,
                        static_cast<char*>(mapping) + (at - first),
                        mapping,
                        bytes};
  return ncclSuccess;
}
ncclResult_t deregMr(void* comm, void* mhandle) {
  if (comm == nullptr || mhandle == nullptr) return ncclInternalError;
  auto* region = static_cast<Region*>(mhandle);
  if (region->mapping != nullptr) munmap(region->mapping, region->mappingBytes);
  delete region;
  return ncclSuccess;
}

// Posts a request, or null where 32 are in flight or (every 5th call) to make the caller retry.
ncclResult_t post(Comm* comm, bool sending, void* data, size_t size, void* mhandle,
                  void** request) {
  static std::atomic<unsigned> calls{0};
  *request = nullptr;
  if (!owns(mhandle, data, size)) {
    if (logger) logger(NCCL_LOG_WARN, 0, __FILE__, __LINE__, "braidtest: unregistered buffer");
    return ncclInternalError;
  }
  if (comm->inFlight >= kMaxRequests || ++calls % 5 == 0) return ncclSuccess;
  const auto* region = static_cast<const Region*>(mhandle);
  char* io = region->io + (static_cast<const char*>(data) - region->data);
  auto* r = new Request{comm, sending, io, size, sending ? size : 0, size, 0, false};
  comm->queue.push_back(r);
  ++comm->inFlight;
  *request = r;
  return ncclSuccess;
}

ncclResult_t isendCommon(void* sendComm, void* data, size_t size, int /*tag*/, void* mhandle,
                         void** request) {
#ifdef BRAID_TEST_PLUGIN_FAILING
  const char* after = getenv("BRAID_TEST_NET_PLUGIN_FAIL_AFTER");
  if (isendCalls.fetch_add(1) >= (after != nullptr ? atol(after) : 20)) {
    if (logger) logger(NCCL_LOG_WARN, 0, __FILE__, __LINE__, "braidtest: isend fails on purpose");
    return ncclSystemError;
  }
#endif
  return post(static_cast<Comm*>(sendComm), true, data, size, mhandle, request);
}
ncclResult_t isendV6(void* sendComm, void* data, int size, int tag, void* mhandle, void** request) {
  return isendCommon(sendComm, data, static_cast<size_t>(size), tag, mhandle, request);
}
#ifdef BRAID_TEST_PLUGIN_V12
// Each transfer of a v12 table is an event of the plugin's own (NCCL's netPlugin events),
// started under the transfer's profiler handle, updated with its bytes and stopped when done.
void startProfiled(void** request, void* phandle, int64_t id) {
  if (*request != nullptr && profiler != nullptr) {
    profiler(&static_cast<Request*>(*request)->profEvent, kNetEventStart, phandle, id, nullptr);
  }
}
ncclResult_t isendV12(void* sendComm, void* data, size_t size, int tag, void* mhandle,
                      void* phandle, void** request) {
  const ncclResult_t r = isendCommon(sendComm, data, size, tag, mhandle, request);
  startProfiled(request, phandle, 1);
  return r;
}
#endif

ncclResult_t irecvCommon(void* recvComm, int n, void* data, size_t size, void* mhandle,
                         void** request) {
  if (n != 1) return ncclInternalError;  // maxRecvs is 1
  return post(static_cast<Comm*>(recvComm), false, data, size, mhandle, request);
}
ncclResult_t irecvV6(void* recvComm, int n, void** data, int* sizes, int* /*tags*/, void** mhandles,
                     void** request) {
  return irecvCommon(recvComm, n, data[0], static_cast<size_t>(sizes[0]), mhandles[0], request);
}
#ifdef BRAID_TEST_PLUGIN_V12
ncclResult_t irecvV12(void* recvComm, int n, void** data, size_t* sizes, int* /*tags*/,
                      void** mhandles, void** phandles, void** request) {
  const ncclResult_t r = irecvCommon(recvComm, n, data[0], sizes[0], mhandles[0], request);
  startProfiled(request, phandles[0], 2);
  return r;
}
#endif
// GDR: a flush of what landed in device memory, done at once (TCP's bytes went through the CPU,
// which the GPU sees); braid must test it to completion. Host memory needs none: braid must not
// ask, nor without GDR.
ncclResult_t iflush(void* recvComm, int n, void** data, int* sizes, void** mhandles,
                    void** request) {
  *request = nullptr;
  if (!kGdr || recvComm == nullptr || n != 1 || sizes[0] < 0 ||
      !owns(mhandles[0], data[0], static_cast<size_t>(sizes[0])) ||
      static_cast<const Region*>(mhandles[0])->type == kPtrHost) {
    if (logger)
      logger(NCCL_LOG_WARN, 0, __FILE__, __LINE__, "braidtest: a flush braid must not ask");
    return ncclInternalError;
  }
  record("iflush %ld\n", sizes[0]);
  auto* comm = static_cast<Comm*>(recvComm);
  ++comm->inFlight;
  *request = new Request{comm, false, nullptr, 0, 0, 0, 0, true};
  return ncclSuccess;
}

// Moves the comm's queue from its head up to `request`, done once it has moved: what comes
// after it (a receive posted ahead, which a peer that closed will never fill) is not its
// failure.
ncclResult_t test(void* request, int* done, int* sizes) {
  auto* r = static_cast<Request*>(request);
  Comm* comm = r->comm;
  while (!r->done && !comm->queue.empty()) {
    Request* head = comm->queue.front();
    const int state = advance(head);
    if (state < 0) return ncclSystemError;
    if (state == 0) break;
    head->done = true;
    comm->queue.pop_front();
  }
  *done = r->done ? 1 : 0;
  if (r->done) {
    if (r->profEvent != nullptr) {
      profiler(&r->profEvent, kNetEventUpdateAndStop, nullptr, 0, &r->size);
    }
    if (sizes != nullptr) *sizes = static_cast<int>(r->size);
    if (r->sending) ++comm->sent;
    --comm->inFlight;
    delete r;
  }
  return ncclSuccess;
}

ncclResult_t closeComm(void* opaque) {
  auto* comm = static_cast<Comm*>(opaque);
  close(comm->fd);
  for (Request* r : comm->queue) {
    if (r->profEvent != nullptr) profiler(&r->profEvent, kNetEventStop, nullptr, 0, nullptr);
    delete r;
  }
  delete comm;
  return ncclSuccess;
}
ncclResult_t closeSend(void* sendComm) {
  record("sent %ld\n", static_cast<Comm*>(sendComm)->sent);
  return closeComm(sendComm);
}
ncclResult_t closeListen(void* listenComm) {
  close(*static_cast<int*>(listenComm));
  delete static_cast<int*>(listenComm);
  return ncclSuccess;
}

ncclResult_t initV6(ncclDebugLogger_t log) {
  logger = log;
  record("init v%ld\n", 6);
  return initCommon();
}
ncclResult_t listenV6(int dev, void* handle, void** listenComm) {
  return listenCommon(dev, handle, listenComm);
}
ncclResult_t connectV6(int dev, void* handle, void** sendComm) {
  return connectCommon(dev, handle, sendComm);
}
ncclResult_t acceptV6(void* listenComm, void** recvComm) {
  return acceptCommon(listenComm, recvComm);
}

#ifdef BRAID_TEST_PLUGIN_V12
int context;  // what init gives and listen/connect/finalize must be given back
ncclResult_t initV12(void** ctx, uint64_t, ncclNetCommConfig_v12_t* config, ncclDebugLogger_t log,
                     ncclProfilerCallback_t prof) {
  if (config == nullptr) return ncclInternalError;
  logger = log;
  profiler = prof;
  *ctx = &context;
  record("init v%ld\n", 12);
  return initCommon();
}
ncclResult_t listenV12(void* ctx, int dev, void* handle, void** listenComm) {
  if (ctx != &context) return ncclInternalError;
  return listenCommon(dev, handle, listenComm);
}
ncclResult_t connectV12(void* ctx, int dev, void* handle, void** sendComm,
                        ncclNetDeviceHandle_v7_t** devComm) {
  if (ctx != &context || (devComm != nullptr && *devComm != nullptr)) return ncclInternalError;
  return connectCommon(dev, handle, sendComm);
}
ncclResult_t acceptV12(void* listenComm, void** recvComm, ncclNetDeviceHandle_v7_t** devComm) {
  if (devComm != nullptr && *devComm != nullptr) return ncclInternalError;
  return acceptCommon(listenComm, recvComm);
}
ncclResult_t finalizeV12(void* ctx) { return ctx == &context ? ncclSuccess : ncclInternalError; }
#endif

}  // namespace

extern "C" {

__attribute__((visibility("default"))) extern const ncclNet_v6_t ncclNetPlugin_v6;
const ncclNet_v6_t ncclNetPlugin_v6 = {
    kName,    initV6,  devices,     getPropertiesV6, listenV6,   connectV6,
    acceptV6, regMrV6, regMrDmaBuf, deregMr,         isendV6,    irecvV6,
    iflush,   test,    closeSend,   closeComm,       closeListen};

#ifdef BRAID_TEST_PLUGIN_V12
__attribute__((visibility("default"))) extern const ncclNet_v12_t ncclNetPlugin_v12;
const ncclNet_v12_t ncclNetPlugin_v12 = {
    kName,       initV12,     devices,     getPropertiesV12, listenV12,   connectV12,
    acceptV12,   regMrCommon, regMrDmaBuf, deregMr,          isendV12,    irecvV12,
    iflush,      test,        closeSend,   closeComm,        closeListen,
    nullptr,                // getDeviceMr: no device offload
    nullptr,                // irecvConsumed
    nullptr,                // makeVDevice
    finalizeV12, nullptr};  // setNetAttr
#endif

}  // extern "C"
