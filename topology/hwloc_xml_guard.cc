#include "topology/hwloc_xml_guard.h"

#include <hwloc.h>

#include <memory>
#include <string>
#include <utility>

namespace braid::topology {

namespace {

/// The bitmaps of an <object>: hwloc keeps a NULL for one whose text its own parser refuses,
/// and dereferences it later.
constexpr const char* kBitmapAttributes[] = {
    "cpuset",  "complete_cpuset",  "allowed_cpuset", "online_cpuset",
    "nodeset", "complete_nodeset", "allowed_nodeset"};

using Bitmap = std::unique_ptr<hwloc_bitmap_s, void (*)(hwloc_bitmap_t)>;

/// `text` read by hwloc's own bitmap parser; null when it refuses it.
Bitmap parseBitmap(const char* text) {
  Bitmap bitmap(hwloc_bitmap_alloc(), hwloc_bitmap_free);
  if (bitmap != nullptr && hwloc_bitmap_sscanf(bitmap.get(), text) != 0) bitmap.reset();
  return bitmap;
}

// pugixml walks the tree without recursion, so any depth xml_document.h lets through is safe.
class ObjectChecker : public pugi::xml_tree_walker {
 public:
  bool for_each(pugi::xml_node& node) override {
    // A set and the complete set it must lie in.
    static constexpr std::pair<const char*, const char*> kPairs[] = {
        {"cpuset", "complete_cpuset"}, {"nodeset", "complete_nodeset"}};
    if (!isElement(node) || std::string(node.name()) != "object") return true;
    const std::string object =
        std::string("<object type=\"") + node.attribute("type").value() + "\">";
    for (const auto& [set, complete] : kPairs) {
      if (node.attribute(set) && !node.attribute(complete)) {
        return refuse(node,
                      object + " has " + set + "= but no " + complete + "= (lstopo writes both)");
      }
    }
    for (const char* name : kBitmapAttributes) {
      const pugi::xml_attribute attribute = node.attribute(name);
      if (attribute && parseBitmap(attribute.value()) == nullptr) {
        return refuse(node, object + " has " + name + "=\"" + attribute.value() +
                                "\", which is not a bitmap");
      }
    }
    for (const auto& [set, complete] : kPairs) {
      if (!node.attribute(set)) continue;
      const Bitmap inner = parseBitmap(node.attribute(set).value());
      const Bitmap outer = parseBitmap(node.attribute(complete).value());
      if (inner == nullptr || outer == nullptr) return refuse(node, "out of memory");
      if (!hwloc_bitmap_isincluded(inner.get(), outer.get())) {
        return refuse(node, object + " has " + set + "=\"" + node.attribute(set).value() +
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
  ObjectChecker checker;
  document.root().traverse(checker);
  if (checker.bad) return document.error(checker.bad, checker.why);
  return Status::success();
}

}  // namespace braid::topology
