// The NCCL network variables braid ignores (ignored_variables.h), and the INFO lines for them.
#include "ignored_variables.h"

#include <cstdlib>
#include <mutex>

#include "base/log.h"

namespace braid {
namespace {

constexpr const char* kNoMerge =
    "ports are not merged into virtual NICs: each port is a NIC of its own";
constexpr const char* kNoResilience =
    "no port failover: a failed port fails its FIFOs at once and the communicator says which "
    "(docs/reliability.md)";
constexpr const char* kConnectRetries =
    "connections are retried until BRAID_TIMEOUT_MS, with growing pauses";

const std::vector<IgnoredVariable> kIgnored = {
    {"NCCL_IBVERBS_LIB", "libibverbs.so.1 is opened by that name"},
    {"NCCL_IB_ADAPTIVE_ROUTING",
     "each slot is one RDMA write with immediate, so no data write and flag write need ordering"},
    {"NCCL_IB_AR_THRESHOLD", "as NCCL_IB_ADAPTIVE_ROUTING"},
    {"NCCL_IB_ADDR_RANGE", "GIDs are chosen by NCCL_IB_GID_INDEX or address family only"},
    {"NCCL_IB_DATA_DIRECT",
     "no DataDirect: GPUDirect RDMA registers device memory by dmabuf or nvidia-peermem only"},
    {"NCCL_IB_DEVICE_PCI_ORDER", "NICs are ordered by the topology search"},
    {"NCCL_IB_ECE_ENABLE", "Enhanced Connection Establishment is not negotiated"},
    {"NCCL_IB_FIFO_TC", "no separate control queue pair: credits use the data's (NCCL_IB_TC)"},
    {"NCCL_IB_MERGE_NICS", kNoMerge},
    {"NCCL_IB_MERGE_VFS", kNoMerge},
    {"NCCL_IB_MQP_RETRY_ALL", "creating a queue pair is not retried"},
    {"NCCL_IB_MQP_RETRY_CNT", "creating a queue pair is not retried"},
    {"NCCL_IB_MQP_RETRY_SLEEP_MSEC", "creating a queue pair is not retried"},
    {"NCCL_IB_OOO_RQ", "receive queues are in order"},
    {"NCCL_IB_PCI_RELAXED_ORDERING", "memory is registered without relaxed ordering"},
    {"NCCL_IB_PKEY", "partition key index 0 is used"},
    {"NCCL_IB_PREPOST_RECEIVE_WORK_REQUESTS", "a receive is posted for each slot the FIFO frees"},
    {"NCCL_IB_QUERY_PORT_SPEED", "the port's speed is always queried"},
    {"NCCL_IB_RECEIVER_SIDE_MATCHING_SCHEME", "no tag matching: a FIFO's slots arrive in order"},
    {"NCCL_IB_RESILIENCY_PORT_FAILOVER", kNoResilience},
    {"NCCL_IB_RESILIENCY_PORT_FAILOVER_MAX_ATTEMPTS", kNoResilience},
    {"NCCL_IB_RESILIENCY_PORT_FAILOVER_PROBE_DELAY", kNoResilience},
    {"NCCL_IB_RESILIENCY_PORT_RECOVERY", kNoResilience},
    {"NCCL_IB_RESILIENCY_PORT_RECOVERY_ACK_TIMEOUT", kNoResilience},
    {"NCCL_IB_RESILIENCY_PORT_RECOVERY_ALIVE_MSG_BATCH_INTERVAL", kNoResilience},
    {"NCCL_IB_RESILIENCY_PORT_RECOVERY_ALIVE_MSG_BATCH_SIZE", kNoResilience},
    {"NCCL_IB_RESILIENCY_PORT_RECOVERY_ALIVE_MSG_SEQUENCE_SIZE", kNoResilience},
    {"NCCL_IB_RESILIENCY_PORT_RECOVERY_ALIVE_MSG_TIMEOUT", kNoResilience},
    {"NCCL_IB_RESILIENCY_PORT_RECOVERY_ATTEMPTS_MAX", kNoResilience},
    {"NCCL_IB_RESILIENCY_PORT_RECOVERY_START_DELAY", kNoResilience},
    {"NCCL_IB_RETURN_ASYNC_EVENTS", "asynchronous events are always read and fail what they end"},
    {"NCCL_IB_ROUTABLE_FLID_GID_INDEX", "no routing between InfiniBand subnets"},
    {"NCCL_IB_SUBNET_AWARE_ROUTING", "no routing between InfiniBand subnets"},
    {"NCCL_IB_SUBNET_PREFIX_LEN", "no routing between InfiniBand subnets"},
    {"NCCL_IB_USE_INLINE", "no inline sends"},
    {"NCCL_IB_WARN_RAIL_LOCAL", "no such warning: rails are planned by the topology search"},
    {"NCCL_NETDEVS_POLICY", kNoMerge},
    {"NCCL_NET_DISABLE_INTRA", "ranks of one host never use the network between them"},
    {"NCCL_NET_FORCE_MERGE", kNoMerge},
    {"NCCL_NET_GDR_C2C",
     "no C2C (Grace) paths between GPU and NIC: NCCL_NET_GDR_LEVEL alone decides GPUDirect RDMA"},
    {"NCCL_NET_GDR_MLOPART",
     "MLO partitions of a GPU are not told apart: NCCL_NET_GDR_LEVEL alone decides GPUDirect "
     "RDMA"},
    {"NCCL_NET_MERGE_LEVEL", kNoMerge},
    {"NCCL_NET_MERGE_POLICY", kNoMerge},
    {"NCCL_NET_OPTIONAL_RECV_COMPLETION", "every receive is completed and tested"},
    {"NCCL_NET_OVERHEAD", "the cost model takes the network's figures from the topology's plan"},
    {"NCCL_NET_PLUGIN_REF_COUNT",
     "a plugin is loaded once per process and closed with its last communicator"},
    {"NCCL_NET_SHARED_BUFFERS", "each FIFO has buffers of its own"},
    {"NCCL_NET_SHARED_COMMS", "each FIFO has a connection of its own"},
    {"NCCL_SOCKET_FAMILY", "interfaces are taken IPv4 first, then IPv6 (NCCL_SOCKET_IFNAME)"},
    {"NCCL_SOCKET_INLINE", "a slot's size word and bytes go in one send"},
    {"NCCL_SOCKET_MAGIC", "braid's greetings carry their own magic and a keyed proof"},
    {"NCCL_SOCKET_MIN_TASKSIZE", "a striped FIFO sends each slot whole on one connection"},
    {"NCCL_SOCKET_POLL_TIMEOUT_MSEC", "proxies block in poll until data or the deadline"},
    {"NCCL_SOCKET_RCVBUF", "the kernel sizes socket buffers"},
    {"NCCL_SOCKET_RETRY_CNT", kConnectRetries},
    {"NCCL_SOCKET_RETRY_SLEEP_MSEC", kConnectRetries},
    {"NCCL_SOCKET_SNDBUF", "the kernel sizes socket buffers"},
};

}  // namespace

const std::vector<IgnoredVariable>& ignoredNetVariables() { return kIgnored; }

std::vector<std::string> ignoredVariablesSet() {
  std::vector<std::string> lines;
  for (const IgnoredVariable& v : kIgnored) {
    // The BRAID_ twin too, as braid reads every knob under either prefix.
    const std::string braidName = std::string("BRAID_") + (v.name + 5);
    for (const std::string& name : {std::string(v.name), braidName}) {
      const char* value = std::getenv(name.c_str());
      if (value == nullptr) continue;
      lines.push_back(name + "=" + value + " is set, and braid ignores it: " + v.why);
    }
  }
  return lines;
}

void noteIgnoredVariables() {
  static std::once_flag once;
  std::call_once(once, [] {
    for (const std::string& line : ignoredVariablesSet()) BRAID_INFO("%s", line.c_str());
  });
}

}  // namespace braid
