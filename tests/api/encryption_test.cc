// ncclSetEncryption (NCCL 2.32) through the C API: the configs it refuses, every collective
// across ranks that are processes on hosts of their own (BRAID_HOSTID) with the socket transport
// sealed (BRAID_NET=Socket), and a
// rank with another key refused at connection, on its end and on the root's. The key is set in
// the parent before ncclGetUniqueId, as NCCL asks, and the children inherit it; each test clears
// it as it ends. The bytes on the wire: encryption_wire_test.cc.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "api/matrix_cases.h"
#include "api/process_cases.h"
#include "nccl.h"
#include "support/multiprocess.h"
#include "support/scoped_env.h"

namespace encryption_test {
namespace {

using braid::testing::ScopedEnv;
using braid::testing::matrix::Case;
using braid::testing::matrix::Coll;
using braid::testing::matrix::hasOutOfPlace;
using braid::testing::matrix::Op;

const char kKey[] = "braid-encryption-test-key-0123456789abcdef";
const char kOtherKey[] = "braid-encryption-test-key-that-differs-0000";

ncclEncryptionConfig_t pskConfig(const char* key) {
  ncclEncryptionConfig_t c = NCCL_ENCRYPTION_CONFIG_INITIALIZER;
  c.mode = NCCL_ENCRYPTION_MODE_PSK;
  c.psk = key;
  return c;
}

/// Sets `key` for the test's scope, and back to no encryption after it.
class Encrypted {
 public:
  explicit Encrypted(const char* key) {
    const ncclEncryptionConfig_t c = pskConfig(key);
    ok_ = ncclSetEncryption(&c) == ncclSuccess;
  }
  ~Encrypted() { (void)ncclSetEncryption(nullptr); }
  bool ok() const { return ok_; }

