#include "emulation/gpu/emulated_stream.h"

#include <algorithm>
#include <vector>

namespace braid::gpu {

uint64_t EmulatedEvent::addRecord() {
  std::lock_guard<std::mutex> lock(mutex_);
  return ++recorded_;
}

void EmulatedEvent::complete(uint64_t n) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    completed_ = std::max(completed_, n);
  }
  changed_.notify_all();
}

uint64_t EmulatedEvent::latest() {
  std::lock_guard<std::mutex> lock(mutex_);
  return recorded_;
}

void EmulatedEvent::waitFor(uint64_t n) {
  std::unique_lock<std::mutex> lock(mutex_);
  changed_.wait(lock, [&] { return completed_ >= n; });
}

bool EmulatedEvent::done(uint64_t n) {
  std::lock_guard<std::mutex> lock(mutex_);
  return completed_ >= n;
}

EmulatedStream::EmulatedStream(int device) : device_(device), worker_([this] { loop(); }) {}

EmulatedStream::~EmulatedStream() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  changed_.notify_all();
  worker_.join();
}

void EmulatedStream::enqueue(std::function<void()> task) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    queue_.push_back(std::move(task));
    ++enqueued_;
  }
  changed_.notify_all();
}

void EmulatedStream::synchronize() {
  std::unique_lock<std::mutex> lock(mutex_);
  const uint64_t target = enqueued_;
  changed_.wait(lock, [&] { return finished_ >= target; });
}

void EmulatedStream::runBlocks(unsigned blocks, const std::function<void(unsigned)>& job) {
  std::vector<std::function<void()>> jobs;
  jobs.reserve(blocks);
  for (unsigned b = 0; b < blocks; ++b) jobs.push_back([&job, b] { job(b); });
  blocks_.runConcurrently(jobs);
}

void EmulatedStream::loop() {
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    changed_.wait(lock, [&] { return stop_ || !queue_.empty(); });
    if (queue_.empty()) return;  // stopping, and nothing left to run
    std::function<void()> task = std::move(queue_.front());
    queue_.pop_front();
    lock.unlock();
    task();
    lock.lock();
    ++finished_;
    changed_.notify_all();
  }
}

}  // namespace braid::gpu
