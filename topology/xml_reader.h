// A small XML reader for topology files: enough of XML 1.0 for braid's own
// format, NCCL's topology files and hwloc's exports, and nothing that needs
// a library inside libnccl.so.2.
//
// It reads elements, attributes (quoted with ' or "), character data, the
// five predefined entities and numeric character references, CDATA
// sections and comments; it skips the <?xml ...?> declaration, other
// processing instructions and <!DOCTYPE ...> (internal subset included)
// without interpreting them. Namespaces are not interpreted: a prefixed name
// is just a name. Every error names the line it was found on.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "braid/status.h"

namespace braid::topology {

struct XmlElement {
  std::string name;
  std::vector<std::pair<std::string, std::string>> attributes;  ///< in document order
  std::vector<XmlElement> children;
  std::string text;  ///< the character data directly inside, entities decoded
  int line = 0;      ///< where the start tag begins, from 1

  /// The value of attribute `key`, or null when absent.
  const std::string* attribute(const std::string& key) const;
  /// The value of attribute `key`, or `fallback` when absent.
  std::string attributeOr(const std::string& key, const std::string& fallback) const;
  /// The children called `childName`, in document order.
  std::vector<const XmlElement*> childrenNamed(const std::string& childName) const;
};

/// Parses a whole document and returns its root element. `sourceName` (a
/// file name) starts every error message: "topo.xml:12: ...".
Result<XmlElement> parseXml(const std::string& text, const std::string& sourceName = "xml");

/// `text` with &, <, >, " and ' written as entities: safe inside an
/// attribute value quoted either way, and as character data.
std::string xmlEscape(const std::string& text);

}  // namespace braid::topology
