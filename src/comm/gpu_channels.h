// How many channels a GPU communicator runs, and how many blocks one of its launches may use,
// from the device and from the ranks that share it.
//
// A channel is a block of the engine kernel, and a block that waits for a peer spins: if the
// ranks sharing one GPU launch more blocks than the GPU holds at once, a spinning block can
// keep a peer's block from ever starting, and both wait until the deadline. So the blocks of
// all the ranks on a device must be resident together: each rank gets an equal share of what
// the device holds (multiprocessors x blocks of the engine kernel per multiprocessor), and a
// rank's channels, and its point-to-point lanes, stay within that share.
//
// Within it, channels come from the device's size: one block moves a part of what the memory
// can, several move all of it, and the SMs left are the application's. The rule below is a
// first guess for Hopper until scripts/gpu-check's NCCL_MAX_NCHANNELS sweep has measured it
// (docs/gpu-check.md). NCCL_MIN_NCHANNELS / NCCL_MAX_NCHANNELS (and ncclConfig_t's minCTAs /
// maxCTAs) bound the choice; BRAID_NCHANNELS replaces it. A count the user forced that does not
// fit is refused; braid's own choice is lowered to fit.
#pragma once

#include <string>

#include "braid/status.h"

namespace braid::comm {

/// Fewest and most channels braid picks by itself.
inline constexpr int kMinAutoGpuChannels = 2;
inline constexpr int kMaxAutoGpuChannels = 32;
/// Multiprocessors per channel of each rank sharing a device, when braid picks.
inline constexpr int kSmsPerAutoChannel = 8;

struct GpuChannelInputs {
  int multiprocessors = 0;  ///< of the device
  int blocksPerSm = 0;      ///< engine blocks one multiprocessor holds at once
  int ranksOnDevice = 1;    ///< ranks of the communicator on this device, this one included
  int forced = 0;           ///< BRAID_NCHANNELS; 0: braid picks
  int minChannels = 0;      ///< NCCL_MIN_NCHANNELS or minCTAs; 0: unset
  int maxChannels = 0;      ///< NCCL_MAX_NCHANNELS or maxCTAs; 0: unset
};

struct GpuChannelChoice {
  int channels = 1;
  /// Most blocks one launch of this rank may use: its share of the resident blocks.
  int blockBudget = 1;
  /// Why `channels` is what it is, for the INFO log.
  std::string why;
};

/// The channels and block budget, or an error that names the device's limits when not even one
/// block per rank fits, or when a forced count does not.
Result<GpuChannelChoice> chooseGpuChannels(const GpuChannelInputs& in);

}  // namespace braid::comm
