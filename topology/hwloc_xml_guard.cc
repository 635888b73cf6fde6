#include "topology/hwloc_xml_guard.h"

#include <string>
#include <utility>

namespace braid::topology {

namespace {

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
