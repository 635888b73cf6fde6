// An emulated HCA context and the objects it owns: see emulated_context.h.
#include "emulation/ib/emulated_context.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <utility>

#include "base/log.h"
#include "emulation/gpu/emulated_dmabuf.h"
#include "emulation/ib/emulated_device_kinds.h"
#include "emulation/ib/emulated_limits.h"

namespace braid::transport::ib::emulated {
namespace {

/// Access flags the emulation knows: remote reads and atomics are accepted and recorded,
/// although the transport uses neither and the emulation carries neither.
constexpr int kKnownAccess = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
                             IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC;

bool validAccess(int access) {
  // Optional flags (IBV_ACCESS_RELAXED_ORDERING, ...) may be ignored by a device, as libibverbs
  // does; others (memory windows, zero-based, on-demand paging) are not emulated.
  int rest = access & ~(kKnownAccess | IBV_ACCESS_OPTIONAL_RANGE);
  if (rest != 0) return false;
  // IB spec: remote write and remote atomic access need local write access.
  bool needsLocalWrite = (access & (IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_ATOMIC)) != 0;
  return !needsLocalWrite || (access & IBV_ACCESS_LOCAL_WRITE) != 0;
}

template <typename T>
T* fail(int err) {
  errno = err;
  return nullptr;
}

}  // namespace

Result<std::unique_ptr<Context>> Context::open(const ibv_device& device, int deviceIndex) {
  BRAID_ASSIGN_OR_RETURN(std::shared_ptr<Hca> hca, Hca::acquire(deviceIndex));
  std::vector<GidEntry> gids = gidTableOf(deviceKind(deviceIndex), deviceIndex);
  return std::unique_ptr<Context>(new Context(device, std::move(hca), std::move(gids)));
}

Context::Context(const ibv_device& device, std::shared_ptr<Hca> hca, std::vector<GidEntry> gids)
    : device_(device), hca_(std::move(hca)), gids_(std::move(gids)) {
  handle_.owner = this;
  handle_.verbs.device = &device_;
  handle_.verbs.cmd_fd = -1;
  handle_.verbs.async_fd = asyncEvents_.fd();
  handle_.verbs.num_comp_vectors = 1;
  hca_->portEvents().subscribe(&asyncEvents_);
}

Context::~Context() {
  hca_->portEvents().unsubscribe(&asyncEvents_);
  std::unordered_map<ibv_qp*, std::unique_ptr<QueuePair>> qps;
  {
    std::lock_guard<std::mutex> lock(mu_);
    qps.swap(qps_);
  }
  size_t left = qps.size() + mrs_.size() + cqs_.size() + pds_.size();
  if (left > 0) {
    BRAID_INFO("emulated HCA %s: closing a context that still has %zu objects; destroying them",
               hca_->name().c_str(), left);
  }
  for (auto& [verbs, qp] : qps) retire(std::move(qp));
  for (auto& [verbs, mr] : mrs_) hca_->deregisterMr(mr->keys);
  for (size_t i = 0; i < cqs_.size(); ++i) hca_->release(Hca::Counted::kCompletionQueue);
  for (size_t i = 0; i < pds_.size(); ++i) hca_->release(Hca::Counted::kProtectionDomain);
}

ibv_pd* Context::allocPd() {
  if (!hca_->reserve(Hca::Counted::kProtectionDomain)) return fail<ibv_pd>(ENOMEM);
  auto pd = std::make_unique<ProtectionDomain>();
  pd->handle.owner = pd.get();
  pd->handle.verbs.context = verbs();
  ibv_pd* verbsPd = &pd->handle.verbs;
  std::lock_guard<std::mutex> lock(mu_);
  pds_[verbsPd] = std::move(pd);
  return verbsPd;
}

int Context::deallocPd(ibv_pd* pd) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = pds_.find(pd);
  if (it == pds_.end()) return EINVAL;
  if (it->second->regions > 0 || it->second->queuePairs > 0) return EBUSY;
  pds_.erase(it);
  hca_->release(Hca::Counted::kProtectionDomain);
  return 0;
}

