// One emulated RC queue pair: see emulated_qp.h.
#include "emulation/ib/emulated_qp.h"

#include <errno.h>

#include <algorithm>
#include <cstring>
#include <utility>

#include "base/log.h"
#include "emulation/ib/emulated_cq.h"
#include "emulation/ib/emulated_faults.h"
#include "emulation/ib/emulated_hca.h"
#include "emulation/ib/emulated_limits.h"
#include "emulation/ib/emulated_requester.h"
#include "emulation/ib/emulated_responder.h"
#include "transport/net/ib/wc_status.h"

namespace braid::transport::ib::emulated {
namespace {

/// The longest a responder's RNR notice may ask the requester to wait for its next word: the
/// longest RNR timer and some slack. A peer that asks for more is not believed.
constexpr uint32_t kMaxRnrNoticeMicros = 1000000;
/// RNR notices go out at most this often, however short the RNR timer.
constexpr uint32_t kMinRnrNoticeMicros = 1000;

ibv_wc completion(uint64_t wrId, ibv_wc_status status, ibv_wc_opcode opcode, uint32_t qpNum) {
  ibv_wc wc{};
  wc.wr_id = wrId;
  wc.status = status;
  wc.opcode = opcode;
  wc.qp_num = qpNum;
  return wc;
}

bool acceptsWrites(ibv_qp_state state) { return state == IBV_QPS_RTR || state == IBV_QPS_RTS; }

}  // namespace

QueuePair::QueuePair(const Setup& setup)
    : qpNum_(setup.qpNum),
      pd_(setup.pd),
      hca_(*setup.hca),
      gids_(*setup.gids),
      sendCq_(setup.sendCq),
      recvCq_(setup.recvCq),
      cap_(setup.cap),
      sqSigAll_(setup.sqSigAll) {
  handle_.owner = this;
  ibv_qp& qp = handle_.verbs;
  qp.context = setup.context;
  qp.qp_context = setup.qpContext;
  qp.pd = setup.pdVerbs;
  qp.send_cq = sendCq_->verbs();
  qp.recv_cq = recvCq_->verbs();
  qp.handle = setup.qpNum;
  qp.qp_num = setup.qpNum;
  qp.state = IBV_QPS_RESET;
  qp.qp_type = IBV_QPT_RC;
}

QueuePair::~QueuePair() { shutdown(); }

void QueuePair::shutdown() {
  std::unique_ptr<Requester> requester;
  std::vector<std::unique_ptr<ResponderLink>> links;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (shutDown_) return;
    shutDown_ = true;
    ++epoch_;
    stopLinksLocked();
    requester = std::move(requester_);
    links = std::move(links_);
  }
  // Joined without the lock: the threads may be waiting for it on their way out.
  requester.reset();
  links.clear();
}

// --- State machine ---------------------------------------------------------------------------

int QueuePair::modify(const ibv_qp_attr& attr, int mask) {
  std::lock_guard<std::mutex> lock(mu_);
  if (shutDown_) return EINVAL;
  ibv_qp_state next;
  ibv_qp_state from = attrs_.state;
  int err = checkModify(from, attr, mask, static_cast<int>(gids_.size()), &next);
  if (err != 0) return err;
  if (next == IBV_QPS_RESET) {
    resetLocked();
  } else if (next == IBV_QPS_ERR) {
    if (from != IBV_QPS_ERR) enterErrorLocked();
  } else {
    applyModify(attr, mask, &attrs_);
    setStateLocked(next);
    if (from == IBV_QPS_RTR && next == IBV_QPS_RTS) startRequesterLocked();
  }
  BRAID_TRACE("emulated HCA %s: QP %u: state %d -> %d", hca_.name().c_str(), qpNum_, from, next);
  return 0;
}

void QueuePair::setStateLocked(ibv_qp_state state) {
  attrs_.state = state;
  // The application reads qp->state without a lock while this QP's threads change it.
  __atomic_store_n(&handle_.verbs.state, state, __ATOMIC_RELEASE);
}

