// WorkQueue: the thread a process group's operations run on, one after another in issue order.
//
// A host communicator's calls complete before they return, so a process group that called braid
// on the caller's thread could not give torch.distributed what it promises: `async_op=True`
// returns a handle at once, and DDP overlaps the all-reduce of one gradient bucket with the
// backward pass of the next. Each process group therefore owns one queue; the caller enqueues
// and the queue's thread makes the calls. One thread per communicator also keeps braid's rule
// that a communicator is used by one thread at a time, and the issue order is the order every
// rank's communicator sees, as collectives need.
//
// The queue's thread needs Python's GIL now and then: dropping the last reference to a tensor
// whose Python object torch keeps alive from C++ takes it, and so do future callbacks written in
// Python. So it drops a finished job with no lock held, and every wait for it (the destructor,
// drain) lets the GIL go while it waits, where the waiting thread holds it: a thread that held
// the GIL while waiting for the queue, or a lock the queue's thread held while asking for the
// GIL, would wait forever (issue 48: ranks that never exited).
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

  /// Waits until every job pushed so far has run and been dropped.
  void drain();

  /// drain() of every queue of the process: before the interpreter finalizes (braid_torch's
  /// atexit hook), while the queues' threads can still take the GIL. From then on the threads
  /// of the interpreter's end would be stopped at their first try.
  static void drainAll();

 private:
  void run();

  std::mutex mutex_;
  std::condition_variable ready_;    // a job was pushed, or the queue is stopping
  std::condition_variable drained_;  // the queue has nothing left to run
  std::deque<std::function<void()>> jobs_;
  bool running_ = false;  // a job is out of jobs_ and not yet dropped
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace braid_torch
