// The RC QP state machine's checks: see emulated_qp_state.h.
#include "emulation/ib/emulated_qp_state.h"

#include <errno.h>

#include "emulation/ib/emulated_hca_wire.h"
#include "emulation/ib/emulated_limits.h"

namespace braid::transport::ib::emulated {
namespace {

struct Transition {
  int required;
  int optional;
};

/// The attribute masks of `from` -> `to`; false when the transition does not exist.
bool transitionMasks(ibv_qp_state from, ibv_qp_state to, Transition* t) {
  if (to == IBV_QPS_ERR || to == IBV_QPS_RESET) {
    *t = {IBV_QP_STATE, 0};
    return true;
  }
  if (from == IBV_QPS_RESET && to == IBV_QPS_INIT) {
    *t = {IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS, 0};
    return true;
  }
  if (from == IBV_QPS_INIT && to == IBV_QPS_INIT) {
    *t = {IBV_QP_STATE, IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS};
    return true;
  }
  if (from == IBV_QPS_INIT && to == IBV_QPS_RTR) {
    *t = {IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
              IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER,
          IBV_QP_PKEY_INDEX | IBV_QP_ACCESS_FLAGS};
    return true;
  }
  if (from == IBV_QPS_RTR && to == IBV_QPS_RTS) {
    *t = {IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN |
              IBV_QP_MAX_QP_RD_ATOMIC,
          IBV_QP_ACCESS_FLAGS | IBV_QP_MIN_RNR_TIMER};
    return true;
  }
  if (from == IBV_QPS_RTS && to == IBV_QPS_RTS) {
    *t = {IBV_QP_STATE, IBV_QP_ACCESS_FLAGS | IBV_QP_MIN_RNR_TIMER};
    return true;
  }
  return false;
}

constexpr int kQpAccessFlags = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
                               IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC;
constexpr uint32_t kPsnMask = 0xffffff;

/// The values of the attributes `mask` names, on a port with one P_Key and `gidTableSize` GIDs.
bool valuesValid(const ibv_qp_attr& attr, int mask, int gidTableSize) {
  if ((mask & IBV_QP_PKEY_INDEX) && attr.pkey_index != 0) return false;
  if ((mask & IBV_QP_PORT) && attr.port_num != 1) return false;
  if ((mask & IBV_QP_ACCESS_FLAGS) && (attr.qp_access_flags & ~kQpAccessFlags) != 0) return false;
  if (mask & IBV_QP_AV) {
    // RoCE carries every packet in a GRH: the address must be global.
    const ibv_ah_attr& ah = attr.ah_attr;
    if (ah.is_global != 1 || ah.port_num != 1 || ah.grh.sgid_index >= gidTableSize) return false;
  }
  if ((mask & IBV_QP_PATH_MTU) && (attr.path_mtu < IBV_MTU_256 || attr.path_mtu > IBV_MTU_4096)) {
    return false;
  }
  if ((mask & IBV_QP_DEST_QPN) && attr.dest_qp_num > wire::kQpNumMask) return false;
  if ((mask & IBV_QP_RQ_PSN) && attr.rq_psn > kPsnMask) return false;
  if ((mask & IBV_QP_SQ_PSN) && attr.sq_psn > kPsnMask) return false;
  if ((mask & IBV_QP_MAX_DEST_RD_ATOMIC) && attr.max_dest_rd_atomic > kMaxQpRdAtom) return false;
  if ((mask & IBV_QP_MAX_QP_RD_ATOMIC) && attr.max_rd_atomic > kMaxQpRdAtom) return false;
  if ((mask & IBV_QP_MIN_RNR_TIMER) && attr.min_rnr_timer > 31) return false;
  if ((mask & IBV_QP_TIMEOUT) && attr.timeout > 31) return false;
  if ((mask & IBV_QP_RETRY_CNT) && attr.retry_cnt > 7) return false;
  if ((mask & IBV_QP_RNR_RETRY) && attr.rnr_retry > 7) return false;
  return true;
}

}  // namespace

int checkModify(ibv_qp_state current, const ibv_qp_attr& attr, int mask, int gidTableSize,
                ibv_qp_state* next) {
  if ((mask & IBV_QP_STATE) == 0) return EINVAL;
  if ((mask & IBV_QP_CUR_STATE) && attr.cur_qp_state != current) return EINVAL;
  Transition t;
  if (!transitionMasks(current, attr.qp_state, &t)) return EINVAL;
  int given = mask & ~IBV_QP_CUR_STATE;
  if ((given & t.required) != t.required || (given & ~(t.required | t.optional)) != 0) {
    return EINVAL;
  }
  if (!valuesValid(attr, mask, gidTableSize)) return EINVAL;
  *next = attr.qp_state;
  return 0;
}

void applyModify(const ibv_qp_attr& attr, int mask, QpAttributes* attrs) {
  if (mask & IBV_QP_PKEY_INDEX) attrs->pkeyIndex = attr.pkey_index;
  if (mask & IBV_QP_PORT) attrs->port = attr.port_num;
  if (mask & IBV_QP_ACCESS_FLAGS) attrs->accessFlags = attr.qp_access_flags;
  if (mask & IBV_QP_AV) {
    attrs->dgid = attr.ah_attr.grh.dgid;
    attrs->sgidIndex = attr.ah_attr.grh.sgid_index;
  }
  if (mask & IBV_QP_PATH_MTU) attrs->pathMtu = attr.path_mtu;
  if (mask & IBV_QP_DEST_QPN) attrs->destQpNum = attr.dest_qp_num;
  if (mask & IBV_QP_RQ_PSN) attrs->rqPsn = attr.rq_psn;
  if (mask & IBV_QP_SQ_PSN) attrs->sqPsn = attr.sq_psn;
  if (mask & IBV_QP_MAX_DEST_RD_ATOMIC) attrs->maxDestRdAtomic = attr.max_dest_rd_atomic;
  if (mask & IBV_QP_MAX_QP_RD_ATOMIC) attrs->maxRdAtomic = attr.max_rd_atomic;
  if (mask & IBV_QP_MIN_RNR_TIMER) attrs->minRnrTimer = attr.min_rnr_timer;
  if (mask & IBV_QP_TIMEOUT) attrs->timeout = attr.timeout;
  if (mask & IBV_QP_RETRY_CNT) attrs->retryCnt = attr.retry_cnt;
  if (mask & IBV_QP_RNR_RETRY) attrs->rnrRetry = attr.rnr_retry;
  attrs->state = attr.qp_state;
}

uint32_t rnrTimerMicros(uint8_t code) {
  static constexpr uint32_t kMicros[32] = {
      655360, 10,    20,    30,    40,    60,     80,     120,    160,    240,   320,
      480,    640,   960,   1280,  1920,  2560,   3840,   5120,   7680,   10240, 15360,
      20480,  30720, 40960, 61440, 81920, 122880, 163840, 245760, 327680, 491520};
  return kMicros[code & 31];
}

int64_t ackTimeoutNanos(uint8_t timeout, uint8_t retryCnt) {
  if (timeout == 0) return 0;
  return int64_t{4096} * (int64_t{1} << (timeout & 31)) * (int64_t{retryCnt} + 1);
}

}  // namespace braid::transport::ib::emulated
