// A few long-lived threads that run jobs concurrently with the caller.
//
// ncclGroupEnd runs the operations of several communicators at once, one
// thread each, because every collective blocks until all its ranks take
// part. Starting a thread per communicator at every group end cost over a
// millisecond per call on the VMs here; these workers are started once and
// sleep between groups.
#pragma once

#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace braid {

class WorkerPool {
 public:
  WorkerPool() = default;
  ~WorkerPool();
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  /// Runs jobs[0] on the calling thread and every other job on a worker of
  /// its own, all at once; returns when every job has returned.
  void runConcurrently(const std::vector<std::function<void()>>& jobs);

 private:
  struct Worker {
    std::thread thread;
    std::mutex mutex;
    std::condition_variable wake;
    const std::function<void()>* job = nullptr;  // set by the caller, cleared when done
    bool stop = false;
  };
  void loop(Worker& w);

  std::vector<std::unique_ptr<Worker>> workers_;
  std::mutex doneMutex_;
  std::condition_variable done_;
  size_t running_ = 0;
};

}  // namespace braid
