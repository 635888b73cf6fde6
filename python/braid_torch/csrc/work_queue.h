// WorkQueue: the thread a process group's operations run on, one after another in issue order.
//
// A host communicator's calls complete before they return, so a process group that called braid
// on the caller's thread could not give torch.distributed what it promises: `async_op=True`
// returns a handle at once, and DDP overlaps the all-reduce of one gradient bucket with the
// backward pass of the next. Each process group therefore owns one queue; the caller enqueues
// and the queue's thread makes the calls. One thread per communicator also keeps braid's rule
// that a communicator is used by one thread at a time, and the issue order is the order every
// rank's communicator sees, as collectives need.
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>

namespace braid_torch {

class WorkQueue {
 public:
  WorkQueue();
  /// Runs what is queued, then joins the thread.
  ~WorkQueue();
  WorkQueue(const WorkQueue&) = delete;
  WorkQueue& operator=(const WorkQueue&) = delete;

  /// Queues `job` behind every job pushed before it. Jobs must not throw.
  void push(std::function<void()> job);

 private:
  void run();

  std::mutex mutex_;
  std::condition_variable ready_;
  std::deque<std::function<void()>> jobs_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace braid_torch
