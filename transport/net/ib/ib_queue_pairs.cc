#include "transport/net/ib/ib_queue_pairs.h"

#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>

#include "base/socket_io.h"

namespace braid::transport::ib {
namespace {

std::string errnoText(int rc) { return std::strerror(rc != 0 ? rc : errno); }

}  // namespace

IbRegion::~IbRegion() {
  for (auto& [port, mr] : mrs_) port->verbs().deregMr(mr);
}

Status IbRegion::add(IbPort& port, void* addr, size_t bytes, int access) {
  if (mrs_.count(&port) != 0) return Status::success();
  ibv_mr* mr = port.verbs().regMr(port.pd, addr, bytes, access);
  if (mr == nullptr) {
    return systemError("verbs: registering " + std::to_string(bytes) + " bytes with " +
                       port.name() + ": " + std::strerror(errno));
  }
  mrs_[&port] = mr;
  return Status::success();
}

Status IbRegion::addDmabuf(IbPort& port, int fd, void* addr, size_t bytes, int access) {
  if (mrs_.count(&port) != 0) return Status::success();
  if (port.verbs().regDmabufMr == nullptr) {
    return systemError("verbs: " + std::string(port.verbs().name) +
                       " has no ibv_reg_dmabuf_mr (rdma-core 34 or newer registers device memory)");
  }
  ibv_mr* mr =
      port.verbs().regDmabufMr(port.pd, 0, bytes, reinterpret_cast<uintptr_t>(addr), fd, access);
  if (mr == nullptr) {
    return systemError("verbs: registering " + std::to_string(bytes) +
                       " bytes of device memory (dmabuf fd " + std::to_string(fd) + ") with " +
                       port.name() + ": ibv_reg_dmabuf_mr: " + std::strerror(errno) +
                       " (NCCL_DMABUF_ENABLE=0 stages through host memory instead)");
  }
  mrs_[&port] = mr;
  return Status::success();
}

Result<std::unique_ptr<IbQueuePairs>> IbQueuePairs::create(IbNetwork& network, int portIndex,
                                                           int count, int sendDepth, int recvDepth,
                                                           int peer) {
  std::unique_ptr<IbQueuePairs> pairs(new IbQueuePairs(network, portIndex, peer));
  static thread_local std::mt19937 random(std::random_device{}());
  IbPort& port = network.portAt(portIndex);
  for (int i = 0; i < count; ++i) {
    ibv_qp_init_attr init{};
    init.send_cq = port.cq;
    init.recv_cq = port.cq;
    init.qp_type = IBV_QPT_RC;
    init.cap.max_send_wr = static_cast<uint32_t>(sendDepth);
    init.cap.max_recv_wr = static_cast<uint32_t>(recvDepth);
    init.cap.max_send_sge = 1;
    init.cap.max_recv_sge = 1;
    BRAID_ASSIGN_OR_RETURN(ibv_qp * qp, createQueuePair(port, &init, peer));
    pairs->qps_.push_back(qp);
    pairs->psns_.push_back(random() & 0xffffff);
    ibv_qp_attr attr{};
    attr.qp_state = IBV_QPS_INIT;
    attr.pkey_index = 0;
    attr.port_num = port.port;
    // Remote reads: a receiver's flush reads back what landed in device memory (ib_fifo_pump.h).
    attr.qp_access_flags =
        IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ | IBV_ACCESS_LOCAL_WRITE;
    if (int rc = port.verbs().modifyQp(
            qp, &attr, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
        rc != 0) {
      return systemError("verbs: queue pair to INIT on " + port.name() + ": " + errnoText(rc));
    }
  }
  return pairs;
}

IbQueuePairs::~IbQueuePairs() {
  for (size_t i = 0; i < qps_.size(); ++i) destroyQueuePair(port(static_cast<int>(i)), qps_[i]);
}

Status IbQueuePairs::registerMemory(IbRegion* region, void* addr, size_t bytes, int access) const {
  for (int i = 0; i < size(); ++i) BRAID_TRY(region->add(port(i), addr, bytes, access));
  return Status::success();
}

Status IbQueuePairs::registerDmabuf(IbRegion* region, int fd, void* addr, size_t bytes,
                                    int access) const {
  for (int i = 0; i < size(); ++i) BRAID_TRY(region->addDmabuf(port(i), fd, addr, bytes, access));
  return Status::success();
}

IbHello IbQueuePairs::hello(const IbRegion& region, uint64_t addr, uint64_t stride,
                            uint32_t slotBytes) const {
  IbHello h{};
  h.magic = kHelloMagic;
  h.qps = static_cast<uint32_t>(size());
  h.slotBytes = slotBytes;
  h.splitData = network_.settings().splitDataOnQps ? 1 : 0;
  h.addr = addr;
  h.stride = stride;
  for (int i = 0; i < size(); ++i) {
    const IbPort& p = port(i);
    IbQpAddress& a = h.qp[i];
    a.qpn = qps_[i]->qp_num;
    a.psn = psns_[i];
    std::memcpy(a.gid, p.gid.raw, sizeof(a.gid));
    a.lid = p.lid;
    a.mtu = static_cast<uint8_t>(p.activeMtu);
    a.linkLayer = p.linkLayer;
    a.rkey = region.rkey(p);
  }
  return h;
}

namespace {

const char* linkLayerName(uint8_t layer) {
  switch (layer) {
    case IBV_LINK_LAYER_INFINIBAND:
      return "InfiniBand";
    case IBV_LINK_LAYER_ETHERNET:
      return "Ethernet (RoCE)";
    default:
      return "unspecified";
  }
}

std::string subnetText(const uint8_t* gid) {
  char text[24];
  snprintf(text, sizeof(text), "%02x%02x:%02x%02x:%02x%02x:%02x%02x", gid[0], gid[1], gid[2],
           gid[3], gid[4], gid[5], gid[6], gid[7]);
  return text;
}

}  // namespace

Status checkPortsAgree(const PortView& local, const PortView& remote, int gidIndex, int peer) {
  const std::string who = "rank " + std::to_string(peer);
  if (local.linkLayer != remote.linkLayer) {
    return invalidUsage("verbs: " + local.name + " is " + linkLayerName(local.linkLayer) + " but " +
                        who + "'s port " + remote.name + " is " + linkLayerName(remote.linkLayer) +
                        ": no queue pair joins the two (BRAID_IB_HCA / NCCL_IB_HCA picks ports of "
                        "one kind on every host)");
  }
  if (local.linkLayer == IBV_LINK_LAYER_INFINIBAND && gidIndex < 0 &&
      std::memcmp(local.gid, remote.gid, 8) != 0) {
    return invalidUsage("verbs: " + local.name + " is in subnet " + subnetText(local.gid) +
                        " but " + who + "'s port " + remote.name + " is in subnet " +
                        subnetText(remote.gid) +
                        ": routing by LID cannot cross subnets (BRAID_IB_GID_INDEX / "
                        "NCCL_IB_GID_INDEX routes by GID through a router)");
  }
  return Status::success();
}

Status IbQueuePairs::connect(const IbHello& remote, uint32_t slotBytes) {
  const std::string who = "rank " + std::to_string(peer_);
  if (remote.magic != kHelloMagic) {
    return remoteError("verbs: " + who + " did not answer as a braid verbs FIFO");
  }
  if (remote.qps != static_cast<uint32_t>(size())) {
    return invalidUsage("verbs: " + who + " has " + std::to_string(remote.qps) +
                        " queue pairs per connection, this rank " + std::to_string(size()) +
                        " (BRAID_IB_QPS_PER_CONNECTION must agree)");
  }
  if (remote.splitData != (network_.settings().splitDataOnQps ? 1u : 0u)) {
    return invalidUsage("verbs: " + who + (remote.splitData != 0 ? " splits" : " does not split") +
                        " each slot over its queue pairs and this rank " +
                        (remote.splitData != 0 ? "does not" : "does") +
                        " (BRAID_IB_SPLIT_DATA_ON_QPS must agree)");
  }
  if (remote.slotBytes != slotBytes) {
    return invalidUsage("verbs: " + who + " has FIFO slots of " + std::to_string(remote.slotBytes) +
                        " bytes, this rank " + std::to_string(slotBytes) +
                        " (BRAID_BUFFSIZE must agree)");
  }
  const IbSettings& settings = network_.settings();
  for (int i = 0; i < size(); ++i) {
    IbPort& p = port(i);
    const IbQpAddress& r = remote.qp[i];
    BRAID_TRY(
        checkPortsAgree(PortView{p.name(), p.linkLayer, p.gid.raw},
                        PortView{"(queue pair " + std::to_string(i) + ")", r.linkLayer, r.gid},
                        settings.gidIndex, peer_));
    ibv_qp_attr attr{};
    attr.qp_state = IBV_QPS_RTR;
    attr.path_mtu = std::min(p.activeMtu, static_cast<ibv_mtu>(r.mtu));
    attr.dest_qp_num = r.qpn;
    attr.rq_psn = r.psn;
    attr.max_dest_rd_atomic = 1;
    attr.min_rnr_timer = 12;
    attr.ah_attr.dlid = r.lid;
    attr.ah_attr.sl = static_cast<uint8_t>(settings.serviceLevel);
    attr.ah_attr.port_num = p.port;
    // RoCE always routes by GID; InfiniBand by LID, unless a GID index was asked for (routers).
    if (p.linkLayer != IBV_LINK_LAYER_INFINIBAND || settings.gidIndex >= 0) {
      attr.ah_attr.is_global = 1;
      std::memcpy(attr.ah_attr.grh.dgid.raw, r.gid, sizeof(r.gid));
      attr.ah_attr.grh.sgid_index = static_cast<uint8_t>(p.gidIndex);
      attr.ah_attr.grh.hop_limit = 255;
      attr.ah_attr.grh.traffic_class = static_cast<uint8_t>(settings.trafficClass);
    }
    if (int rc = p.verbs().modifyQp(qps_[i], &attr,
                                    IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
                                        IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
                                        IBV_QP_MIN_RNR_TIMER);
        rc != 0) {
      return systemError("verbs: queue pair to RTR on " + p.name() + " for " + who + ": " +
                         errnoText(rc));
    }
    attr = ibv_qp_attr{};
    attr.qp_state = IBV_QPS_RTS;
    attr.timeout = static_cast<uint8_t>(settings.timeout);
    attr.retry_cnt = static_cast<uint8_t>(settings.retryCount);
    attr.rnr_retry = 7;  // the receiver always has its receives posted; 7 = retry for ever
    attr.sq_psn = psns_[i];
    attr.max_rd_atomic = 1;
    if (int rc = p.verbs().modifyQp(qps_[i], &attr,
                                    IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
                                        IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC);
        rc != 0) {
      return systemError("verbs: queue pair to RTS on " + p.name() + " for " + who + ": " +
                         errnoText(rc));
    }
  }
  return Status::success();
}

int IbQueuePairs::indexOf(uint32_t qpn) const {
  for (int i = 0; i < size(); ++i) {
    if (qps_[i]->qp_num == qpn) return i;
  }
  return -1;
}

Result<bool> HelloReader::poll(const braid::sockets::Socket& socket) {
  size_t n = 0;
  const bool alive = braid::sockets::recvArrived(socket, reinterpret_cast<char*>(&hello_) + got_,
                                                 sizeof(hello_) - got_, &n);
  got_ += n;
  if (got_ == sizeof(hello_)) return true;
  if (alive) return false;
  return remoteError("the peer closed the connection (or it failed) before its verbs hello");
}

}  // namespace braid::transport::ib
