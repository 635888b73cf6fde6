#include "config.h"

#include <algorithm>
#include <climits>
#include <sstream>

#include "base/env.h"
#include "emulation/ib/emulated_device_kinds.h"
#include "topology/graph.h"

namespace braid {

namespace {

constexpr int64_t kMaxTimeoutMs = 365LL * 24 * 3600 * 1000;
constexpr int64_t kMaxSpinUs = 60LL * 1000 * 1000;
constexpr int kMaxSocketThreads = 16;      // NCCL's MAX_THREADS
constexpr int kMaxSocketConnections = 64;  // NCCL's MAX_SOCKETS

// An int knob: a value past int's range becomes the nearest end of it, which validate()
// refuses, instead of wrapping round into one it accepts (21474836482 was read as 2).
int getIntKnob(const char* name, int fallback) {
  return static_cast<int>(std::clamp<int64_t>(env::getInt(name, fallback), INT_MIN, INT_MAX));
}

// BRAID_IB_EMULATE_KINDS: known kinds, one per emulated device.
Status validateEmulatedKinds(const transport::ib::IbSettings& ib) {
  if (ib.emulateKinds.empty()) return Status::success();
  BRAID_ASSIGN_OR_RETURN(std::vector<transport::ib::emulated::DeviceKind> kinds,
                         transport::ib::emulated::parseDeviceKinds(ib.emulateKinds));
  if (static_cast<int>(kinds.size()) != ib.emulate) {
    return invalidArgument("BRAID_IB_EMULATE_KINDS=" + ib.emulateKinds + " names " +
                           std::to_string(kinds.size()) + " devices, but BRAID_IB_EMULATE=" +
                           std::to_string(ib.emulate) + " (leave it unset, or make them agree)");
  }
  return Status::success();
}

}  // namespace

Config Config::fromEnvironment() {
  Config c;
  c.timeoutMs = env::getInt("TIMEOUT_MS", c.timeoutMs);
  c.nchannels = getIntKnob("NCHANNELS", c.nchannels);
  c.nchannelsSet = env::get("NCHANNELS").has_value();
  c.minChannels = getIntKnob("MIN_NCHANNELS", c.minChannels);
  c.maxChannels = getIntKnob("MAX_NCHANNELS", c.maxChannels);
  c.crossNic = getIntKnob("CROSS_NIC", c.crossNic);
  c.pxnDisable = getIntKnob("PXN_DISABLE", 0) != 0;
  c.p2pPxnLevel = getIntKnob("P2P_PXN_LEVEL", c.p2pPxnLevel);
  c.buffSize = env::getInt("BUFFSIZE", c.buffSize);
  c.buffSizeSet = env::get("BUFFSIZE").has_value();
  c.algo = env::get("ALGO").value_or("");
  c.proto = env::get("PROTO").value_or("");
  c.transports = env::get("TRANSPORTS").value_or("");
  c.dumpSchedule = env::getInt("DUMP_SCHEDULE", 0) != 0;
  c.deterministic = env::getInt("DETERMINISTIC", 0) != 0;
  c.tracePath = env::get("TRACE").value_or("");
  c.topoFile = env::get("TOPO_FILE").value_or("");
  c.topoDumpFile = env::get("TOPO_DUMP_FILE").value_or("");
  c.p2pLevel = env::get("P2P_LEVEL").value_or("");
  c.spinUs = env::getInt("SPIN_US", c.spinUs);
  c.hostComm = env::getInt("HOST_COMM", 0) != 0;
  c.hostIdOverride = env::get("HOSTID").value_or("");
  c.net = env::get("NET").value_or("");
  c.netPlugin = env::get("NET_PLUGIN");
  c.tunerPlugin = env::get("TUNER_PLUGIN");
  c.profilerPlugin = env::get("PROFILER_PLUGIN");
  c.checkCalls = env::getInt("CHECK_CALLS", 0) != 0;
  c.heartbeatTimeoutMs = env::getInt("HEARTBEAT_TIMEOUT_MS", c.heartbeatTimeoutMs);
  c.flightRecorderDir = env::get("FLIGHT_RECORDER").value_or("");
  c.flightRecorderEntries = env::getInt("FLIGHT_RECORDER_ENTRIES", c.flightRecorderEntries);
  c.zeroCopy = getIntKnob("ZERO_COPY", c.zeroCopy);
  c.zeroCopyMinBytes = env::getInt("ZERO_COPY_MIN_BYTES", c.zeroCopyMinBytes);
  c.streamSlots = getIntKnob("STREAM_SLOTS", c.streamSlots);
  c.symmetric = getIntKnob("SYMMETRIC", c.symmetric);
  c.symmetricAlgo = env::get("SYMMETRIC_ALGO").value_or("");
  c.socketIfname = env::get("SOCKET_IFNAME").value_or("");
  c.socketThreads = getIntKnob("SOCKET_NTHREADS", c.socketThreads);
  c.socketsPerThread = getIntKnob("NSOCKS_PERTHREAD", c.socketsPerThread);
  transport::ib::IbSettings& ib = c.ib;
  ib.disable = env::getInt("IB_DISABLE", 0) != 0;
  ib.hca = env::get("IB_HCA").value_or("");
  ib.gidIndex = getIntKnob("IB_GID_INDEX", ib.gidIndex);
  ib.rocVersion = getIntKnob("IB_ROCE_VERSION_NUM", ib.rocVersion);
  ib.addrFamily = env::get("IB_ADDR_FAMILY").value_or("AF_INET");
  ib.timeout = getIntKnob("IB_TIMEOUT", ib.timeout);
  ib.retryCount = getIntKnob("IB_RETRY_CNT", ib.retryCount);
  ib.qpsPerConnection = getIntKnob("IB_QPS_PER_CONNECTION", ib.qpsPerConnection);
  ib.splitDataOnQps = getIntKnob("IB_SPLIT_DATA_ON_QPS", 0) != 0;
  ib.serviceLevel = getIntKnob("IB_SL", ib.serviceLevel);
  ib.trafficClass = getIntKnob("IB_TC", ib.trafficClass);
  ib.emulateKinds = env::get("IB_EMULATE_KINDS").value_or("");
  // The kinds alone say how many devices there are.
  const int kinds =
      ib.emulateKinds.empty()
          ? 0
          : 1 + static_cast<int>(std::count(ib.emulateKinds.begin(), ib.emulateKinds.end(), ','));
  ib.emulate = getIntKnob("IB_EMULATE", kinds);
  ib.gdrLevel = env::get("NET_GDR_LEVEL").value_or("");
  ib.gdrRead = getIntKnob("NET_GDR_READ", ib.gdrRead);
  ib.dmabufEnable = env::getInt("DMABUF_ENABLE", 1) != 0;
  ib.gdrFlushDisable = env::getInt("GDR_FLUSH_DISABLE", 0) != 0;
  ib.forceFlush = env::getInt("NET_FORCE_FLUSH", 0) != 0;
  for (auto* s : {&c.algo, &c.proto}) {
    for (auto& ch : *s) ch = static_cast<char>(tolower(static_cast<unsigned char>(ch)));
  }
  return c;
}

Status Config::validate() const {
  if (timeoutMs < 0) return invalidArgument("BRAID_TIMEOUT_MS must be >= 0");
  // Deadlines become nanoseconds (Deadline, the GPU kernels' timeoutNs), and so does the spin:
  // a year, and a minute of spinning, are far past any use and far from overflowing int64.
  if (timeoutMs > kMaxTimeoutMs || heartbeatTimeoutMs > kMaxTimeoutMs) {
    return invalidArgument("BRAID_TIMEOUT_MS and BRAID_HEARTBEAT_TIMEOUT_MS must be at most " +
                           std::to_string(kMaxTimeoutMs) + " (a year), got " +
                           std::to_string(timeoutMs) + " and " +
                           std::to_string(heartbeatTimeoutMs));
  }
  if (spinUs > kMaxSpinUs) {
    return invalidArgument("BRAID_SPIN_US must be at most " + std::to_string(kMaxSpinUs) +
                           " (a minute), got " + std::to_string(spinUs));
  }
  if (flightRecorderEntries < 1 || flightRecorderEntries > 4096) {
    return invalidArgument("BRAID_FLIGHT_RECORDER_ENTRIES must be between 1 and 4096, got " +
                           std::to_string(flightRecorderEntries));
  }
  if (heartbeatTimeoutMs < 0 || (heartbeatTimeoutMs > 0 && heartbeatTimeoutMs < 100)) {
    return invalidArgument("BRAID_HEARTBEAT_TIMEOUT_MS must be 0 (off) or at least 100, got " +
                           std::to_string(heartbeatTimeoutMs));
  }
  if (zeroCopy < 0 || zeroCopy > 2) {
    return invalidArgument("BRAID_ZERO_COPY must be 0, 1 or 2, got " + std::to_string(zeroCopy));
  }
  if (symmetric < 0 || symmetric > 2) {
    return invalidArgument("BRAID_SYMMETRIC must be 0, 1 or 2, got " + std::to_string(symmetric));
  }
  if (!symmetricAlgo.empty() && symmetricAlgo != "oneshot" && symmetricAlgo != "twoshot") {
    return invalidArgument("BRAID_SYMMETRIC_ALGO must be oneshot or twoshot, got \"" +
                           symmetricAlgo + "\"");
  }
  if (streamSlots < -1 || streamSlots > 1) {
    return invalidArgument("BRAID_STREAM_SLOTS must be -1 (auto), 0 or 1, got " +
                           std::to_string(streamSlots));
  }
  if (zeroCopyMinBytes < 0) {
    return invalidArgument("BRAID_ZERO_COPY_MIN_BYTES must be >= 0, got " +
                           std::to_string(zeroCopyMinBytes));
  }
  if (nchannels < 1 || nchannels > 64) {
    return invalidArgument("BRAID_NCHANNELS must be between 1 and 64, got " +
                           std::to_string(nchannels));
  }
  if (minChannels < 0 || minChannels > 64 || maxChannels < 0 || maxChannels > 64) {
    return invalidArgument(
        "BRAID_MIN_NCHANNELS and BRAID_MAX_NCHANNELS must be between 0 (unset) "
        "and 64, got " +
        std::to_string(minChannels) + " and " + std::to_string(maxChannels));
  }
  if (p2pPxnLevel < 0 || p2pPxnLevel > 2) {
    return invalidArgument("BRAID_P2P_PXN_LEVEL must be 0, 1 or 2, got " +
                           std::to_string(p2pPxnLevel));
  }
  if (crossNic < 0 || crossNic > 2) {
    return invalidArgument("BRAID_CROSS_NIC must be 0, 1 or 2, got " + std::to_string(crossNic));
  }
  if (buffSize < (64 << 10) || buffSize > (1LL << 30)) {
    return invalidArgument("BRAID_BUFFSIZE must be between 64K and 1G, got " +
                           std::to_string(buffSize));
  }
  // NCCL's limits (net_socket.cc: 16 threads, 64 sockets): NCCL lowers a value past them with
  // a warning, braid refuses it, as every knob here, so that the value given is the value used.
  if (socketThreads < 1 || socketThreads > kMaxSocketThreads || socketsPerThread < 1 ||
      static_cast<int64_t>(socketThreads) * socketsPerThread > kMaxSocketConnections) {
    return invalidArgument("BRAID_SOCKET_NTHREADS (" + std::to_string(socketThreads) +
                           ") and BRAID_NSOCKS_PERTHREAD (" + std::to_string(socketsPerThread) +
                           ") must be at least 1, with at most " +
                           std::to_string(kMaxSocketThreads) + " threads and " +
                           std::to_string(kMaxSocketConnections) + " connections per FIFO end");
  }
  if (ib.timeout < 1 || ib.timeout > 31) {
    return invalidArgument("BRAID_IB_TIMEOUT must be between 1 and 31, got " +
                           std::to_string(ib.timeout));
  }
  if (ib.retryCount < 0 || ib.retryCount > 7) {
    return invalidArgument("BRAID_IB_RETRY_CNT must be between 0 and 7, got " +
                           std::to_string(ib.retryCount));
  }
  if (ib.qpsPerConnection < 1 || ib.qpsPerConnection > 8) {
    return invalidArgument("BRAID_IB_QPS_PER_CONNECTION must be between 1 and 8, got " +
                           std::to_string(ib.qpsPerConnection));
  }
  if (ib.gidIndex < -1 || ib.gidIndex > 255) {
    return invalidArgument("BRAID_IB_GID_INDEX must be -1 (choose) or 0..255, got " +
                           std::to_string(ib.gidIndex));
  }
  if (ib.rocVersion != 1 && ib.rocVersion != 2) {
    return invalidArgument("BRAID_IB_ROCE_VERSION_NUM must be 1 or 2, got " +
                           std::to_string(ib.rocVersion));
  }
  if (ib.addrFamily != "AF_INET" && ib.addrFamily != "AF_INET6") {
    return invalidArgument("BRAID_IB_ADDR_FAMILY must be AF_INET or AF_INET6, got '" +
                           ib.addrFamily + "'");
  }
  if (ib.emulate < 0 || ib.emulate > 8) {
    return invalidArgument("BRAID_IB_EMULATE must be between 0 and 8 devices, got " +
                           std::to_string(ib.emulate));
  }
  BRAID_TRY(validateEmulatedKinds(ib));
  if (!ib.gdrLevel.empty()) {
    Result<topology::PathType> level = topology::parsePathType(ib.gdrLevel);
    if (!level.ok()) return invalidArgument("NCCL_NET_GDR_LEVEL: " + level.status().message());
  }
  // ib_queue_pairs.cc writes these into the address vector's 4-bit and 8-bit fields.
  if (ib.serviceLevel < 0 || ib.serviceLevel > 15) {
    return invalidArgument("BRAID_IB_SL must be between 0 and 15, got " +
                           std::to_string(ib.serviceLevel));
  }
  if (ib.trafficClass < 0 || ib.trafficClass > 255) {
    return invalidArgument("BRAID_IB_TC must be between 0 and 255, got " +
                           std::to_string(ib.trafficClass));
  }
  // BRAID_ALGO and BRAID_PROTO are parsed by tune::parseAllowed, BRAID_P2P_LEVEL
  // and BRAID_TRANSPORTS by the topology (comm/members_topology.cc).
  return Status::success();
}

bool Config::transportAllowed(const std::string& name) const {
  if (transports.empty()) return true;
  std::stringstream list(transports);
  std::string item;
  while (std::getline(list, item, ',')) {
    if (item == name) return true;
  }
  return false;
}

std::string Config::describe() const {
  std::ostringstream o;
  o << "config: timeout_ms=" << timeoutMs << " nchannels=" << nchannels
    << " min_nchannels=" << minChannels << " max_nchannels=" << maxChannels
    << " cross_nic=" << crossNic << " pxn_disable=" << pxnDisable
    << " p2p_pxn_level=" << p2pPxnLevel << " buffsize=" << buffSize
    << " algo=" << (algo.empty() ? "auto" : algo) << " proto=" << (proto.empty() ? "auto" : proto)
    << " transports=" << (transports.empty() ? "all" : transports)
    << " dump_schedule=" << dumpSchedule << " deterministic=" << deterministic
    << " trace=" << (tracePath.empty() ? "off" : tracePath)
    << " topo_file=" << (topoFile.empty() ? "discover" : topoFile)
    << " p2p_level=" << (p2pLevel.empty() ? "default" : p2pLevel)
    << " spin_us=" << (spinUs < 0 ? "auto" : std::to_string(spinUs)) << " host_comm=" << hostComm
    << " hostid=" << (hostIdOverride.empty() ? "auto" : hostIdOverride)
    << " net=" << (net.empty() ? "auto" : net)
    << " net_plugin=" << (netPlugin ? *netPlugin : "libnccl-net.so")
    << " tuner_plugin=" << (tunerPlugin ? *tunerPlugin : "libnccl-tuner.so")
    << " profiler_plugin=" << (profilerPlugin ? *profilerPlugin : "libnccl-profiler.so")
    << " ib_hca=" << (ib.hca.empty() ? "all" : ib.hca) << " ib_gid_index=" << ib.gidIndex
    << " ib_timeout=" << ib.timeout << " ib_retry_cnt=" << ib.retryCount
    << " ib_qps_per_connection=" << ib.qpsPerConnection
    << " ib_split_data_on_qps=" << ib.splitDataOnQps << " ib_emulate=" << ib.emulate
    << " ib_emulate_kinds=" << (ib.emulateKinds.empty() ? "roce" : ib.emulateKinds)
    << " socket_nthreads=" << socketThreads << " nsocks_perthread=" << socketsPerThread
    << " zero_copy=" << zeroCopy << " zero_copy_min_bytes=" << zeroCopyMinBytes
    << " stream_slots=" << (streamSlots < 0 ? "auto" : std::to_string(streamSlots))
    << " check_calls=" << checkCalls << " heartbeat_timeout_ms=" << heartbeatTimeoutMs
    << " flight_recorder=" << (flightRecorderDir.empty() ? "log" : flightRecorderDir)
    << " flight_recorder_entries=" << flightRecorderEntries;
  return o.str();
}

}  // namespace braid
