// The verbs ports a process's communicators share (transport/net/ib/ib_port_set.h): networks
// that ask for the same ports share their contexts, CQs and proxy; other port settings get
// ports of their own; the ports close with the last network that uses them.
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "transport/net/ib/ib_network.h"
#include "transport/net/ib/ib_port_set.h"

namespace braid::transport::ib {
namespace {

IbSettings emulated(const std::string& hca = "") {
  IbSettings settings;
  settings.emulate = 2;
  settings.hca = hca;
  return settings;
}

std::unique_ptr<IbNetwork> open(const IbSettings& settings, int localRank) {
  std::string why;
  Result<std::unique_ptr<IbNetwork>> network = IbNetwork::open(settings, localRank, &why);
  EXPECT_TRUE(network.ok()) << network.status().message();
  EXPECT_NE(network.ok() ? network.value().get() : nullptr, nullptr) << why;
  return network.ok() ? std::move(network).value() : nullptr;
}

TEST(IbPortSet, CommunicatorsOfAProcessShareTheirPortsAndProxy) {
  std::unique_ptr<IbNetwork> a = open(emulated(), 0);
  std::unique_ptr<IbNetwork> b = open(emulated(), 1);
  ASSERT_TRUE(a && b);
  ASSERT_EQ(a->describe(), "emu_0:1, emu_1:1 (emulated)");
  for (int i = 0; i < 2; ++i) {
    EXPECT_EQ(&a->portAt(i), &b->portAt(i));
    EXPECT_EQ(a->portAt(i).context, b->portAt(i).context);
    EXPECT_EQ(a->portAt(i).cq, b->portAt(i).cq);
  }
  EXPECT_EQ(&a->proxy(), &b->proxy());
  // Each still starts its queue pairs by its own place on the host.
  EXPECT_EQ(a->portFor(""), 0);
  EXPECT_EQ(b->portFor(""), 1);
}

TEST(IbPortSet, OtherPortSettingsGetPortsOfTheirOwn) {
  std::unique_ptr<IbNetwork> both = open(emulated(), 0);
  std::unique_ptr<IbNetwork> one = open(emulated("emu_1"), 0);
  ASSERT_TRUE(both && one);
  ASSERT_EQ(one->describe(), "emu_1:1 (emulated)");
  EXPECT_NE(one->portAt(0).context, both->portAt(1).context);
  EXPECT_NE(&one->proxy(), &both->proxy());
}

TEST(IbPortSet, ThePortsCloseWithTheLastNetwork) {
  emulateDevices(2);
  std::weak_ptr<IbPortSet> watched;
  {
    std::shared_ptr<IbPortSet> set;
    {
      Result<std::shared_ptr<IbPortSet>> acquired = IbPortSet::acquire(emulatedVerbs(), emulated());
      ASSERT_TRUE(acquired.ok()) << acquired.status().message();
      set = acquired.value();
    }
    ASSERT_NE(set, nullptr);
    watched = set;
    std::unique_ptr<IbNetwork> a = open(emulated(), 0);
    ASSERT_TRUE(a);
    EXPECT_EQ(&a->portAt(0), set->ports()[0]);
    set.reset();
    EXPECT_FALSE(watched.expired());  // the network holds it
  }
  EXPECT_TRUE(watched.expired());
}

}  // namespace
}  // namespace braid::transport::ib
