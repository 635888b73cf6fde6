#include "svg.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <string>
#include <utility>

#include "units.h"

namespace braid::sim {
namespace {

constexpr double kWidth = 1200;
constexpr double kLeft = 110;  // room for lane labels
constexpr double kRight = 30;
constexpr double kTop = 70;  // room for the heading
constexpr double kLaneHeight = 34;
constexpr double kBoxHeight = 22;
constexpr double kMinBoxWidth = 2;  // a step that only receives takes no time in the model

struct OpStyle {
  const char* name;
  const char* colour;
};

// Four kinds of step, as the legend names them.
const OpStyle kStyles[] = {
    {"send", "#4e79a7"},    // sends its input
    {"recv", "#59a14f"},    // receives into its output
    {"reduce", "#f28e2b"},  // reduces what it receives with its own data
    {"copy", "#b07aa1"},    // copies (and maybe forwards) without reducing
};

int styleOf(algo::StepOp op) {
  if (algo::stepReduces(op)) return 2;
  if (op == algo::StepOp::kSend) return 0;
  if (op == algo::StepOp::kRecv) return 1;
  return 3;
}

std::string escape(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (c == '&') {
      out += "&amp;";
    } else if (c == '<') {
      out += "&lt;";
    } else if (c == '>') {
      out += "&gt;";
    } else if (c == '"') {
      out += "&quot;";
    } else {
      out += c;
    }
  }
  return out;
}

std::string num(double v) {
  char text[32];
  snprintf(text, sizeof(text), "%.1f", v);
  return text;
}

// A round tick spacing that gives 5 to 10 ticks over `span`.
double tickStep(double span) {
  if (!(span > 0)) return 1;
  const double raw = span / 8;
  const double decade = std::pow(10.0, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 5.0, 10.0}) {
    if (m * decade >= raw) return m * decade;
  }
  return 10 * decade;
}

// "0", "2.5", "40": a tick's value without trailing zeros.
std::string tickLabel(double v) {
  char text[32];
  snprintf(text, sizeof(text), "%g", std::round(v * 1000) / 1000);
  return text;
}

}  // namespace

