#include "topology/xml_document.h"

#include <algorithm>
#include <cstring>

namespace braid::topology {

namespace {

// pugixml's defaults: CDATA, entities and character references decoded,
// white space in attribute values made spaces, line ends made '\n'; comments,
// processing instructions and the DOCTYPE are checked and skipped. UTF-8
// always, so that pugixml converts nothing and its offsets are offsets into
// our text (which is what makes lines right).
constexpr unsigned kParseOptions = pugi::parse_default;

// The last element in document order: the last start tag pugixml read
// before it stopped. The document itself when there is none.
pugi::xml_node lastElement(pugi::xml_node node) {
  while (true) {
    pugi::xml_node last;
    for (pugi::xml_node child = node.last_child(); child; child = child.previous_sibling()) {
      if (isElement(child)) {
        last = child;
        break;
      }
    }
    if (!last) return node;
    node = last;
  }
}

// What a failed end tag tells: pugixml stops at the first end tag that does
// not match and at the end of input inside an element, and leaves the tree it
// had built, without saying which element was open. After the last start tag
// it read come only end tags (and text, comments, CDATA, processing
// instructions), each closing the innermost open element, so replaying them
// from there, as pugixml did, finds both the open element and the end tag
// that did not match it.
struct OpenElement {
  pugi::xml_node element;  ///< empty: no element was open
  bool atEndTag = false;   ///< pugixml stopped at an end tag, not at the end of input
  size_t endTagAt = 0;     ///< where that end tag starts
  std::string endTag;      ///< its name
};

size_t skipPast(std::string_view text, size_t pos, std::string_view close) {
  const size_t at = text.find(close, pos);
  return at == std::string_view::npos ? text.size() : at + close.size();
}

OpenElement findOpenElement(std::string_view text, pugi::xml_node last) {
  OpenElement open;
  if (!isElement(last) || last.offset_debug() < 0) return open;
  // Past the last start tag; quoted values may hold '>'.
  size_t pos = static_cast<size_t>(last.offset_debug());
  while (pos < text.size() && text[pos] != '>') {
    if (text[pos] == '"' || text[pos] == '\'') {
      const size_t close = text.find(text[pos], pos + 1);
      pos = close == std::string_view::npos ? text.size() : close;
    }
    ++pos;
  }
  pugi::xml_node element = last;
  if (pos < text.size() && text[pos - 1] == '/') element = element.parent();  // <last/>
  ++pos;
  while (pos < text.size()) {
    const std::string_view rest = text.substr(pos);
    if (rest.substr(0, 4) == "<!--") {
      pos = skipPast(text, pos + 4, "-->");
    } else if (rest.substr(0, 9) == "<![CDATA[") {
      pos = skipPast(text, pos + 9, "]]>");
    } else if (rest.substr(0, 2) == "<?") {
      pos = skipPast(text, pos + 2, "?>");
    } else if (rest.substr(0, 2) == "</") {
      size_t nameEnd = pos + 2;
      while (nameEnd < text.size() && strchr(" \t\r\n>/<", text[nameEnd]) == nullptr) ++nameEnd;
      const std::string_view name = text.substr(pos + 2, nameEnd - pos - 2);
      if (!isElement(element) || name != element.name()) {
        open.atEndTag = true;
        open.endTagAt = pos;
        open.endTag = std::string(name.substr(0, 100));
        break;
      }
      element = element.parent();
      pos = skipPast(text, nameEnd, ">");
    } else if (rest[0] == '<') {
      break;  // a start tag: pugixml did not get this far
    } else {
      ++pos;
    }
  }
  if (isElement(element)) open.element = element;
  return open;
}

}  // namespace

XmlDocument::XmlDocument(std::string_view text, std::string sourceName)
    : source_(std::move(sourceName)) {
  lineStarts_.push_back(0);
  for (size_t pos = text.find('\n'); pos != std::string_view::npos;
       pos = text.find('\n', pos + 1)) {
    lineStarts_.push_back(pos + 1);
  }
}

Result<std::unique_ptr<XmlDocument>> XmlDocument::parse(std::string_view text,
                                                        const std::string& sourceName) {
  if (text.size() > kMaxXmlBytes) {
    return invalidArgument(sourceName + ": " + std::to_string(text.size()) +
                           " bytes, more than the " + std::to_string(kMaxXmlBytes >> 20) +
                           " MiB a topology file may hold");
  }
  std::unique_ptr<XmlDocument> document(new XmlDocument(text, sourceName));
  // pugixml stops at a NUL as at the end of input; say what it is instead.
  const size_t nul = text.find('\0');
  if (nul != std::string_view::npos) {
    return document->errorAt(nul, "a NUL byte: this is no XML text");
  }
  const pugi::xml_parse_result result =
      document->document_.load_buffer(text.data(), text.size(), kParseOptions, pugi::encoding_utf8);
  if (!result) return document->parseError(text, result);
  BRAID_TRY(document->checkStructure());
  return document;
}

int XmlDocument::lineAt(size_t offset) const {
  const auto after = std::upper_bound(lineStarts_.begin(), lineStarts_.end(), offset);
  return static_cast<int>(after - lineStarts_.begin());
}

int XmlDocument::lineOf(const pugi::xml_node& node) const {
  const ptrdiff_t offset = node.offset_debug();
  return offset < 0 ? 1 : lineAt(static_cast<size_t>(offset));
}

Status XmlDocument::errorAt(size_t offset, const std::string& message) const {
  return invalidArgument(source_ + ":" + std::to_string(lineAt(offset)) + ": " + message);
}

Status XmlDocument::error(const pugi::xml_node& node, const std::string& message) const {
  return invalidArgument(source_ + ":" + std::to_string(lineOf(node)) + ": " + message);
}

Status XmlDocument::parseError(std::string_view text, const pugi::xml_parse_result& result) const {
  const size_t offset =
      std::min(static_cast<size_t>(std::max<ptrdiff_t>(result.offset, 0)), text.size());
  const pugi::xml_node last = lastElement(document_);
  // The element pugixml was reading, for the messages: " in <cpu>".
  const std::string tag = isElement(last) ? std::string("<") + last.name() + ">" : "";
  const std::string in = tag.empty() ? "" : " in " + tag;
  switch (result.status) {
    case pugi::status_no_document_element:
      return errorAt(text.size(), "no root element");
    case pugi::status_end_element_mismatch: {
      const OpenElement open = findOpenElement(text, last);
      const std::string opened = open.element ? "<" + std::string(open.element.name()) +
                                                    "> opened on line " +
                                                    std::to_string(lineOf(open.element))
                                              : "";
      if (!open.atEndTag) {
        if (!open.element) return errorAt(text.size(), "end of input inside an element");
        return errorAt(text.size(), "end of input inside " + opened);
      }
      if (open.endTag.empty()) return errorAt(open.endTagAt, "end tag without a name, </>");
      if (!open.element) {
        return errorAt(open.endTagAt, "end tag </" + open.endTag + "> without a start tag");
      }
      return errorAt(open.endTagAt, "end tag </" + open.endTag + "> does not match " + opened);
    }
    case pugi::status_bad_attribute:
      return errorAt(offset, "malformed attribute" + in +
                                 " (expected name='value', quoted, apart from the next by white "
                                 "space)");
    case pugi::status_bad_start_element:
      return errorAt(offset, "malformed start tag" + (tag.empty() ? "" : " " + tag));
    case pugi::status_bad_end_element:
      return errorAt(offset, "malformed end tag" + in);
    case pugi::status_unrecognized_tag:
      return errorAt(offset,
                     "'<' that starts no element name, comment, CDATA section or "
                     "declaration" +
                         in);
    case pugi::status_bad_comment:
      return errorAt(offset, "comment never closed with -->, or holding --");
    case pugi::status_bad_cdata:
      return errorAt(offset, "CDATA section never closed with ]]>");
    case pugi::status_bad_pi:
      return errorAt(offset, "malformed processing instruction or <?xml ...?> declaration");
    case pugi::status_bad_doctype:
      return errorAt(offset, "malformed <!DOCTYPE> or markup declaration" + in);
    case pugi::status_bad_pcdata:
      return errorAt(offset, "malformed character data" + in);
    case pugi::status_out_of_memory:
      return errorAt(offset, "out of memory while parsing");
    default:
      return errorAt(offset, std::string("cannot parse: ") + result.description());
  }
}

std::string XmlDocument::canonicalText() const {
  struct StringWriter : pugi::xml_writer {
    void write(const void* data, size_t size) override {
      text.append(static_cast<const char*>(data), size);
    }
    std::string text;
  } writer;
  document_.save(writer, "", pugi::format_raw, pugi::encoding_utf8);
  return writer.text;
}

// Iterative, as the tree may be as deep as the input allows.
Status XmlDocument::checkStructure() const {
  const pugi::xml_node document = document_;
  int roots = 0;
  for (pugi::xml_node child = document.first_child(); child; child = child.next_sibling()) {
    if (isElement(child) && ++roots > 1) {
      return error(child, "content after the root element </" + std::string(root().name()) +
                              ">: <" + child.name() + ">");
    }
  }
  size_t elements = 0;
  std::vector<std::string_view> names;
  int depth = 1;
  pugi::xml_node node = document.first_child();
  while (node) {
    if (isElement(node)) {
      if (++elements > kMaxXmlElements) {
        return error(node, "more than " + std::to_string(kMaxXmlElements) + " elements");
      }
      if (depth > kMaxXmlDepth) {
        return error(node, "elements nested deeper than " + std::to_string(kMaxXmlDepth));
      }
      names.clear();
      for (pugi::xml_attribute attribute : node.attributes()) names.push_back(attribute.name());
      std::sort(names.begin(), names.end());
      const auto twice = std::adjacent_find(names.begin(), names.end());
      if (twice != names.end()) {
        return error(
            node, "attribute '" + std::string(*twice) + "' given twice in <" + node.name() + ">");
      }
      if (node.first_child()) {
        node = node.first_child();
        ++depth;
        continue;
      }
    }
    while (node != document && !node.next_sibling()) {
      node = node.parent();
      --depth;
    }
    if (node == document) break;
    node = node.next_sibling();
  }
  return Status::success();
}

std::optional<std::string> attributeValue(const pugi::xml_node& element, const char* key) {
  const pugi::xml_attribute attribute = element.attribute(key);
  if (!attribute) return std::nullopt;
  return std::string(attribute.value());
}

std::string attributeOr(const pugi::xml_node& element, const char* key,
                        const std::string& fallback) {
  const pugi::xml_attribute attribute = element.attribute(key);
  return attribute ? std::string(attribute.value()) : fallback;
}

}  // namespace braid::topology
