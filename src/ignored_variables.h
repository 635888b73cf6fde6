// NCCL's network variables that braid does not honour, each with the reason, so that a job
// script written for NCCL learns at INFO what it asked for in vain, and docs/dropin.md can list
// them: every NCCL_IB_*, NCCL_NET_* and NCCL_SOCKET_* variable NCCL 2.30.7 reads is either a
// knob of Config (config_params.h, or NCCL_NET_PLUGIN) or a row here, which
// tests/unit/ignored_variables_test.cc checks against the names NCCL 2.30.7 reads.
#pragma once

#include <string>
#include <vector>

namespace braid {

struct IgnoredVariable {
  const char* name;  ///< "NCCL_IB_ADAPTIVE_ROUTING"
  const char* why;   ///< what braid does instead, in a few words
};

/// Every NCCL network variable braid reads no value from.
const std::vector<IgnoredVariable>& ignoredNetVariables();

/// What to say of those of them set in the environment (NCCL_X or BRAID_X): a line each.
std::vector<std::string> ignoredVariablesSet();

/// ignoredVariablesSet's lines at INFO, once per process (at a communicator's creation).
void noteIgnoredVariables();

}  // namespace braid
