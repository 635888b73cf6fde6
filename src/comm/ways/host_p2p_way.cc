// Point-to-point batches on a host communicator: every send and receive of the batch at once
// on Links' point-to-point FIFOs (exec/p2p_executor.h), its waits noted in the flight
// recorder's first channel.
#include "comm/ways/ways.h"
#include "exec/p2p_executor.h"

namespace braid::comm {
namespace {

class HostP2pWay : public P2pWay {
 public:
  explicit HostP2pWay(const WayParts& parts) : parts_(parts) {}

  Status run(const std::vector<P2pOp>& ops, void* /*stream*/) override {
    std::vector<exec::P2pTask> tasks;
    tasks.reserve(ops.size());
    for (const auto& op : ops) {
      exec::P2pTask t;
      t.send = op.kind == P2pOp::Kind::kSend;
      t.peer = op.peer;
      t.sendBuffer = op.buffer;
      t.recvBuffer = op.buffer;
      t.bytes = op.count * dataTypeSize(op.type);
      tasks.push_back(t);
    }
    return parts_.links.runP2p(tasks, parts_.recorder.hostWaits());
  }

 private:
  WayParts parts_;
};

}  // namespace

std::unique_ptr<P2pWay> makeHostP2pWay(const WayParts& parts) {
  return std::make_unique<HostP2pWay>(parts);
}

}  // namespace braid::comm
