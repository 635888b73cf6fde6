#include "work_queue.h"

#include <set>
#include <utility>

#include <Python.h>

namespace braid_torch {
namespace {

// Lets the GIL go for its lifetime where this thread holds it and the interpreter is not
// finalizing (a thread that took the GIL back then would be stopped for good).
class GilReleased {
 public:
  GilReleased() {
    if (Py_IsInitialized() && PyGILState_Check() && !finalizing()) saved_ = PyEval_SaveThread();
  }
  ~GilReleased() {
    if (saved_ != nullptr) PyEval_RestoreThread(saved_);
  }
  GilReleased(const GilReleased&) = delete;
  GilReleased& operator=(const GilReleased&) = delete;

 private:
  static bool finalizing() {
#if PY_VERSION_HEX >= 0x030D0000
    return Py_IsFinalizing() != 0;
#else
    return _Py_IsFinalizing() != 0;
#endif
  }
  PyThreadState* saved_ = nullptr;
};

// Every queue of the process, for drainAll. Leaked on purpose: queues outlive static destructors
// when a process group is only destroyed at the interpreter's end.
std::mutex& registryMutex() {
  static auto* m = new std::mutex;
  return *m;
}
std::set<WorkQueue*>& registry() {
  static auto* queues = new std::set<WorkQueue*>;
  return *queues;
}

}  // namespace

WorkQueue::WorkQueue() : thread_([this] { run(); }) {
  std::lock_guard<std::mutex> lock(registryMutex());
  registry().insert(this);
}

WorkQueue::~WorkQueue() {
  GilReleased released;
  {
    std::lock_guard<std::mutex> lock(registryMutex());
    registry().erase(this);
  }
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  ready_.notify_one();
  thread_.join();
}

void WorkQueue::push(std::function<void()> job) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    jobs_.push_back(std::move(job));
  }
  ready_.notify_one();
}

void WorkQueue::drain() {
  GilReleased released;
  std::unique_lock<std::mutex> lock(mutex_);
  drained_.wait(lock, [this] { return jobs_.empty() && !running_; });
}

void WorkQueue::drainAll() {
  GilReleased released;
  std::lock_guard<std::mutex> lock(registryMutex());
  for (WorkQueue* queue : registry()) queue->drain();
}

void WorkQueue::run() {
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    ready_.wait(lock, [this] { return stopping_ || !jobs_.empty(); });
    if (jobs_.empty()) return;  // stopping, and everything queued has run
    {
      std::function<void()> job = std::move(jobs_.front());
      jobs_.pop_front();
      running_ = true;
      lock.unlock();
      job();
    }  // dropped here, with no lock held: its tensors may need the GIL
    lock.lock();
    running_ = false;
    if (jobs_.empty()) drained_.notify_all();
  }
}

}  // namespace braid_torch
