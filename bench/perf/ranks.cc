// A thread's ranks: creation in one group, buffers, destruction, error reports.
#include "perf/ranks.h"

#include <algorithm>
#include <cstring>

#include "perf/device.h"

namespace braid::perf {

ThreadRanks::ThreadRanks(int firstRank, int count, int nranks) : ranks_(count), nranks_(nranks) {
  for (int g = 0; g < count; ++g) ranks_[g].rank = firstRank + g;
}

ThreadRanks::~ThreadRanks() {
  const Device& d = Device::get();
  for (Rank& r : ranks_) {
    enter(r);
    if (r.device >= 0) d.sync(r.stream);
    if (r.comm != nullptr) {
      for (ncclWindow_t w : {r.sendWindow, r.recvWindow}) {
        if (w != nullptr) ncclCommWindowDeregister(r.comm, w);
      }
      ncclCommDestroy(r.comm);
    }
    if (r.memAlloced) {
      ncclMemFree(r.hostSend);
      ncclMemFree(r.hostRecv);
    }
    if (r.device < 0) continue;
    if (r.deviceMemAlloced) {
      ncclMemFree(r.deviceSend);
      ncclMemFree(r.deviceRecv);
    } else {
      d.release(r.deviceSend);
      d.release(r.deviceRecv);
    }
    d.release(r.deviceScratch);
    if (r.stream != nullptr) d.destroyStream(r.stream);
  }
}

void ThreadRanks::enter(const Rank& r) const {
  if (r.device >= 0) Device::get().setDevice(r.device);
}

bool ThreadRanks::init(const ncclUniqueId& id) {
  const Device& d = Device::get();
  const int devices = d.count();
  // The output handles stay where they are until ncclGroupEnd fills them:
  // ranks_ is not resized in between. A communicator runs on the device
  // current when it is made, as NCCL's does.
  bool ok = each("ncclCommInitRank", [&](Rank& r, size_t) {
    if (devices > 0) d.setDevice(r.rank % devices);
    return ncclCommInitRank(&r.comm, nranks_, id, r.rank);
  });
  if (!ok) return false;
  for (Rank& r : ranks_) {
    int device = -1;
    // NVIDIA's library answers for its devices; braid's says -1 for host memory.
    if (ncclCommCuDevice(r.comm, &device) != ncclSuccess) device = -1;
    r.device = devices > 0 ? device : -1;
  }
  return true;
}

bool ThreadRanks::allocate(size_t bytes, bool memAlloc, bool deviceMemAlloc) {
  const Device& d = Device::get();
  for (Rank& r : ranks_) {
    r.send.assign(bytes, 0);
    r.recv.assign(bytes, 0);
    r.hostSend = r.send.data();
    r.hostRecv = r.recv.data();
    if (memAlloc && r.device < 0) {
      void* send = nullptr;
      void* recv = nullptr;
      if (ncclMemAlloc(&send, bytes) != ncclSuccess || ncclMemAlloc(&recv, bytes) != ncclSuccess) {
        fprintf(stderr, "braid-perf: rank %d: ncclMemAlloc of %zu bytes failed: %s\n", r.rank,
                bytes, ncclGetLastError(nullptr));
        ncclMemFree(send);
        return false;
      }
      r.hostSend = static_cast<char*>(send);
      r.hostRecv = static_cast<char*>(recv);
      r.memAlloced = true;
      memset(r.hostSend, 0, bytes);
      memset(r.hostRecv, 0, bytes);
    }
    if (r.device < 0) continue;
    enter(r);
    if (r.stream == nullptr) r.stream = d.newStream();
    if (deviceMemAlloc) {
      void* send = nullptr;
      void* recv = nullptr;
      if (ncclMemAlloc(&send, bytes) != ncclSuccess || ncclMemAlloc(&recv, bytes) != ncclSuccess) {
        fprintf(stderr, "braid-perf: rank %d: ncclMemAlloc of %zu device bytes failed: %s\n",
                r.rank, bytes, ncclGetLastError(nullptr));
        ncclMemFree(send);
        return false;
      }
      r.deviceSend = static_cast<char*>(send);
      r.deviceRecv = static_cast<char*>(recv);
      r.deviceMemAlloced = true;
    } else {
      r.deviceSend = static_cast<char*>(d.alloc(bytes));
      r.deviceRecv = static_cast<char*>(d.alloc(bytes));
    }
    r.deviceScratch = static_cast<double*>(d.alloc(std::max<size_t>(nranks_, 1) * sizeof(double)));
    if (r.stream == nullptr || !r.deviceSend || !r.deviceRecv || !r.deviceScratch) {
      fprintf(stderr, "braid-perf: rank %d: cannot allocate %zu bytes on device %d\n", r.rank,
              bytes, r.device);
      return false;
    }
  }
  return true;
}

int ThreadRanks::registerWindows(size_t bytes) {
  // ncclCommWindowRegister is collective: every rank registers its send buffers together, then
  // its receive buffers.
  for (bool send : {true, false}) {
    const bool ok = each("ncclCommWindowRegister", [&](Rank& r, size_t) {
      void* buffer =
          r.device >= 0 ? (send ? r.deviceSend : r.deviceRecv) : (send ? r.hostSend : r.hostRecv);
      return ncclCommWindowRegister(r.comm, buffer, bytes, send ? &r.sendWindow : &r.recvWindow,
                                    NCCL_WIN_COLL_SYMMETRIC);
    });
    if (!ok) return -1;
  }
  int nulls = 0;
  for (const Rank& r : ranks_) nulls += (r.sendWindow == nullptr) + (r.recvWindow == nullptr);
  return nulls;
}

bool ThreadRanks::synchronize() {
  for (Rank& r : ranks_) {
    if (r.device < 0) continue;
    enter(r);
    if (!Device::get().sync(r.stream)) return false;
  }
  return true;
}

bool ThreadRanks::barrier() {
  std::vector<std::vector<double>> token(ranks_.size(), std::vector<double>{0.0});
  return allReduceDoubles(&token, ncclSum, "barrier");
}

bool ThreadRanks::allReduceDoubles(std::vector<std::vector<double>>* values, ncclRedOp_t op,
                                   const char* what) {
  const Device& d = Device::get();
  const size_t count = values->front().size();
  for (size_t g = 0; g < ranks_.size(); ++g) {
    Rank& r = ranks_[g];
    if (r.device < 0) continue;
    enter(r);
    if (!d.copy(r.deviceScratch, (*values)[g].data(), count * sizeof(double), r.stream)) {
      return false;
    }
  }
  bool ok = each(what, [&](Rank& r, size_t g) {
    double* v = r.device >= 0 ? r.deviceScratch : (*values)[g].data();
    return ncclAllReduce(v, v, count, ncclFloat64, op, r.comm, r.stream);
  });
  if (!ok) return false;
  for (size_t g = 0; g < ranks_.size(); ++g) {
    Rank& r = ranks_[g];
    if (r.device < 0) continue;
    enter(r);
    if (!d.copy((*values)[g].data(), r.deviceScratch, count * sizeof(double), r.stream)) {
      return false;
    }
  }
  return true;
}

bool ThreadRanks::failed(const char* what, ncclResult_t result, const Rank* rank) const {
  // Errors are kept per thread, so any of this thread's communicators names them.
  const char* detail = ncclGetLastError(rank != nullptr ? rank->comm : nullptr);
  if (rank != nullptr) {
    fprintf(stderr, "braid-perf: rank %d: %s failed: %s (%s)\n", rank->rank, what,
            ncclGetErrorString(result), detail);
  } else if (ranks_.size() == 1) {
    fprintf(stderr, "braid-perf: rank %d: %s failed: %s (%s)\n", ranks_[0].rank, what,
            ncclGetErrorString(result), detail);
  } else {
    fprintf(stderr, "braid-perf: ranks %d-%d: %s failed: %s (%s)\n", ranks_.front().rank,
            ranks_.back().rank, what, ncclGetErrorString(result), detail);
  }
  return false;
}

}  // namespace braid::perf