void QueuePair::startRequesterLocked() {
  ackTimeout_ = std::chrono::nanoseconds(ackTimeoutNanos(attrs_.timeout, attrs_.retryCnt));
  const GidEntry& sgid = gids_[attrs_.sgidIndex];
  uint16_t peerPort = static_cast<uint16_t>(attrs_.destQpNum >> 8);
  routable_ = sgid.type == GidType::kRoceV2 && isRoutable(attrs_.dgid) && peerPort != 0;
  peer_ = gidToAddress(attrs_.dgid, peerPort);
  hello_ = wire::Hello{qpNum_, attrs_.destQpNum, sgid.gid, attrs_.rnrRetry};
  if (!routable_) {
    BRAID_INFO(
        "emulated HCA %s: QP %u: no route from GID %s (index %d) to GID %s: a RoCE v1 (or "
        "otherwise unroutable) GID cannot cross IP; its writes will time out",
        hca_.name().c_str(), qpNum_, gidToString(sgid.gid).c_str(), attrs_.sgidIndex,
        gidToString(attrs_.dgid).c_str());
  }
  if (!requester_) requester_ = std::make_unique<Requester>(*this);
  requester_->wake();
}

void QueuePair::enterErrorLocked() {
  setStateLocked(IBV_QPS_ERR);
  ++epoch_;
  for (const SendQueue::Finished& f : sends_.drain()) {
    pushSendCompletion(f.wrId, IBV_WC_WR_FLUSH_ERR, f.read);  // flushes complete, signaled or not
  }
  for (uint64_t wrId : receives_) pushRecvFlush(wrId);
  receives_.clear();
  stopLinksLocked();
  if (requester_) requester_->wake();
}

void QueuePair::resetLocked() {
  ++epoch_;
  (void)sends_.drain();  // RESET drops queued work without completions
  receives_.clear();
  stopLinksLocked();
  attrs_ = QpAttributes{};
  setStateLocked(IBV_QPS_RESET);
  routable_ = false;
  if (requester_) requester_->wake();
}

void QueuePair::stopLinksLocked() {
  for (auto& link : links_) link->stop();
  receivePosted_.notify_all();  // a link waiting for a receive sees it was stopped
}

void QueuePair::failHeadLocked(ibv_wc_status status, const char* why) {
  // ERR before the completion: whoever polls the error sees the QP in ERR already.
  setStateLocked(IBV_QPS_ERR);
  if (auto head = sends_.popHead()) pushSendCompletion(head->wrId, status, head->read);
  BRAID_INFO("emulated HCA %s: QP %u: a write failed with %s (%s); the QP is in ERR",
             hca_.name().c_str(), qpNum_, wcStatusName(status), why);
  enterErrorLocked();
}

void QueuePair::pushSendCompletion(uint64_t wrId, ibv_wc_status status, bool read, uint32_t bytes) {
  ibv_wc wc = completion(wrId, status, read ? IBV_WC_RDMA_READ : IBV_WC_RDMA_WRITE, qpNum_);
  wc.byte_len = bytes;
  sendCq_->push(wc);
}

void QueuePair::pushRecvFlush(uint64_t wrId) {
  recvCq_->push(completion(wrId, IBV_WC_WR_FLUSH_ERR, IBV_WC_RECV, qpNum_));
}

// --- Posting ---------------------------------------------------------------------------------

int QueuePair::checkSendRequest(const ibv_send_wr& wr) const {
  // The transport writes, and reads to flush device memory; other opcodes are not emulated.
  const bool read = wr.opcode == IBV_WR_RDMA_READ;
  if (wr.opcode != IBV_WR_RDMA_WRITE && wr.opcode != IBV_WR_RDMA_WRITE_WITH_IMM && !read) {
    return EINVAL;
  }
  if (read && (wr.send_flags & IBV_SEND_INLINE)) return EINVAL;  // a read has no inline data
  if (wr.num_sge < 0 || static_cast<uint32_t>(wr.num_sge) > cap_.max_send_sge) return EINVAL;
  if (wr.num_sge > 0 && wr.sg_list == nullptr) return EINVAL;
  uint64_t total = 0;
  for (int i = 0; i < wr.num_sge; ++i) total += wr.sg_list[i].length;
  if (total > kMaxMsgSize || (read && total > wire::kMaxReadBytes)) return EINVAL;
  if ((wr.send_flags & IBV_SEND_INLINE) && total > cap_.max_inline_data) return EINVAL;
  return 0;
}

