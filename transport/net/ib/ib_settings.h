// What the environment says about the verbs transport, as NCCL names it (BRAID_ first, then
// NCCL_): read by Config, used by ib_device.cc and ib_connection.cc.
#pragma once

#include <string>

namespace braid::transport::ib {

struct IbSettings {
  bool disable = false;      ///< IB_DISABLE: never use verbs
  std::string hca;           ///< IB_HCA: which devices and ports (hca_filter.h)
  int gidIndex = -1;         ///< IB_GID_INDEX: -1 = choose (ib_device.cc)
  int rocVersion = 2;        ///< IB_ROCE_VERSION_NUM: the RoCE version chosen GIDs have
  std::string addrFamily;    ///< IB_ADDR_FAMILY: AF_INET (default) or AF_INET6, for RoCE GIDs
  int timeout = 20;          ///< IB_TIMEOUT: local ACK timeout, 4.096 us * 2^timeout
  int retryCount = 7;        ///< IB_RETRY_CNT
  int qpsPerConnection = 1;  ///< IB_QPS_PER_CONNECTION: QPs per FIFO, all on the FIFO's NIC
  /// IB_SPLIT_DATA_ON_QPS: each slot split over the QPs (else slots round-robin over them),
  /// NCCL's default 0.
  bool splitDataOnQps = false;
  int serviceLevel = 0;      ///< IB_SL
  int trafficClass = 0;      ///< IB_TC
  int emulate = 0;           ///< IB_EMULATE: devices of the emulated HCA (verbs_emulated.h)
  std::string emulateKinds;  ///< IB_EMULATE_KINDS: what each presents (emulated_device_kinds.h)
  // GPUDirect RDMA (gdr_choice.h).
  std::string gdrLevel;          ///< NET_GDR_LEVEL: farthest GPU-NIC path; empty = PXB
  int gdrRead = -2;              ///< NET_GDR_READ: 1 on, 0 off, -2 NCCL's default (Ampere on)
  bool dmabufEnable = true;      ///< DMABUF_ENABLE: register device memory by dmabuf
  bool gdrFlushDisable = false;  ///< GDR_FLUSH_DISABLE: no flush after a receive into it
  bool forceFlush = false;       ///< NET_FORCE_FLUSH: flush on Hopper and later too
};

}  // namespace braid::transport::ib
