// configParams (config_params.h): the table of Config's knobs.
#include "config_params.h"

#include <cstring>

namespace braid {
namespace {

// One row per knob: its name, its type and how to read it from a Config.
#define INT32(name, field)                                                               \
  ConfigParam {                                                                          \
    name, ParamType::kInt32, [](const Config& c) -> int64_t { return c.field; }, nullptr \
  }
#define INT64(name, field)                                                               \
  ConfigParam {                                                                          \
    name, ParamType::kInt64, [](const Config& c) -> int64_t { return c.field; }, nullptr \
  }
#define TEXT(name, field)                                                      \
  ConfigParam {                                                                \
    name, ParamType::kString, nullptr, [](const Config& c) { return c.field; } \
  }

const std::vector<ConfigParam> kParams = {
    INT64("BRAID_TIMEOUT_MS", timeoutMs),
    INT32("NCCL_NCHANNELS", nchannels),
    INT32("NCCL_MIN_NCHANNELS", minChannels),
    INT32("NCCL_MAX_NCHANNELS", maxChannels),
    INT32("NCCL_CROSS_NIC", crossNic),
    INT32("NCCL_PXN_DISABLE", pxnDisable),
    INT32("NCCL_P2P_PXN_LEVEL", p2pPxnLevel),
    INT64("NCCL_BUFFSIZE", buffSize),
    TEXT("NCCL_ALGO", algo),
    TEXT("NCCL_PROTO", proto),
    TEXT("BRAID_TRANSPORTS", transports),
    INT32("BRAID_DUMP_SCHEDULE", dumpSchedule),
    INT32("BRAID_DETERMINISTIC", deterministic),
    TEXT("BRAID_TRACE", tracePath),
    TEXT("NCCL_TOPO_FILE", topoFile),
    TEXT("NCCL_TOPO_DUMP_FILE", topoDumpFile),
    TEXT("NCCL_P2P_LEVEL", p2pLevel),
    INT64("BRAID_SPIN_US", spinUs),
    INT32("BRAID_HOST_COMM", hostComm),
    TEXT("NCCL_HOSTID", hostIdOverride),
    TEXT("NCCL_NET", net),
    INT32("BRAID_CHECK_CALLS", checkCalls),
    INT64("BRAID_HEARTBEAT_TIMEOUT_MS", heartbeatTimeoutMs),
    TEXT("BRAID_FLIGHT_RECORDER", flightRecorderDir),
    INT64("BRAID_FLIGHT_RECORDER_ENTRIES", flightRecorderEntries),
    TEXT("NCCL_SOCKET_IFNAME", socketIfname),
    INT32("NCCL_SOCKET_NTHREADS", socketThreads),
    INT32("NCCL_NSOCKS_PERTHREAD", socketsPerThread),
    INT32("NCCL_IB_DISABLE", ib.disable),
    TEXT("NCCL_IB_HCA", ib.hca),
    INT32("NCCL_IB_GID_INDEX", ib.gidIndex),
    INT32("NCCL_IB_ROCE_VERSION_NUM", ib.rocVersion),
    TEXT("NCCL_IB_ADDR_FAMILY", ib.addrFamily),
    INT32("NCCL_IB_TIMEOUT", ib.timeout),
    INT32("NCCL_IB_RETRY_CNT", ib.retryCount),
    INT32("NCCL_IB_QPS_PER_CONNECTION", ib.qpsPerConnection),
    INT32("NCCL_IB_SPLIT_DATA_ON_QPS", ib.splitDataOnQps),
    INT32("NCCL_IB_SL", ib.serviceLevel),
    INT32("NCCL_IB_TC", ib.trafficClass),
    INT32("BRAID_IB_EMULATE", ib.emulate),
    TEXT("BRAID_IB_EMULATE_KINDS", ib.emulateKinds),
    TEXT("NCCL_NET_GDR_LEVEL", ib.gdrLevel),
    INT32("NCCL_NET_GDR_READ", ib.gdrRead),
    INT32("NCCL_DMABUF_ENABLE", ib.dmabufEnable),
    INT32("NCCL_GDR_FLUSH_DISABLE", ib.gdrFlushDisable),
    INT32("NCCL_NET_FORCE_FLUSH", ib.forceFlush),
};

#undef INT32
#undef INT64
#undef TEXT

// The name without its NCCL_ or BRAID_ prefix.
const char* bare(const char* name) {
  for (const char* prefix : {"NCCL_", "BRAID_"}) {
    if (strncmp(name, prefix, strlen(prefix)) == 0) return name + strlen(prefix);
  }
  return name;
}

}  // namespace

const std::vector<ConfigParam>& configParams() { return kParams; }

const ConfigParam* findConfigParam(const std::string& key) {
  const char* wanted = bare(key.c_str());
  for (const ConfigParam& p : kParams) {
    if (strcmp(bare(p.name), wanted) == 0) return &p;
  }
  return nullptr;
}

std::string configParamText(const ConfigParam& p, const Config& c) {
  return p.type == ParamType::kString ? p.text(c) : std::to_string(p.number(c));
}

}  // namespace braid
