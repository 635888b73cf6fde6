// TinyLane (tiny_lane.h): the one-shot board's two halves, with the shape they were armed with.
#include "comm/ways/tiny_lane.h"

namespace braid::comm {

void TinyLane::arm(const CollectiveCall& call, const tune::Choice& choice,
                   const kernels::HostOp& op) {
  armed_ = true;
  count_ = call.count;
  type_ = call.type;
  op_ = call.op;
  choice_ = choice;
  hostOp_ = op;
}

Status TinyLane::start(const CollectiveCall& call) {
  return links_.oneShot()->begin(call.input, call.output, call.count, dataTypeSize(call.type),
                                 hostOp_, choice_.protocol);
}

Status TinyLane::complete(const CollectiveCall& call, Status started) {
  Status s = std::move(started);
  if (s.ok()) {
    s = links_.oneShot()->complete(call.input, call.output, call.count, dataTypeSize(call.type),
                                   hostOp_, choice_.protocol, links_.waitContext(),
                                   recorder_.hostWaits());
  }
  if (!s.ok()) disarm();
  return s;
}

}  // namespace braid::comm