SendWork QueuePair::makeSendWork(const ibv_send_wr& wr) const {
  SendWork work;
  work.wrId = wr.wr_id;
  work.signaled = sqSigAll_ || (wr.send_flags & IBV_SEND_SIGNALED) != 0;
  bool withImm = wr.opcode == IBV_WR_RDMA_WRITE_WITH_IMM;
  work.header.opcode = withImm ? wire::Opcode::kRdmaWriteWithImm : wire::Opcode::kRdmaWrite;
  if (wr.opcode == IBV_WR_RDMA_READ) work.header.opcode = wire::Opcode::kRdmaRead;
  work.header.immData = withImm ? wr.imm_data : 0;
  work.header.rkey = wr.wr.rdma.rkey;
  work.header.remoteAddr = wr.wr.rdma.remote_addr;
  for (int i = 0; i < wr.num_sge; ++i) work.header.length += wr.sg_list[i].length;
  work.isInline = (wr.send_flags & IBV_SEND_INLINE) != 0;
  if (work.isInline) {
    // Copied now, lkeys unchecked, as IBV_SEND_INLINE promises: the buffers are free at return.
    for (int i = 0; i < wr.num_sge; ++i) {
      const auto* bytes = reinterpret_cast<const uint8_t*>(wr.sg_list[i].addr);
      work.inlineData.insert(work.inlineData.end(), bytes, bytes + wr.sg_list[i].length);
    }
  } else {
    work.sges.assign(wr.sg_list, wr.sg_list + wr.num_sge);
  }
  return work;
}

int QueuePair::postSend(ibv_send_wr* wr, ibv_send_wr** bad) {
  std::lock_guard<std::mutex> lock(mu_);
  Clock::time_point now = Clock::now();
  int err = 0;
  for (; wr != nullptr; wr = wr->next) {
    err = checkSendRequest(*wr);
    if (err == 0 && attrs_.state != IBV_QPS_RTS && attrs_.state != IBV_QPS_ERR) err = EINVAL;
    if (err == 0 && attrs_.state == IBV_QPS_RTS && sends_.outstanding() >= cap_.max_send_wr) {
      err = ENOMEM;
    }
    const WriteFault fault = err == 0 ? nextWriteFault() : WriteFault::kNone;
    if (fault == WriteFault::kPost) err = EIO;
    if (err != 0) break;
    if (attrs_.state == IBV_QPS_ERR) {
      pushSendCompletion(wr->wr_id, IBV_WC_WR_FLUSH_ERR);
    } else {
      sends_.post(makeSendWork(*wr), now);
      if (fault == WriteFault::kCompletion) {
        failHeadLocked(IBV_WC_RETRY_EXC_ERR, "injected by BRAID_IB_EMULATE_FAULT");
      }
      if (fault == WriteFault::kPortDown) hca_.portEvents().takeDown(attrs_.port);
    }
  }
  if (err != 0 && bad != nullptr) *bad = wr;
  if (requester_) requester_->wake();
  return err;
}

int QueuePair::postRecv(ibv_recv_wr* wr, ibv_recv_wr** bad) {
  std::lock_guard<std::mutex> lock(mu_);
  int err = 0;
  for (; wr != nullptr; wr = wr->next) {
    if (attrs_.state == IBV_QPS_RESET || shutDown_) err = EINVAL;
    if (wr->num_sge < 0 || static_cast<uint32_t>(wr->num_sge) > cap_.max_recv_sge) err = EINVAL;
    if (err == 0 && attrs_.state != IBV_QPS_ERR && receives_.size() >= cap_.max_recv_wr) {
      err = ENOMEM;
    }
    if (err != 0) break;
    if (attrs_.state == IBV_QPS_ERR) {
      pushRecvFlush(wr->wr_id);
    } else {
      receives_.push_back(wr->wr_id);
    }
  }
  if (err != 0 && bad != nullptr) *bad = wr;
  receivePosted_.notify_all();
  return err;
}

// --- The requester's side --------------------------------------------------------------------