ibv_mr* Context::regMr(ibv_pd* pd, void* addr, size_t length, int access) {
  uintptr_t start = reinterpret_cast<uintptr_t>(addr);
  if (addr == nullptr || length == 0 || length > kMaxMrSize || start + length < start ||
      !validAccess(access)) {
    return fail<ibv_mr>(EINVAL);
  }
  return addRegion(pd, start, length, access, start, nullptr, 0);
}

ibv_mr* Context::regDmabufMr(ibv_pd* pd, uint64_t offset, size_t length, uint64_t iova, int fd,
                             int access) {
  if (fd < 0 || fcntl(fd, F_GETFD) < 0) return fail<ibv_mr>(EBADF);
  const std::optional<gpu::DmabufRange> range = gpu::findDmabuf(fd);
  const uint64_t page = static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
  if (!range || length == 0 || length > kMaxMrSize || offset + length < offset ||
      offset + length > range->bytes || offset % page != iova % page || !validAccess(access)) {
    return fail<ibv_mr>(EINVAL);
  }
  // The HCA's own view of the memory, as a real one maps the dmabuf's pages for DMA.
  const uint64_t first = offset / page * page;
  const size_t mappingBytes =
      static_cast<size_t>((offset + length - first + page - 1) / page * page);
  void* mapping = mmap(nullptr, mappingBytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
                       static_cast<off_t>(range->fileOffset + first));
  if (mapping == MAP_FAILED) return fail<ibv_mr>(ENOMEM);
  const uintptr_t host = reinterpret_cast<uintptr_t>(mapping) + (offset - first);
  ibv_mr* mr = addRegion(pd, iova, length, access, host, mapping, mappingBytes);
  if (mr == nullptr) {
    const int saved = errno;
    munmap(mapping, mappingBytes);
    errno = saved;
  }
  return mr;
}

ibv_mr* Context::addRegion(ibv_pd* pd, uint64_t addr, size_t length, int access, uintptr_t host,
                           void* mapping, size_t mappingBytes) {
  std::lock_guard<std::mutex> lock(mu_);
  auto owner = pds_.find(pd);
  if (owner == pds_.end()) return fail<ibv_mr>(EINVAL);
  ProtectionDomain* domain = owner->second.get();
  std::optional<MrKeys> keys = hca_->registerMr(domain, addr, length, access, host);
  if (!keys) return fail<ibv_mr>(ENOMEM);
  auto mr = std::make_unique<MemoryRegion>();
  mr->handle.owner = mr.get();
  mr->pd = domain;
  mr->keys = *keys;
  mr->mapping = mapping;
  mr->mappingBytes = mappingBytes;
  ibv_mr& v = mr->handle.verbs;
  v.context = verbs();
  v.pd = pd;
  v.addr = reinterpret_cast<void*>(static_cast<uintptr_t>(addr));
  v.length = length;
  v.lkey = keys->lkey;
  v.rkey = keys->rkey;
  v.handle = keys->lkey;
  ++domain->regions;
  mrs_[&v] = std::move(mr);
  return &v;
}

int Context::deregMr(ibv_mr* mr) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = mrs_.find(mr);
  if (it == mrs_.end()) return EINVAL;
  hca_->deregisterMr(it->second->keys);  // waits for writes into the region under way
  --it->second->pd->regions;
  mrs_.erase(it);
  return 0;
}

ibv_cq* Context::createCq(int cqe) {
  if (cqe < 1 || cqe > kMaxCqe) return fail<ibv_cq>(EINVAL);
  if (!hca_->reserve(Hca::Counted::kCompletionQueue)) return fail<ibv_cq>(ENOMEM);
  auto cq = std::make_unique<CompletionQueue>(verbs(), cqe, nullptr);
  ibv_cq* verbsCq = cq->verbs();
  std::lock_guard<std::mutex> lock(mu_);
  cqs_[verbsCq] = std::move(cq);
  cqUsers_[verbsCq] = 0;
  return verbsCq;
}

