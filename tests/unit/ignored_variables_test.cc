// NCCL's network variables: every one NCCL 2.30.7 reads is either read by braid (a Config knob,
// or NCCL_NET_PLUGIN) or listed as ignored with a reason (src/ignored_variables.h), and one set
// in the environment is named with that reason.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "config_params.h"
#include "ignored_variables.h"

namespace braid {
namespace {

// The NCCL_IB_*, NCCL_NET*, NCCL_SOCKET_* (with NCCL_NSOCKS_PERTHREAD) and NCCL_IBVERBS_LIB
// variables NCCL 2.30.7's sources read (src/, by their NCCL_PARAM and ncclGetEnv names).
const std::vector<std::string> kNccl2307NetVariables = {
    "NCCL_IBVERBS_LIB",
    "NCCL_IB_ADAPTIVE_ROUTING",
    "NCCL_IB_ADDR_FAMILY",
    "NCCL_IB_ADDR_RANGE",
    "NCCL_IB_AR_THRESHOLD",
    "NCCL_IB_DATA_DIRECT",
    "NCCL_IB_DEVICE_PCI_ORDER",
    "NCCL_IB_DISABLE",
    "NCCL_IB_ECE_ENABLE",
    "NCCL_IB_FIFO_TC",
    "NCCL_IB_GID_INDEX",
    "NCCL_IB_HCA",
    "NCCL_IB_MERGE_NICS",
    "NCCL_IB_MERGE_VFS",
    "NCCL_IB_MQP_RETRY_ALL",
    "NCCL_IB_MQP_RETRY_CNT",
    "NCCL_IB_MQP_RETRY_SLEEP_MSEC",
    "NCCL_IB_OOO_RQ",
    "NCCL_IB_PCI_RELAXED_ORDERING",
    "NCCL_IB_PKEY",
    "NCCL_IB_PREPOST_RECEIVE_WORK_REQUESTS",
    "NCCL_IB_QPS_PER_CONNECTION",
    "NCCL_IB_QUERY_PORT_SPEED",
    "NCCL_IB_RECEIVER_SIDE_MATCHING_SCHEME",
    "NCCL_IB_RESILIENCY_PORT_FAILOVER",
    "NCCL_IB_RESILIENCY_PORT_FAILOVER_MAX_ATTEMPTS",
    "NCCL_IB_RESILIENCY_PORT_FAILOVER_PROBE_DELAY",
    "NCCL_IB_RESILIENCY_PORT_RECOVERY",
    "NCCL_IB_RESILIENCY_PORT_RECOVERY_ACK_TIMEOUT",
    "NCCL_IB_RESILIENCY_PORT_RECOVERY_ALIVE_MSG_BATCH_INTERVAL",
    "NCCL_IB_RESILIENCY_PORT_RECOVERY_ALIVE_MSG_BATCH_SIZE",
    "NCCL_IB_RESILIENCY_PORT_RECOVERY_ALIVE_MSG_SEQUENCE_SIZE",
    "NCCL_IB_RESILIENCY_PORT_RECOVERY_ALIVE_MSG_TIMEOUT",
    "NCCL_IB_RESILIENCY_PORT_RECOVERY_ATTEMPTS_MAX",
    "NCCL_IB_RESILIENCY_PORT_RECOVERY_START_DELAY",
    "NCCL_IB_RETRY_CNT",
    "NCCL_IB_RETURN_ASYNC_EVENTS",
    "NCCL_IB_ROCE_VERSION_NUM",
    "NCCL_IB_ROUTABLE_FLID_GID_INDEX",
    "NCCL_IB_SL",
    "NCCL_IB_SPLIT_DATA_ON_QPS",
    "NCCL_IB_SUBNET_AWARE_ROUTING",
    "NCCL_IB_SUBNET_PREFIX_LEN",
    "NCCL_IB_TC",
    "NCCL_IB_TIMEOUT",
    "NCCL_IB_USE_INLINE",
    "NCCL_IB_WARN_RAIL_LOCAL",
    "NCCL_NET",
    "NCCL_NETDEVS_POLICY",
    "NCCL_NET_DISABLE_INTRA",
    "NCCL_NET_FORCE_FLUSH",
    "NCCL_NET_FORCE_MERGE",
    "NCCL_NET_GDR_C2C",
    "NCCL_NET_GDR_LEVEL",
    "NCCL_NET_GDR_MLOPART",
    "NCCL_NET_GDR_READ",
    "NCCL_NET_MERGE_LEVEL",
    "NCCL_NET_MERGE_POLICY",
    "NCCL_NET_OPTIONAL_RECV_COMPLETION",
    "NCCL_NET_OVERHEAD",
    "NCCL_NET_PLUGIN",
    "NCCL_NET_PLUGIN_REF_COUNT",
    "NCCL_NET_SHARED_BUFFERS",
    "NCCL_NET_SHARED_COMMS",
    "NCCL_NSOCKS_PERTHREAD",
    "NCCL_SOCKET_FAMILY",
    "NCCL_SOCKET_IFNAME",
    "NCCL_SOCKET_INLINE",
    "NCCL_SOCKET_MAGIC",
    "NCCL_SOCKET_MIN_TASKSIZE",
    "NCCL_SOCKET_NTHREADS",
    "NCCL_SOCKET_POLL_TIMEOUT_MSEC",
    "NCCL_SOCKET_RCVBUF",
    "NCCL_SOCKET_RETRY_CNT",
    "NCCL_SOCKET_RETRY_SLEEP_MSEC",
    "NCCL_SOCKET_SNDBUF",
};

bool readByBraid(const std::string& name) {
  return findConfigParam(name) != nullptr || name == "NCCL_NET_PLUGIN";
}

std::set<std::string> ignoredNames() {
  std::set<std::string> names;
  for (const IgnoredVariable& v : ignoredNetVariables()) names.insert(v.name);
  return names;
}

TEST(IgnoredVariables, EveryNetworkVariableOfNccl2307IsReadOrIgnoredWithAReason) {
  const std::set<std::string> ignored = ignoredNames();
  for (const std::string& name : kNccl2307NetVariables) {
    const bool read = readByBraid(name);
    EXPECT_NE(read, ignored.count(name) == 1)
        << name << (read ? " is read, and listed as ignored" : " is neither read nor listed");
  }
  for (const IgnoredVariable& v : ignoredNetVariables()) {
    EXPECT_NE(std::find(kNccl2307NetVariables.begin(), kNccl2307NetVariables.end(), v.name),
              kNccl2307NetVariables.end())
        << v.name << " is no variable of NCCL 2.30.7";
    EXPECT_GT(std::string(v.why).size(), 10u) << v.name << " has no reason";
  }
}

TEST(IgnoredVariables, ASetOneIsNamedWithItsValueAndReasonUnderEitherPrefix) {
  ASSERT_EQ(setenv("NCCL_IB_PKEY", "3", 1), 0);
  ASSERT_EQ(setenv("BRAID_NET_GDR_C2C", "1", 1), 0);
  ASSERT_EQ(setenv("NCCL_NET_GDR_LEVEL", "PHB", 1), 0);  // read since GPUDirect RDMA: not named
  ASSERT_EQ(setenv("NCCL_IB_TIMEOUT", "22", 1), 0);      // read: not named
  const std::vector<std::string> lines = ignoredVariablesSet();
  unsetenv("NCCL_IB_PKEY");
  unsetenv("BRAID_NET_GDR_C2C");
  unsetenv("NCCL_NET_GDR_LEVEL");
  unsetenv("NCCL_IB_TIMEOUT");
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0], "NCCL_IB_PKEY=3 is set, and braid ignores it: partition key index 0 is used");
  EXPECT_NE(lines[1].find("BRAID_NET_GDR_C2C=1 is set, and braid ignores it: no C2C"),
            std::string::npos)
      << lines[1];
}

}  // namespace
}  // namespace braid
