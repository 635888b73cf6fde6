// Laying a Program out in device memory (device_program.h).
//
//   DeviceChannel[nchannels] | per channel: Instruction[ninstrs]
//   | DevicePort[nrecv] | DevicePort[nsend] | LL only: receive stage | send stage
//
// built in host memory with every pointer already the device address it
// will have, then copied once.
#include "exec/device_program.h"

#include <cstring>
#include <utility>

#include "base/align.h"

namespace braid::exec {
namespace {

namespace engine = kernels::engine;

}  // namespace

Result<DeviceProgram> DeviceProgram::upload(gpu::Runtime& runtime, const Program& program,
                                            const std::vector<ChannelPorts>& ports,
                                            gpu::Stream stream, size_t llSlotBytes) {
  if (ports.size() != program.channels.size()) {
    return internalError("a device program needs the ports of each of its channels");
  }
  const size_t nch = program.channels.size();
  size_t bytes = alignUp(nch * sizeof(engine::DeviceChannel), 64);
  // A stage holds a slot's payload in whole cells, read and written in packs.
  const size_t stageBytes = alignUp(llSlotBytes, engine::kFifoLine);
  std::vector<size_t> instrAt(nch), recvAt(nch), sendAt(nch), stageAt(nch);
  for (size_t c = 0; c < nch; ++c) {
    const ChannelProgram& ch = program.channels[c];
    if (ports[c].recv.size() != ch.recvPeers.size() ||
        ports[c].send.size() != ch.sendPeers.size()) {
      return internalError("channel " + std::to_string(c) + " has ports for other peers");
    }
    if (ch.recvPeers.size() > engine::kMaxPorts || ch.sendPeers.size() > engine::kMaxPorts) {
      return invalidUsage("channel " + std::to_string(c) + " uses more than " +
                          std::to_string(engine::kMaxPorts) +
                          " peers each way, more than a GPU channel holds");
    }
    instrAt[c] = bytes;
    bytes = alignUp(bytes + ch.instrs.size() * sizeof(engine::Instruction), 64);
    recvAt[c] = bytes;
    bytes = alignUp(bytes + ports[c].recv.size() * sizeof(engine::DevicePort), 64);
    sendAt[c] = bytes;
    bytes = alignUp(bytes + ports[c].send.size() * sizeof(engine::DevicePort), engine::kFifoLine);
    stageAt[c] = bytes;
    bytes += 2 * stageBytes;
  }
  DeviceProgram out;
  out.runtime_ = &runtime;
  out.nchannels_ = static_cast<uint32_t>(nch);
  out.sliceElems_ = program.sliceElems;
  BRAID_ASSIGN_OR_RETURN(out.memory_, runtime.deviceAlloc(bytes));
  const auto base = reinterpret_cast<uintptr_t>(out.memory_);
  std::vector<unsigned char> image(bytes);
  auto* channels = reinterpret_cast<engine::DeviceChannel*>(image.data());
  // A channel may have no instructions or no ports, and an empty vector's data() may be null,
  // which memcpy must not be given even for 0 bytes.
  auto copyInto = [&image](size_t at, const void* from, size_t bytes) {
    if (bytes > 0) memcpy(image.data() + at, from, bytes);
  };
  for (size_t c = 0; c < nch; ++c) {
    const ChannelProgram& ch = program.channels[c];
    copyInto(instrAt[c], ch.instrs.data(), ch.instrs.size() * sizeof(engine::Instruction));
    copyInto(recvAt[c], ports[c].recv.data(), ports[c].recv.size() * sizeof(engine::DevicePort));
    copyInto(sendAt[c], ports[c].send.data(), ports[c].send.size() * sizeof(engine::DevicePort));
    engine::DeviceChannel& d = channels[c];
    d.instrs = reinterpret_cast<const engine::Instruction*>(base + instrAt[c]);
    d.ninstrs = ch.instrs.size();
    d.recv = reinterpret_cast<const engine::DevicePort*>(base + recvAt[c]);
    d.send = reinterpret_cast<const engine::DevicePort*>(base + sendAt[c]);
    d.nrecv = static_cast<uint32_t>(ports[c].recv.size());
    d.nsend = static_cast<uint32_t>(ports[c].send.size());
    if (stageBytes > 0) {
      d.llRecvStage = reinterpret_cast<char*>(base + stageAt[c]);
      d.llSendStage = reinterpret_cast<char*>(base + stageAt[c] + stageBytes);
    }
  }
  out.channels_ = reinterpret_cast<const engine::DeviceChannel*>(base);
  BRAID_TRY(runtime.copy(out.memory_, image.data(), bytes, stream));
  BRAID_TRY(runtime.streamSynchronize(stream));
  return out;
}

DeviceProgram::DeviceProgram(DeviceProgram&& other) noexcept { *this = std::move(other); }

DeviceProgram& DeviceProgram::operator=(DeviceProgram&& other) noexcept {
  if (this != &other) {
    if (memory_ != nullptr) (void)runtime_->deviceFree(memory_);
    runtime_ = other.runtime_;
    memory_ = std::exchange(other.memory_, nullptr);
    channels_ = std::exchange(other.channels_, nullptr);
    nchannels_ = other.nchannels_;
    sliceElems_ = other.sliceElems_;
  }
  return *this;
}

DeviceProgram::~DeviceProgram() {
  if (memory_ != nullptr) (void)runtime_->deviceFree(memory_);
}

}  // namespace braid::exec