QueuePair::RequesterView QueuePair::requesterView(Clock::time_point now) {
  std::lock_guard<std::mutex> lock(mu_);
  if (attrs_.state == IBV_QPS_RTS && sends_.headDeadline(ackTimeout_) <= now) {
    failHeadLocked(IBV_WC_RETRY_EXC_ERR, "no ACK within the transport timeout");
  }
  RequesterView view;
  view.epoch = epoch_;
  // A port that is down sends nothing: outstanding work waits for the transport timeout.
  view.connect = attrs_.state == IBV_QPS_RTS && routable_ && !shutDown_ &&
                 !hca_.portEvents().down(attrs_.port);
  view.peer = peer_;
  view.hello = hello_;
  view.workWaiting = sends_.outstanding() > 0;
  view.hasUnsent = sends_.hasUnsent();
  if (attrs_.state == IBV_QPS_RTS) view.deadline = sends_.headDeadline(ackTimeout_);
  return view;
}

std::optional<SendWork> QueuePair::takeNextSend(uint64_t epoch) {
  std::lock_guard<std::mutex> lock(mu_);
  if (epoch != epoch_ || attrs_.state != IBV_QPS_RTS || !sends_.hasUnsent()) return std::nullopt;
  return sends_.takeNext();
}

void QueuePair::failLastTakenLocally(uint64_t epoch, const char* why) {
  std::lock_guard<std::mutex> lock(mu_);
  if (epoch != epoch_) return;
  sends_.markLastTakenLocalError();
  localErrorWhy_ = why;
  if (sends_.headFailedLocally()) failHeadLocked(IBV_WC_LOC_PROT_ERR, localErrorWhy_.c_str());
}

void QueuePair::noteTransmitProgress(uint64_t epoch) {
  std::lock_guard<std::mutex> lock(mu_);
  if (epoch == epoch_) sends_.noteTransmitProgress(Clock::now());
}

bool QueuePair::completeRead(const wire::Response& response, const uint8_t* data) {
  const SendQueue::Finished& head = sends_.head();
  uint64_t want = 0;
  for (const ibv_sge& sge : head.readInto) want += sge.length;
  if (!head.read || data == nullptr || response.value != want) return false;
  if (const char* why = hca_.writeLocal(pd_, head.readInto.data(), head.readInto.size(), data)) {
    localErrorWhy_ = why;
    failHeadLocked(IBV_WC_LOC_PROT_ERR, localErrorWhy_.c_str());
    return true;
  }
  std::optional<SendQueue::Finished> done = sends_.popAnswered(Clock::now());
  if (done->signaled) pushSendCompletion(done->wrId, IBV_WC_SUCCESS, true, response.value);
  if (sends_.headFailedLocally()) failHeadLocked(IBV_WC_LOC_PROT_ERR, localErrorWhy_.c_str());
  return true;
}

bool QueuePair::onResponse(uint64_t epoch, const wire::Response& response, const uint8_t* data) {
  std::lock_guard<std::mutex> lock(mu_);
  if (epoch != epoch_) return true;  // an answer to work that was flushed meanwhile
  if (!sends_.awaitingAnswer()) return false;
  Clock::time_point now = Clock::now();
  switch (response.kind) {
    case wire::ResponseKind::kReadData:
      return completeRead(response, data);
    case wire::ResponseKind::kAck: {
      if (sends_.head().read) return false;  // a read is answered with its data
      std::optional<SendQueue::Finished> done = sends_.popAnswered(now);
      if (done->signaled) pushSendCompletion(done->wrId, IBV_WC_SUCCESS);
      if (sends_.headFailedLocally()) {
        failHeadLocked(IBV_WC_LOC_PROT_ERR, localErrorWhy_.c_str());
      }
      return true;
    }
    case wire::ResponseKind::kRnrWait: {
      uint32_t micros = std::min(response.value, kMaxRnrNoticeMicros);
      sends_.noteRnrWait(now, std::chrono::microseconds(micros));
      return true;
    }
    case wire::ResponseKind::kNakRemoteAccess:
      failHeadLocked(IBV_WC_REM_ACCESS_ERR, "the responder refused the write");
      return true;
    case wire::ResponseKind::kNakRnr:
      failHeadLocked(IBV_WC_RNR_RETRY_EXC_ERR, "no receive was posted at the responder in time");
      return true;
  }
  return false;
}

// --- The responder's side --------------------------------------------------------------------

