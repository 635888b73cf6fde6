#include "rank_memory.h"

namespace braid::sim {

BufferLayout separateBuffers(uint64_t inLen, uint64_t outLen) {
  BufferLayout l;
  l.inLen = inLen;
  l.outLen = outLen;
  l.memLen = outLen;
  return l;
}

BufferLayout oneBuffer(uint64_t memLen, uint64_t inBase, uint64_t inLen, uint64_t outBase,
                       uint64_t outLen) {
  return {true, inBase, inLen, outBase, outLen, memLen};
}

bool fitsItsMemory(const BufferLayout& l) {
  auto inside = [&](uint64_t base, uint64_t len) {
    return base <= l.memLen && len <= l.memLen - base;
  };
  return inside(l.outBase, l.outLen) && (!l.inPlace || inside(l.inBase, l.inLen));
}

BufferLayout layoutOf(Collective collective, int nranks, int rank, uint64_t count, bool inPlace) {
  const uint64_t blocks = static_cast<uint64_t>(nranks) * count;
  const uint64_t inLen = collective == Collective::kReduceScatter ? blocks : count;
  const uint64_t outLen = collective == Collective::kAllGather ? blocks : count;
  if (!inPlace) return separateBuffers(inLen, outLen);
  // NCCL's in-place rules: the smaller buffer is block `rank` of the larger.
  const uint64_t myBlock = static_cast<uint64_t>(rank) * count;
  return oneBuffer(inLen > outLen ? inLen : outLen,
                   collective == Collective::kAllGather ? myBlock : 0, inLen,
                   collective == Collective::kReduceScatter ? myBlock : 0, outLen);
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
