// One FIFO end's queue pairs and registered memory, and the hello the two ends of a FIFO trade
// to connect them.
//
// A FIFO over verbs has one to kMaxQps RC queue pairs (BRAID_IB_QPS_PER_CONNECTION) on each
// side, pair j connected to the peer's pair j, all on one port of its side: the FIFO's own NIC,
// as NCCL keeps a connection's queue pairs on its NIC (several pairs spread a connection over the
// NIC's engines and the fabric's paths, never over other NICs, whose rails may not reach the
// peer's). The sender writes slot k's bytes with RDMA write with immediate on pair k % n, or, with
// BRAID_IB_SPLIT_DATA_ON_QPS, a part of every slot on each pair (ib_fifo_pump.h); the receiver
// writes its count of released slots back (a plain RDMA write) on pair 0.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <vector>

#include "base/deadline.h"
#include "base/socket.h"
#include "braid/status.h"
#include "transport/net/ib/ib_network.h"

namespace braid::transport::ib {

inline constexpr int kMaxQps = 8;

/// What a peer needs to reach one queue pair, and the rkey of the memory it may write on it.
struct IbQpAddress {
  uint32_t qpn;
  uint32_t psn;
  uint8_t gid[16];
  uint16_t lid;
  uint8_t mtu;  ///< enum ibv_mtu of the port
  uint8_t linkLayer;
  uint32_t rkey;
};

/// One end's port as the other learns it from the hello, for checkPortsAgree.
struct PortView {
  std::string name;  ///< "mlx5_0:1", or "rank 3's port"
  uint8_t linkLayer;
  const uint8_t* gid;  ///< 16 bytes
};

/// Whether a queue pair can join the two ports: the same link layer (InfiniBand or Ethernet),
/// and on InfiniBand routed by LID (no `gidIndex`), the same subnet (the GIDs' first 8 bytes),
/// since a LID means nothing in another subnet. The error names both ports, both values and the
/// setting that changes them. MTUs need not agree: the queue pair takes the smaller, as NCCL's.
Status checkPortsAgree(const PortView& local, const PortView& remote, int gidIndex, int peer);

/// What each end of a FIFO sends the other once, on the socket the rendezvous paired them with.
struct IbHello {
  uint64_t magic;
  uint32_t qps;
  uint32_t slotBytes;
  uint64_t addr;    ///< receiver: its first slot; sender: its credit word
  uint64_t stride;  ///< receiver: bytes between slots
  IbQpAddress qp[kMaxQps];
  uint32_t splitData;  ///< 1: each slot split over every pair (BRAID_IB_SPLIT_DATA_ON_QPS)
};
inline constexpr uint64_t kHelloMagic = 0x6272616964696231ull;  // "braidib1"

/// Memory registered with every port a set of queue pairs uses.
class IbRegion {
 public:
  IbRegion() = default;
  ~IbRegion();
  IbRegion(const IbRegion&) = delete;
  IbRegion& operator=(const IbRegion&) = delete;

  Status add(IbPort& port, void* addr, size_t bytes, int access);
  /// Registers `bytes` of the dmabuf `fd` from its start, which the queue pairs address at `addr`
  /// (device memory a GPU exported: GPUDirect RDMA).
  Status addDmabuf(IbPort& port, int fd, void* addr, size_t bytes, int access);
  uint32_t lkey(const IbPort& port) const { return mrs_.at(&port)->lkey; }
  uint32_t rkey(const IbPort& port) const { return mrs_.at(&port)->rkey; }

 private:
  std::map<const IbPort*, ibv_mr*> mrs_;
};

class IbQueuePairs {
 public:
  /// `count` RC queue pairs in INIT, with room for `sendDepth` / `recvDepth` outstanding
  /// requests each; `peer` names the other rank in errors. Every pair is on the port
  /// IbNetwork::portAt(portIndex).
  static Result<std::unique_ptr<IbQueuePairs>> create(IbNetwork& network, int portIndex, int count,
                                                      int sendDepth, int recvDepth, int peer);
  ~IbQueuePairs();

  int size() const { return static_cast<int>(qps_.size()); }
  ibv_qp* qp(int i) const { return qps_[i]; }
  /// The port pair `i` is on: the same for every pair.
  IbPort& port(int /*i*/) const { return network_.portAt(portIndex_); }
  /// Registers [addr, addr + bytes) with each pair's port.
  Status registerMemory(IbRegion* region, void* addr, size_t bytes, int access) const;
  /// Registers the dmabuf `fd` (its first `bytes`, addressed at `addr`) likewise.
  Status registerDmabuf(IbRegion* region, int fd, void* addr, size_t bytes, int access) const;
  /// This side's hello; `region`'s rkeys go with each pair.
  IbHello hello(const IbRegion& region, uint64_t addr, uint64_t stride, uint32_t slotBytes) const;
  /// Checks the peer's hello against ours and takes every pair to RTS.
  Status connect(const IbHello& remote, uint32_t slotBytes);
  /// The index of the pair numbered `qpn` here, or -1.
  int indexOf(uint32_t qpn) const;

 private:
  IbQueuePairs(IbNetwork& network, int portIndex, int peer)
      : network_(network), portIndex_(portIndex), peer_(peer) {}

  IbNetwork& network_;
  int portIndex_;
  int peer_;
  std::vector<ibv_qp*> qps_;
  std::vector<uint32_t> psns_;
};

/// Reads a hello from `fd` without blocking, across calls: true once all of it has arrived; an
/// error when the connection ended first.
class HelloReader {
 public:
  /// Reads what has arrived of the hello on `socket` (through its seal, where the process
  /// encrypts); true once all of it has.
  Result<bool> poll(const braid::sockets::Socket& socket);
  const IbHello& hello() const { return hello_; }

 private:
  IbHello hello_{};
  size_t got_ = 0;
};

}  // namespace braid::transport::ib