 private:
  bool ok_ = false;
};

TEST(SetEncryption, InitializerDescribesNoEncryption) {
  const ncclEncryptionConfig_t c = NCCL_ENCRYPTION_CONFIG_INITIALIZER;
  EXPECT_EQ(sizeof(ncclEncryptionConfig_t), 32u);
  EXPECT_EQ(c.size, sizeof(ncclEncryptionConfig_t));
  EXPECT_EQ(c.magic, NCCL_API_MAGIC);
  EXPECT_EQ(c.mode, NCCL_ENCRYPTION_MODE_NONE);
  EXPECT_EQ(c.psk, nullptr);
  EXPECT_EQ(ncclSetEncryption(&c), ncclSuccess);
  EXPECT_EQ(ncclSetEncryption(nullptr), ncclSuccess);
}

TEST(SetEncryption, PskAcceptedThenCleared) {
  const ncclEncryptionConfig_t c = pskConfig(kKey);
  EXPECT_EQ(ncclSetEncryption(&c), ncclSuccess) << ncclGetLastError(nullptr);
  EXPECT_EQ(pncclSetEncryption(nullptr), ncclSuccess);
}

/// `c` is refused with ncclInvalidArgument and a message holding `words`.
void expectRefused(const ncclEncryptionConfig_t& c, const char* words) {
  EXPECT_EQ(ncclSetEncryption(&c), ncclInvalidArgument);
  const std::string error = ncclGetLastError(nullptr);
  EXPECT_NE(error.find(words), std::string::npos) << error;
}

TEST(SetEncryption, BadConfigsRefused) {
  ncclEncryptionConfig_t c = pskConfig(kKey);
  c.magic = 0;
  expectRefused(c, "NCCL_ENCRYPTION_CONFIG_INITIALIZER");
  c = pskConfig(kKey);
  c.mode = 7;
  expectRefused(c, "mode 7");
  c = pskConfig(nullptr);
  expectRefused(c, "NULL");
  c = pskConfig("too short a key");
  expectRefused(c, "at least 32 bytes");
  c = pskConfig(kKey);
  c.size = 8;
  expectRefused(c, "config->size");
}

/// Every collective of the matrix, float32 sum (or the data moved), a small and a large count,
/// out of place (in place where a collective has only that), rooted at the last rank.
std::vector<Case> everyCollective(int nranks) {
  std::vector<Case> cases;
  for (Coll coll : braid::testing::matrix::kAllColls) {
    for (size_t count : {size_t{1000}, (size_t{1} << 20) + 3}) {
      cases.push_back(
          {coll, ncclFloat32, Op::kSum, count, nranks, !hasOutOfPlace(coll), nranks - 1});
    }
  }
  return cases;
}

TEST(EncryptedProcesses, EveryCollectiveOverSealedSockets) {
  Encrypted encrypted(kKey);
  ASSERT_TRUE(encrypted.ok()) << ncclGetLastError(nullptr);
  // Each rank a host of its own (BRAID_HOSTID), so that the ranks meet over the network.
  braid::testing::matrix::runCasesInProcesses(3, everyCollective(3), [](int rank) {
    setenv("BRAID_HOST_COMM", "1", 1);
    setenv("BRAID_HOSTID", ("encryption-test-" + std::to_string(rank)).c_str(), 1);
    setenv("BRAID_NET", "Socket", 1);
  });
}

/// An all_reduce of ones on `comm`: every element equals the rank count.
bool sumsToRanks(ncclComm_t comm) {
  int nranks = 0;
  if (ncclCommCount(comm, &nranks) != ncclSuccess) return false;
  std::vector<float> data(4096, 1.0f);
  if (ncclAllReduce(data.data(), data.data(), data.size(), ncclFloat32, ncclSum, comm, nullptr) !=
      ncclSuccess) {
    return false;
  }
  for (float v : data) {
    if (v != static_cast<float>(nranks)) return false;
  }
  return true;
}

// ncclCommShrink on 3 ranks on hosts of their own: the new id goes to the survivors as the
// watch's letters, over connections sealed as the rest.
TEST(EncryptedProcesses, ShrinkSendsItsLettersSealed) {
  Encrypted encrypted(kKey);
  ASSERT_TRUE(encrypted.ok()) << ncclGetLastError(nullptr);
  ncclUniqueId id;
  ASSERT_EQ(ncclGetUniqueId(&id), ncclSuccess) << ncclGetLastError(nullptr);
  braid::testing::runProcesses(3, [&](int rank) {
    setenv("BRAID_HOST_COMM", "1", 1);
    setenv("BRAID_HOSTID", ("encrypted-shrink-" + std::to_string(rank)).c_str(), 1);
    setenv("BRAID_NET", "Socket", 1);
    ncclComm_t comm = nullptr;
    ASSERT_EQ(ncclCommInitRank(&comm, 3, id, rank), ncclSuccess) << ncclGetLastError(nullptr);
    ASSERT_TRUE(sumsToRanks(comm)) << ncclGetLastError(comm);
    if (rank == 2) {
      EXPECT_EQ(ncclCommDestroy(comm), ncclSuccess);
      return;
    }
    int exclude[1] = {2};
    ncclComm_t smaller = nullptr;
    ASSERT_EQ(ncclCommShrink(comm, exclude, 1, &smaller, nullptr, NCCL_SHRINK_DEFAULT), ncclSuccess)
        << ncclGetLastError(comm);
    EXPECT_TRUE(sumsToRanks(smaller)) << ncclGetLastError(smaller);
    EXPECT_EQ(ncclCommDestroy(smaller), ncclSuccess);
    EXPECT_EQ(ncclCommDestroy(comm), ncclSuccess);
  });
}

TEST(EncryptedProcesses, WrongKeyRefusedOnBothEnds) {
  Encrypted encrypted(kKey);
  ASSERT_TRUE(encrypted.ok()) << ncclGetLastError(nullptr);
  ScopedEnv timeout("BRAID_TIMEOUT_MS", "20000");
  ncclUniqueId id;
  ASSERT_EQ(ncclGetUniqueId(&id), ncclSuccess) << ncclGetLastError(nullptr);
  // The root (this process, with kKey) and rank 0 share a key; rank 1 has another.
  braid::testing::runProcesses(2, [&](int rank) {
    if (rank == 1) {
      const ncclEncryptionConfig_t other = pskConfig(kOtherKey);
      ASSERT_EQ(ncclSetEncryption(&other), ncclSuccess);
    }
    ncclComm_t comm = nullptr;
    const ncclResult_t r = ncclCommInitRank(&comm, 2, id, rank);
    EXPECT_NE(r, ncclSuccess) << "rank " << rank << " joined beside a rank with another key";
    const std::string error = ncclGetLastError(nullptr);
    // Rank 1 hears it in its own handshake with the root; rank 0 from the root, which refused
    // rank 1's connection and named it.
    EXPECT_NE(error.find("encryption handshake"), std::string::npos) << error;
    // The connection named by its two ends ("ADDRESS:PORT (interface) -> ADDRESS:PORT").
    EXPECT_NE(error.find(" -> "), std::string::npos) << "no peer named: " << error;
  });
}

}  // namespace
}  // namespace encryption_test
