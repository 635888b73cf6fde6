// UserOps::hostOp (src/comm/user_ops.h) keeps the last built-in operator it made: each call must
// still get its own type's and operator's loops and its own rank count, and a premulsum scalar
// given by pointer must still be read at every call.
#include "comm/user_ops.h"

#include <gtest/gtest.h>

namespace braid::comm {
namespace {

float combined(const kernels::HostOp& op, float a, float b) {
  float out = 0;
  op.combine(op.args, &out, &a, &b, 1);
  return out;
}

TEST(UserOps, EachCallGetsItsOwnOperator) {
  UserOps ops;
  for (int round = 0; round < 2; ++round) {
    Result<kernels::HostOp> sum = ops.hostOp(DataType::kFloat32, RedOp::kSum, 2);
    ASSERT_TRUE(sum.ok());
    EXPECT_EQ(combined(sum.value(), 2, 3), 5);
    Result<kernels::HostOp> max = ops.hostOp(DataType::kFloat32, RedOp::kMax, 2);
    ASSERT_TRUE(max.ok());
    EXPECT_EQ(combined(max.value(), 2, 3), 3);
  }
  // The same operator on another type, and avg on another rank count.
  Result<kernels::HostOp> intSum = ops.hostOp(DataType::kInt32, RedOp::kSum, 2);
  ASSERT_TRUE(intSum.ok());
  int a = 7, b = 8, out = 0;
  intSum.value().combine(intSum.value().args, &out, &a, &b, 1);
  EXPECT_EQ(out, 15);
  for (int nranks : {2, 4, 2}) {
    Result<kernels::HostOp> avg = ops.hostOp(DataType::kFloat32, RedOp::kAvg, nranks);
    ASSERT_TRUE(avg.ok());
    float value = 8;
    avg.value().finishOutput(&value, 1);
    EXPECT_EQ(value, 8.0f / nranks) << nranks << " ranks";
  }
}

TEST(UserOps, APremulsumScalarByPointerIsReadAtEveryCall) {
  UserOps ops;
  float scalar = 2;
  Result<RedOp> op = ops.create(&scalar, DataType::kFloat32, /*scalarByPointer=*/true);
  ASSERT_TRUE(op.ok());
  for (float s : {2.0f, 5.0f, 2.0f}) {
    scalar = s;
    Result<kernels::HostOp> pre = ops.hostOp(DataType::kFloat32, op.value(), 2);
    ASSERT_TRUE(pre.ok());
    float in = 3, loaded = 0;
    pre.value().loadInput(&loaded, &in, 1, sizeof(float));
    EXPECT_EQ(loaded, 3 * s);
  }
  // A destroyed handle is refused, even right after a call that used it.
  ASSERT_TRUE(ops.destroy(op.value()).ok());
  EXPECT_FALSE(ops.hostOp(DataType::kFloat32, op.value(), 2).ok());
}

}  // namespace
}  // namespace braid::comm
