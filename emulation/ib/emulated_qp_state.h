// The RC queue pair state machine of the IB spec, as ibv_modify_qp checks it: which transitions
// exist, which attributes each one requires and which it may also carry, and the values those
// attributes may take on an emulated RoCE port. Pure functions: no QP, no locks.
//
//   RESET -> INIT   requires STATE, PKEY_INDEX, PORT, ACCESS_FLAGS
//   INIT  -> INIT   requires STATE; may carry PKEY_INDEX, PORT, ACCESS_FLAGS
//   INIT  -> RTR    requires STATE, AV, PATH_MTU, DEST_QPN, RQ_PSN, MAX_DEST_RD_ATOMIC,
//                   MIN_RNR_TIMER; may carry PKEY_INDEX, ACCESS_FLAGS
//   RTR   -> RTS    requires STATE, TIMEOUT, RETRY_CNT, RNR_RETRY, SQ_PSN, MAX_QP_RD_ATOMIC;
//                   may carry ACCESS_FLAGS, MIN_RNR_TIMER
//   RTS   -> RTS    requires STATE; may carry ACCESS_FLAGS, MIN_RNR_TIMER
//   any   -> ERR    requires STATE
//   any   -> RESET  requires STATE
//
// CUR_STATE may come with any of them and must name the current state. Alternate paths (APM)
// are not emulated: ALT_PATH and PATH_MIG_STATE are refused, as is any attribute not listed.
#pragma once

#include <infiniband/verbs.h>

#include <cstdint>

namespace braid::transport::ib::emulated {

/// What modify has recorded of a QP's attributes.
struct QpAttributes {
  ibv_qp_state state = IBV_QPS_RESET;
  uint16_t pkeyIndex = 0;
  uint8_t port = 0;
  int accessFlags = 0;  ///< qp_access_flags: what remote peers may do to this QP's memory
  ibv_mtu pathMtu = IBV_MTU_1024;
  uint32_t destQpNum = 0;
  uint32_t rqPsn = 0;
  uint32_t sqPsn = 0;
  ibv_gid dgid{};
  uint8_t sgidIndex = 0;
  uint8_t maxDestRdAtomic = 0;
  uint8_t maxRdAtomic = 0;
  uint8_t minRnrTimer = 0;  ///< the IB spec's 5-bit code (rnrTimerMicros)
  uint8_t timeout = 0;      ///< the local ACK timeout: 4.096 µs * 2^timeout; 0 = infinite
  uint8_t retryCnt = 0;
  uint8_t rnrRetry = 0;  ///< 7 = retry forever
};

/// 0 and `*next` when `mask` and `attr` make a valid transition from `current` for a port
/// whose GID table has `gidTableSize` entries; EINVAL otherwise.
int checkModify(ibv_qp_state current, const ibv_qp_attr& attr, int mask, int gidTableSize,
                ibv_qp_state* next);

/// Records in `attrs` the attributes `mask` names (after checkModify accepted them).
void applyModify(const ibv_qp_attr& attr, int mask, QpAttributes* attrs);

/// The RNR NAK timer a min_rnr_timer code stands for, in microseconds (IB spec table 45:
/// 1 -> 10 µs ... 31 -> 491.52 ms, 0 -> 655.36 ms).
uint32_t rnrTimerMicros(uint8_t code);

/// How long a requester waits for an ACK before it gives up on a request, counting its
/// retries: 4.096 µs * 2^timeout * (retry_cnt + 1); zero for timeout 0 (infinite).
int64_t ackTimeoutNanos(uint8_t timeout, uint8_t retryCnt);

}  // namespace braid::transport::ib::emulated
