// The bytes a process's GPU FIFOs moved across hosts, by where the NIC found them: in device
// memory it registered (GPUDirect RDMA), or staged through pinned host memory. What a test reads
// to see that a run staged nothing, and what the verbs transport says at INFO when it closes.
#pragma once

#include <cstdint>

namespace braid::transport::net {

/// Bytes a GPU FIFO end sent from, or received into, device memory registered with the NIC.
void countDeviceRegisteredBytes(uint64_t bytes);
/// Bytes a GPU FIFO end sent from, or received into, pinned host memory.
void countStagedBytes(uint64_t bytes);
/// One flush of a slot received into device memory (an RDMA read of it).
void countFlush();
uint64_t deviceRegisteredBytes();
uint64_t stagedBytes();
uint64_t flushes();

}  // namespace braid::transport::net