void QueuePair::admit(::braid::sockets::Socket connection, const wire::Hello& hello) {
  std::lock_guard<std::mutex> lock(mu_);
  wire::HelloVerdict verdict = wire::HelloVerdict::kAccepted;
  if (shutDown_) {
    verdict = wire::HelloVerdict::kNoSuchQp;
  } else if (!acceptsWrites(attrs_.state)) {
    verdict = wire::HelloVerdict::kNotReady;
  } else if (attrs_.destQpNum != hello.srcQpNum) {
    verdict = wire::HelloVerdict::kWrongPeer;
  }
  if (!sendHelloReply(connection, verdict) || verdict != wire::HelloVerdict::kAccepted) return;
  // One connection per QP: a new one replaces the old (its requester reconnected).
  stopLinksLocked();
  links_.erase(
      std::remove_if(links_.begin(), links_.end(),
                     [](const std::unique_ptr<ResponderLink>& l) { return l->finished(); }),
      links_.end());
  links_.push_back(std::make_unique<ResponderLink>(*this, std::move(connection), hello, epoch_));
}

QueuePair::WriteGate QueuePair::writeGate(uint64_t epoch) {
  std::lock_guard<std::mutex> lock(mu_);
  WriteGate gate;
  gate.live = epoch == epoch_ && acceptsWrites(attrs_.state) &&
              !hca_.portEvents().down(attrs_.port);  // a down port drops what arrives
  gate.remoteWrite = (attrs_.accessFlags & IBV_ACCESS_REMOTE_WRITE) != 0;
  gate.remoteRead = (attrs_.accessFlags & IBV_ACCESS_REMOTE_READ) != 0;
  return gate;
}

QueuePair::ReceiveWait QueuePair::awaitReceive(uint64_t epoch, uint8_t rnrRetry,
                                               const std::atomic<bool>& stopping,
                                               const std::function<bool(uint32_t)>& notify) {
  std::unique_lock<std::mutex> lock(mu_);
  auto gone = [&] { return stopping || epoch != epoch_ || !acceptsWrites(attrs_.state); };
  if (gone()) return ReceiveWait::kGone;
  if (!receives_.empty()) return ReceiveWait::kReady;
  // The requester retries rnrRetry times, each after the RNR timer this QP asks for; 7 is
  // forever. The emulation waits that long here instead of NAKing and being asked again.
  auto interval = std::chrono::microseconds(rnrTimerMicros(attrs_.minRnrTimer));
  uint32_t noticeMicros =
      std::max<uint32_t>(rnrTimerMicros(attrs_.minRnrTimer), kMinRnrNoticeMicros);
  bool forever = rnrRetry == 7;
  Clock::time_point giveUpAt = Clock::now() + interval * rnrRetry;
  while (true) {
    Clock::time_point now = Clock::now();
    if (!forever && now >= giveUpAt) return ReceiveWait::kGaveUp;
    lock.unlock();
    bool told = notify(noticeMicros);
    lock.lock();
    if (!told) return ReceiveWait::kGone;
    Clock::time_point wakeAt = now + std::chrono::microseconds(noticeMicros);
    if (!forever) wakeAt = std::min(wakeAt, giveUpAt);
    receivePosted_.wait_until(lock, wakeAt, [&] { return gone() || !receives_.empty(); });
    if (gone()) return ReceiveWait::kGone;
    if (!receives_.empty()) return ReceiveWait::kReady;
  }
}

bool QueuePair::completeReceive(uint64_t epoch, uint64_t length, uint32_t immData,
                                uint32_t srcQpNum) {
  std::lock_guard<std::mutex> lock(mu_);
  if (epoch != epoch_ || receives_.empty()) return false;
  ibv_wc wc = completion(receives_.front(), IBV_WC_SUCCESS, IBV_WC_RECV_RDMA_WITH_IMM, qpNum_);
  receives_.pop_front();
  wc.byte_len = static_cast<uint32_t>(length);
  wc.imm_data = immData;
  wc.wc_flags = IBV_WC_WITH_IMM;
  wc.src_qp = srcQpNum;
  recvCq_->push(wc);
  return true;
}

void QueuePair::failFromResponder(uint64_t epoch, const std::string& why) {
  std::lock_guard<std::mutex> lock(mu_);
  if (epoch != epoch_ || !acceptsWrites(attrs_.state)) return;
  BRAID_INFO("emulated HCA %s: QP %u: %s; the QP is in ERR", hca_.name().c_str(), qpNum_,
             why.c_str());
  enterErrorLocked();
}

}  // namespace braid::transport::ib::emulated
