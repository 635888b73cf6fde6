#include "emulation/gpu/emulated_stream.h"

#include <algorithm>
#include <memory>
#include <random>
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

void EmulatedStream::enqueue(Task task) {
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

void EmulatedStream::runBlocks(
    unsigned blocks, unsigned threads,
    const std::function<void(unsigned, const kernels::engine::ThreadTeam&)>& job) {
  std::vector<std::unique_ptr<kernels::engine::BlockState>> states;
  std::vector<std::pair<unsigned, unsigned>> order;  // (block, thread)
  for (unsigned b = 0; b < blocks; ++b) {
    states.push_back(std::make_unique<kernels::engine::BlockState>(threads));
    for (unsigned t = 0; t < threads; ++t) order.push_back({b, t});
  }
  // Started in another order at every launch: a block or a thread that only works when it
  // starts first, or with its neighbours, fails here.
  std::mt19937_64 rng(0x9e3779b97f4a7c15ull ^ ++launches_ ^ reinterpret_cast<uintptr_t>(this));
  std::shuffle(order.begin(), order.end(), rng);
  std::vector<std::function<void()>> jobs;
  jobs.reserve(order.size());
  for (const auto& [b, t] : order) {
    kernels::engine::BlockState* state = states[b].get();
    jobs.push_back([&job, state, b = b, t = t] { job(b, kernels::engine::ThreadTeam(*state, t)); });
  }
  blocks_.runConcurrently(jobs);
}

void EmulatedStream::loop() {
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    changed_.wait(lock, [&] { return stop_ || !queue_.empty(); });
    if (queue_.empty()) return;  // stopping, and nothing left to run
    Task task = std::move(queue_.front());
    queue_.pop_front();
    lock.unlock();
    task(*this);
    lock.lock();
    ++finished_;
    changed_.notify_all();
  }
}

}  // namespace braid::gpu
