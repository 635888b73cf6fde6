// How far apart two CPUs are, measured: the one-way time of a cache line between them.
//
// A FIFO slot that one core writes and another reads crosses between their caches. Where the two
// share a last-level cache the line comes over in tens of nanoseconds; where they do not (two
// sockets, two chiplets, or the vCPUs of a VM that the host placed apart), each line written
// costs the reader a probe of the writer's cache, hundreds of nanoseconds, and streams of slots
// crawl: a 1 MiB exchange both ways at once took 190-203 us with plain stores and 74-81 us with
// non-temporal ones on a 2-vCPU VM whose lines took 290 ns (docs/benchmarks.md, 2026-12-06).
// The topology a VM reports does not say which case it is in; this measures it.
#pragma once

#include <chrono>

namespace braid {

/// The one-way time in ns of a cache line between CPUs `a` and `b` (a store on one seen by a
/// load on the other): the least, over batches of round trips between two threads pinned to
/// them, of a batch's mean, so that a batch the scheduler interrupted does not count. Negative
/// where it cannot be measured: a == b, a CPU this process may not run on, or no batch ran
/// undisturbed within `budget`.
double lineTransferNs(int a, int b,
                      std::chrono::microseconds budget = std::chrono::microseconds(3000));

/// lineTransferNs(a, b) measured at most once per `maxAge` in this process: the communicators a
/// process makes one after another (splits, a test's dozens) share a measurement, while a job's
/// later communicator sees the machine as it has become.
double recentLineTransferNs(int a, int b, std::chrono::seconds maxAge = std::chrono::seconds(60));

}  // namespace braid
