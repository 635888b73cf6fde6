// Point-to-point batches on a GPU communicator: the whole batch goes into one launch, each
// transfer an engine call with a one-instruction device program per (peer, direction, size),
// made the first time it comes up, on a block of its own (its lane: peer and direction). The
// transfers run at once, since each may wait for another (a send bigger than the FIFO for its
// peer's receive, which comes after the peer's own send). A send to self is a copy, matched
// with a receive from self in the order they come.
#include <string>
#include <utility>
#include <vector>

#include "comm/gpu_side.h"
#include "comm/ways/ways.h"

namespace braid::comm {
namespace {

namespace engine = kernels::engine;

/// A batch sorted for the launch: transfers to and from peers, and the sends and receives to
/// self that pair up as copies.
struct Sorted {
  std::vector<const P2pOp*> selfSends, selfRecvs;
  std::vector<int> recvFrom, sendTo;
};

class GpuP2pWay : public P2pWay {
 public:
  explicit GpuP2pWay(const WayParts& parts) : parts_(parts) {}

  Status run(const std::vector<P2pOp>& ops, void* stream) override {
    GpuSide& gpu = *parts_.gpu;
    BRAID_ASSIGN_OR_RETURN(const Sorted sorted, sort(ops));
    BRAID_TRY(gpu.linkP2p(sorted.recvFrom, sorted.sendTo));
    Launch launch;
    const int rank = parts_.members.rank;
    for (size_t i = 0; i < sorted.selfSends.size(); ++i) {
      const size_t bytes = sorted.selfSends[i]->count * dataTypeSize(sorted.selfSends[i]->type);
      const size_t want = sorted.selfRecvs[i]->count * dataTypeSize(sorted.selfRecvs[i]->type);
      if (bytes != want) {
        return invalidUsage("send to self of " + std::to_string(bytes) +
                            " bytes does not match the receive from self of " +
                            std::to_string(want) + " bytes");
      }
      BRAID_TRY(add(launch, sorted.selfSends[i]->buffer, sorted.selfRecvs[i]->buffer, rank, true,
                    bytes, 2));
    }
    for (const P2pOp& op : ops) {
      if (op.count == 0 || op.peer == rank) continue;
      const size_t bytes = op.count * dataTypeSize(op.type);
      const bool send = op.kind == P2pOp::Kind::kSend;
      BRAID_TRY(add(launch, send ? op.buffer : nullptr, send ? nullptr : op.buffer, op.peer, send,
                    bytes, send ? 1 : 0));
    }
    return gpu.enqueue(launch.calls, launch.lanes, launch.accesses, stream);
  }

 private:
  /// The engine calls of one batch, with their lanes and what they touch.
  struct Launch {
    std::vector<engine::EngineCall> calls;
    std::vector<std::pair<int, int>> lanes;
    std::vector<Access> accesses;
  };

  /// The batch's transfers by kind; its buffers checked (device memory), its copies to self
  /// paired.
  Result<Sorted> sort(const std::vector<P2pOp>& ops) const {
    const int rank = parts_.members.rank;
    Sorted sorted;
    for (const P2pOp& op : ops) {
      if (op.count == 0) continue;
      const bool send = op.kind == P2pOp::Kind::kSend;
      BRAID_TRY(parts_.gpu->checkBuffer(op.buffer, send ? "sendbuff" : "recvbuff"));
      if (op.peer == rank) {
        (send ? sorted.selfSends : sorted.selfRecvs).push_back(&op);
      } else {
        (send ? sorted.sendTo : sorted.recvFrom).push_back(op.peer);
      }
    }
    if (sorted.selfSends.size() != sorted.selfRecvs.size()) {
      return invalidUsage(std::to_string(sorted.selfSends.size()) + " send(s) to self but " +
                          std::to_string(sorted.selfRecvs.size()) +
                          " receive(s) from self in one group: each needs its match");
    }
    return sorted;
  }

  /// One transfer (`lane`: 0 receive, 1 send, 2 copy to self) added to `launch`.
  Status add(Launch& launch, const void* input, void* output, int peer, bool send, size_t bytes,
             int lane) {
    if (input != nullptr) launch.accesses.push_back({input, bytes, false});
    if (output != nullptr) launch.accesses.push_back({output, bytes, true});
    BRAID_ASSIGN_OR_RETURN(const exec::DeviceProgram* prog,
                           parts_.gpu->p2pProgram(peer, send, bytes));
    engine::EngineCall ec{};
    ec.channels = prog->channels();
    ec.nchannels = 1;
    ec.input = input;
    ec.output = output;
    ec.sliceElems = gpuP2pSlotBytes(parts_.links.slotBytes());
    ec.elemBytes = 1;
    ec.type = static_cast<uint8_t>(DataType::kInt8);
    ec.op = static_cast<uint8_t>(RedOp::kSum);
    ec.copyOnly = 1;
    launch.calls.push_back(ec);
    launch.lanes.push_back({peer, lane});
    return Status::success();
  }

  WayParts parts_;
};

}  // namespace

std::unique_ptr<P2pWay> makeGpuP2pWay(const WayParts& parts) {
  return std::make_unique<GpuP2pWay>(parts);
}

}  // namespace braid::comm
