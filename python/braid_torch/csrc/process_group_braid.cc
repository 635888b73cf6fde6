// ProcessGroupBraid's life: creation, splitting, the queue, point-to-point and the barrier.
// The collectives are in collectives.cc.
#include "process_group_braid.h"

#include <cstring>
#include <future>
#include <stdexcept>
#include <utility>

#include <ATen/ATen.h>
#include <c10/util/Exception.h>

#include "braid_ext.h"
#include "braid_work.h"

namespace braid_torch {

c10::intrusive_ptr<ProcessGroupBraid> ProcessGroupBraid::create(
    c10::intrusive_ptr<c10d::Store> store, const std::string& uniqueId, int rank, int size) {
  ncclUniqueId id;
  TORCH_CHECK(uniqueId.size() == sizeof(id.internal), "braid: the unique id has ", uniqueId.size(),
              " bytes, not ", sizeof(id.internal));
  std::memcpy(id.internal, uniqueId.data(), sizeof(id.internal));
  ncclComm_t comm = nullptr;
  // Host memory whatever device is current: this backend's tensors are the CPU's.
  const ncclResult_t result = braidCommInitRankHost(&comm, size, id, rank, nullptr);
  TORCH_CHECK(result == ncclSuccess, "braid: creating the communicator of rank ", rank, " of ",
              size, ": ", ncclGetLastError(nullptr));
  return c10::make_intrusive<ProcessGroupBraid>(std::move(store), comm, rank, size);
}

ProcessGroupBraid::ProcessGroupBraid(c10::intrusive_ptr<c10d::Store> store, ncclComm_t comm,
                                     int rank, int size)
    : c10d::ProcessGroup(rank, size),
      comm_(comm),
      queue_(std::make_unique<WorkQueue>()),
      lanes_(std::make_unique<P2pLanes>(std::move(store), rank)) {
  init();
}

ProcessGroupBraid::~ProcessGroupBraid() {
  lanes_.reset();
  queue_.reset();
  ncclCommDestroy(comm_);
}

void ProcessGroupBraid::check(ncclResult_t result, const char* what) const {
  if (result != ncclSuccess) {
    throw std::runtime_error(std::string("braid: ") + what + " failed (" +
                             ncclGetErrorString(result) + "): " + ncclGetLastError(comm_));
  }
}

void ProcessGroupBraid::checkRank(int64_t rank, const char* what) const {
  TORCH_CHECK(rank >= 0 && rank < size_, "braid: ", what, " ", rank, " is outside [0, ", size_,
              ")");
}

c10::intrusive_ptr<c10d::Work> ProcessGroupBraid::enqueue(c10d::OpType type,
                                                          std::vector<at::Tensor> outputs,
                                                          std::function<void()> body) {
  return queueWork(*queue_, rank_, type, std::move(outputs), std::move(body));
}

c10::intrusive_ptr<ProcessGroupBraid> ProcessGroupBraid::split(
    c10::intrusive_ptr<c10d::Store> store, int key) {
  // In the queue: the split is a collective of this group, ordered with its other operations.
  std::promise<ncclComm_t> made;
  auto work = enqueue(c10d::OpType::UNKNOWN, {}, [this, key, &made] {
    ncclComm_t child = nullptr;
    check(ncclCommSplit(comm_, /*color=*/0, key, &child, nullptr), "splitting the group");
    made.set_value(child);
  });
  work->wait();
  ncclComm_t child = made.get_future().get();
  int rank = -1;
  int size = 0;
  ncclCommUserRank(child, &rank);
  ncclCommCount(child, &size);
  return c10::make_intrusive<ProcessGroupBraid>(std::move(store), child, rank, size);
}

void ProcessGroupBraid::splitOut() {
  auto work = enqueue(c10d::OpType::UNKNOWN, {}, [this] {
    ncclComm_t none = nullptr;
    check(ncclCommSplit(comm_, NCCL_SPLIT_NOCOLOR, 0, &none, nullptr), "leaving a split");
  });
  work->wait();
}

c10::intrusive_ptr<c10d::Work> ProcessGroupBraid::send(std::vector<at::Tensor>& tensors,
                                                       int dstRank, int /*tag*/) {
  const at::Tensor& t = onlyTensor(tensors, "send");
  checkTensor(t, "send's tensor");
  checkRank(dstRank, "send's destination");
  return lanes_->send(t, dstRank);
}

c10::intrusive_ptr<c10d::Work> ProcessGroupBraid::recv(std::vector<at::Tensor>& tensors,
                                                       int srcRank, int /*tag*/) {
  const at::Tensor& t = onlyTensor(tensors, "recv");
  checkTensor(t, "recv's tensor");
  checkRank(srcRank, "recv's source");
  return lanes_->recv(t, srcRank);
}

c10::intrusive_ptr<c10d::Work> ProcessGroupBraid::recvAnysource(std::vector<at::Tensor>&, int) {
  TORCH_CHECK(false,
              "braid: recv from any source is not supported (NCCL's API has no wildcard "
              "receive); pass src");
}

c10::intrusive_ptr<c10d::Work> ProcessGroupBraid::barrier(const c10d::BarrierOptions&) {
  // A one-byte all-reduce: no rank's completes before every rank has called.
  at::Tensor token = at::zeros({1}, at::kByte);
  return enqueue(c10d::OpType::BARRIER, {}, [this, token] {
    check(ncclAllReduce(token.data_ptr(), token.data_ptr(), 1, ncclUint8, ncclMax, comm_, nullptr),
          "barrier");
  });
}

}  // namespace braid_torch
