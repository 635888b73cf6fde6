// One emulated RC queue pair: its state machine, its send and receive queues, and the
// completions it produces.
//
// The network lives next door: a Requester (emulated_requester.h) carries this QP's send queue
// to the peer's HCA, and a ResponderLink (emulated_responder.h) serves the peer's writes into
// this process. Both call back into the QP through the methods below, naming the epoch they work
// for: each move to ERR or RESET (and destruction) starts a new epoch, so a thread still holding
// work from before can neither complete it nor deliver it into what the QP has become.
//
// Locks, outermost first: the HCA's QP table (Hca), this QP's mutex, a CQ's mutex. The HCA's
// region lock is never taken with this QP's mutex held.
#pragma once

#include <infiniband/verbs.h>
#include <sys/socket.h>

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "base/socket.h"
#include "emulation/ib/emulated_gid_table.h"
#include "emulation/ib/emulated_handle.h"
#include "emulation/ib/emulated_hca_wire.h"
#include "emulation/ib/emulated_qp_state.h"
#include "emulation/ib/emulated_send_queue.h"

namespace braid::transport::ib::emulated {

class CompletionQueue;
class Hca;
class Requester;
class ResponderLink;
struct ProtectionDomain;

class QueuePair {
 public:
  struct Setup {
    ibv_context* context = nullptr;
    ibv_pd* pdVerbs = nullptr;
    const ProtectionDomain* pd = nullptr;
    Hca* hca = nullptr;
    const std::vector<GidEntry>* gids = nullptr;  ///< the context's table; outlives the QP
    CompletionQueue* sendCq = nullptr;
    CompletionQueue* recvCq = nullptr;
    ibv_qp_cap cap{};
    bool sqSigAll = false;
    void* qpContext = nullptr;
    uint32_t qpNum = 0;
  };

  explicit QueuePair(const Setup& setup);
  ~QueuePair();
  QueuePair(const QueuePair&) = delete;
  QueuePair& operator=(const QueuePair&) = delete;

  ibv_qp* verbs() { return &handle_.verbs; }
  static QueuePair* from(ibv_qp* qp) { return Handle::ownerOf(qp); }
  uint32_t qpNum() const { return qpNum_; }
  const ProtectionDomain* pd() const { return pd_; }
  Hca& hca() const { return hca_; }

  // --- The application's side (verbs_emulated.cc) ---------------------------------------------
  int modify(const ibv_qp_attr& attr, int mask);
  int postSend(ibv_send_wr* wr, ibv_send_wr** bad);
  int postRecv(ibv_recv_wr* wr, ibv_recv_wr** bad);
  /// Stops the QP's threads and closes its connections; outstanding work gets no completion.
  /// Call after the HCA forgot the QP's number, so that no new connection arrives.
  void shutdown();

  // --- The requester thread's side (emulated_requester.h) --------------------------------------
  struct RequesterView {
    uint64_t epoch = 0;
    bool connect = false;     ///< in RTS with a routable path: connect and send
    sockaddr_storage peer{};  ///< the peer HCA's listener
    wire::Hello hello;
    bool workWaiting = false;  ///< work is outstanding: connection attempts retry quickly
    bool hasUnsent = false;
    Clock::time_point deadline = Clock::time_point::max();  ///< when the head's time is up
  };
  /// The QP as its requester should act on it now. Fails the head first when its time is up.
  RequesterView requesterView(Clock::time_point now);
  std::optional<SendWork> takeNextSend(uint64_t epoch);
  /// The request taken last failed its local checks (LOC_PROT_ERR in its turn).
  void failLastTakenLocally(uint64_t epoch, const char* why);
  void noteTransmitProgress(uint64_t epoch);
  /// Applies the responder's answer (with a read's `data`, kReadData's `value` bytes); false
  /// when it answers nothing that was sent.
  bool onResponse(uint64_t epoch, const wire::Response& response, const uint8_t* data = nullptr);

  // --- The responder's side (Hca's accept thread, emulated_responder.h) -----------------------
  /// Takes a connection whose hello names this QP, or refuses it (the reply says why).
  void admit(::braid::sockets::Socket connection, const wire::Hello& hello);

  struct WriteGate {
    bool live = false;         ///< in RTR or RTS in the link's epoch: writes are served
    bool remoteWrite = false;  ///< qp_access_flags has IBV_ACCESS_REMOTE_WRITE
    bool remoteRead = false;   ///< qp_access_flags has IBV_ACCESS_REMOTE_READ
  };
  WriteGate writeGate(uint64_t epoch);

  enum class ReceiveWait { kReady, kGaveUp, kGone };
  /// Waits for a posted receive (RNR): up to rnrRetry times the min_rnr_timer interval, forever
  /// for rnrRetry 7, calling `notify` (µs until its next call) now and then so that the
  /// requester knows the responder is alive. kGone: the link was stopped or the epoch ended.
  ReceiveWait awaitReceive(uint64_t epoch, uint8_t rnrRetry, const std::atomic<bool>& stopping,
                           const std::function<bool(uint32_t)>& notify);
  /// Consumes the oldest receive for a write with immediate that is now in memory.
  bool completeReceive(uint64_t epoch, uint64_t length, uint32_t immData, uint32_t srcQpNum);
  /// The responder refused a request or read garbage: the QP goes to ERR.
  void failFromResponder(uint64_t epoch, const std::string& why);

 private:
  using Handle = VerbsHandle<ibv_qp, QueuePair>;

  int checkSendRequest(const ibv_send_wr& wr) const;
  SendWork makeSendWork(const ibv_send_wr& wr) const;
  void setStateLocked(ibv_qp_state state);
  void startRequesterLocked();
  void pushSendCompletion(uint64_t wrId, ibv_wc_status status, bool read = false,
                          uint32_t bytes = 0);
  /// A read's data is back: scattered into its SGEs, and its completion, or LOC_PROT_ERR.
  bool completeRead(const wire::Response& response, const uint8_t* data);
  void pushRecvFlush(uint64_t wrId);
  /// The head fails with `status`; the QP goes to ERR and flushes the rest.
  void failHeadLocked(ibv_wc_status status, const char* why);
  void enterErrorLocked();
  void resetLocked();
  void stopLinksLocked();

  Handle handle_;
  const uint32_t qpNum_;
  const ProtectionDomain* const pd_;
  Hca& hca_;
  const std::vector<GidEntry>& gids_;
  CompletionQueue* const sendCq_;
  CompletionQueue* const recvCq_;
  const ibv_qp_cap cap_;
  const bool sqSigAll_;

  std::mutex mu_;
  std::condition_variable receivePosted_;  ///< also: the epoch changed, or a link was stopped
  QpAttributes attrs_;
  uint64_t epoch_ = 0;
  bool shutDown_ = false;
  SendQueue sends_;
  std::deque<uint64_t> receives_;  ///< wr_ids of posted receives
  std::string localErrorWhy_;
  // Fixed when the QP enters RTS:
  Clock::duration ackTimeout_{};
  bool routable_ = false;
  sockaddr_storage peer_{};
  wire::Hello hello_;

  std::unique_ptr<Requester> requester_;
  std::vector<std::unique_ptr<ResponderLink>> links_;
};

}  // namespace braid::transport::ib::emulated
