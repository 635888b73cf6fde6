// The LL (low-latency) shared-memory FIFO: the same SendEnd and RecvEnd as
// shm_fifo.h, for small messages.
//
// The Simple FIFO publishes a message in two steps, the data and then a tail
// counter on another cache line, so the receiver pulls at least two lines
// across cores and needs acquire ordering between them. Here every 4 bytes of
// payload travel with a 4-byte flag in one 8-byte store, and the flag says
// which message the word belongs to: the receiver polls the slot itself and
// takes a word as soon as its flag is the expected one, with no counter and
// no fence. The price is that the shared memory holds twice the payload and
// the payload is copied through process-private staging buffers on both
// sides, so the Simple FIFO stays the choice for bandwidth (BRAID_PROTO).
//
// Creation and naming work as for the Simple FIFO: the receiver creates the
// segment (segmentName() in shm_fifo.h), the sender opens it, and either
// unlinks it (unlinkSegment()) once both have mapped it. The segment header
// carries its own magic, so an LL end never opens a Simple segment or the
// other way round. See shm_ll_fifo.cc for the line format and the waits.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "braid/status.h"
#include "transport/connection.h"
#include "transport/shm/shm_fifo.h"  // segmentName, unlinkSegment

namespace braid::transport::shm {

/// The payload one LL slot carries in a communicator's FIFOs (capped by the
/// Simple slot size): LL is for small messages, and a small FIFO stays in
/// the caches. braid-sim sizes LL schedules with it too.
inline constexpr size_t kLlSlotBytes = 16 << 10;

/// Settings the comm never changes; tests use them to reach the wrap-around
/// of the flags and of the message counter in a short run.
struct LlFifoOptions {
  /// Flags count messages modulo 2^flagBits (4..32).
  int flagBits = 32;
  /// The sequence number of the first message.
  uint32_t firstSequence = 0;
};

/// Creates the segment `name` for kFifoSlots slots of `slotBytes` payload
/// bytes each (any size from 1; the segment holds about twice that) and
/// returns its receiving end. Fails if the name exists or /dev/shm is full.
Result<std::unique_ptr<RecvEnd>> createLlRecvEnd(const std::string& name, size_t slotBytes,
                                                 const LlFifoOptions& options = {});

/// Opens the receiver's LL segment `name`. Call only after createLlRecvEnd
/// has returned on the receiver. Fails if the segment is missing, is a
/// Simple FIFO, or was made with another slot size, slot count or version.
Result<std::unique_ptr<SendEnd>> openLlSendEnd(const std::string& name, size_t slotBytes);

/// Like openLlSendEnd, but returns nullptr (not an error) while the segment
/// does not exist or is not set up yet, so the caller can retry.
Result<std::unique_ptr<SendEnd>> tryOpenLlSendEnd(const std::string& name, size_t slotBytes);

}  // namespace braid::transport::shm
