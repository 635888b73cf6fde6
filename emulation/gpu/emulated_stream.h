// The emulated GPU's streams and events (emulation/gpu/emulated_runtime.cc).
//
// A stream is an in-order queue of tasks run by one worker thread; a task
// is a copy, a fill, a host callback, an event record or wait, or a
// launch, which runs the kernel's CPU instance once per thread of each
// block, every thread of every block at once on threads of the stream's own
// pool (blocks of one launch may wait for each other, as the engine's send
// and receive channels do), started in a shuffled order: the engine may
// assume its blocks are all resident, never that they start together or in
// order.
//
// An event counts the records made of it and the records completed: a
// wait or a synchronize made after record k waits for record k, as CUDA's
// do, whatever is recorded later.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>

#include "base/worker_pool.h"
#include "kernels/engine/thread_team.h"

namespace braid::gpu {

class EmulatedEvent {
 public:
  /// Counts a new record; returns its number.
  uint64_t addRecord();
  /// Marks record `n` (and the ones before it) complete.
  void complete(uint64_t n);
  /// The number of the latest record (0: never recorded).
  uint64_t latest();
  /// Blocks until record `n` has completed.
  void waitFor(uint64_t n);
  bool done(uint64_t n);

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  uint64_t recorded_ = 0;
  uint64_t completed_ = 0;
};

class EmulatedStream {
 public:
  explicit EmulatedStream(int device);
  /// Runs what is queued, then stops the worker.
  ~EmulatedStream();
  EmulatedStream(const EmulatedStream&) = delete;
  EmulatedStream& operator=(const EmulatedStream&) = delete;

  /// What a stream runs, handed the stream that runs it (a task of a captured graph runs on
  /// whichever stream the graph is launched on).
  using Task = std::function<void(EmulatedStream&)>;

  int device() const { return device_; }
  void enqueue(Task task);
  /// Blocks until every task enqueued before the call has run.
  void synchronize();
  /// Runs job(b, team) for every thread of every block b < blocks at once, each block a team of
  /// `threads` threads: the body of a launch task.
  void runBlocks(unsigned blocks, unsigned threads,
                 const std::function<void(unsigned, const kernels::engine::ThreadTeam&)>& job);

 private:
  void loop();

  const int device_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<Task> queue_;
  uint64_t enqueued_ = 0;
  uint64_t finished_ = 0;
  bool stop_ = false;
  uint64_t launches_ = 0;  ///< seeds each launch's start order
  WorkerPool blocks_;
  std::thread worker_;
};

}  // namespace braid::gpu
