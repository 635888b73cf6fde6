// Sizing schedules like the communicator, and printing them for people
// (BRAID_DUMP_SCHEDULE=1).
#include "algo/schedule.h"

#include <algorithm>
#include <cstdio>
#include <string>

#include "kernels/engine/elementwise.h"

namespace braid::algo {

using kernels::engine::kPackBytes;

Status checkSizes(const ScheduleSizes& p, const std::string& who) {
  if (p.nranks < 1) return invalidArgument(who + "nranks must be at least 1");
  if (p.rank < 0 || p.rank >= p.nranks) {
    return invalidArgument(who + "rank " + std::to_string(p.rank) + " is outside [0, " +
                           std::to_string(p.nranks) + ")");
  }
  if (p.nchannels < 1) return invalidArgument(who + "nchannels must be at least 1");
  if (p.chunkElems == 0 || p.maxSliceElems == 0 || p.minSliceElems == 0) {
    return invalidArgument(who + "chunk and slice sizes must be at least 1 element");
  }
  if (p.grainElems == 0 || p.chunkElems % p.grainElems != 0 ||
      p.maxSliceElems % p.grainElems != 0) {
    return invalidArgument(who + "the grain of " + std::to_string(p.grainElems) +
                           " elements must divide the chunk (" + std::to_string(p.chunkElems) +
                           ") and the largest slice (" + std::to_string(p.maxSliceElems) + ")");
  }
  return Status::success();
}

Status checkRoot(const ScheduleSizes& p, int root, const std::string& who) {
  if (root < 0 || root >= p.nranks) {
    return invalidArgument(who + "root " + std::to_string(root) + " is outside [0, " +
                           std::to_string(p.nranks) + ")");
  }
  return Status::success();
}

Schedule newSchedule(const ScheduleSizes& p, Collective collective, int root) {
  Schedule s;
  s.collective = collective;
  s.rank = p.rank;
  s.nranks = p.nranks;
  s.root = root;
  s.count = p.count;
  s.chunkElems = p.chunkElems;
  s.channels.resize(p.nchannels);
  return s;
}

void sizeForSlots(ScheduleSizes& sizes, size_t slotBytes, size_t fifoSlots, size_t elemBytes) {
  sizes.chunkElems = std::max<size_t>(1, slotBytes * (fifoSlots / 2) / elemBytes);
  sizes.maxSliceElems = std::max<size_t>(1, slotBytes / elemBytes);
  sizes.minSliceElems =
      std::min(sizes.maxSliceElems, std::max<size_t>(1, kMinSliceBytes / elemBytes));
  // Packs of whole elements (1, 2, 4, 8 or 16 bytes), where a slot holds whole packs.
  const size_t packElems = kPackBytes % elemBytes == 0 ? kPackBytes / elemBytes : 1;
  const bool whole = sizes.chunkElems % packElems == 0 && sizes.maxSliceElems % packElems == 0;
  sizes.grainElems = whole ? packElems : 1;
}

const char* stepOpName(StepOp op) {
  switch (op) {
    case StepOp::kSend:
      return "send";
    case StepOp::kRecv:
      return "recv";
    case StepOp::kCopy:
      return "copy";
    case StepOp::kCopySend:
      return "copySend";
    case StepOp::kRecvReduceSend:
      return "recvReduceSend";
    case StepOp::kRecvReduceCopy:
      return "recvReduceCopy";
    case StepOp::kRecvReduceCopySend:
      return "recvReduceCopySend";
    case StepOp::kRecvCopySend:
      return "recvCopySend";
  }
  return "?";
}

namespace {

// Where input and output have the same shape, a step's offsets are equal and
// one range says it; reduce-scatter and all-gather index a big and a small
// buffer, so the ranges a step reads and writes are named apart.
std::string formatRanges(Collective collective, const Step& st) {
  char text[96];
  if (collective != Collective::kReduceScatter && collective != Collective::kAllGather) {
    snprintf(text, sizeof(text), "elements [%zu, %zu)", st.inOffset, st.inOffset + st.count);
    return text;
  }
  std::string out;
  if (stepReadsInput(st)) {
    snprintf(text, sizeof(text), "in [%zu, %zu)", st.inOffset, st.inOffset + st.count);
    out += text;
  }
  if (stepWritesOutput(st.op)) {
    snprintf(text, sizeof(text), "%sout [%zu, %zu)", out.empty() ? "" : " ", st.outOffset,
             st.outOffset + st.count);
    out += text;
  }
  return out;
}

}  // namespace

std::string formatSchedule(const Schedule& s, DataType type) {
  std::string out;
  char line[256];
  snprintf(line, sizeof(line),
           "schedule: rank %d of %d, %s of %zu x %s, %zu channel(s), "
           "chunks of up to %zu elements, slices of up to %zu\n",
           s.rank, s.nranks, collectiveName(s.collective), s.count, dataTypeName(type),
           s.channels.size(), s.chunkElems, s.sliceElems);
  out += line;
  if (s.root >= 0) out += "  root: " + std::to_string(s.root) + "\n";
  for (size_t c = 0; c < s.channels.size(); ++c) {
    snprintf(line, sizeof(line), "  channel %zu: %zu steps", c, s.channels[c].steps.size());
    out += line;
    if (!s.channels[c].ring.empty()) {
      out += ", ring";
      for (int r : s.channels[c].ring) out += " " + std::to_string(r);
    }
    out += "\n";
    int i = 0;
    for (const Step& st : s.channels[c].steps) {
      std::string peers;
      if (st.recvPeer >= 0) peers += " from " + std::to_string(st.recvPeer);
      if (st.sendPeer >= 0) peers += " to " + std::to_string(st.sendPeer);
      snprintf(line, sizeof(line), "    %4d  %-19s chunk %-3d %s%s%s\n", i++, stepOpName(st.op),
               st.chunk, formatRanges(s.collective, st).c_str(), peers.c_str(),
               st.fromOutput ? " (from output)" : "");
      out += line;
    }
  }
  return out;
}

}  // namespace braid::algo
