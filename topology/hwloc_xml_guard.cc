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

/// Whether hwloc's own parser takes `text` as a bitmap.
bool isHwlocBitmap(const char* text) {
  std::unique_ptr<hwloc_bitmap_s, void (*)(hwloc_bitmap_t)> bitmap(hwloc_bitmap_alloc(),
                                                                   hwloc_bitmap_free);
  return bitmap != nullptr && hwloc_bitmap_sscanf(bitmap.get(), text) == 0;
}

// pugixml walks the tree without recursion, so any depth xml_document.h lets through is safe.
class ObjectChecker : public pugi::xml_tree_walker {
 public:
  bool for_each(pugi::xml_node& node) override {
    static constexpr std::pair<const char*, const char*> kPairs[] = {
        {"cpuset", "complete_cpuset"}, {"nodeset", "complete_nodeset"}};
    if (!isElement(node) || std::string(node.name()) != "object") return true;
    for (const auto& [set, complete] : kPairs) {
      if (node.attribute(set) && !node.attribute(complete)) {
        bad = node;
        why = std::string("<object type=\"") + node.attribute("type").value() + "\"> has " + set +
              "= but no " + complete + "= (lstopo writes both)";
        return false;
      }
    }
    for (const char* name : kBitmapAttributes) {
      const pugi::xml_attribute attribute = node.attribute(name);
      if (attribute && !isHwlocBitmap(attribute.value())) {
        bad = node;
        why = std::string("<object type=\"") + node.attribute("type").value() + "\"> has " + name +
              "=\"" + attribute.value() + "\", which is not a bitmap";
        return false;
      }
    }
    return true;
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
