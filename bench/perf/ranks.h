// The ranks one thread of braid-perf drives, with their buffers.
//
// With -g G a thread owns G ranks, as one of nccl-tests' threads owns G GPUs.
// Every call blocks until all ranks of its communicator take part, so one
// thread cannot issue its G calls one after another: it issues them inside
// ncclGroupStart/ncclGroupEnd, and the group runs the communicators
// concurrently. Creation goes the same way (ncclCommInitRank in one group).
#pragma once

#include <cstddef>
#include <cstdio>
#include <vector>

#include "nccl.h"

namespace braid::perf {

/// One rank this thread owns. On a GPU communicator, as nccl-tests does, the
/// calls use device buffers and a stream of the rank's device; `send` and
/// `recv` are then where inputs are made and outputs checked, copied to and
/// from the device around each checked call.
struct Rank {
  ncclComm_t comm = nullptr;
  int rank = 0;
  std::vector<char> send;
  std::vector<char> recv;
  /// The host buffers the calls use: send's and recv's, or ncclMemAlloc's (-R).
  char* hostSend = nullptr;
  char* hostRecv = nullptr;
  bool memAlloced = false;
  /// -R 2: the device buffers are ncclMemAlloc's too (ncclMemFree'd).
  bool deviceMemAlloced = false;
  /// -R 2: the windows of the buffers the calls use; NULL where the library made none.
  ncclWindow_t sendWindow = nullptr;
  ncclWindow_t recvWindow = nullptr;
  int device = -1;  ///< ncclCommCuDevice: -1 for a host communicator
  cudaStream_t stream = nullptr;
  char* deviceSend = nullptr;
  char* deviceRecv = nullptr;
  double* deviceScratch = nullptr;  ///< room for nranks doubles (tables, #wrong)
};

/// A thread's ranks firstRank .. firstRank + count - 1 of nranks. Destroying
/// it destroys the communicators.
class ThreadRanks {
 public:
  ThreadRanks(int firstRank, int count, int nranks);
  ~ThreadRanks();
  ThreadRanks(const ThreadRanks&) = delete;
  ThreadRanks& operator=(const ThreadRanks&) = delete;

  /// Creates the communicators, in one group, each while its device is
  /// current when there are GPUs (rank r on device r % count); on failure
  /// prints why.
  bool init(const ncclUniqueId& id);

  /// Gives every rank host buffers of `bytes` each and, on GPU
  /// communicators, device buffers and a stream too.
  /// `memAlloc`: host ranks' buffers from ncclMemAlloc (-R).
  /// `deviceMemAlloc`: device buffers from ncclMemAlloc (-R 2).
  bool allocate(size_t bytes, bool memAlloc = false, bool deviceMemAlloc = false);

  /// -R 2: registers the buffers the calls use (device buffers on GPU communicators, else the
  /// host ones) as symmetric windows, together on every rank; returns how many of this
  /// thread's windows came back NULL, or -1 on failure (printed).
  int registerWindows(size_t bytes);

  /// Waits for every rank's stream (nothing on host communicators).
  bool synchronize();

  /// Returns once every rank of the communicator has reached it: an all_reduce of one double
  /// per rank, as the MPI peer's MPI_Barrier (bench/peers/mpi_allreduce_perf.c) before its timed
  /// loop. On failure prints why.
  bool barrier();

  /// Reduces one table of doubles per owned rank (values[g], `count` each)
  /// over all ranks with `op`, in place, through device memory on GPU
  /// communicators.
  bool allReduceDoubles(std::vector<std::vector<double>>* values, ncclRedOp_t op, const char* what);

  /// Whether the communicators run on GPUs.
  bool onGpu() const { return ranks_.front().device >= 0; }

  /// Issues `fn(rank, g)` for each owned rank (g: its index here) inside one
  /// group; fn issues one call on rank.comm and returns its result. On
  /// failure prints which call (`what`) failed and why.
  template <typename Fn>
  bool each(const char* what, Fn&& fn);

  std::vector<Rank>& ranks() { return ranks_; }
  int nranks() const { return nranks_; }
  /// Whether this thread owns rank 0, which prints the table.
  bool leads() const { return ranks_.front().rank == 0; }

  /// Prints on stderr that `what` failed with `result` on `rank` (nullptr:
  /// on this thread's ranks), with the library's last error; returns false.
  bool failed(const char* what, ncclResult_t result, const Rank* rank) const;

  /// Makes rank r's device current (nothing on host communicators).
  void enter(const Rank& r) const;

 private:
  std::vector<Rank> ranks_;
  int nranks_;
};

template <typename Fn>
bool ThreadRanks::each(const char* what, Fn&& fn) {
  // One rank needs no group: the call is the same, without the group's queue.
  if (ranks_.size() == 1) {
    enter(ranks_[0]);
    ncclResult_t r = fn(ranks_[0], size_t{0});
    return r == ncclSuccess || failed(what, r, &ranks_[0]);
  }
  ncclResult_t r = ncclGroupStart();
  if (r != ncclSuccess) return failed("ncclGroupStart", r, nullptr);
  bool ok = true;
  for (size_t g = 0; g < ranks_.size() && ok; ++g) {
    enter(ranks_[g]);
    r = fn(ranks_[g], g);
    // A call refused at issue is reported now, before ncclGroupEnd overwrites
    // the last error; the group must still be closed.
    if (r != ncclSuccess) ok = failed(what, r, &ranks_[g]);
  }
  r = ncclGroupEnd();
  if (r != ncclSuccess) return failed(what, r, nullptr);
  return ok;
}

}  // namespace braid::perf
