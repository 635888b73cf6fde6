// What an emulated HCA reports in ibv_device_attr and ibv_port_attr, and enforces.
#pragma once

#include <cstdint>

#include "emulation/ib/emulated_hca_wire.h"

namespace braid::transport::ib::emulated {

constexpr int kMaxDevices = 8;  ///< BRAID_IB_EMULATE=1..8
constexpr int kMaxQp = 256;     ///< per device: a QP number has 8 bits of slot (emulated_hca.h)
constexpr int kMaxQpWr = 1024;
constexpr int kMaxSge = 4;
constexpr int kMaxPd = 1024;
constexpr int kMaxCq = 1024;
constexpr int kMaxCqe = 65536;
constexpr int kMaxMr = 65536;
constexpr uint64_t kMaxMrSize = 1ull << 40;
constexpr int kMaxQpRdAtom = 16;
constexpr uint32_t kMaxInlineData = 256;
constexpr uint64_t kMaxMsgSize = wire::kMaxWriteBytes;

}  // namespace braid::transport::ib::emulated
