// upstream_abi_facts.cc: the ABI facts of NVIDIA's own nccl.h, for abi_test.cc to compare with.
//
// NVIDIA's header declares the same names as braid's, so it lives alone in this translation unit
// and hands its facts over as plain data (see abi_facts.h). It is found by absolute path, never
// through the include path, so that "nccl.h" elsewhere in the tests is always braid's. The
// header needs the CUDA runtime headers; where either is missing, or the installed NCCL is not
// 2.28.9 whose facts abi_facts.h lists as the ones 2.30.7 shares, braidUpstreamAbiFacts returns
// false and the comparisons skip.
#include "api/abi_facts.h"

#if defined(__has_include)
#if __has_include("/usr/local/cuda/include/nccl.h") && __has_include(<cuda_runtime.h>)
#include "/usr/local/cuda/include/nccl.h"
#endif
#endif

#if defined(NCCL_H_) && NCCL_VERSION_CODE == 22809

BRAID_ABI_DEFINE_FACTS_GETTER(upstreamFacts)

bool braidUpstreamAbiFacts(braid::test::AbiFacts* facts) {
  *facts = upstreamFacts();
  return true;
}

#else

bool braidUpstreamAbiFacts(braid::test::AbiFacts* /*facts*/) { return false; }

#endif
