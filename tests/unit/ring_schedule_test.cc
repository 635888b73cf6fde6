// The ring all-reduce generator, checked symbolically: the schedules of all
// ranks run on a model of the FIFOs (same slot count as the real ones, so a
// schedule that could deadlock fails here), with values that count every
// rank's contribution to every element. Each rank r contributes 1 << 4r, so
// the correct result is 0x1111...1 over N nibbles; a contribution counted
// twice or missed shows up as a nibble of 2 or 0.
#include <gtest/gtest.h>

#include <deque>
#include <map>
#include <tuple>
#include <vector>

#include "algo/ring.h"
#include "transport/connection.h"

namespace braid::algo {
namespace {

using Value = uint64_t;
using Slice = std::vector<Value>;

struct RankState {
  std::vector<Value> input;
  std::vector<Value> output;
  Schedule schedule;
  size_t channel = 0;
  size_t step = 0;
  size_t sliceDone = 0;  // elements of the current step already moved
};

class FifoModel {
 public:
  std::deque<Slice>& fifo(int from, int to, size_t channel) { return q_[{from, to, channel}]; }

 private:
  std::map<std::tuple<int, int, size_t>, std::deque<Slice>> q_;
};

// Tries to run the next slice of `r`; false when it must wait.
bool runOneSlice(RankState& st, int rank, FifoModel& fifos) {
  const auto& steps = st.schedule.channels[st.channel].steps;
  const Step& step = steps[st.step];
  size_t n = std::min(st.schedule.sliceElems, step.count - st.sliceDone);
  std::deque<Slice>* in =
      stepReceives(step.op) ? &fifos.fifo(step.recvPeer, rank, st.channel) : nullptr;
  std::deque<Slice>* out =
      stepSends(step.op) ? &fifos.fifo(rank, step.sendPeer, st.channel) : nullptr;
  if (in && in->empty()) return false;
  if (out && out->size() >= static_cast<size_t>(transport::kFifoSlots)) return false;
  Slice received;
  if (in) {
    received = std::move(in->front());
    in->pop_front();
    EXPECT_EQ(received.size(), n) << "slice size mismatch at rank " << rank;
  }
  Slice sent(n);
  for (size_t i = 0; i < n; ++i) {
    size_t ii = step.inOffset + st.sliceDone + i;
    size_t oi = step.outOffset + st.sliceDone + i;
    Value mine = st.input[ii];
    switch (step.op) {
      case StepOp::kSend:
        sent[i] = mine;
        break;
      case StepOp::kRecv:
        st.output[oi] = received[i];
        break;
      case StepOp::kCopy:
        st.output[oi] = mine;
        break;
      case StepOp::kCopySend:
        st.output[oi] = sent[i] = mine;
        break;
      case StepOp::kRecvReduceSend:
        sent[i] = received[i] + mine;
        break;
      case StepOp::kRecvReduceCopy:
        st.output[oi] = received[i] + mine;
        break;
      case StepOp::kRecvReduceCopySend:
        st.output[oi] = sent[i] = received[i] + mine;
        break;
      case StepOp::kRecvCopySend:
        st.output[oi] = sent[i] = received[i];
        break;
    }
  }
  if (out) out->push_back(std::move(sent));
  st.sliceDone += n;
  return true;
}

bool finished(const RankState& st) { return st.channel >= st.schedule.channels.size(); }

// Skips empty steps and finished channels.
void advance(RankState& st) {
  while (!finished(st)) {
    const auto& steps = st.schedule.channels[st.channel].steps;
    if (st.step < steps.size() && st.sliceDone < steps[st.step].count) return;
    if (st.step < steps.size()) {
      ++st.step;
      st.sliceDone = 0;
      continue;
    }
    ++st.channel;
    st.step = 0;
    st.sliceDone = 0;
  }
}

// Runs all ranks' schedules to completion on the model; returns the outputs.
std::vector<std::vector<Value>> simulate(int nranks, size_t count, size_t chunk, size_t slice,
                                         int nchannels, std::vector<int> order = {}) {
  std::vector<RankState> ranks(nranks);
  for (int r = 0; r < nranks; ++r) {
    RingParams p;
    p.nranks = nranks;
    p.rank = r;
    p.order = order;
    p.count = count;
    p.chunkElems = chunk;
    p.maxSliceElems = slice;
    p.nchannels = nchannels;
    auto s = ringAllReduce(p);
    EXPECT_TRUE(s.ok()) << s.status().message();
    ranks[r].schedule = s.value();
    ranks[r].input.assign(count, Value(1) << (4 * r));
    ranks[r].output.assign(count, 0);
  }
  FifoModel fifos;
  for (auto& st : ranks) advance(st);
  bool progress = true;
  while (progress) {
    progress = false;
    for (int r = 0; r < nranks; ++r) {
      while (!finished(ranks[r]) && runOneSlice(ranks[r], r, fifos)) {
        advance(ranks[r]);
        progress = true;
      }
    }
  }
  std::vector<std::vector<Value>> out;
  for (int r = 0; r < nranks; ++r) {
    EXPECT_TRUE(finished(ranks[r])) << "rank " << r << " is stuck: the schedule deadlocks";
    out.push_back(ranks[r].output);
  }
  return out;
}

Value expectedSum(int nranks) {
  Value v = 0;
  for (int r = 0; r < nranks; ++r) v += Value(1) << (4 * r);
  return v;
}

void expectAllReduced(int nranks, const std::vector<std::vector<Value>>& out) {
  const Value want = expectedSum(nranks);
  for (int r = 0; r < nranks; ++r) {
    for (size_t i = 0; i < out[r].size(); ++i) {
      ASSERT_EQ(out[r][i], want) << "rank " << r << " element " << i << " of " << out[r].size();
    }
  }
}

class RingAllReduceModel : public ::testing::TestWithParam<int> {};

TEST_P(RingAllReduceModel, EveryRankHoldsTheSumForAssortedCounts) {
  const int n = GetParam();
  const size_t counts[] = {0, 1, 2, 7, 13, 97, 1000, 1021, size_t(n) * 37 + 1, 4099};
  for (size_t count : counts) {
    SCOPED_TRACE("count " + std::to_string(count));
    // Small chunks force many rounds; small slices force many slices a step.
    expectAllReduced(n, simulate(n, count, 16, 5, 1));
    expectAllReduced(n, simulate(n, count, 1 << 20, 1 << 18, 1));
  }
}

TEST_P(RingAllReduceModel, ChannelsSplitTheWorkCorrectly) {
  const int n = GetParam();
  for (int channels : {2, 3}) {
    SCOPED_TRACE("channels " + std::to_string(channels));
    expectAllReduced(n, simulate(n, 1009, 11, 3, channels));
  }
}

INSTANTIATE_TEST_SUITE_P(Ranks1To16, RingAllReduceModel, ::testing::Range(1, 17));

TEST(RingAllReduce, AnyRingOrderWorks) {
  expectAllReduced(5, simulate(5, 503, 7, 3, 1, {3, 0, 4, 1, 2}));
}

TEST(RingAllReduce, StepsFollowTheTextbookPattern) {
  RingParams p;
  p.nranks = 4;
  p.rank = 1;
  p.count = 400;
  p.chunkElems = 100;
  p.maxSliceElems = 100;
  auto s = ringAllReduce(p);
  ASSERT_TRUE(s.ok());
  const auto& steps = s.value().channels[0].steps;
  ASSERT_EQ(steps.size(), 7u);  // 2N - 1 steps for one round
  EXPECT_EQ(steps[0].op, StepOp::kSend);
  EXPECT_EQ(steps[0].chunk, 1);
  EXPECT_EQ(steps[0].sendPeer, 2);
  EXPECT_EQ(steps[1].op, StepOp::kRecvReduceSend);
  EXPECT_EQ(steps[1].recvPeer, 0);
  EXPECT_EQ(steps[3].op, StepOp::kRecvReduceCopySend);
  EXPECT_EQ(steps[3].chunk, 2);  // rank p owns chunk p+1 after reduce-scatter
  EXPECT_EQ(steps[6].op, StepOp::kRecv);
}

TEST(RingAllReduce, BadParametersAreRejected) {
  RingParams p;
  p.nranks = 0;
  EXPECT_EQ(ringAllReduce(p).status().code(), ErrorCode::kInvalidArgument);
  p.nranks = 3;
  p.rank = 3;
  EXPECT_EQ(ringAllReduce(p).status().code(), ErrorCode::kInvalidArgument);
  p.rank = 0;
  p.order = {0, 1, 1};
  EXPECT_EQ(ringAllReduce(p).status().code(), ErrorCode::kInvalidArgument);
  p.order = {};
  p.chunkElems = 0;
  EXPECT_EQ(ringAllReduce(p).status().code(), ErrorCode::kInvalidArgument);
}

TEST(ScheduleDump, NamesStepsPeersAndRanges) {
  RingParams p;
  p.nranks = 2;
  p.rank = 0;
  p.count = 10;
  p.chunkElems = 100;
  p.maxSliceElems = 100;
  auto s = ringAllReduce(p);
  ASSERT_TRUE(s.ok());
  std::string text = formatSchedule(s.value(), DataType::kFloat32);
  EXPECT_NE(text.find("rank 0 of 2"), std::string::npos) << text;
  EXPECT_NE(text.find("recvReduceCopySend"), std::string::npos) << text;
  EXPECT_NE(text.find("elements [0, 5)"), std::string::npos) << text;
  EXPECT_NE(text.find("to 1"), std::string::npos) << text;
}

}  // namespace
}  // namespace braid::algo
