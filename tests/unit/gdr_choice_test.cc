// GPUDirect RDMA's choice (transport/net/ib/gdr_choice.h): device memory only where the NIC
// reaches it (dmabuf, else nvidia-peermem), within NCCL_NET_GDR_LEVEL (PXB by default), and for a
// sender under NCCL_NET_GDR_READ's rule; the flush after receives before Hopper or when forced.
#include <gtest/gtest.h>

#include "transport/net/ib/gdr_choice.h"

namespace braid::transport::ib {
namespace {

using topology::PathType;

/// An Ampere GPU beside its NIC under one PCIe switch, both with dmabuf, no peermem.
GdrFacts besideItsNic() {
  GdrFacts f;
  f.distance = PathType::kPix;
  f.computeMajor = 8;
  f.gpuDmabuf = true;
  f.nicDmabuf = true;
  return f;
}

TEST(GdrChoice, AGpuBesideItsNicRegistersByDmabufBothWays) {
  const IbSettings settings;
  EXPECT_EQ(chooseGdr(settings, besideItsNic(), /*sending=*/true).place, SlotPlace::kDmabuf);
  const GdrChoice recv = chooseGdr(settings, besideItsNic(), /*sending=*/false);
  EXPECT_EQ(recv.place, SlotPlace::kDmabuf);
  EXPECT_TRUE(recv.flush) << "Ampere flushes after receives";
  EXPECT_NE(recv.why.find("PIX"), std::string::npos) << recv.why;
}

TEST(GdrChoice, ThePathIsHeldToTheLevelPxbByDefault) {
  IbSettings settings;
  GdrFacts facts = besideItsNic();
  facts.distance = PathType::kPxb;
  EXPECT_EQ(chooseGdr(settings, facts, false).place, SlotPlace::kDmabuf);
  facts.distance = PathType::kPhb;
  const GdrChoice far = chooseGdr(settings, facts, false);
  EXPECT_EQ(far.place, SlotPlace::kStaged);
  EXPECT_NE(far.why.find("farther than NCCL_NET_GDR_LEVEL PXB"), std::string::npos) << far.why;
  settings.gdrLevel = "SYS";
  EXPECT_EQ(chooseGdr(settings, facts, false).place, SlotPlace::kDmabuf);
  settings.gdrLevel = "3";  // NCCL's number for PHB
  EXPECT_EQ(chooseGdr(settings, facts, false).place, SlotPlace::kDmabuf);
  settings.gdrLevel = "LOC";
  EXPECT_EQ(chooseGdr(settings, besideItsNic(), false).place, SlotPlace::kStaged);
}

TEST(GdrChoice, AnUnknownPathCountsAsSys) {
  IbSettings settings;
  GdrFacts facts = besideItsNic();
  facts.distance.reset();
  const GdrChoice choice = chooseGdr(settings, facts, false);
  EXPECT_EQ(choice.place, SlotPlace::kStaged);
  EXPECT_NE(choice.why.find("unknown, taken as SYS"), std::string::npos) << choice.why;
  settings.gdrLevel = "SYS";
  EXPECT_EQ(chooseGdr(settings, facts, false).place, SlotPlace::kDmabuf);
}

TEST(GdrChoice, WithoutDmabufOnlyPeermemReachesDeviceMemory) {
  IbSettings settings;
  settings.dmabufEnable = false;
  GdrFacts facts = besideItsNic();
  const GdrChoice staged = chooseGdr(settings, facts, false);
  EXPECT_EQ(staged.place, SlotPlace::kStaged);
  EXPECT_NE(staged.why.find("NCCL_DMABUF_ENABLE=0"), std::string::npos) << staged.why;
  facts.peermem = true;
  EXPECT_EQ(chooseGdr(settings, facts, false).place, SlotPlace::kPeermem);
  settings.dmabufEnable = true;
  facts.peermem = false;
  facts.gpuDmabuf = false;
  EXPECT_NE(chooseGdr(settings, facts, false).why.find("the GPU exports no dmabuf"),
            std::string::npos);
  facts.gpuDmabuf = true;
  facts.nicDmabuf = false;
  EXPECT_NE(chooseGdr(settings, facts, false).why.find("registers no dmabuf"), std::string::npos);
}

TEST(GdrChoice, SendersReadDeviceMemoryFromAmpereOrWhenAsked) {
  IbSettings settings;
  GdrFacts facts = besideItsNic();
  facts.computeMajor = 7;
  EXPECT_EQ(chooseGdr(settings, facts, /*sending=*/true).place, SlotPlace::kStaged);
  EXPECT_EQ(chooseGdr(settings, facts, /*sending=*/false).place, SlotPlace::kDmabuf);
  settings.gdrRead = 1;
  EXPECT_EQ(chooseGdr(settings, facts, true).place, SlotPlace::kDmabuf);
  settings.gdrRead = 0;
  facts.computeMajor = 9;
  const GdrChoice off = chooseGdr(settings, facts, true);
  EXPECT_EQ(off.place, SlotPlace::kStaged);
  EXPECT_NE(off.why.find("NCCL_NET_GDR_READ=0"), std::string::npos) << off.why;
}

TEST(GdrChoice, ReceiversFlushBeforeHopperOrWhenForcedUnlessDisabled) {
  IbSettings settings;
  GdrFacts facts = besideItsNic();
  facts.computeMajor = 9;
  EXPECT_FALSE(chooseGdr(settings, facts, false).flush);
  settings.forceFlush = true;
  EXPECT_TRUE(chooseGdr(settings, facts, false).flush);
  settings.gdrFlushDisable = true;
  EXPECT_FALSE(chooseGdr(settings, facts, false).flush);
  EXPECT_FALSE(chooseGdr(IbSettings{}, besideItsNic(), /*sending=*/true).flush);
}

}  // namespace
}  // namespace braid::transport::ib
