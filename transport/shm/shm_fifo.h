// The shared-memory FIFO: SendEnd and RecvEnd over a POSIX shm segment.
//
// Each one-way FIFO lives in its own segment, created by the receiver (it
// owns its incoming buffer) and opened by the sender. The comm names the
// segment with segmentName(), creates the receiving end, tells the sender
// through the bootstrap that it exists, and unlinks the name once both ends
// have mapped it, so nothing is left in /dev/shm if a rank crashes later.
// Both ends may also be threads of one process.
//
// The data path makes no system call unless one side is asleep: see
// shm_fifo.cc for the segment layout and base/futex.h for how waiting works.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "braid/status.h"
#include "kernels/engine/fifo.h"
#include "transport/connection.h"

namespace braid::transport::shm {

/// "/braid-<16 hex digits of magic>-<sender>-<receiver>-<channel>", the
/// segment of the FIFO from `sender` to `receiver` on `channel`. The magic
/// (from the unique id) keeps two comms on one host apart.
std::string segmentName(uint64_t magic, int sender, int receiver, int channel);

/// Creates the segment `name` with kFifoSlots slots of `slotBytes` each and
/// returns its receiving end. Fails if the name exists or /dev/shm is full.
Result<std::unique_ptr<RecvEnd>> createRecvEnd(const std::string& name, size_t slotBytes);

/// Opens the receiver's segment `name`. Call only after createRecvEnd has
/// returned on the receiver. Fails if the segment is missing or was made with
/// another slot size, slot count or layout version.
Result<std::unique_ptr<SendEnd>> openSendEnd(const std::string& name, size_t slotBytes);

/// Like openSendEnd, for a receiver that creates its end whenever it gets
/// to it: returns nullptr (not an error) while the segment does not exist or
/// is not set up yet, so the caller can retry without blocking.
Result<std::unique_ptr<SendEnd>> tryOpenSendEnd(const std::string& name, size_t slotBytes);

/// A FIFO private to this process, both ends here, in memory without a name: what a proxy
/// puts between an executor and the network (transport/net). `ref` is the FIFO as the engine
/// addresses it, for a proxy that drives one side itself instead of through an end.
struct PrivateFifo {
  std::unique_ptr<RecvEnd> recv;
  std::unique_ptr<SendEnd> send;
  kernels::engine::FifoRef ref{};
};
Result<PrivateFifo> createPrivateFifo(size_t slotBytes);

/// Removes the name from /dev/shm; both ends keep working. Succeeds if the
/// name is already gone.
Status unlinkSegment(const std::string& name);

}  // namespace braid::transport::shm
