#include "rank_memory.h"

namespace braid::sim {

BufferLayout layoutOf(Collective collective, int nranks, int rank, uint64_t count, bool inPlace) {
  BufferLayout l;
  l.inPlace = inPlace;
  const uint64_t blocks = static_cast<uint64_t>(nranks) * count;
  l.inLen = collective == Collective::kReduceScatter ? blocks : count;
  l.outLen = collective == Collective::kAllGather ? blocks : count;
  if (!inPlace) {
    l.memLen = l.outLen;
    return l;
  }
  // NCCL's in-place rules: the smaller buffer is block `rank` of the larger.
  const uint64_t myBlock = static_cast<uint64_t>(rank) * count;
  if (collective == Collective::kReduceScatter) l.outBase = myBlock;
  if (collective == Collective::kAllGather) l.inBase = myBlock;
  l.memLen = l.inLen > l.outLen ? l.inLen : l.outLen;
  return l;
}

RankMemory::RankMemory(const BufferLayout& layout, int rank, const RankKeys& keys)
    : layout_(layout), own_(keys.single(rank)) {
  memory_.reset(layout.memLen, Piece{});
  if (layout.inPlace && layout.inLen > 0) {
    Value input;
    input.push_back(Piece{layout.inLen, 0, own_});
    memory_.write(layout.inBase, input);
  }
}

void RankMemory::readInput(uint64_t offset, uint64_t n, Value& out) const {
  if (layout_.inPlace) {
    memory_.read(layout_.inBase + offset, n, out);
  } else {
    appendPiece(out, Piece{n, offset, own_});
  }
}

void RankMemory::readOutput(uint64_t offset, uint64_t n, Value& out) const {
  memory_.read(layout_.outBase + offset, n, out);
}

void RankMemory::writeOutput(uint64_t offset, const Value& value) {
  memory_.write(layout_.outBase + offset, value);
}

std::optional<Value> expectedOutput(Collective collective, int nranks, int root, int rank,
                                    uint64_t count, const RankKeys& keys) {
  Value v;
  switch (collective) {
    case Collective::kAllReduce:
      appendPiece(v, Piece{count, 0, keys.all()});
      break;
    case Collective::kReduceScatter:
      appendPiece(v, Piece{count, static_cast<uint64_t>(rank) * count, keys.all()});
      break;
    case Collective::kAllGather:
      for (int b = 0; b < nranks; ++b) appendPiece(v, Piece{count, 0, keys.single(b)});
      break;
    case Collective::kBroadcast:
      appendPiece(v, Piece{count, 0, keys.single(root)});
      break;
    case Collective::kReduce:
      if (rank != root) return std::nullopt;
      appendPiece(v, Piece{count, 0, keys.all()});
      break;
  }
  return v;
}

}  // namespace braid::sim
