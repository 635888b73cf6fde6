// Topology files braid did not write: what XML allows reads as it should, and
// malformed, truncated, oversized and hostile files are refused with the file,
// the line and what is wrong, in bounded time and memory.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "topology/braid_xml.h"
#include "topology/nccl_xml.h"
#include "topology/topology_file.h"
#include "topology/xml_document.h"
#include "unit/topology_fixtures.h"

namespace braid::topology {
namespace {

using testing::nodeNamed;

TEST(TopologyFileXml, ReadsWhatXmlAllows) {
  // A byte order mark, the declaration, a DOCTYPE with an internal subset,
  // comments holding markup, CDATA, entities and character references, both
  // quotes, white space inside a value, and Windows line ends.
  auto graph = parseTopology(
      "\xEF\xBB\xBF<?xml version=\"1.0\" encoding=\"UTF-8\"?>\r\n"
      "<!DOCTYPE braid-topology [ <!ELEMENT t ANY> <!ATTLIST t a CDATA \"]>\"> ]>\r\n"
      "<!-- a comment > with <markup/> -->\r\n"
      "<braid-topology version='1'>\r\n"
      "  <host name=\"a&lt;b&gt;&amp;&quot;&apos;&#9;&#10;&#13;\">\r\n"
      "    <cpu name='c&#65;&#x42;&#x20AC;' vendor='Genuine\tIntel'><![CDATA[ <raw> ]]>\r\n"
      "      <gpu name=\"g\" bw='24'/> text between elements\r\n"
      "    </cpu>\r\n"
      "  </host>\r\n"
      "</braid-topology>\r\n"
      "<!-- trailing comment -->\r\n",
      "ok.xml");
  ASSERT_TRUE(graph.ok()) << graph.status().message();
  EXPECT_EQ(graph.value().hostName(0), "a<b>&\"'\t\n\r");
  const int cpu = nodeNamed(graph.value(), "cAB\xE2\x82\xAC");
  EXPECT_EQ(graph.value().node(cpu).cpuVendor, "Genuine Intel");
  ASSERT_NE(graph.value().findLink(cpu, nodeNamed(graph.value(), "g")), nullptr);

  // What braid writes, it reads back, whatever the names hold (tabs and line ends were once
  // written as themselves, and read back as spaces).
  const std::string written = writeBraidXml(graph.value());
  auto again = parseTopology(written, "written.xml");
  ASSERT_TRUE(again.ok()) << again.status().message() << "\n" << written;
  EXPECT_EQ(again.value().hostName(0), "a<b>&\"'\t\n\r");
  EXPECT_EQ(writeBraidXml(again.value()), written);
}

TEST(TopologyFileXml, LinesCountedAcrossWindowsLineEnds) {
  auto graph = parseTopology(
      "<braid-topology>\r\n<host>\r\n\r\n<cpu name='c' colour='red'/>\r\n"
      "</host></braid-topology>",
      "crlf.xml");
  ASSERT_FALSE(graph.ok());
  EXPECT_EQ(graph.status().message().rfind("crlf.xml:4: ", 0), 0u) << graph.status().message();
}

struct BadXml {
  std::string text;
  int line;
  const char* says;
};

class TopologyFileMalformed : public ::testing::TestWithParam<BadXml> {};

TEST_P(TopologyFileMalformed, NameTheLineAndTheProblem) {
  const BadXml& bad = GetParam();
  auto graph = parseTopology(bad.text, "f.xml");
  ASSERT_FALSE(graph.ok()) << bad.text;
  EXPECT_EQ(graph.status().code(), ErrorCode::kInvalidArgument);
  const std::string& message = graph.status().message();
  EXPECT_EQ(message.rfind("f.xml:" + std::to_string(bad.line) + ": ", 0), 0u) << message;
  EXPECT_NE(message.find(bad.says), std::string::npos) << message;
}

std::string nested(int depth) {
  std::string text;
  for (int i = 0; i < depth; ++i) text += "<a>";
  for (int i = 0; i < depth; ++i) text += "</a>";
  return text;
}

INSTANTIATE_TEST_SUITE_P(
    Xml, TopologyFileMalformed,
    ::testing::Values(
        BadXml{"", 1, "no root element"}, BadXml{"<!-- only a comment -->\n", 2, "no root element"},
        BadXml{"<a>\n<b>\n</a>", 3, "end tag </a> does not match <b> opened on line 2"},
        BadXml{"<a>\n<b></b>\n<c/>\n</x>", 4, "end tag </x> does not match <a> opened on line 1"},
        BadXml{"<a x='</b>'>\n</b>", 2, "end tag </b> does not match <a> opened on line 1"},
        BadXml{"<a>\n<b>\n", 3, "end of input inside <b> opened on line 2"},
        BadXml{"<t><h><c n='1'/></h>", 1, "end of input inside <t> opened on line 1"},
        BadXml{"<ab>\n</a>", 2, "end tag </a> does not match <ab> opened on line 1"},
        BadXml{"<a>\n</ab>", 2, "end tag </ab> does not match <a> opened on line 1"},
        BadXml{"<a>\n<b><!-- </b> -->\n", 3, "end of input inside <b> opened on line 2"},
        BadXml{"<a></a>\n</b>", 2, "end tag </b> without a start tag"},
        BadXml{"<a>\n\n</>", 3, "end tag without a name"},
        BadXml{"<a x=1/>", 1, "malformed attribute in <a>"},
        BadXml{"<a x='1' x='2'/>", 1, "attribute 'x' given twice in <a>"},
        BadXml{"<a x='1'y='2'/>", 1, "malformed attribute"},
        BadXml{"<a x='1", 1, "malformed attribute"},
        BadXml{"<a/>\n<b/>", 2, "content after the root element </a>: <b>"},
        BadXml{"<a>\n<!-- never closed </a>", 2, "comment never closed"},
        BadXml{"<a><![CDATA[ x </a>", 1, "CDATA section never closed"},
        BadXml{"<1a/>", 1, "'<' that starts no element name"},
        BadXml{"<a>\n<!ELEMENT x></a>", 2, "'<' that starts no element name"},
        BadXml{std::string("<a>\n\0</a>", 9), 2, "a NUL byte"},
        BadXml{nested(600), 1, "elements nested deeper than 512"},
        BadXml{"<system>\n<cpu>\n</system>", 3, "does not match <cpu> opened on line 2"}));

TEST(TopologyFileXml, DepthUpToTheLimitReads) {
  auto document = XmlDocument::parse(nested(kMaxXmlDepth), "deep.xml");
  EXPECT_TRUE(document.ok()) << document.status().message();
}

TEST(TopologyFileXml, RefusesTooManyElements) {
  std::string text = "<system>";
  for (size_t i = 0; i < kMaxXmlElements; ++i) text += "<a/>";
  text += "</system>";
  auto graph = parseTopology(text, "many.xml");
  ASSERT_FALSE(graph.ok());
  EXPECT_NE(graph.status().message().find("more than 250000 elements"), std::string::npos)
      << graph.status().message();
}

TEST(TopologyFileXml, RefusesOversizedTextAndFiles) {
  const std::string text(kMaxXmlBytes + 1, ' ');
  auto graph = parseTopology(text, "big.xml");
  ASSERT_FALSE(graph.ok());
  EXPECT_EQ(graph.status().message(),
            "big.xml: 16777217 bytes, more than the 16 MiB a topology file may hold");

  // A file past the limit is not read to its end, nor is one without an end.
  const std::string path = ::testing::TempDir() + "braid_topology_hostile_big.xml";
  { std::ofstream(path) << "<system>"; }
  ASSERT_EQ(truncate(path.c_str(), static_cast<off_t>(kMaxXmlBytes) * 4), 0);
  for (const std::string& file : {path, std::string("/dev/zero")}) {
    graph = loadTopologyFile(file);
    ASSERT_FALSE(graph.ok()) << file;
    EXPECT_EQ(graph.status().code(), ErrorCode::kInvalidArgument) << file;
    EXPECT_NE(graph.status().message().find("larger than the 16 MiB"), std::string::npos)
        << graph.status().message();
  }
  std::remove(path.c_str());
}

TEST(TopologyFileXml, RefusesADirectory) {
  auto graph = loadTopologyFile(::testing::TempDir());
  ASSERT_FALSE(graph.ok());
  EXPECT_NE(graph.status().message().find(::testing::TempDir()), std::string::npos);
}

// Found by topology_file_fuzz: braid's writer printed numbers into a 64-byte buffer, so a
// bandwidth of 64 digits or more was written cut short, as a number 10^k smaller.
TEST(TopologyFileXml, HugeBandwidthsAreWrittenWhole) {
  auto graph = parseTopology(
      "<braid-topology><host><cpu name='a'/><cpu name='b'/>"
      "<link a='a' b='b' type='SYS' bw='8.5e70'/></host></braid-topology>",
      "huge.xml");
  ASSERT_TRUE(graph.ok()) << graph.status().message();
  auto again = parseTopology(writeBraidXml(graph.value()), "written.xml");
  ASSERT_TRUE(again.ok()) << again.status().message();
  const Link* link =
      again.value().findLink(nodeNamed(again.value(), "a"), nodeNamed(again.value(), "b"));
  ASSERT_NE(link, nullptr);
  EXPECT_DOUBLE_EQ(link->bandwidthGBs, 8.5e70);
}

// Found by braid_xml_fuzz: nodes whose names repeat are written with ids, which were their
// indices in the graph. Read back, a node's index is its place in the file, so where the two
// differed (a CPU after an NVSwitch: the writer puts CPUs first) the next write changed the ids.
TEST(TopologyFileXml, WritingWhatWasReadGivesTheSameIds) {
  auto graph = parseTopology(
      "<braid-topology><host name='h'>"
      "<cpu id='7' name='c'><gpu id='8' name='g' bw='24'/></cpu>"
      "<nvswitch name='n'/>"
      "<cpu name='c'><gpu name='g' bw='24'/></cpu>"
      "</host></braid-topology>",
      "ids.xml");
  ASSERT_TRUE(graph.ok()) << graph.status().message();
  const std::string written = writeBraidXml(graph.value());
  EXPECT_NE(written.find("id="), std::string::npos) << written;
  auto again = parseTopology(written, "written.xml");
  ASSERT_TRUE(again.ok()) << again.status().message() << "\n" << written;
  EXPECT_EQ(writeBraidXml(again.value()), written);
}

// Found by topology_file_fuzz (seed 14): links were written in the order of the graph's
// indices, which are not the nodes' places in the file. A CPU nested under a PCI switch is
// written as a root of its own, after the GPU that came later in the file it was read from,
// so the two NVLinks swapped places on the next write.
TEST(TopologyFileXml, WritingWhatWasReadGivesTheSameLinkOrder) {
  auto graph = parseTopology(
      "<braid-topology><host name='h'>"
      "<cpu name='c'><pci name='sw' bw='31.5'><cpu name='x' bw='31.5'/></pci>"
      "<gpu name='g' bw='15.75'/></cpu>"
      "<nvswitch name='n'/>"
      "<link a='x' b='n' type='NVL' bw='300'/><link a='g' b='n' type='NVL' bw='200'/>"
      "</host></braid-topology>",
      "order.xml");
  ASSERT_TRUE(graph.ok()) << graph.status().message();
  const std::string written = writeBraidXml(graph.value());
  auto again = parseTopology(written, "written.xml");
  ASSERT_TRUE(again.ok()) << again.status().message() << "\n" << written;
  EXPECT_EQ(writeBraidXml(again.value()), written);
}

// A pair nested one in the other may have an NVLink besides the PCI link the nesting stands
// for; the nesting's bw is the PCI link's, whichever of the two was made first.
TEST(TopologyFileXml, NestingKeepsThePciBandwidthBesideAnotherLink) {
  Graph graph;
  Node cpu;
  cpu.type = NodeType::kCpu;
  cpu.name = "c";
  Node gpu;
  gpu.type = NodeType::kGpu;
  gpu.name = "g";
  const int c = graph.addNode(cpu);
  const int g = graph.addNode(gpu);
  graph.connect(c, g, LinkType::kNvLink, 300);
  graph.connect(c, g, LinkType::kPci, 24);
  auto again = parseTopology(writeBraidXml(graph), "written.xml");
  ASSERT_TRUE(again.ok()) << again.status().message();
  int pci = 0;
  int nvl = 0;
  for (const Link& link : again.value().node(nodeNamed(again.value(), "c")).links) {
    if (link.type == LinkType::kPci) pci += link.bandwidthGBs == 24;
    if (link.type == LinkType::kNvLink) nvl += link.bandwidthGBs == 300;
  }
  EXPECT_EQ(pci, 1);
  EXPECT_EQ(nvl, 1);
}

// Found by topology_file_fuzz: hwloc 2.9 dereferences a missing bitmap (a crash of the process
// that loaded braid) when an <object> has a cpuset or nodeset without its complete_ twin.
TEST(TopologyFileXml, HwlocFilesHwlocCannotTakeAreRefused) {
  const std::string lstopo = testing::readFixtureText(testing::kBuildMachineHwloc);
  for (const char* attribute : {" complete_nodeset=\"", " complete_cpuset=\""}) {
    const size_t numa = lstopo.find("type=\"NUMANode\"");
    ASSERT_NE(numa, std::string::npos);
    std::string text = lstopo;
    const size_t at = text.find(attribute, numa);
    ASSERT_NE(at, std::string::npos) << attribute;
    text.erase(at, text.find('"', at + strlen(attribute)) + 1 - at);
    auto graph = parseTopology(text, "lstopo.xml");
    ASSERT_FALSE(graph.ok()) << attribute;
    const int line = 1 + static_cast<int>(std::count(text.begin(), text.begin() + at, '\n'));
    EXPECT_EQ(graph.status().message().rfind("lstopo.xml:" + std::to_string(line) + ": ", 0), 0u)
        << graph.status().message();
    EXPECT_NE(graph.status().message().find("<object type=\"NUMANode\"> has"), std::string::npos)
        << graph.status().message();
  }
}

// Found by topology_file_fuzz: a bitmap attribute whose text hwloc's own parser refuses is kept
// as a NULL bitmap, which hwloc 2.9 dereferences in the same way.
TEST(TopologyFileXml, HwlocBitmapsHwlocCannotParseAreRefused) {
  const std::string lstopo = testing::readFixtureText(testing::kBuildMachineHwloc);
  for (const char* attribute : {"complete_cpuset=\"", "nodeset=\"", "allowed_cpuset=\""}) {
    const size_t at = lstopo.find(attribute);
    ASSERT_NE(at, std::string::npos) << attribute;
    std::string text = lstopo;
    text.insert(at + strlen(attribute) + 2, "%");  // 0x%00000003
    auto graph = parseTopology(text, "lstopo.xml");
    ASSERT_FALSE(graph.ok()) << attribute;
    EXPECT_EQ(graph.status().code(), ErrorCode::kInvalidArgument);
    EXPECT_NE(graph.status().message().find("which is not a bitmap"), std::string::npos)
        << graph.status().message();
  }
  // The file as lstopo wrote it still reads.
  EXPECT_TRUE(parseTopology(lstopo, "lstopo.xml").ok());
}

// Found by CI's topology_file_fuzz: hwloc 2.9's bitmap parser aborts on an assertion for a bitmap
// that starts with a comma, so a bitmap must have the form hwloc writes before hwloc parses it,
// on whichever element hwloc reads bitmaps from.
TEST(TopologyFileXml, BitmapsNotInHwlocsFormAreRefusedBeforeHwlocParsesThem) {
  const std::string lstopo = testing::readFixtureText(testing::kBuildMachineHwloc);
  for (const char* bad : {",x00000001", ",0x1", "0x", "", "0x123456789", "0x1,,0x2", "0x1,", " 0x1",
                          "+1", "0xf...f0x1", "0xg"}) {
    std::string text = lstopo;
    const size_t at = text.find(" cpuset=\"") + strlen(" cpuset=\"");
    text.replace(at, text.find('"', at) - at, bad);
    auto graph = parseTopology(text, "lstopo.xml");
    ASSERT_FALSE(graph.ok()) << bad;
    EXPECT_NE(
        graph.status().message().find(std::string("cpuset=\"") + bad + "\", which is not a bitmap"),
        std::string::npos)
        << graph.status().message();
  }
  for (const char* element : {"<cpukind cpuset=\",x1\"/>",
                              "<memattr name=\"Bandwidth\" flags=\"5\"><memattr_value "
                              "target_obj_gp_index=\"2\" target_obj_type=\"NUMANode\" "
                              "value=\"1\" initiator_cpuset=\",x1\"/></memattr>"}) {
    std::string text = lstopo;
    text.insert(text.rfind("</topology>"), element);
    auto graph = parseTopology(text, "lstopo.xml");
    ASSERT_FALSE(graph.ok()) << element;
    EXPECT_NE(graph.status().message().find("=\",x1\", which is not a bitmap"), std::string::npos)
        << graph.status().message();
  }
  // The forms hwloc writes read: every bit, every bit above a field, fields without 0x.
  for (const char* good : {"0xf...f", "0xf...f,0x00000003", "0x00000000,0x00000003", "3"}) {
    std::string text = lstopo;
    const size_t at = text.find(" allowed_cpuset=\"") + strlen(" allowed_cpuset=\"");
    text.replace(at, text.find('"', at) - at, good);
    auto graph = parseTopology(text, "lstopo.xml");
    EXPECT_TRUE(graph.ok()) << good << ": " << graph.status().message();
  }
}

// Found by topology_file_fuzz under UBSan: hwloc copies a file's bridge_type and osdev_type numbers
// into enum fields unchecked, and braid loaded them through the enum type, which is undefined
// behaviour for a value outside the enum (the ASan+UBSan suite runs this test). A bridge of an
// unknown upstream kind is no PCIe switch, an OS device of an unknown kind no network interface.
TEST(TopologyFileXml, HwlocEnumNumbersOutsideTheirEnumsAreReadSafely) {
  const std::string lstopo = testing::readFixtureText(testing::kBuildMachineHwloc);
  auto plain = parseTopology(lstopo, "lstopo.xml");
  ASSERT_TRUE(plain.ok()) << plain.status().message();
  const std::vector<int> nics = plain.value().nodesOfType(NodeType::kNic);
  ASSERT_EQ(nics.size(), 1u);
  EXPECT_EQ(plain.value().node(nics[0]).name, "eth0");

  std::string text = lstopo;
  for (const auto& [from, to] :
       {std::pair<std::string, std::string>{"bridge_type=\"0-1\"", "bridge_type=\"5-1\""},
        {"osdev_type=\"2\"", "osdev_type=\"9\""}}) {
    const size_t at = text.find(from);
    ASSERT_NE(at, std::string::npos) << from;
    text.replace(at, from.size(), to);
  }
  auto odd = parseTopology(text, "lstopo.xml");
  ASSERT_TRUE(odd.ok()) << odd.status().message();
  // eth0's PCI device is still a NIC, named by its bus id as when hwloc shows no interface.
  const std::vector<int> found = odd.value().nodesOfType(NodeType::kNic);
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(odd.value().node(found[0]).name, "nic@0000:00:03.0");
}

// Found by topology_file_fuzz: a cpuset outside its complete_cpuset (here on a root with no
// children) makes hwloc 2.9 dereference NULL. Refused, naming the set and the line.
TEST(TopologyFileXml, HwlocSetsOutsideTheirCompleteSetsAreRefused) {
  const std::string root =
      "<?xml version=\"1.0\"?>\n<topology version=\"2.0\">\n"
      "<object type=\"Machine\" cpuset=\"0x3\" complete_cpuset=\"0x4\" nodeset=\"0x1\" "
      "complete_nodeset=\"0x1\"/>\n</topology>\n";
  auto graph = parseTopology(root, "root.xml");
  ASSERT_FALSE(graph.ok());
  EXPECT_EQ(graph.status().message(),
            "root.xml:3: <object type=\"Machine\"> has cpuset=\"0x3\" outside its "
            "complete_cpuset=\"0x4\"");

  const std::string lstopo = testing::readFixtureText(testing::kBuildMachineHwloc);
  for (const char* attribute : {" complete_cpuset=\"", " complete_nodeset=\""}) {
    const size_t package = lstopo.find("type=\"Package\"");
    ASSERT_NE(package, std::string::npos);
    std::string text = lstopo;
    const size_t at = text.find(attribute, package) + strlen(attribute);
    text.replace(at, text.find('"', at) - at, "0x0");
    graph = parseTopology(text, "lstopo.xml");
    ASSERT_FALSE(graph.ok()) << attribute;
    const int line = 1 + static_cast<int>(std::count(text.begin(), text.begin() + at, '\n'));
    EXPECT_EQ(graph.status().message().rfind(
                  "lstopo.xml:" + std::to_string(line) + ": <object type=\"Package\"> has ", 0),
              0u)
        << graph.status().message();
    EXPECT_NE(graph.status().message().find(std::string("outside its") + attribute + "0x0\""),
              std::string::npos)
        << graph.status().message();
  }
}

// hwloc reads the text pugixml read, not the file. Found by topology_file_fuzz: an
// encoding="UTF-4" that pugixml reads past made hwloc's libxml2 refuse the file and leak its
// error; hwloc and the guard must also never read one file two ways. The declaration, the
// DOCTYPE and comments do not change the topology read.
TEST(TopologyFileXml, HwlocReadsTheTextTheGuardChecked) {
  const std::string lstopo = testing::readFixtureText(testing::kBuildMachineHwloc);
  auto plain = parseTopology(lstopo, "lstopo.xml");
  ASSERT_TRUE(plain.ok()) << plain.status().message();
  const std::string expected = writeBraidXml(plain.value());

  std::string text = lstopo;
  const size_t encoding = text.find("encoding=\"UTF-8\"");
  ASSERT_NE(encoding, std::string::npos);
  text.replace(encoding, strlen("encoding=\"UTF-8\""), "encoding=\"UTF-4\"");
  text.insert(text.find("<topology"), "<!-- written by hand --><?braid pi?>");
  auto odd = parseTopology(text, "odd.xml");
  ASSERT_TRUE(odd.ok()) << odd.status().message();
  EXPECT_EQ(writeBraidXml(odd.value()), expected);

  auto document = XmlDocument::parse(text, "odd.xml");
  ASSERT_TRUE(document.ok());
  const std::string canonical = document.value()->canonicalText();
  EXPECT_EQ(canonical.rfind("<?xml version=\"1.0\"?><topology", 0), 0u) << canonical.substr(0, 80);
  EXPECT_EQ(canonical.find("UTF-4"), std::string::npos);
  EXPECT_EQ(canonical.find("written by hand"), std::string::npos);
}

// NCCL's format: a chain of bridges 400 deep, each with 40 bridges that lead
// nowhere beside it, above 20000 devices. Each level asks whether devices lie
// below it, and each device's bus id must be new: both were once the square
// of the file's size (minutes for a file of a few MB).
TEST(TopologyFileXml, DeepAndWideNcclTreeReadsInLinearTime) {
  int next = 0;
  auto pci = [&](const char* cls) {
    char text[96];
    snprintf(text, sizeof(text), "<pci busid='%04x:%02x:%02x.0' class='%s'", next >> 13,
             (next >> 5) & 0xff, next & 0x1f, cls);
    ++next;
    return std::string(text);
  };
  constexpr int kDepth = 400;
  constexpr int kDeadEnds = 40;
  constexpr int kDevices = 20000;
  std::string text = "<system version='1'><cpu numaid='0'>";
  for (int i = 0; i < kDepth; ++i) {
    for (int j = 0; j < kDeadEnds; ++j) text += pci("0x060400") + "/>";
    text += pci("0x060400") + ">";
  }
  for (int i = 0; i < kDevices; ++i) text += pci("0x020000") + "/>";
  for (int i = 0; i < kDepth; ++i) text += "</pci>";
  text += "</cpu></system>";
  const auto start = std::chrono::steady_clock::now();
  auto graph = parseTopology(text, "wide.xml");
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ASSERT_TRUE(graph.ok()) << graph.status().message();
  EXPECT_EQ(graph.value().nodesOfType(NodeType::kNic).size(), static_cast<size_t>(kDevices));
  EXPECT_EQ(graph.value().nodesOfType(NodeType::kPciSwitch).size(), static_cast<size_t>(kDepth));
  EXPECT_LT(seconds, 20.0) << "quadratic again?";
}

}  // namespace
}  // namespace braid::topology
