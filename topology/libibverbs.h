// libibverbs.so.1, opened once per process: topology discovery (verbs_nics.cc) and the verbs
// transport (transport/net/ib/verbs_library.cc) both resolve their calls from this one handle.
//
// It stays open until the process exits: providers (libmlx5, ...) are libraries it loads in
// turn and keeps threads and state in. Right after it is opened, before any other verbs call,
// ibv_fork_init() is called, unless RDMAV_FORK_SAFE or IBV_FORK_SAFE is set (libibverbs then
// calls it itself). Why: braid registers memory that the HCA writes, and a process that forks
// afterwards (a test harness that forks ranks, Python's multiprocessing and subprocess, a
// framework's data loader workers) would otherwise share those pages copy-on-write with its
// child; the parent's next write moves the page and the HCA keeps writing into the old one,
// which the child now owns, corrupting data in silence. ibv_fork_init marks registered memory
// MADV_DONTFORK, so the child gets no mapping of it and the parent keeps its pages. On kernels
// and rdma-core that make fork safe by themselves (Linux 5.13, rdma-core 35) it does nothing.
#pragma once

#include "braid/status.h"
#include "topology/dynamic_library.h"

namespace braid::topology {

/// The process's libibverbs.so.1, or why it cannot be loaded (the same answer on every call).
Result<const DynamicLibrary*> libibverbs();

}  // namespace braid::topology
