#include "comm/call_events.h"

#include "comm/call.h"
#include "profiler/nccl_names.h"

namespace braid::comm {
namespace {

// NCCL's algorithm names (ncclAlgoToString) where braid's algorithm is NCCL's; braid's own in
// the same style where it has none.
const char* algorithmEventName(algo::Algorithm a) {
  switch (a) {
    case algo::Algorithm::kRing:
      return "RING";
    case algo::Algorithm::kTree:
      return "TREE";
    case algo::Algorithm::kOneShot:
      return "ONE_SHOT";
  }
  return "Unknown";
}

const char* protocolEventName(algo::Protocol p) {
  return p == algo::Protocol::kLl ? "LL" : "SIMPLE";
}

}  // namespace

profiler::CollFields collEventFields(const CollectiveCall& call, const tune::Choice* choice,
                                     int nchannels) {
  profiler::CollFields f;
  f.func = collectiveName(call.collective);
  f.sendBuff = call.input;
  f.recvBuff = call.output;
  f.count = call.count;
  f.root = rooted(call.collective) ? call.root : 0;
  f.datatype = profiler::datatypeName(static_cast<int>(call.type));
  f.nChannels = static_cast<uint8_t>(nchannels);
  f.apiEvent = call.profilerApiEvent;
  if (choice != nullptr) {
    f.algo = algorithmEventName(choice->algorithm);
    f.proto = protocolEventName(choice->protocol);
  }
  return f;
}

std::vector<profiler::P2pFields> p2pEventFields(const std::vector<P2pOp>& ops, int nchannels) {
  std::vector<profiler::P2pFields> out;
  out.reserve(ops.size());
  for (const P2pOp& op : ops) {
    profiler::P2pFields f;
    f.func = op.kind == P2pOp::Kind::kSend ? "Send" : "Recv";
    f.buff = op.buffer;
    f.datatype = profiler::datatypeName(static_cast<int>(op.type));
    f.count = op.count;
    f.peer = op.peer;
    f.nChannels = static_cast<uint8_t>(nchannels);
    f.apiEvent = op.profilerApiEvent;
    out.push_back(f);
  }
  return out;
}

}  // namespace braid::comm
