// The few libibverbs types braid's topology discovery passes through
// dlopen'ed calls, declared here so that braid builds and loads on machines
// without rdma-core. They follow rdma-core's <infiniband/verbs.h> field for
// field; tests/unit/discover_test.cc checks the layout against that header
// wherever it is installed.
#pragma once

#include <cstdint>

namespace braid::topology::verbs_abi {

struct Device;   // struct ibv_device: opaque, only passed back to the library
struct Context;  // struct ibv_context: opaque

/// struct ibv_device_attr; discovery reads only physPortCount.
struct DeviceAttr {
  char firmwareVersion[64];
  uint64_t nodeGuid;
  uint64_t sysImageGuid;
  uint64_t maxMrSize;
  uint64_t pageSizeCap;
  uint32_t vendorId;
  uint32_t vendorPartId;
  uint32_t hardwareVersion;
  int limits[9];        // max_qp .. max_pd (device_cap_flags among them)
  int rdAtomLimits[5];  // max_qp_rd_atom .. max_ee_init_rd_atom
  int atomicCap;        // enum ibv_atomic_cap
  int moreLimits[14];   // max_ee .. max_srq_sge
  uint16_t maxPkeys;
  uint8_t localCaAckDelay;
  uint8_t physPortCount;
};

/// struct ibv_port_attr; discovery reads state, the active width and speed,
/// and the link layer. activeSpeedEx exists only in rdma-core 47 and later;
/// older libraries leave it as the caller zeroed it.
struct PortAttr {
  int state;  // enum ibv_port_state
  int maxMtu;
  int activeMtu;
  int gidTableLength;
  uint32_t portCapFlags;
  uint32_t maxMessageSize;
  uint32_t badPkeyCounter;
  uint32_t qkeyViolationCounter;
  uint16_t pkeyTableLength;
  uint16_t lid;
  uint16_t smLid;
  uint8_t lmc;
  uint8_t maxVlNum;
  uint8_t smSl;
  uint8_t subnetTimeout;
  uint8_t initTypeReply;
  uint8_t activeWidth;
  uint8_t activeSpeed;
  uint8_t physicalState;
  uint8_t linkLayer;
  uint8_t flags;
  uint16_t portCapFlags2;
  uint32_t activeSpeedEx;
};

constexpr int kPortActive = 4;  // IBV_PORT_ACTIVE
constexpr uint8_t kLinkLayerUnspecified = 0;
constexpr uint8_t kLinkLayerInfiniband = 1;
constexpr uint8_t kLinkLayerEthernet = 2;

using GetDeviceListFn = Device** (*)(int* count);
using FreeDeviceListFn = void (*)(Device** list);
using GetDeviceNameFn = const char* (*)(Device* device);
using OpenDeviceFn = Context* (*)(Device* device);
using CloseDeviceFn = int (*)(Context* context);
using QueryDeviceFn = int (*)(Context* context, DeviceAttr* attr);
using QueryPortFn = int (*)(Context* context, uint8_t port, PortAttr* attr);

}  // namespace braid::topology::verbs_abi
