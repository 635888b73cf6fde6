#include "topology/hwloc_xml_guard.h"

#include <hwloc.h>

#include <algorithm>
#include <cctype>
#include <memory>
#include <string>
#include <string_view>
#include <utility>

namespace braid::topology {

namespace {

/// The attributes hwloc reads as bitmaps: those of an <object> (hwloc keeps a NULL for one whose
/// text its parser refuses, and dereferences it later), a <cpukind>'s cpuset and a
/// <memattr_value>'s initiator_cpuset. Checked on any element: no other element has them.
constexpr const char* kBitmapAttributes[] = {
    "cpuset",  "complete_cpuset",  "allowed_cpuset",  "online_cpuset",
    "nodeset", "complete_nodeset", "allowed_nodeset", "initiator_cpuset"};

/// Whether `text` has the form hwloc writes bitmaps in: "0xf...f" (every bit), or fields of 1 to
/// 8 hex digits (32 bits each, 0x or not) between commas, of which the first may be "0xf...f"
/// (every bit above the fields). hwloc_bitmap_sscanf asserts on some texts outside this form
/// (",x1": `count > 0`, an abort of the program that loaded braid), so it only sees this form.
bool hasBitmapForm(std::string_view text) {
  constexpr std::string_view kEveryBit = "0xf...f";
  if (text.substr(0, kEveryBit.size()) == kEveryBit) {
    text.remove_prefix(kEveryBit.size());
    if (text.empty()) return true;
    if (text.front() != ',') return false;
    text.remove_prefix(1);
  }
  while (true) {
    const size_t comma = text.find(',');
    std::string_view field = text.substr(0, comma);
    if (field.size() > 2 && field[0] == '0' && (field[1] == 'x' || field[1] == 'X')) {
      field.remove_prefix(2);
    }
    if (field.empty() || field.size() > 8 || !std::all_of(field.begin(), field.end(), [](char c) {
          return isxdigit(static_cast<unsigned char>(c)) != 0;
        })) {
      return false;
    }
    if (comma == std::string_view::npos) return true;
    text.remove_prefix(comma + 1);
  }
}

using Bitmap = std::unique_ptr<hwloc_bitmap_s, void (*)(hwloc_bitmap_t)>;

/// `text` read by hwloc's own bitmap parser; null when it is not in hwloc's form or the parser
/// refuses it.
Bitmap parseBitmap(const char* text) {
  Bitmap bitmap(hwloc_bitmap_alloc(), hwloc_bitmap_free);
  if (bitmap != nullptr && (!hasBitmapForm(text) || hwloc_bitmap_sscanf(bitmap.get(), text) != 0)) {
    bitmap.reset();
  }
  return bitmap;
}

// pugixml walks the tree without recursion, so any depth xml_document.h lets through is safe.
class ElementChecker : public pugi::xml_tree_walker {
 public:
  bool for_each(pugi::xml_node& node) override {
    // A set and the complete set it must lie in.
    static constexpr std::pair<const char*, const char*> kPairs[] = {
        {"cpuset", "complete_cpuset"}, {"nodeset", "complete_nodeset"}};
    if (!isElement(node)) return true;
    const bool isObject = std::string(node.name()) == "object";
    const std::string element =
        isObject ? std::string("<object type=\"") + node.attribute("type").value() + "\">"
                 : std::string("<") + node.name() + ">";
    for (const auto& [set, complete] : kPairs) {
      if (isObject && node.attribute(set) && !node.attribute(complete)) {
        return refuse(node,
                      element + " has " + set + "= but no " + complete + "= (lstopo writes both)");
      }
    }
    for (const char* name : kBitmapAttributes) {
      const pugi::xml_attribute attribute = node.attribute(name);
      if (attribute && parseBitmap(attribute.value()) == nullptr) {
        return refuse(node, element + " has " + name + "=\"" + attribute.value() +
                                "\", which is not a bitmap");
      }
    }
    if (!isObject) return true;
    for (const auto& [set, complete] : kPairs) {
      if (!node.attribute(set)) continue;
      const Bitmap inner = parseBitmap(node.attribute(set).value());
      const Bitmap outer = parseBitmap(node.attribute(complete).value());
      if (inner == nullptr || outer == nullptr) return refuse(node, "out of memory");
      if (!hwloc_bitmap_isincluded(inner.get(), outer.get())) {
        return refuse(node, element + " has " + set + "=\"" + node.attribute(set).value() +
                                "\" outside its " + complete + "=\"" +
                                node.attribute(complete).value() + "\"");
      }
    }
    return true;
  }

  bool refuse(const pugi::xml_node& node, std::string message) {
    bad = node;
    why = std::move(message);
    return false;
  }

  pugi::xml_node bad;
  std::string why;
};

}  // namespace

Status checkHwlocXml(const XmlDocument& document) {
  ElementChecker checker;
  document.root().traverse(checker);
  if (checker.bad) return document.error(checker.bad, checker.why);
  return Status::success();
}

}  // namespace braid::topology
