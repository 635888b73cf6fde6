// The drawing is well-formed XML (checked by a small tag matcher) with one
// box per step, one arrow per message and a legend.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "study.h"
#include "svg.h"

namespace braid::sim {
namespace {

// Whether every element opened is closed in order; counts the elements by name.
bool balanced(const std::string& xml, int* rects, int* lines, std::string* error) {
  std::vector<std::string> open;
  *rects = *lines = 0;
  size_t at = 0;
  while ((at = xml.find('<', at)) != std::string::npos) {
    const size_t end = xml.find('>', at);
    if (end == std::string::npos) {
      *error = "unclosed tag at " + std::to_string(at);
      return false;
    }
    const std::string tag = xml.substr(at + 1, end - at - 1);
    at = end + 1;
    if (tag.empty() || tag[0] == '?' || tag[0] == '!') continue;
    if (tag[0] == '/') {
      if (open.empty() || open.back() != tag.substr(1)) {
        *error = "</" + tag.substr(1) + "> closes <" + (open.empty() ? "" : open.back()) + ">";
        return false;
      }
      open.pop_back();
      continue;
    }
    const std::string name = tag.substr(0, tag.find_first_of(" \n/"));
    *rects += name == "rect";
    *lines += name == "line";
    if (tag.back() != '/') open.push_back(name);
  }
  if (!open.empty()) *error = "<" + open.back() + "> never closed";
  return open.empty();
}

TEST(Svg, DrawsEveryStepAndMessageOfARing) {
  Study study;
  study.nranks = 8;
  study.machine = defaultMachine(8);
  study.bytes = 1 << 20;
  Result<TimedCall> call = timeCall(study, true);
  ASSERT_TRUE(call.ok()) << call.status().message();
  SvgOptions options;
  options.title = "ring <all_reduce> & more";  // must be escaped
  const std::string svg = drawSchedule(8, 1, call.value().timing, options);
  EXPECT_EQ(svg.rfind("<?xml", 0), 0u);
  EXPECT_NE(svg.find("<svg xmlns=\"http://www.w3.org/2000/svg\""), std::string::npos);
  EXPECT_NE(svg.find("ring &lt;all_reduce&gt; &amp; more"), std::string::npos);
  int rects = 0, lines = 0;
  std::string error;
  ASSERT_TRUE(balanced(svg, &rects, &lines, &error)) << error;
  const int steps = static_cast<int>(call.value().timing.steps.size());
  const int messages = static_cast<int>(call.value().timing.messages.size());
  // A ring all-reduce round: 2N-1 steps per rank, 2N-2 of them received.
  EXPECT_EQ(steps % (8 * 15), 0);
  EXPECT_EQ(messages, steps / 15 * 14);
  // Boxes: background, lanes, steps, legend swatches; lines: axis, ticks,
  // messages, the legend's arrow.
  EXPECT_GE(rects, 1 + 8 + steps + 4);
  EXPECT_GE(lines, 1 + messages + 1);
  for (const char* word : {">send<", ">recv<", ">reduce<", ">copy<"}) {
    EXPECT_NE(svg.find(word), std::string::npos) << word;
  }
}

}  // namespace
}  // namespace braid::sim
