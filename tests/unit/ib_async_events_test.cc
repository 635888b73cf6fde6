// Asynchronous events of verbs contexts (transport/net/ib/ib_async_events.h): what each event
// means for the connections (a pure decision), the emulated HCA's async_fd and its port that goes
// down (emulation/ib/emulated_async_events.h), the watcher thread that reads them, and the proxy
// that hands a fatal one to every FIFO end it ends, those made later included.
#include <gtest/gtest.h>

#include <poll.h>

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "emulation/ib/emulated_context.h"
#include "support/emulated_verbs.h"
#include "transport/net/ib/ib_async_events.h"
#include "transport/net/ib/ib_proxy.h"

namespace braid::transport::ib {
namespace {

using namespace verbs_test;  // NOLINT: the fixtures this file is written with

ibv_async_event eventOf(ibv_event_type type) {
  ibv_async_event event{};
  event.event_type = type;
  return event;
}

/// A port that was never opened: enough for the decision, which reads names and numbers only.
struct UnopenedPort {
  UnopenedPort() : port(emulatedVerbs(), "mlx5_0:2") { port.port = 2; }
  ~UnopenedPort() { port.cq = nullptr; }  // never a CQ of the verbs table: nothing to destroy
  IbPort port;
};

TEST(IbAsyncEventDecision, NamesEveryEventRdmaCoreDefines) {
  EXPECT_STREQ(asyncEventName(IBV_EVENT_PORT_ERR), "IBV_EVENT_PORT_ERR");
  EXPECT_STREQ(asyncEventName(IBV_EVENT_DEVICE_FATAL), "IBV_EVENT_DEVICE_FATAL");
  EXPECT_STREQ(asyncEventName(IBV_EVENT_QP_ACCESS_ERR), "IBV_EVENT_QP_ACCESS_ERR");
  EXPECT_STREQ(asyncEventName(IBV_EVENT_GID_CHANGE), "IBV_EVENT_GID_CHANGE");
  EXPECT_STREQ(asyncEventName(IBV_EVENT_WQ_FATAL), "IBV_EVENT_WQ_FATAL");
  // An event of a newer rdma-core, as an unknown value the enum can still hold (its enumerators
  // end below 32; 999 would be outside its range, which UBSan rightly refuses to load).
  EXPECT_STREQ(asyncEventName(static_cast<ibv_event_type>(31)), "an unknown event");
}

TEST(IbAsyncEventDecision, InformationalEventsEndNothing) {
  UnopenedPort p;
  for (ibv_event_type type :
       {IBV_EVENT_PORT_ACTIVE, IBV_EVENT_LID_CHANGE, IBV_EVENT_GID_CHANGE, IBV_EVENT_SM_CHANGE,
        IBV_EVENT_PKEY_CHANGE, IBV_EVENT_CLIENT_REREGISTER, IBV_EVENT_COMM_EST,
        IBV_EVENT_SQ_DRAINED, IBV_EVENT_PATH_MIG, IBV_EVENT_QP_LAST_WQE_REACHED,
        IBV_EVENT_SRQ_LIMIT_REACHED, static_cast<ibv_event_type>(31)}) {
    ibv_async_event event = eventOf(type);
    event.element.port_num = 2;
    EXPECT_FALSE(decideAsyncEvent(p.port, event).has_value()) << asyncEventName(type);
  }
}

TEST(IbAsyncEventDecision, APortErrorEndsEveryQueuePairOnThatPortOnly) {
  UnopenedPort p;
  ibv_async_event event = eventOf(IBV_EVENT_PORT_ERR);
  event.element.port_num = 2;
  std::optional<IbAsyncFailure> failure = decideAsyncEvent(p.port, event);
  ASSERT_TRUE(failure.has_value());
  EXPECT_EQ(failure->what, "mlx5_0:2 reported IBV_EVENT_PORT_ERR (the port went down)");
  EXPECT_TRUE(failure->ends(p.port, 17));
  EXPECT_TRUE(failure->ends(p.port, 18));
  UnopenedPort other;
  EXPECT_FALSE(failure->ends(other.port, 17));
  // Port 1 of the same device: the context opened for port 1 hears of it and ends its own.
  event.element.port_num = 1;
  EXPECT_FALSE(decideAsyncEvent(p.port, event).has_value());
}

TEST(IbAsyncEventDecision, ADeviceFatalEventEndsThePortWhateverItsNumber) {
  UnopenedPort p;
  std::optional<IbAsyncFailure> failure = decideAsyncEvent(p.port, eventOf(IBV_EVENT_DEVICE_FATAL));
  ASSERT_TRUE(failure.has_value());
  EXPECT_NE(failure->what.find("IBV_EVENT_DEVICE_FATAL"), std::string::npos) << failure->what;
  EXPECT_TRUE(failure->ends(p.port, 5));
}

TEST(IbAsyncEventDecision, AQueuePairEventEndsThatQueuePairOnly) {
  UnopenedPort p;
  ibv_qp qp{};
  qp.qp_num = 77;
  for (ibv_event_type type : {IBV_EVENT_QP_FATAL, IBV_EVENT_QP_REQ_ERR, IBV_EVENT_QP_ACCESS_ERR}) {
    ibv_async_event event = eventOf(type);
    event.element.qp = &qp;
    std::optional<IbAsyncFailure> failure = decideAsyncEvent(p.port, event);
    ASSERT_TRUE(failure.has_value()) << asyncEventName(type);
    EXPECT_NE(failure->what.find(asyncEventName(type)), std::string::npos) << failure->what;
    EXPECT_NE(failure->what.find("queue pair 77"), std::string::npos) << failure->what;
    EXPECT_TRUE(failure->ends(p.port, 77));
    EXPECT_FALSE(failure->ends(p.port, 78));
  }
}

TEST(IbAsyncEventDecision, ACompletionQueueErrorEndsThePortOfThatQueue) {
  UnopenedPort p;
  ibv_cq ours{};
  ibv_cq theirs{};
  p.port.cq = &ours;
  ibv_async_event event = eventOf(IBV_EVENT_CQ_ERR);
  event.element.cq = &theirs;
  EXPECT_FALSE(decideAsyncEvent(p.port, event).has_value());
  event.element.cq = &ours;
  std::optional<IbAsyncFailure> failure = decideAsyncEvent(p.port, event);
  ASSERT_TRUE(failure.has_value());
  EXPECT_TRUE(failure->ends(p.port, 3));
}

TEST(IbAsyncEventDecision, PortActiveSaysThatPortIsBack) {
  UnopenedPort p;
  ibv_async_event event = eventOf(IBV_EVENT_PORT_ACTIVE);
  event.element.port_num = 2;
  EXPECT_TRUE(portCameBack(p.port, event));
  event.element.port_num = 1;
  EXPECT_FALSE(portCameBack(p.port, event));
  event = eventOf(IBV_EVENT_PORT_ERR);
  event.element.port_num = 2;
  EXPECT_FALSE(portCameBack(p.port, event));
}

// --- The emulated HCA's events -----------------------------------------------------------------

emulated::PortEvents& portEventsOf(ibv_context* context) {
  return emulated::Context::from(context)->hca().portEvents();
}

bool readable(int fd) {
  pollfd p{fd, POLLIN, 0};
  return ::poll(&p, 1, 0) == 1 && (p.revents & POLLIN) != 0;
}

TEST(VerbsEmulationAsyncEvents, APortGoingDownTellsEveryContextOfTheDeviceOnce) {
  Device first;
  Device second;
  ASSERT_NE(first.context, nullptr);
  ASSERT_NE(second.context, nullptr);
  ASSERT_GE(first.context->async_fd, 0);
  ibv_async_event event{};
  EXPECT_EQ(verbs().getAsyncEvent(first.context, &event), -1);
  EXPECT_EQ(errno, EAGAIN);
  EXPECT_FALSE(readable(first.context->async_fd));

  portEventsOf(first.context).takeDown(1);
  portEventsOf(first.context).takeDown(1);  // already down: no second event
  for (ibv_context* context : {first.context, second.context}) {
    EXPECT_TRUE(readable(context->async_fd));
    ASSERT_EQ(verbs().getAsyncEvent(context, &event), 0);
    EXPECT_EQ(event.event_type, IBV_EVENT_PORT_ERR);
    EXPECT_EQ(event.element.port_num, 1);
    verbs().ackAsyncEvent(&event);
    EXPECT_EQ(verbs().getAsyncEvent(context, &event), -1);
    EXPECT_FALSE(readable(context->async_fd));
  }
  ibv_port_attr attr{};
  ASSERT_EQ(verbs().queryPort(first.context, 1, &attr), 0);
  EXPECT_EQ(attr.state, IBV_PORT_DOWN);
}

TEST_F(VerbsEmulationWrite, AWriteOnAPortThatWentDownEndsWithTheTransportTimeout) {
  // 67 ms per try: the first write, to a port still up, must land within one try, which a
  // loaded machine took more than the 4.2 ms of timeout 10 for (a CI run, ASan, load 10).
  Path patient;
  patient.timeout = 14;
  patient.retryCnt = 1;
  connect(patient);
  ASSERT_EQ(post(a_.qp, aToB(0, 64)), 0);
  ASSERT_EQ(pollFor(a_.sendCq, 1).at(0).status, IBV_WC_SUCCESS);
  std::fill(b_.memory.begin(), b_.memory.end(), 0);
  portEventsOf(device_.context).takeDown(1);
  ASSERT_EQ(post(a_.qp, aToB(0, 64)), 0);  // taken, as a real HCA takes it, but never sent
  expectRefused(IBV_WC_RETRY_EXC_ERR);
}

// --- The watcher and the proxy -----------------------------------------------------------------

/// Failures heard on another thread, waited for.
class Heard {
 public:
  void add(IbAsyncFailure failure) {
    std::lock_guard<std::mutex> lock(mu_);
    failures_.push_back(std::move(failure));
    cv_.notify_all();
  }
  /// The failures once there are `n`, or what there is after kCompletionWaitMs.
  std::vector<IbAsyncFailure> waitFor(size_t n) {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait_for(lock, std::chrono::milliseconds(kCompletionWaitMs),
                 [&] { return failures_.size() >= n; });
    return failures_;
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<IbAsyncFailure> failures_;
};

TEST(IbAsyncEvents, TheWatcherHearsAnEmulatedPortGoDownAndNamesTheNic) {
  emulateDevices(1);
  Result<std::vector<std::unique_ptr<IbPort>>> ports = openPorts(emulatedVerbs(), IbSettings{});
  ASSERT_TRUE(ports.ok()) << ports.status().message();
  ASSERT_EQ(ports.value().size(), 1u);
  IbPort& port = *ports.value()[0];
  Heard heard;
  {
    IbAsyncEvents watcher(emulatedVerbs(), {&port}, [&](IbAsyncFailure f) { heard.add(f); });
    portEventsOf(port.context).takeDown(1);
    std::vector<IbAsyncFailure> failures = heard.waitFor(1);
    ASSERT_EQ(failures.size(), 1u);
    EXPECT_EQ(failures[0].what, "emu_0:1 reported IBV_EVENT_PORT_ERR (the port went down)");
    EXPECT_EQ(failures[0].port, &port);
    EXPECT_FALSE(failures[0].qpNum.has_value());
  }
  // The watcher took the event: nothing waits any more.
  ibv_async_event event{};
  EXPECT_EQ(emulatedVerbs().getAsyncEvent(port.context, &event), -1);
}

/// An endpoint that only records what the proxy tells it.
class Listener final : public IbEndpoint {
 public:
  explicit Listener(Heard* heard) : heard_(heard) {}
  bool progress() override { return false; }
  void completed(const ibv_wc&, uint32_t) override {}
  void asyncFailure(const IbAsyncFailure& failure) override { heard_->add(failure); }

