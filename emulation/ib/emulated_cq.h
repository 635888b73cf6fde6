// An emulated completion queue: completions of the QPs that use it, polled oldest first.
//
// It holds at most the `cqe` completions it was created with. A completion that finds it full
// overruns it, as on real hardware: the CQ goes into error, keeps nothing more, and every poll
// fails from then on (the reason is logged once). It can be resized while in use.
#pragma once

#include <infiniband/verbs.h>

#include <deque>
#include <mutex>

#include "emulation/ib/emulated_handle.h"

namespace braid::transport::ib::emulated {

class CompletionQueue {
 public:
  CompletionQueue(ibv_context* context, int cqe, void* cqContext);
  CompletionQueue(const CompletionQueue&) = delete;
  CompletionQueue& operator=(const CompletionQueue&) = delete;

  ibv_cq* verbs() { return &handle_.verbs; }
  static CompletionQueue* from(ibv_cq* cq) { return Handle::ownerOf(cq); }

  /// Adds a completion; thread safe. Whatever the completion's writer did to memory before is
  /// visible to whoever polls it (the mutex orders them).
  void push(const ibv_wc& wc);
  /// Up to `entries` completions, oldest first; -1 once the CQ has overrun.
  int poll(int entries, ibv_wc* out);
  /// ibv_resize_cq: room for `cqe` completions from now on; EINVAL outside 1..kMaxCqe or below
  /// the completions it holds now, as libibverbs refuses.
  int resize(int cqe);

 private:
  using Handle = VerbsHandle<ibv_cq, CompletionQueue>;
  Handle handle_;
  std::mutex mu_;
  std::deque<ibv_wc> entries_;
  bool overrun_ = false;
};

}  // namespace braid::transport::ib::emulated
