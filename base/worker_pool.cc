#include "base/worker_pool.h"

namespace braid {

WorkerPool::~WorkerPool() {
  for (auto& w : workers_) {
    {
      std::lock_guard<std::mutex> lock(w->mutex);
      w->stop = true;
    }
    w->wake.notify_one();
    w->thread.join();
  }
}

void WorkerPool::loop(Worker& w) {
  for (;;) {
    const std::function<void()>* job = nullptr;
    {
      std::unique_lock<std::mutex> lock(w.mutex);
      w.wake.wait(lock, [&] { return w.stop || w.job != nullptr; });
      if (w.stop) return;
      job = w.job;
    }
    (*job)();
    {
      std::lock_guard<std::mutex> lock(w.mutex);
      w.job = nullptr;
    }
    {
      std::lock_guard<std::mutex> lock(doneMutex_);
      --running_;
    }
    done_.notify_one();
  }
}

void WorkerPool::runConcurrently(const std::vector<std::function<void()>>& jobs) {
  if (jobs.empty()) return;
  while (workers_.size() + 1 < jobs.size()) {
    auto w = std::make_unique<Worker>();
    Worker* raw = w.get();
    w->thread = std::thread([this, raw] { loop(*raw); });
    workers_.push_back(std::move(w));
  }
  {
    std::lock_guard<std::mutex> lock(doneMutex_);
    running_ = jobs.size() - 1;
  }
  for (size_t i = 1; i < jobs.size(); ++i) {
    Worker& w = *workers_[i - 1];
    {
      std::lock_guard<std::mutex> lock(w.mutex);
      w.job = &jobs[i];
    }
    w.wake.notify_one();
  }
  jobs[0]();
  std::unique_lock<std::mutex> lock(doneMutex_);
  done_.wait(lock, [&] { return running_ == 0; });
}

}  // namespace braid
