// The small XML reader behind topology files: what it accepts, and that
// every malformed input is refused with the line it went wrong on.
#include <gtest/gtest.h>

#include "topology/xml_reader.h"

namespace braid::topology {
namespace {

TEST(TopologyXmlReader, ReadsElementsAttributesAndText) {
  auto root = parseXml(
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
      "<!DOCTYPE topology SYSTEM \"hwloc2.dtd\">\n"
      "<!-- a comment > with <markup> -->\n"
      "<a x='1' y = \"two words\">\n"
      "  <b/>\n"
      "  <c z=\"&lt;&gt;&amp;&quot;&apos;\">text &amp; more<![CDATA[ <raw> ]]></c>\n"
      "  <b k=\"&#65;&#x42;&#x20AC;\"></b>\n"
      "</a>\n"
      "<!-- trailing comment -->\n");
  ASSERT_TRUE(root.ok()) << root.status().message();
  const XmlElement& a = root.value();
  EXPECT_EQ(a.name, "a");
  EXPECT_EQ(a.line, 4);
  EXPECT_EQ(a.attributeOr("x", ""), "1");
  EXPECT_EQ(a.attributeOr("y", ""), "two words");
  EXPECT_EQ(a.attribute("missing"), nullptr);
  EXPECT_TRUE(a.text.empty()) << "white space between children is not text";
  ASSERT_EQ(a.children.size(), 3u);
  EXPECT_EQ(a.childrenNamed("b").size(), 2u);
  const XmlElement& c = a.children[1];
  EXPECT_EQ(c.line, 6);
  EXPECT_EQ(c.attributeOr("z", ""), "<>&\"'");
  EXPECT_EQ(c.text, "text & more <raw> ");
  EXPECT_EQ(a.children[2].attributeOr("k", ""), "AB\xE2\x82\xAC");
}

TEST(TopologyXmlReader, SkipsDoctypeWithInternalSubset) {
  auto root = parseXml("<!DOCTYPE t [ <!ELEMENT t ANY> <!ATTLIST t a CDATA \"]>\"> ]>\n<t a='1'/>");
  ASSERT_TRUE(root.ok()) << root.status().message();
  EXPECT_EQ(root.value().name, "t");
  EXPECT_EQ(root.value().line, 2);
}

TEST(TopologyXmlReader, NormalisesWhiteSpaceInAttributeValues) {
  auto root = parseXml("<t a=\"x\ty\nz\"/>");
  ASSERT_TRUE(root.ok());
  EXPECT_EQ(root.value().attributeOr("a", ""), "x y z");
}

struct BadXml {
  const char* text;
  int line;
  const char* says;
};

class TopologyXmlReaderErrors : public ::testing::TestWithParam<BadXml> {};

TEST_P(TopologyXmlReaderErrors, NameTheLineAndTheProblem) {
  const BadXml& bad = GetParam();
  auto root = parseXml(bad.text, "f.xml");
  ASSERT_FALSE(root.ok()) << bad.text;
  EXPECT_EQ(root.status().code(), ErrorCode::kInvalidArgument);
  const std::string& message = root.status().message();
  EXPECT_EQ(message.rfind("f.xml:" + std::to_string(bad.line) + ": ", 0), 0u) << message;
  EXPECT_NE(message.find(bad.says), std::string::npos) << message;
}

INSTANTIATE_TEST_SUITE_P(
    Malformed, TopologyXmlReaderErrors,
    ::testing::Values(BadXml{"", 1, "no root element"},
                      BadXml{"<!-- only a comment -->\n", 2, "no root element"},
                      BadXml{"<a>\n<b>\n</a>", 3, "</a> does not match <b> opened on line 2"},
                      BadXml{"<a>\n<b>\n", 3, "end of input inside <b>"},
                      BadXml{"<a x=1/>", 1, "must be quoted"},
                      BadXml{"<a x='1' x='2'/>", 1, "given twice"},
                      BadXml{"<a x='1'y='2'/>", 1, "expected white space"},
                      BadXml{"<a>\n&nbsp;</a>", 2, "unknown entity &nbsp;"},
                      BadXml{"<a>AT&T</a>", 1, "starts no entity"},
                      BadXml{"<a x='&#0;'/>", 1, "bad character reference"},
                      BadXml{"<a x='<'/>", 1, "'<' inside an attribute value"},
                      BadXml{"<a/>\n<b/>", 2, "content after the root element"},
                      BadXml{"text<a/>", 1, "text before the root element"},
                      BadXml{"<a>\n<!-- never closed </a>", 2, "comment never closed"},
                      BadXml{"<a x='1", 1, "never closed"},
                      BadXml{"<a><![CDATA[ x </a>", 1, "CDATA section never closed"},
                      BadXml{"<1a/>", 1, "expected an element name"},
                      BadXml{"<a>\n\n</>", 3, "expected an end tag name"},
                      BadXml{"<a><!ELEMENT x></a>", 1, "unexpected markup declaration"}));

TEST(TopologyXmlReader, RefusesAbsurdNesting) {
  std::string text;
  for (int i = 0; i < 1000; ++i) text += "<a>";
  auto root = parseXml(text);
  ASSERT_FALSE(root.ok());
  EXPECT_NE(root.status().message().find("nested deeper than"), std::string::npos);
}

TEST(TopologyXmlReader, EscapeRoundTrips) {
  const std::string nasty = "a<b>&\"c'd";
  auto root = parseXml("<t v=\"" + xmlEscape(nasty) + "\" w='" + xmlEscape(nasty) + "'>" +
                       xmlEscape(nasty) + "</t>");
  ASSERT_TRUE(root.ok()) << root.status().message();
  EXPECT_EQ(root.value().attributeOr("v", ""), nasty);
  EXPECT_EQ(root.value().attributeOr("w", ""), nasty);
  EXPECT_EQ(root.value().text, nasty);
}

}  // namespace
}  // namespace braid::topology