int Context::destroyCq(ibv_cq* cq) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = cqs_.find(cq);
  if (it == cqs_.end()) return EINVAL;
  if (cqUsers_[cq] > 0) return EBUSY;
  cqs_.erase(it);
  cqUsers_.erase(cq);
  hca_->release(Hca::Counted::kCompletionQueue);
  return 0;
}

int Context::checkQpInit(const ibv_qp_init_attr& attr) const {
  // EFA's provider makes UD and its own SRD queue pairs only, and says so for any other type.
  if (deviceKind(hca_->index()) == DeviceKind::kEfa) return EOPNOTSUPP;
  if (attr.qp_type != IBV_QPT_RC || attr.srq != nullptr) return EINVAL;
  if (cqs_.count(attr.send_cq) == 0 || cqs_.count(attr.recv_cq) == 0) return EINVAL;
  const ibv_qp_cap& cap = attr.cap;
  if (cap.max_send_wr > kMaxQpWr || cap.max_recv_wr > kMaxQpWr || cap.max_send_sge > kMaxSge ||
      cap.max_recv_sge > kMaxSge || cap.max_inline_data > kMaxInlineData) {
    return EINVAL;
  }
  return 0;
}

ibv_qp* Context::createQp(ibv_pd* pd, ibv_qp_init_attr* attr) {
  if (attr == nullptr) return fail<ibv_qp>(EINVAL);
  std::lock_guard<std::mutex> lock(mu_);
  auto owner = pds_.find(pd);
  if (owner == pds_.end()) return fail<ibv_qp>(EINVAL);
  if (int err = checkQpInit(*attr); err != 0) return fail<ibv_qp>(err);
  std::optional<uint32_t> qpNum = hca_->reserveQpNum();
  if (!qpNum) {
    BRAID_WARN(
        "emulated HCA %s: cannot create a QP: all %d QP numbers of the device are in use "
        "(its QP numbers carry 8 bits of slot)",
        hca_->name().c_str(), kMaxQp);
    return fail<ibv_qp>(ENOMEM);
  }
  QueuePair::Setup setup;
  setup.context = verbs();
  setup.pdVerbs = pd;
  setup.pd = owner->second.get();
  setup.hca = hca_.get();
  setup.gids = &gids_;
  setup.sendCq = cqs_[attr->send_cq].get();
  setup.recvCq = cqs_[attr->recv_cq].get();
  setup.cap = attr->cap;
  setup.sqSigAll = attr->sq_sig_all != 0;
  setup.qpContext = attr->qp_context;
  setup.qpNum = *qpNum;
  auto qp = std::make_unique<QueuePair>(setup);
  ibv_qp* verbsQp = qp->verbs();
  hca_->publishQp(*qpNum, qp.get());
  ++owner->second->queuePairs;
  ++cqUsers_[attr->send_cq];
  ++cqUsers_[attr->recv_cq];
  qps_[verbsQp] = std::move(qp);
  return verbsQp;
}

int Context::destroyQp(ibv_qp* qp) {
  std::unique_ptr<QueuePair> owned;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = qps_.find(qp);
    if (it == qps_.end()) return EINVAL;
    owned = std::move(it->second);
    qps_.erase(it);
  }
  retire(std::move(owned));
  return 0;
}

void Context::retire(std::unique_ptr<QueuePair> qp) {
  ibv_qp* v = qp->verbs();
  ibv_pd* pd = v->pd;
  ibv_cq* sendCq = v->send_cq;
  ibv_cq* recvCq = v->recv_cq;
  // No connection reaches it any more, then its threads stop: only then are its PD and CQs
  // free to go, since those threads complete work on them.
  hca_->releaseQpNum(qp->qpNum());
  qp->shutdown();
  qp.reset();
  std::lock_guard<std::mutex> lock(mu_);
  --pds_[pd]->queuePairs;
  --cqUsers_[sendCq];
  --cqUsers_[recvCq];
}

}  // namespace braid::transport::ib::emulated
