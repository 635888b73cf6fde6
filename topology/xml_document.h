// A topology file's XML, parsed by pugixml, with the limits and the error
// messages braid wants for files it did not write.
//
// Topology files come from users, from cloud vendors and from NCCL or
// lstopo on other machines, so they are read as hostile: pugixml does the
// parsing, and this class refuses what pugixml accepts but braid must not
// (more than one root element, an attribute given twice, NUL bytes) and what
// would cost unbounded time or memory in the loaders above it (files over
// kMaxXmlBytes, elements over kMaxXmlElements, nesting deeper than
// kMaxXmlDepth; the loaders recurse along the nesting). Every error is
// kInvalidArgument and starts "<source>:<line>: ", the line where the
// problem is ("<source>: " for a file too large to read at all).
//
// pugixml is lenient where braid's own reader was strict and where it does
// not matter to a topology: undeclared entities (&nbsp;) and a stray '&'
// stay as written, text outside the root element is ignored.
#pragma once

#include <pugixml.hpp>

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "braid/status.h"

namespace braid::topology {

/// The largest topology file read: hwloc's XML of a 4096-thread machine is
/// about 2 MB; pugixml needs up to ~18 bytes of memory per byte of input.
inline constexpr size_t kMaxXmlBytes = 16u << 20;
/// The most elements a topology file may hold (a cluster in braid's format
/// of 1000 hosts of 8 GPUs and 8 NICs is ~40000).
inline constexpr size_t kMaxXmlElements = 250000;
/// The deepest nesting accepted; real topology files nest under 20 levels.
inline constexpr int kMaxXmlDepth = 512;

class XmlDocument {
 public:
  /// Parses a whole file. `sourceName` (a file name) starts every error.
  static Result<std::unique_ptr<XmlDocument>> parse(std::string_view text,
                                                    const std::string& sourceName);

  XmlDocument(const XmlDocument&) = delete;
  XmlDocument& operator=(const XmlDocument&) = delete;

  /// The root element: never empty.
  pugi::xml_node root() const { return document_.document_element(); }
  const std::string& sourceName() const { return source_; }
  /// The line, from 1, where the start tag of `node` is.
  int lineOf(const pugi::xml_node& node) const;
  /// kInvalidArgument "<source>:<line of node>: <message>".
  Status error(const pugi::xml_node& node, const std::string& message) const;
  /// The document as pugixml read it, written out again: UTF-8 under a declaration that names
  /// no encoding, without DOCTYPE, comments or processing instructions. Another parser given a
  /// file braid has checked reads this, not the file: two parsers read a hostile file two ways
  /// (an encoding= pugixml ignores, a DOCTYPE), and checks made on pugixml's tree hold only
  /// for what pugixml read.
  std::string canonicalText() const;

 private:
  XmlDocument(std::string_view text, std::string sourceName);
  int lineAt(size_t offset) const;
  Status errorAt(size_t offset, const std::string& message) const;
  Status parseError(std::string_view text, const pugi::xml_parse_result& result) const;
  Status checkStructure() const;

  pugi::xml_document document_;
  std::string source_;
  std::vector<size_t> lineStarts_;  ///< offset of the first byte of each line
};

/// The value of attribute `key` of `element`, or nullopt when it has none.
std::optional<std::string> attributeValue(const pugi::xml_node& element, const char* key);
/// The value of attribute `key` of `element`, or `fallback` when it has none.
std::string attributeOr(const pugi::xml_node& element, const char* key,
                        const std::string& fallback);
/// Whether `node` is an element (not text, a comment, ...).
inline bool isElement(const pugi::xml_node& node) { return node.type() == pugi::node_element; }

}  // namespace braid::topology