 private:
  Heard* heard_;
};

// A proxy with an endpoint that listens from the start (first, telling `early`), one to add
// later (second, telling `late`), and a port to fail.
class IbProxyListeners : public ::testing::Test {
 protected:
  // A failure of the whole port, or of one queue pair on it.
  IbAsyncFailure failure(const char* what, std::optional<uint32_t> qpNum = std::nullopt) {
    IbAsyncFailure f;
    f.port = &p.port;
    f.qpNum = qpNum;
    f.what = what;
    return f;
  }

  IbProxy proxy{{}};
  UnopenedPort p;
  Heard early;
  Heard late;
  Listener first{&early};
  Listener second{&late};
};

TEST_F(IbProxyListeners, TheProxyTellsEveryEndpointAndLaterOnesOfADownPort) {
  const uint32_t firstId = proxy.newId();
  proxy.add(firstId, &first);
  proxy.failAsync(failure("a queue pair", 9));
  proxy.failAsync(failure("the port"));
  std::vector<IbAsyncFailure> heardEarly = early.waitFor(2);
  ASSERT_EQ(heardEarly.size(), 2u);
  EXPECT_EQ(heardEarly[0].what, "a queue pair");
  EXPECT_EQ(heardEarly[1].what, "the port");

  // Made after the port went down: told of the port, not of the queue pair that is gone.
  const uint32_t id = proxy.newId();
  proxy.add(id, &second);
  std::vector<IbAsyncFailure> heardLate = late.waitFor(1);
  ASSERT_EQ(heardLate.size(), 1u);
  EXPECT_EQ(heardLate[0].what, "the port");
  proxy.remove(id);
  proxy.remove(firstId);
}

TEST_F(IbProxyListeners, APortThatCameBackIsOpenToNewEndpoints) {
  const uint32_t firstId = proxy.newId();
  proxy.add(firstId, &first);
  proxy.failAsync(failure("the port"));
  ASSERT_EQ(early.waitFor(1).size(), 1u);

  proxy.portBack(&p.port);
  const uint32_t secondId = proxy.newId();
  proxy.add(secondId, &second);
  proxy.failAsync(failure("a queue pair", 4));
  // The first news the new endpoint hears is the queue pair's: the port is no longer down.
  std::vector<IbAsyncFailure> heard = late.waitFor(1);
  ASSERT_GE(heard.size(), 1u);
  EXPECT_EQ(heard[0].what, "a queue pair");
  proxy.remove(secondId);
  proxy.remove(firstId);
}

}  // namespace
}  // namespace braid::transport::ib
