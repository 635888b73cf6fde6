// Units, the machine spec and the command line: good input parses to the
// right numbers, bad input is refused with a message naming it.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "machine.h"
#include "options.h"
#include "units.h"

namespace braid::sim {
namespace {

TEST(Units, Bytes) {
  EXPECT_EQ(parseBytes("4096").value(), 4096u);
  EXPECT_EQ(parseBytes("8K").value(), 8192u);
  EXPECT_EQ(parseBytes("1M").value(), 1u << 20);
  EXPECT_EQ(parseBytes("4G").value(), uint64_t{4} << 30);
  EXPECT_EQ(parseBytes("2GB").value(), uint64_t{2} << 30);
  for (const char* bad : {"", "G", "-1", "1X", "1.5G", "99999999999999999999"}) {
    EXPECT_FALSE(parseBytes(bad).ok()) << bad;
  }
  EXPECT_EQ(formatBytes(1024), "1K");
  EXPECT_EQ(formatBytes(uint64_t{3} << 30), "3G");
  EXPECT_EQ(formatBytes(1000), "1000");
}

TEST(Units, BandwidthAndDuration) {
  EXPECT_DOUBLE_EQ(parseBandwidth("450GB/s").value(), 450e3);  // bytes per us
  EXPECT_DOUBLE_EQ(parseBandwidth("400Gb/s").value(), 50e3);
  EXPECT_DOUBLE_EQ(parseBandwidth("100 MB/s").value(), 100);
  for (const char* bad : {"450", "450GB", "GB/s", "0GB/s", "450Gx/s", "450XB/s"}) {
    EXPECT_FALSE(parseBandwidth(bad).ok()) << bad;
  }
  EXPECT_DOUBLE_EQ(parseDuration("1us").value(), 1);
  EXPECT_DOUBLE_EQ(parseDuration("500ns").value(), 0.5);
  EXPECT_DOUBLE_EQ(parseDuration("2ms").value(), 2000);
  EXPECT_FALSE(parseDuration("5").ok());
  EXPECT_FALSE(parseDuration("-1us").ok());
}

TEST(MachineSpec, TheIssuesExample) {
  Result<Machine> m = parseMachine("512x8,nvlink=450GB/s,net=400Gb/s,nvlink-lat=1us,net-lat=5us");
  ASSERT_TRUE(m.ok()) << m.status().message();
  EXPECT_EQ(m.value().ranks(), 4096);
  EXPECT_EQ(m.value().nicsPerNode, 8);
  EXPECT_DOUBLE_EQ(m.value().netBytesPerUs, 50e3);
  EXPECT_DOUBLE_EQ(m.value().netLatencyUs, 5);
  EXPECT_EQ(m.value().nodeOf(4095), 511);
  // Channel c of GPU g uses NIC (g + c) % 8.
  EXPECT_EQ(m.value().nicOf(7, 0), 7);
  EXPECT_EQ(m.value().nicOf(7, 1), 0);
}

TEST(MachineSpec, FewerNicsThanGpus) {
  Result<Machine> m = parseMachine("4x8,nics=2");
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(m.value().nicOf(3, 0), 0);
  EXPECT_EQ(m.value().nicOf(4, 0), 1);
}

TEST(MachineSpec, BadSpecsNameTheirFault) {
  for (const char* bad :
       {"512", "0x8", "8x0", "2x8,nics=9", "2x8,wifi=1GB/s", "2x8,net=fast", "2x8,nvlink-lat=1"}) {
    Result<Machine> m = parseMachine(bad);
    EXPECT_FALSE(m.ok()) << bad;
  }
  EXPECT_NE(parseMachine("2x8,wifi=1GB/s").status().message().find("wifi"), std::string::npos);
}

Result<CommandLine> parse(std::vector<const char*> args) {
  args.insert(args.begin(), "braid-sim");
  return parseCommandLine(static_cast<int>(args.size()), args.data());
}

TEST(CommandLine, Defaults) {
  Result<CommandLine> c = parse({});
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c.value().study.nranks, 4096);
  EXPECT_EQ(c.value().study.machine.ranks(), 4096);
  EXPECT_EQ(c.value().study.bytes, uint64_t{64} << 20);
  Result<CommandLine> m = parse({"--machine", "4x8", "--algo=tree"});
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(m.value().study.nranks, 32);
  EXPECT_EQ(m.value().study.algorithm, algo::Algorithm::kTree);
}

TEST(CommandLine, BadInputIsRefused) {
  const std::vector<std::vector<const char*>> bad = {
      {"--algo", "mesh"},
      {"--coll", "all_to_all"},
      {"--nranks", "0"},
      {"--nranks", "100", "--machine", "2x8"},
      {"--bytes", "lots"},
      {"--sweep", "8"},
      {"--sweep", "4G:8"},
      {"--svg", "x.svg", "--nranks", "32"},
      {"--algo", "tree", "--coll", "all_gather"},
      {"--root", "9", "--nranks", "8"},
      {"--protocol", "ll128"},
      {"--frobnicate", "1"},
      {"--nranks"},
      {"stray"},
  };
  for (const auto& args : bad) {
    Result<CommandLine> c = parse(args);
    std::string joined;
    for (const char* a : args) joined += std::string(a) + " ";
    EXPECT_FALSE(c.ok()) << joined;
  }
}

}  // namespace
}  // namespace braid::sim
