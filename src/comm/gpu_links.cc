// GpuSide's FIFOs (gpu_side.h): the GPU FIFOs a GPU communicator's schedules and
// point-to-point transfers run on (transport/cuda_ipc/gpu_fifo.h), made the first time they are
// needed, as the host FIFOs are (links.cc): every receiving end a
// program needs first, then every sending end, each waiting for its
// receiver's record, so ranks linking at once cannot wait in a cycle.
//
// The receiver places its FIFO: in its GPU's memory when the sender's GPU
// can reach it (the same GPU, or peer access) and BRAID_TRANSPORTS allows
// cuda_ipc; in pinned host memory otherwise. Schedules of the LL protocol
// get FIFOs of their own (LL slots of llSlotBytes, names salted apart);
// point-to-point transfers run Simple.
#include <chrono>
#include <set>
#include <string>
#include <thread>
#include <utility>

#include "base/futex.h"
#include "base/log.h"
#include "comm/gpu_side.h"
#include "transport/shm/shm_fifo.h"

namespace braid::comm {
namespace {

namespace engine = kernels::engine;
using transport::cuda_ipc::FifoPlacement;
using transport::cuda_ipc::GpuRecvEnd;
using transport::cuda_ipc::GpuSendEnd;

// Names of GPU FIFO records differ from the shm FIFOs' of the same pair,
// and LL FIFOs' from Simple ones'.
constexpr uint64_t kGpuSalt = 0x6770756670676675ull;
constexpr uint64_t kGpuLlSalt = 0x4c4c677075664c4cull;
// A FIFO to or from a peer on another host is bridged by a proxy of this process
// (transport/net/socket/gpu_socket_fifo.h) and has a record of its own on this host, named apart
// from the records of FIFOs between ranks of one host (the tests run "hosts" on one machine).
constexpr uint64_t kNetSendSalt = 0x6e657473656e6421ull;
constexpr uint64_t kNetRecvSalt = 0x6e657472656376ffull;

}  // namespace

Result<engine::FifoCursor*> GpuSide::takeCursor() {
  if (cursorsUsed_ == cursorCapacity_) {
    return invalidUsage("this communicator has made " + std::to_string(cursorCapacity_) +
                        " GPU FIFO ends, the most it can hold");
  }
  return cursors_ + cursorsUsed_++;
}

size_t gpuP2pSlotBytes(size_t slotBytes) {
  return (slotBytes / kP2pSlotDivisor) & ~static_cast<size_t>(63);
}

struct GpuSide::LinkPlan {
  std::set<std::pair<int, int>> recv;  // (channel, peer)
  std::set<std::pair<int, int>> send;
};

bool GpuSide::linked(const LinkPlan& plan, kernels::engine::FifoProtocol protocol) const {
  for (const auto& [channel, peer] : plan.recv) {
    auto it = recvLinks_.find({peer, channel, protocol});
    if (it == recvLinks_.end() || !it->second) return false;
  }
  for (const auto& [channel, peer] : plan.send) {
    auto it = sendLinks_.find({peer, channel, protocol});
    if (it == sendLinks_.end() || !it->second) return false;
  }
  return true;
}

Status GpuSide::makeLinks(const LinkPlan& plan, size_t slot, uint64_t nonce,
                          transport::cuda_ipc::FifoFormat format) {
  if (linked(plan, format.protocol)) return Status::success();
  const int rank = members_.rank;
  // Made on the private stream while the caller's may be captured: relaxed, as NCCL's setup is.
  gpu::RelaxedCapture relaxed(*runtime_);
  BRAID_TRY(runtime_->setDevice(device_));
  BRAID_TRY(network_.checkCrossesHosts(static_cast<algo::Protocol>(format.protocol), plan.recv,
                                       plan.send));
  BRAID_TRY(makeNetworkLinks(plan, slot, nonce, format));
  for (const auto& [channel, peer] : plan.recv) {
    auto& end = recvLinks_[{peer, channel, format.protocol}];
    if (end) continue;
    const std::string name = transport::shm::segmentName(nonce, peer, rank, channel);
    const FifoPlacement placement = placementFor(peer);
    BRAID_ASSIGN_OR_RETURN(engine::FifoCursor * cursor, takeCursor());
    BRAID_ASSIGN_OR_RETURN(
        end, GpuRecvEnd::create(*runtime_, name, slot, placement, cursor, stream_, format));
    links_.noteSegment(name);  // unlinked by the sender, or at destruction
    if (placement == FifoPlacement::kPinnedHost) {
      links_.noteSegment(transport::cuda_ipc::pinnedSegmentName(name));
    }
    BRAID_TRACE("gpu links: FIFO from rank %d on channel %d made in %s", peer, channel,
                transport::cuda_ipc::placementName(placement));
  }
  const transport::WaitContext wait = links_.waitContext();
  for (const auto& [channel, peer] : plan.send) {
    if (sendLinks_[{peer, channel, format.protocol}]) continue;
    BRAID_TRY(openSendEnd(channel, peer, transport::shm::segmentName(nonce, rank, peer, channel),
                          slot, format, wait));
  }
  return Status::success();
}

Status GpuSide::makeNetworkLinks(const LinkPlan& plan, size_t slot, uint64_t nonce,
                                 transport::cuda_ipc::FifoFormat format) {
  const int rank = members_.rank;
  auto greeting = [&](int sender, int receiver, int channel) {
    return transport::net::Greeting::of(nonce, sender, receiver, channel,
                                        static_cast<int>(format.protocol));
  };
  for (const auto& [channel, peer] : plan.recv) {
    auto& end = recvLinks_[{peer, channel, format.protocol}];
    if (end || !members_.onOtherHost(peer)) continue;
    const std::string name = transport::shm::segmentName(nonce ^ kNetRecvSalt, peer, rank, channel);
    BRAID_ASSIGN_OR_RETURN(engine::FifoCursor * cursor, takeCursor());
    BRAID_ASSIGN_OR_RETURN(
        end, network_.awaitGpuFifo(*runtime_, stream_, peer, greeting(peer, rank, channel), name,
                                   slot, cursor));
    BRAID_TRACE("gpu links: network FIFO from rank %d on channel %d made", peer, channel);
  }
  for (const auto& [channel, peer] : plan.send) {
    auto& end = sendLinks_[{peer, channel, format.protocol}];
    if (end || !members_.onOtherHost(peer)) continue;
    const std::string name = transport::shm::segmentName(nonce ^ kNetSendSalt, rank, peer, channel);
    BRAID_ASSIGN_OR_RETURN(engine::FifoCursor * cursor, takeCursor());
    BRAID_ASSIGN_OR_RETURN(engine::FifoCursor * proxyCursor, takeCursor());
    BRAID_ASSIGN_OR_RETURN(
        end, network_.connectGpuFifo(*runtime_, stream_, peer, greeting(rank, peer, channel), name,
                                     slot, cursor, proxyCursor));
    BRAID_TRACE("gpu links: network FIFO to rank %d on channel %d connected", peer, channel);
  }
  return Status::success();
}

Status GpuSide::openSendEnd(int channel, int peer, const std::string& name, size_t slot,
                            transport::cuda_ipc::FifoFormat format,
                            const transport::WaitContext& wait) {
  auto& end = sendLinks_[{peer, channel, format.protocol}];
  BRAID_ASSIGN_OR_RETURN(engine::FifoCursor * cursor, takeCursor());
  for (int attempt = 0; !end; ++attempt) {
    BRAID_ASSIGN_OR_RETURN(end,
                           GpuSendEnd::tryOpen(*runtime_, name, slot, cursor, format.protocol));
    if (end) break;
    if (health_.stopped()) return futex::abortedError(peer);
    if (wait.deadline.expired()) {
      return remoteError("rank " + std::to_string(peer) + " did not make its GPU FIFO for " +
                         (channel == kP2pChannel ? std::string("point-to-point")
                                                 : "channel " + std::to_string(channel)) +
                         " in time (BRAID_TIMEOUT_MS); is it running the same calls?");
    }
    if (attempt < 100) {
      std::this_thread::yield();
    } else {
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
  }
  BRAID_TRACE("gpu links: FIFO to rank %d on channel %d opened (%s)", peer, channel,
              transport::cuda_ipc::placementName(end->placement()));
  return Status::success();
}

Result<std::vector<exec::ChannelPorts>> GpuSide::linkSchedule(const exec::Program& program,
                                                              algo::Protocol protocol) {
  static_assert(static_cast<int>(engine::FifoProtocol::kLl) ==
                static_cast<int>(algo::Protocol::kLl));
  transport::cuda_ipc::FifoFormat format;
  format.protocol = static_cast<engine::FifoProtocol>(protocol);
  const bool ll = protocol == algo::Protocol::kLl;
  LinkPlan plan;
  for (size_t c = 0; c < program.channels.size(); ++c) {
    for (int peer : program.channels[c].recvPeers) plan.recv.insert({static_cast<int>(c), peer});
    for (int peer : program.channels[c].sendPeers) plan.send.insert({static_cast<int>(c), peer});
  }
  BRAID_TRY(makeLinks(plan, ll ? links_.llSlotBytes() : links_.slotBytes(),
                      links_.linkNonce() ^ kGpuSalt ^ (ll ? kGpuLlSalt : 0), format));
  std::vector<exec::ChannelPorts> ports(program.channels.size());
  for (size_t c = 0; c < program.channels.size(); ++c) {
    const int ch = static_cast<int>(c);
    for (int peer : program.channels[c].recvPeers) {
      const auto e = recvLinks_[{peer, ch, format.protocol}]->end();
      ports[c].recv.push_back({e.fifo, e.cursor, peer, e.flagBits});
    }
    for (int peer : program.channels[c].sendPeers) {
      const auto e = sendLinks_[{peer, ch, format.protocol}]->end();
      ports[c].send.push_back({e.fifo, e.cursor, peer, e.flagBits});
    }
  }
  return ports;
}

Status GpuSide::linkP2p(const std::vector<int>& recvFrom, const std::vector<int>& sendTo) {
  LinkPlan plan;
  for (int peer : recvFrom) plan.recv.insert({kP2pChannel, peer});
  for (int peer : sendTo) plan.send.insert({kP2pChannel, peer});
  return makeLinks(plan, gpuP2pSlotBytes(links_.slotBytes()), links_.p2pNonce() ^ kGpuSalt, {});
}

Result<exec::DeviceProgram> GpuSide::upload(const exec::Program& program,
                                            const std::vector<exec::ChannelPorts>& ports,
                                            size_t llSlotBytes) {
  gpu::RelaxedCapture relaxed(*runtime_);  // on the private stream, the caller's maybe captured
  return exec::DeviceProgram::upload(*runtime_, program, ports, stream_, llSlotBytes);
}

Result<const exec::DeviceProgram*> GpuSide::p2pProgram(int peer, bool send, size_t bytes) {
  std::unique_ptr<exec::DeviceProgram>& prog = p2pPrograms_[{peer, send, bytes}];
  if (prog) return prog.get();
  exec::Program program;
  program.sliceElems = gpuP2pSlotBytes(links_.slotBytes());
  exec::ChannelPorts ports;
  if (peer == members_.rank) {
    exec::ChannelProgram ch;
    engine::Instruction copy{};
    copy.kind = engine::InstrKind::kStep;
    copy.op = engine::StepOp::kCopy;
    copy.count = bytes;
    copy.recvPort = engine::kNoPort;
    copy.sendPort = engine::kNoPort;
    ch.instrs.push_back(copy);
    program.channels.push_back(ch);
  } else {
    program.channels.push_back(exec::p2pChannel(send, peer, 0, bytes));
    const auto e =
        send ? sendLinks_[{peer, kP2pChannel}]->end() : recvLinks_[{peer, kP2pChannel}]->end();
    (send ? ports.send : ports.recv).push_back({e.fifo, e.cursor, peer, 0});
  }
  BRAID_ASSIGN_OR_RETURN(exec::DeviceProgram uploaded, upload(program, {ports}));
  prog = std::make_unique<exec::DeviceProgram>(std::move(uploaded));
  return prog.get();
}

}  // namespace braid::comm
