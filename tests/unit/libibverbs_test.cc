// libibverbs.so.1 as braid loads it (topology/libibverbs.h): one handle per process, shared by
// topology discovery and the verbs transport, made fork safe before any other verbs call.
// Skipped where rdma-core is not installed.
#include <gtest/gtest.h>
#include <infiniband/verbs.h>

#include <dlfcn.h>

#include "topology/libibverbs.h"
#include "transport/net/ib/verbs_library.h"

namespace braid::topology {
namespace {

TEST(Libibverbs, IsOneHandleForTheWholeProcess) {
  Result<const DynamicLibrary*> first = libibverbs();
  if (!first.ok()) GTEST_SKIP() << first.status().message();
  Result<const DynamicLibrary*> second = libibverbs();
  ASSERT_TRUE(second.ok());
  EXPECT_EQ(first.value(), second.value());
  // The transport's table is resolved from it, not from a handle of its own.
  Result<const transport::ib::VerbsApi*> verbs = transport::ib::libraryVerbs();
  ASSERT_TRUE(verbs.ok()) << verbs.status().message();
  EXPECT_STREQ(verbs.value()->name, "libibverbs.so.1");
  ASSERT_NE(verbs.value()->getAsyncEvent, nullptr);
  ASSERT_NE(verbs.value()->ackAsyncEvent, nullptr);
}

TEST(Libibverbs, IsMadeForkSafeWhenOpened) {
  Result<const DynamicLibrary*> library = libibverbs();
  if (!library.ok()) GTEST_SKIP() << library.status().message();
  ibv_fork_status (*isForkInitialized)() = nullptr;
  if (!library.value()->resolve("ibv_is_fork_initialized", &isForkInitialized).ok()) {
    GTEST_SKIP() << "rdma-core before 35 cannot say whether fork support is on";
  }
  // ENABLED, or UNNEEDED where the kernel makes fork safe by itself; never DISABLED.
  EXPECT_NE(isForkInitialized(), IBV_FORK_DISABLED);
}

}  // namespace
}  // namespace braid::topology
