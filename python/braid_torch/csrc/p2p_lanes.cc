#include "p2p_lanes.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <stdexcept>
#include <thread>
#include <vector>

#include "braid_ext.h"
#include "braid_work.h"
#include "tensor_types.h"

namespace braid_torch {

namespace {

std::string laneKey(int from, int to) {
  return "braid_torch/p2p/" + std::to_string(from) + "->" + std::to_string(to);
}

void checkLane(ncclResult_t result, const char* what, ncclComm_t comm) {
  if (result != ncclSuccess) {
    throw std::runtime_error(std::string("braid: ") + what + " failed (" +
                             ncclGetErrorString(result) + "): " + ncclGetLastError(comm));
  }
}

// Waits until `key` is in the store, as store.get would, but without blocking inside the store:
// torch's TCPStore client serializes its calls, so a get waiting there for the peer's id would
// hold back this rank's other lanes, which must set the ids the peer's lanes wait for.
void awaitKey(c10d::Store& store, const std::string& key) {
  const auto deadline = std::chrono::steady_clock::now() + store.getTimeout();
  auto pause = std::chrono::microseconds(50);
  while (!store.check({key})) {
    if (std::chrono::steady_clock::now() > deadline) {
      throw std::runtime_error("no peer put " + key + " in the store within its timeout");
    }
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, std::chrono::microseconds(20000));
  }
}

}  // namespace

P2pLanes::Lane::~Lane() {
  queue.reset();
  if (comm != nullptr) ncclCommDestroy(comm);
}

P2pLanes::P2pLanes(c10::intrusive_ptr<c10d::Store> store, int rank)
    : store_(std::move(store)), rank_(rank) {}

P2pLanes::~P2pLanes() = default;

void P2pLanes::connect(Lane& lane, int peer, bool sending) {
  ncclUniqueId id;
  const std::string key = sending ? laneKey(rank_, peer) : laneKey(peer, rank_);
  try {
    if (sending) {
      checkLane(ncclGetUniqueId(&id), "making a send lane's unique id", nullptr);
      store_->set(key, std::vector<uint8_t>(id.internal, id.internal + sizeof(id.internal)));
    } else {
      awaitKey(*store_, key);
      const std::vector<uint8_t> bytes = store_->get(key);
      if (bytes.size() != sizeof(id.internal)) {
        throw std::runtime_error("the store's " + key + " has " + std::to_string(bytes.size()) +
                                 " bytes");
      }
      std::memcpy(id.internal, bytes.data(), sizeof(id.internal));
    }
    checkLane(braidCommInitRankHost(&lane.comm, 2, id, sending ? 0 : 1, nullptr),
              "connecting a point-to-point lane", nullptr);
  } catch (const std::exception& e) {
    lane.comm = nullptr;
    lane.failure = std::string("braid: the lane ") + (sending ? "to" : "from") + " rank " +
                   std::to_string(peer) + " could not be made: " + e.what();
  }
}

P2pLanes::Lane& P2pLanes::lane(int peer, bool sending) {
  std::lock_guard<std::mutex> lock(mutex_);
  std::unique_ptr<Lane>& slot = lanes_[{peer, sending}];
  if (!slot) {
    slot = std::make_unique<Lane>();
    slot->queue = std::make_unique<WorkQueue>();
    Lane* made = slot.get();
    slot->queue->push([this, made, peer, sending] { connect(*made, peer, sending); });
  }
  return *slot;
}

c10::intrusive_ptr<c10d::Work> P2pLanes::send(const at::Tensor& tensor, int peer) {
  Lane& l = lane(peer, /*sending=*/true);
  return queueWork(*l.queue, rank_, c10d::OpType::SEND, {tensor}, [&l, tensor] {
    if (l.comm == nullptr) throw std::runtime_error(l.failure);
    checkLane(ncclSend(tensor.data_ptr(), tensor.numel(), datatypeOf(tensor), /*peer=*/1, l.comm,
                       nullptr),
              "send", l.comm);
  });
}

c10::intrusive_ptr<c10d::Work> P2pLanes::recv(const at::Tensor& tensor, int peer) {
  Lane& l = lane(peer, /*sending=*/false);
  return queueWork(*l.queue, rank_, c10d::OpType::RECV, {tensor}, [&l, tensor] {
    if (l.comm == nullptr) throw std::runtime_error(l.failure);
    checkLane(ncclRecv(tensor.data_ptr(), tensor.numel(), datatypeOf(tensor), /*peer=*/0, l.comm,
                       nullptr),
              "recv", l.comm);
  });
}

}  // namespace braid_torch
