// The flight recorder's ring (src/flight): collectives kept as fields and worded in the dump as
// they were when the recorder kept words, records reused in place as the ring turns without
// keeping anything of the call they held before, and calls found by their number.
#include "flight/flight_recorder.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "braid/status.h"
#include "comm/call.h"
#include "comm/recorder.h"

namespace braid::flight {
namespace {

FlightRecorder makeRecorder(size_t capacity) {
  Identity who;
  who.comm = 0x1234;
  who.nranks = 2;
  who.host = "testhost";
  return FlightRecorder(who, capacity, "");
}

CollectiveFields allReduceOf(size_t count) {
  CollectiveFields f;
  f.collective = "AllReduce";
  f.count = count;
  f.type = "float";
  f.op = "sum";
  return f;
}

// The "call:" lines of a dump, in order.
std::vector<std::string> callLines(const std::string& dump) {
  std::vector<std::string> lines;
  size_t at = 0;
  while ((at = dump.find("call: ", at)) != std::string::npos) {
    const size_t end = dump.find('\n', at);
    lines.push_back(dump.substr(at, end - at));
    at = end;
  }
  return lines;
}

TEST(FlightRecorderRing, WordsACollectiveFromItsFields) {
  CollectiveFields f = allReduceOf(1024);
  EXPECT_EQ(describe(f), "AllReduce of 1024 x float sum");
  f.userOp = 7;
  EXPECT_EQ(describe(f), "AllReduce of 1024 x float user operator 7");
  CollectiveFields gather;
  gather.collective = "AllGather";
  gather.variable = true;
  gather.count = 3;
  gather.type = "int8";
  EXPECT_EQ(describe(gather), "AllGatherV of 3 x int8");
  CollectiveFields bcast;
  bcast.collective = "Broadcast";
  bcast.count = 16;
  bcast.type = "int8";
  bcast.root = 2;
  EXPECT_EQ(describe(bcast), "Broadcast of 16 x int8, root 2");
  EXPECT_EQ(describe(PlanFields{"ring", "simple", 2}), "ring/simple, 2 channels");
  EXPECT_EQ(describe(PlanFields{"oneshot", "ll", 1}), "oneshot/ll, 1 channel");
}

TEST(FlightRecorderRing, DescribeCallWordsTheCallersCall) {
  CollectiveCall reduce{Collective::kReduce, nullptr,     nullptr, 5,
                        DataType::kFloat64,  RedOp::kMax, 3};
  EXPECT_EQ(comm::describeCall(reduce), "Reduce of 5 x double max, root 3");
  CollectiveCall gather{Collective::kAllGather, nullptr,     nullptr, 9,
                        DataType::kInt32,       RedOp::kSum, -1};
  EXPECT_EQ(comm::describeCall(gather), "AllGather of 9 x int32");
  CollectiveCall user{Collective::kAllReduce,
                      nullptr,
                      nullptr,
                      1,
                      DataType::kFloat32,
                      static_cast<RedOp>(kFirstUserOp + 2),
                      -1};
  EXPECT_EQ(comm::describeCall(user),
            "AllReduce of 1 x float user operator " + std::to_string(kFirstUserOp + 2));
}

TEST(FlightRecorderRing, KeepsTheLastCallsOldestFirstAsItTurns) {
  FlightRecorder recorder = makeRecorder(3);
  for (size_t i = 1; i <= 7; ++i) {
    const uint64_t seq = recorder.begin(allReduceOf(i));
    EXPECT_EQ(seq, i);
    recorder.planned(seq, PlanFields{"oneshot", "ll", 1}, {});
    recorder.end(seq, Status::success());
  }
  const std::vector<std::string> lines = callLines(recorder.render("test", {}));
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[0].rfind("call: 5 done AllReduce of 5 x float sum | oneshot/ll, 1 channel |", 0),
            0u)
      << lines[0];
  EXPECT_EQ(lines[1].rfind("call: 6 done AllReduce of 6 x float sum |", 0), 0u) << lines[1];
  EXPECT_EQ(lines[2].rfind("call: 7 done AllReduce of 7 x float sum |", 0), 0u) << lines[2];
}

// A collective opened with its plan (Recorder's one-lock path) reads as one opened and then
// planned, and the next such record in the same place says its own plan.
TEST(FlightRecorderRing, ARecordOpenedWithItsPlanReadsAsOnePlannedAfter) {
  FlightRecorder recorder = makeRecorder(1);
  const uint64_t first = recorder.begin(allReduceOf(4), PlanFields{"ring", "simple", 2}, {3, 5});
  std::string dump = recorder.render("test", {});
  EXPECT_NE(dump.find("call: 1 running AllReduce of 4 x float sum | ring/simple, 2 channels |"),
            std::string::npos)
      << dump;
  recorder.end(first, Status::success());
  const uint64_t second = recorder.begin(allReduceOf(8), PlanFields{"oneshot", "ll", 1}, {});
  recorder.end(second, Status::success());
  dump = recorder.render("test", {});
  const std::vector<std::string> lines = callLines(dump);
  ASSERT_EQ(lines.size(), 1u) << dump;
  EXPECT_EQ(lines[0].rfind("call: 2 done AllReduce of 8 x float sum | oneshot/ll, 1 channel |", 0),
            0u)
      << lines[0];
}

TEST(FlightRecorderRing, AReusedRecordKeepsNothingOfTheCallBefore) {
  FlightRecorder recorder = makeRecorder(2);
  // Call 1: point-to-point words, planned with channels, failed.
  const uint64_t first = recorder.begin("send/recv: send to rank 1 (8 B)", "point-to-point", {1});
  recorder.planned(first, PlanFields{"ring", "simple", 2}, {4, 5});
  recorder.end(first, internalError("it broke"));
  const uint64_t second = recorder.begin(allReduceOf(2));
  recorder.end(second, Status::success());
  std::string dump = recorder.render("test", {});
  EXPECT_NE(dump.find("call: 1 failed send/recv: send to rank 1 (8 B) | ring/simple, 2 channels"),
            std::string::npos)
      << dump;
  EXPECT_NE(dump.find("error: call 1 it broke"), std::string::npos) << dump;
  // Call 3 takes call 1's record: running, unplanned, no error, no channels.
  const uint64_t third = recorder.begin(allReduceOf(3));
  dump = recorder.render("test", {});
  const std::vector<std::string> lines = callLines(dump);
  ASSERT_EQ(lines.size(), 2u) << dump;
  EXPECT_EQ(lines[1].rfind("call: 3 running AllReduce of 3 x float sum |  |", 0), 0u) << lines[1];
  EXPECT_EQ(dump.find("error:"), std::string::npos) << dump;
  EXPECT_EQ(dump.find("send/recv"), std::string::npos) << dump;
  // Words given at begin stay when a later record is a collective, and the other way round.
  recorder.end(third, Status::success());
  const uint64_t fourth =
      recorder.begin("send/recv: receive from rank 0 (4 B)", "point-to-point", {1});
  recorder.end(fourth, Status::success());
  dump = recorder.render("test", {});
  EXPECT_NE(dump.find("call: 4 done send/recv: receive from rank 0 (4 B) | point-to-point |"),
            std::string::npos)
      << dump;
}

TEST(FlightRecorderRing, ACallPastTheRingIsNotFoundAgain) {
  FlightRecorder recorder = makeRecorder(2);
  const uint64_t old = recorder.begin(allReduceOf(1));
  recorder.end(old, Status::success());
  const uint64_t a = recorder.begin(allReduceOf(2));
  const uint64_t b = recorder.begin(allReduceOf(3));
  // Call 1's record now holds call 3: what is said of call 1 must not reach it.
  recorder.planned(old, PlanFields{"tree", "ll", 1}, {9});
  recorder.end(old, internalError("late"));
  recorder.end(a, Status::success());
  const std::string dump = recorder.render("test", {});
  EXPECT_NE(dump.find("call: 3 running AllReduce of 3 x float sum |  |"), std::string::npos)
      << dump;
  EXPECT_EQ(dump.find("tree"), std::string::npos) << dump;
  EXPECT_EQ(dump.find("late"), std::string::npos) << dump;
  recorder.end(b, Status::success());
  // Numbers never given are not found either.
  recorder.end(99, internalError("never made"));
  EXPECT_EQ(recorder.render("test", {}).find("never made"), std::string::npos);
}

}  // namespace
}  // namespace braid::flight
