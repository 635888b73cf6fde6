// chooseGpuChannels (gpu_channels.h).
#include "comm/gpu_channels.h"

#include <algorithm>

namespace braid::comm {
namespace {

std::string deviceText(const GpuChannelInputs& in, int resident) {
  return std::to_string(in.ranksOnDevice) + " rank(s) of the communicator share this GPU, whose " +
         std::to_string(in.multiprocessors) + " multiprocessors hold " + std::to_string(resident) +
         " engine blocks at once (" + std::to_string(in.blocksPerSm) + " each)";
}

}  // namespace

Result<GpuChannelChoice> chooseGpuChannels(const GpuChannelInputs& in) {
  if (in.multiprocessors < 1 || in.blocksPerSm < 0 || in.ranksOnDevice < 1) {
    return invalidArgument("GPU channels: the device reports " +
                           std::to_string(in.multiprocessors) + " multiprocessors and " +
                           std::to_string(in.blocksPerSm) + " blocks per multiprocessor for " +
                           std::to_string(in.ranksOnDevice) + " rank(s)");
  }
  const int resident = in.multiprocessors * in.blocksPerSm;
  GpuChannelChoice choice;
  choice.blockBudget = resident / in.ranksOnDevice;
  if (choice.blockBudget < 1) {
    return invalidUsage(deviceText(in, resident) +
                        ": each rank's kernel needs a resident block, or the ranks' spinning "
                        "blocks could wait for each other forever; run fewer ranks per GPU");
  }
  if (in.minChannels > 0 && in.maxChannels > 0 && in.minChannels > in.maxChannels) {
    return invalidArgument(
        "NCCL_MIN_NCHANNELS (minCTAs) = " + std::to_string(in.minChannels) +
        " exceeds NCCL_MAX_NCHANNELS (maxCTAs) = " + std::to_string(in.maxChannels));
  }
  bool userBound = false;  // the count comes from the user, who must be told if it cannot be
  if (in.forced > 0) {
    choice.channels = in.forced;
    choice.why = "BRAID_NCHANNELS";
    userBound = true;
  } else {
    choice.channels = std::clamp(in.multiprocessors / (kSmsPerAutoChannel * in.ranksOnDevice),
                                 kMinAutoGpuChannels, kMaxAutoGpuChannels);
    choice.why = "one per " + std::to_string(kSmsPerAutoChannel) + " multiprocessors of each rank";
    if (in.minChannels > 0 && choice.channels < in.minChannels) {
      choice.channels = in.minChannels;
      choice.why = "NCCL_MIN_NCHANNELS";
      userBound = true;
    }
    if (in.maxChannels > 0 && choice.channels > in.maxChannels) {
      choice.channels = in.maxChannels;
      choice.why = "NCCL_MAX_NCHANNELS";
    }
  }
  if (choice.channels > choice.blockBudget) {
    if (userBound) {
      return invalidUsage(choice.why + " asks for " + std::to_string(choice.channels) +
                          " channels, but " + deviceText(in, resident) + ", " +
                          std::to_string(choice.blockBudget) +
                          " per rank: ask for at most that many, or run fewer ranks per GPU");
    }
    choice.channels = choice.blockBudget;
    choice.why += ", lowered so that every rank's blocks are resident together";
  }
  return choice;
}

}  // namespace braid::comm