std::string drawSchedule(int nranks, int nchannels, const TimingResult& timing,
                         const SvgOptions& options) {
  const int lanes = nranks * nchannels;
  const double plotWidth = kWidth - kLeft - kRight;
  const double plotBottom = kTop + lanes * kLaneHeight;
  const double height = plotBottom + 90;
  const double span = timing.timeUs > 0 ? timing.timeUs : 1;
  auto x = [&](double us) { return kLeft + us / span * plotWidth; };
  auto laneMid = [&](int agent) { return kTop + (agent + 0.5) * kLaneHeight; };

  std::string svg;
  svg += "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  svg += "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + num(kWidth) + "\" height=\"" +
         num(height) + "\" viewBox=\"0 0 " + num(kWidth) + " " + num(height) +
         "\" font-family=\"sans-serif\" font-size=\"12\">\n";
  svg +=
      "<defs><marker id=\"head\" viewBox=\"0 0 10 10\" refX=\"10\" refY=\"5\" "
      "markerWidth=\"6\" markerHeight=\"6\" orient=\"auto-start-reverse\">"
      "<path d=\"M 0 0 L 10 5 L 0 10 z\" fill=\"#555\"/></marker></defs>\n";
  svg += "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  svg += "<text x=\"" + num(kLeft) + "\" y=\"24\" font-size=\"16\" font-weight=\"bold\">" +
         escape(options.title) + "</text>\n";
  svg += "<text x=\"" + num(kLeft) + "\" y=\"44\" fill=\"#444\">" + escape(options.subtitle) +
         "</text>\n";

  // Lanes, labelled by rank (and channel).
  for (int agent = 0; agent < lanes; ++agent) {
    std::string label = "rank " + std::to_string(agent / nchannels);
    if (nchannels > 1) label += " ch " + std::to_string(agent % nchannels);
    const double top = kTop + agent * kLaneHeight;
    svg += "<rect x=\"" + num(kLeft) + "\" y=\"" + num(top) + "\" width=\"" + num(plotWidth) +
           "\" height=\"" + num(kLaneHeight) + "\" fill=\"" +
           (agent % 2 == 0 ? "#f7f7f7" : "#ffffff") + "\"/>\n";
    svg += "<text x=\"" + num(kLeft - 8) + "\" y=\"" + num(laneMid(agent) + 4) +
           "\" text-anchor=\"end\">" + escape(label) + "</text>\n";
  }

  // Time axis, in us or ms.
  const bool ms = span >= 2000;
  const double step = tickStep(span);
  svg += "<line x1=\"" + num(kLeft) + "\" y1=\"" + num(plotBottom) + "\" x2=\"" +
         num(kLeft + plotWidth) + "\" y2=\"" + num(plotBottom) + "\" stroke=\"#333\"/>\n";
  for (double t = 0; t <= span * 1.0001; t += step) {
    svg += "<line x1=\"" + num(x(t)) + "\" y1=\"" + num(plotBottom) + "\" x2=\"" + num(x(t)) +
           "\" y2=\"" + num(plotBottom + 5) + "\" stroke=\"#333\"/>\n";
    svg += "<text x=\"" + num(x(t)) + "\" y=\"" + num(plotBottom + 18) +
           "\" text-anchor=\"middle\">" + tickLabel(ms ? t / 1e3 : t) + "</text>\n";
  }

  // Steps.
  svg += "<g stroke=\"#222\" stroke-width=\"0.5\">\n";
  for (const StepSpan& s : timing.steps) {
    const double left = x(s.startUs);
    const double width = std::max(kMinBoxWidth, x(s.endUs) - left);
    const OpStyle& style = kStyles[styleOf(s.op)];
    svg += "<rect x=\"" + num(left) + "\" y=\"" + num(laneMid(s.agent) - kBoxHeight / 2) +
           "\" width=\"" + num(width) + "\" height=\"" + num(kBoxHeight) + "\" fill=\"" +
           style.colour + "\"><title>" +
           escape("rank " + std::to_string(s.agent / nchannels) + " step " +
                  std::to_string(s.step) + ": " + algo::stepOpName(s.op) + ", " +
                  formatDuration(s.startUs) + " to " + formatDuration(s.endUs)) +
           "</title></rect>\n";
  }
  svg += "</g>\n";

  // Messages, over the boxes: from the sender's lane when the message left
  // to the edge of the receiving step's box, when it arrived or, if it
  // waited in the FIFO, when that step began.
  std::map<std::pair<int, uint64_t>, const StepSpan*> spans;
  for (const StepSpan& s : timing.steps) spans[{s.agent, s.step}] = &s;
  svg += "<g stroke=\"#555\" stroke-width=\"0.8\" stroke-opacity=\"0.7\" fill=\"none\">\n";
  for (const MessageArrow& m : timing.messages) {
    const double up = laneMid(m.toAgent) < laneMid(m.fromAgent) ? 1 : -1;
    double endUs = m.arrivedUs;
    auto receiving = spans.find({m.toAgent, m.toStep});
    if (receiving != spans.end()) endUs = std::max(endUs, receiving->second->startUs);
    svg += "<line x1=\"" + num(x(m.sentUs)) + "\" y1=\"" + num(laneMid(m.fromAgent)) + "\" x2=\"" +
           num(x(endUs)) + "\" y2=\"" + num(laneMid(m.toAgent) + up * kBoxHeight / 2) +
           "\" marker-end=\"url(#head)\"/>\n";
  }
  svg += "</g>\n";

  // Legend.
  const double legendY = plotBottom + 44;
  double at = kLeft;
  for (const OpStyle& style : kStyles) {
    svg += "<rect x=\"" + num(at) + "\" y=\"" + num(legendY - 11) +
           "\" width=\"16\" height=\"14\" fill=\"" + style.colour +
           "\" stroke=\"#222\" "
           "stroke-width=\"0.5\"/>\n";
    svg +=
        "<text x=\"" + num(at + 22) + "\" y=\"" + num(legendY) + "\">" + style.name + "</text>\n";
    at += 100;
  }
  svg += "<line x1=\"" + num(at) + "\" y1=\"" + num(legendY - 4) + "\" x2=\"" + num(at + 30) +
         "\" y2=\"" + num(legendY - 4) + "\" stroke=\"#555\" marker-end=\"url(#head)\"/>\n";
  svg += "<text x=\"" + num(at + 38) + "\" y=\"" + num(legendY) +
         "\">message (first slice sent to last slice received)</text>\n";
  svg += "<text x=\"" + num(kLeft) + "\" y=\"" + num(legendY + 22) + "\" fill=\"#444\">" +
         (ms ? "time (ms)" : "time (us)") +
         std::string("; a box is a step, from its first slice to its last") + "</text>\n";
  svg += "</svg>\n";
  return svg;
}

}  // namespace braid::sim
