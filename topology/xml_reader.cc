#include "topology/xml_reader.h"

#include <cstring>

namespace braid::topology {

namespace {

// Destroying an element is recursive, so nesting is bounded: real topology
// files nest a dozen levels, hostile ones could nest millions.
constexpr size_t kMaxDepth = 512;

bool isSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

bool isNameStart(char c) {
  const auto u = static_cast<unsigned char>(c);
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == ':' || u >= 0x80;
}

bool isNameChar(char c) { return isNameStart(c) || (c >= '0' && c <= '9') || c == '-' || c == '.'; }

void appendUtf8(std::string* out, unsigned long code) {
  if (code < 0x80) {
    out->push_back(static_cast<char>(code));
  } else if (code < 0x800) {
    out->push_back(static_cast<char>(0xC0 | (code >> 6)));
    out->push_back(static_cast<char>(0x80 | (code & 0x3F)));
  } else if (code < 0x10000) {
    out->push_back(static_cast<char>(0xE0 | (code >> 12)));
    out->push_back(static_cast<char>(0x80 | ((code >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (code & 0x3F)));
  } else {
    out->push_back(static_cast<char>(0xF0 | (code >> 18)));
    out->push_back(static_cast<char>(0x80 | ((code >> 12) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | ((code >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (code & 0x3F)));
  }
}

bool allSpace(const std::string& text) {
  for (char c : text) {
    if (!isSpace(c)) return false;
  }
  return true;
}

// One pass over the text. Elements under construction live on an explicit
// stack, so the depth of the document never becomes the depth of our stack.
class Parser {
 public:
  Parser(const std::string& text, std::string source) : s_(text), source_(std::move(source)) {}

  Result<XmlElement> parse() {
    if (s_.compare(0, 3, "\xEF\xBB\xBF") == 0) pos_ = 3;  // a UTF-8 byte order mark
    BRAID_TRY(skipMisc(/*allowDoctype=*/true));
    if (atEnd()) return error(pos_, "no root element");
    if (s_[pos_] != '<') return error(pos_, "text before the root element");
    std::vector<XmlElement> open;
    XmlElement root;
    bool haveRoot = false;
    while (!haveRoot) {
      if (atEnd()) {
        return error(pos_, open.empty()
                               ? "no root element"
                               : "end of input inside <" + open.back().name + "> (opened on line " +
                                     std::to_string(open.back().line) + ")");
      }
      if (s_[pos_] != '<') {
        BRAID_TRY(readText(&open.back().text));
        continue;
      }
      if (startsWith("<!--")) {
        BRAID_TRY(skipComment());
      } else if (startsWith("<![CDATA[")) {
        BRAID_TRY(readCdata(&open.back().text));
      } else if (startsWith("<?")) {
        BRAID_TRY(skipProcessingInstruction());
      } else if (startsWith("<!")) {
        return error(pos_, "unexpected markup declaration inside <" + open.back().name + ">");
      } else if (startsWith("</")) {
        BRAID_TRY(closeElement(&open));
        XmlElement done = std::move(open.back());
        open.pop_back();
        finishText(&done);
        if (open.empty()) {
          root = std::move(done);
          haveRoot = true;
        } else {
          open.back().children.push_back(std::move(done));
        }
      } else {
        XmlElement element;
        bool selfClosing = false;
        BRAID_TRY(readStartTag(&element, &selfClosing));
        if (selfClosing) {
          if (open.empty()) {
            root = std::move(element);
            haveRoot = true;
          } else {
            open.back().children.push_back(std::move(element));
          }
        } else {
          if (open.size() >= kMaxDepth) {
            return error(pos_, "elements nested deeper than " + std::to_string(kMaxDepth));
          }
          open.push_back(std::move(element));
        }
      }
    }
    BRAID_TRY(skipMisc(/*allowDoctype=*/false));
    if (!atEnd()) return error(pos_, "content after the root element </" + root.name + ">");
    return root;
  }

 private:
  bool atEnd() const { return pos_ >= s_.size(); }
  bool startsWith(const char* prefix) const {
    return s_.compare(pos_, strlen(prefix), prefix) == 0;
  }

  int lineOf(size_t pos) {
    if (pos < linePos_) {
      linePos_ = 0;
      line_ = 1;
    }
    for (; linePos_ < pos && linePos_ < s_.size(); ++linePos_) {
      if (s_[linePos_] == '\n') ++line_;
    }
    return line_;
  }

  Status error(size_t pos, const std::string& message) {
    return invalidArgument(source_ + ":" + std::to_string(lineOf(pos)) + ": " + message);
  }

  void skipSpace() {
    while (!atEnd() && isSpace(s_[pos_])) ++pos_;
  }

  // Whitespace, comments and processing instructions between top-level
  // markup; before the root also the document type declaration.
  Status skipMisc(bool allowDoctype) {
    while (true) {
      skipSpace();
      if (startsWith("<!--")) {
        BRAID_TRY(skipComment());
      } else if (startsWith("<?")) {
        BRAID_TRY(skipProcessingInstruction());
      } else if (allowDoctype && startsWith("<!DOCTYPE")) {
        BRAID_TRY(skipDoctype());
      } else {
        return Status::success();
      }
    }
  }

  Status skipComment() {
    const size_t start = pos_;
    const size_t end = s_.find("-->", pos_ + 4);
    if (end == std::string::npos) return error(start, "comment never closed with -->");
    pos_ = end + 3;
    return Status::success();
  }

  Status skipProcessingInstruction() {
    const size_t start = pos_;
    const size_t end = s_.find("?>", pos_ + 2);
    if (end == std::string::npos) return error(start, "processing instruction never closed");
    pos_ = end + 2;
    return Status::success();
  }

  // <!DOCTYPE name [ internal subset ]>: quoted strings and comments may
  // hold '>' and ']', so they are stepped over whole.
  Status skipDoctype() {
    const size_t start = pos_;
    int brackets = 0;
    pos_ += 9;
    while (!atEnd()) {
      const char c = s_[pos_];
      if (c == '"' || c == '\'') {
        const size_t close = s_.find(c, pos_ + 1);
        if (close == std::string::npos) break;
        pos_ = close + 1;
      } else if (startsWith("<!--")) {
        BRAID_TRY(skipComment());
      } else {
        if (c == '[') ++brackets;
        if (c == ']') --brackets;
        ++pos_;
        if (c == '>' && brackets <= 0) return Status::success();
      }
    }
    return error(start, "<!DOCTYPE never closed");
  }

  Status readName(std::string* name, const char* what) {
    if (atEnd() || !isNameStart(s_[pos_])) {
      return error(pos_, std::string("expected ") + what + " name, found " + describeHere());
    }
    const size_t start = pos_;
    while (!atEnd() && isNameChar(s_[pos_])) ++pos_;
    *name = s_.substr(start, pos_ - start);
    return Status::success();
  }

  std::string describeHere() const {
    if (atEnd()) return "end of input";
    return "'" + std::string(1, s_[pos_]) + "'";
  }

  // Decodes one reference starting at '&' and appends it.
  Status readReference(std::string* out) {
    const size_t start = pos_;
    const size_t semi = s_.find(';', pos_);
    if (semi == std::string::npos || semi - pos_ > 12) {
      return error(start, "'&' that starts no entity (write &amp; for a literal &)");
    }
    const std::string name = s_.substr(pos_ + 1, semi - pos_ - 1);
    pos_ = semi + 1;
    static constexpr std::pair<const char*, char> kPredefined[] = {
        {"lt", '<'}, {"gt", '>'}, {"amp", '&'}, {"quot", '"'}, {"apos", '\''}};
    for (const auto& [entity, character] : kPredefined) {
      if (name == entity) {
        out->push_back(character);
        return Status::success();
      }
    }
    if (name.size() >= 2 && name[0] == '#') {
      const bool hex = name[1] == 'x';
      const std::string digits = name.substr(hex ? 2 : 1);
      char* end = nullptr;
      const unsigned long code = strtoul(digits.c_str(), &end, hex ? 16 : 10);
      const bool valid = !digits.empty() && *end == '\0' && code != 0 && code <= 0x10FFFF &&
                         !(code >= 0xD800 && code <= 0xDFFF);
      if (!valid) return error(start, "bad character reference &" + name + ";");
      appendUtf8(out, code);
      return Status::success();
    }
    return error(start, "unknown entity &" + name + ";");
  }

  Status readText(std::string* out) {
    while (!atEnd() && s_[pos_] != '<') {
      if (s_[pos_] == '&') {
        BRAID_TRY(readReference(out));
      } else {
        out->push_back(s_[pos_++]);
      }
    }
    return Status::success();
  }

  Status readCdata(std::string* out) {
    const size_t start = pos_;
    const size_t end = s_.find("]]>", pos_ + 9);
    if (end == std::string::npos) return error(start, "CDATA section never closed with ]]>");
    out->append(s_, pos_ + 9, end - pos_ - 9);
    pos_ = end + 3;
    return Status::success();
  }

  Status readAttributeValue(std::string* value) {
    const char quote = atEnd() ? '\0' : s_[pos_];
    if (quote != '"' && quote != '\'') {
      return error(pos_, "attribute value must be quoted, found " + describeHere());
    }
    const size_t start = pos_++;
    while (true) {
      if (atEnd())
        return error(start, "attribute value never closed with " + std::string(1, quote));
      const char c = s_[pos_];
      if (c == quote) break;
      if (c == '<') return error(pos_, "'<' inside an attribute value");
      if (c == '&') {
        BRAID_TRY(readReference(value));
      } else {
        // XML normalises literal white space in attribute values to spaces.
        value->push_back(isSpace(c) ? ' ' : c);
        ++pos_;
      }
    }
    ++pos_;
    return Status::success();
  }

  Status readStartTag(XmlElement* element, bool* selfClosing) {
    element->line = lineOf(pos_);
    ++pos_;  // '<'
    BRAID_TRY(readName(&element->name, "an element"));
    while (true) {
      const bool hadSpace = !atEnd() && isSpace(s_[pos_]);
      skipSpace();
      if (atEnd()) return error(pos_, "end of input inside the tag <" + element->name + ">");
      if (startsWith("/>")) {
        pos_ += 2;
        *selfClosing = true;
        return Status::success();
      }
      if (s_[pos_] == '>') {
        ++pos_;
        *selfClosing = false;
        return Status::success();
      }
      if (!hadSpace) {
        return error(pos_, "expected white space, '>' or '/>' in <" + element->name + ">, found " +
                               describeHere());
      }
      std::string key;
      BRAID_TRY(readName(&key, "an attribute"));
      skipSpace();
      if (atEnd() || s_[pos_] != '=') {
        return error(pos_, "attribute '" + key + "' of <" + element->name + "> has no '=value'");
      }
      ++pos_;
      skipSpace();
      std::string value;
      BRAID_TRY(readAttributeValue(&value));
      if (element->attribute(key) != nullptr) {
        return error(pos_, "attribute '" + key + "' given twice in <" + element->name + ">");
      }
      element->attributes.emplace_back(std::move(key), std::move(value));
    }
  }

  Status closeElement(std::vector<XmlElement>* open) {
    const size_t start = pos_;
    pos_ += 2;
    std::string name;
    BRAID_TRY(readName(&name, "an end tag"));
    skipSpace();
    if (atEnd() || s_[pos_] != '>') return error(pos_, "end tag </" + name + "> not closed by '>'");
    ++pos_;
    if (open->empty()) return error(start, "end tag </" + name + "> without a start tag");
    const XmlElement& top = open->back();
    if (top.name != name) {
      return error(start, "end tag </" + name + "> does not match <" + top.name +
                              "> opened on line " + std::to_string(top.line));
    }
    return Status::success();
  }

  static void finishText(XmlElement* element) {
    if (allSpace(element->text)) element->text.clear();
  }

  const std::string& s_;
  std::string source_;
  size_t pos_ = 0;
  size_t linePos_ = 0;
  int line_ = 1;
};

}  // namespace

const std::string* XmlElement::attribute(const std::string& key) const {
  for (const auto& [k, v] : attributes) {
    if (k == key) return &v;
  }
  return nullptr;
}

std::string XmlElement::attributeOr(const std::string& key, const std::string& fallback) const {
  const std::string* value = attribute(key);
  return value != nullptr ? *value : fallback;
}

std::vector<const XmlElement*> XmlElement::childrenNamed(const std::string& childName) const {
  std::vector<const XmlElement*> out;
  for (const XmlElement& child : children) {
    if (child.name == childName) out.push_back(&child);
  }
  return out;
}

Result<XmlElement> parseXml(const std::string& text, const std::string& sourceName) {
  return Parser(text, sourceName).parse();
}

std::string xmlEscape(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&apos;";
        break;
      default:
        out.push_back(c);
    }
  }
  return out;
}

}  // namespace braid::topology
