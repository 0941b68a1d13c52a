#include "core/yaml_json.h"

#include <yaml-cpp/yaml.h>

#include <fstream>
#include <sstream>

#include "core/utf8.h"

namespace gauntlet {
using nlohmann::json;

namespace {
// yaml-cpp passes bytes that are not UTF-8 through into its strings, and JSON holding them cannot
// be serialised (dump() throws): a suite file with one Latin-1 byte stopped the daemon's start and
// `gauntlet submit`. Such text is refused here, where the line and column are still known.
const std::string& Utf8(const std::string& s, const YAML::Mark& at) {
  if (!ValidUtf8(s)) throw YAML::ParserException(at, "text that is not valid UTF-8");
  return s;
}

// Aliases make a YAML document a graph, and converting it to JSON copies what each alias names: an
// alias inside its own anchor ("a: &a {b: *a}") recursed until the stack overflowed, and nested
// aliases ("billion laughs") expand exponentially. So the conversion refuses nesting deeper than
// JSON bodies may be (http::ParseJson's 64) and more than kMaxNodes values in all; a real suite,
// sweep or config file is far inside both.
constexpr int kMaxDepth = 64;
constexpr size_t kMaxNodes = 100000;

struct Converter {
  size_t nodes = 0;

  json Convert(const YAML::Node& n, int depth) {
    if (depth > kMaxDepth)
      throw YAML::ParserException(n.Mark(), "nested deeper than " + std::to_string(kMaxDepth) +
                                                " levels (or an alias inside its own anchor)");
    if (++nodes > kMaxNodes)
      throw YAML::ParserException(n.Mark(), "more than " + std::to_string(kMaxNodes) + " values once aliases are expanded");
    switch (n.Type()) {
      case YAML::NodeType::Null:
      case YAML::NodeType::Undefined: return nullptr;
      case YAML::NodeType::Sequence: {
        json a = json::array();
        for (const auto& e : n) a.push_back(Convert(e, depth + 1));
        return a;
      }
      case YAML::NodeType::Map: {
        json o = json::object();
        for (const auto& kv : n) o[Utf8(kv.first.as<std::string>(), kv.first.Mark())] = Convert(kv.second, depth + 1);
        return o;
      }
      case YAML::NodeType::Scalar: return Scalar(n);
    }
    return nullptr;
  }

  static json Scalar(const YAML::Node& n) {
    const std::string& s = Utf8(n.Scalar(), n.Mark());
    if (n.Tag() == "!") return s;  // quoted: always a string
    if (s == "true" || s == "True" || s == "TRUE") return true;
    if (s == "false" || s == "False" || s == "FALSE") return false;
    if (s == "null" || s == "~" || s == "Null" || s == "NULL") return nullptr;
    try {
      switch (Number(s)) {
        case kInteger: return std::stoll(s);
        case kDecimal: return std::stod(s);
        case kNotANumber: break;
      }
    } catch (const std::exception&) {  // out of range: stays the text it is
    }
    return s;
  }

  // [-+]?[0-9]+ is an integer; [-+]?([0-9]*\.[0-9]+|[0-9]+\.?[0-9]*)([eE][-+]?[0-9]+)? a decimal.
  // Scanned by hand: std::regex_match recurses once per character, and a scalar of 50,000 digits
  // (well inside a 1 MiB request body) overflowed the stack.
  enum Kind { kNotANumber, kInteger, kDecimal };
  static Kind Number(const std::string& s) {
    size_t i = 0;
    auto digits = [&] {
      size_t from = i;
      while (i < s.size() && s[i] >= '0' && s[i] <= '9') ++i;
      return i - from;
    };
    if (i < s.size() && (s[i] == '-' || s[i] == '+')) ++i;
    const size_t whole = digits();
    if (i == s.size()) return whole ? kInteger : kNotANumber;
    if (s[i] == '.') {
      ++i;
      if (!whole && !digits()) return kNotANumber;
      digits();
    } else if (!whole) {
      return kNotANumber;
    }
    if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
      ++i;
      if (i < s.size() && (s[i] == '-' || s[i] == '+')) ++i;
      if (!digits()) return kNotANumber;
    }
    return i == s.size() ? kDecimal : kNotANumber;
  }
};
}  // namespace

Result<json> YamlToJson(const std::string& text) {
  try {
    return Converter().Convert(YAML::Load(text), 0);
  } catch (const YAML::Exception& e) {
    return Status::Invalid(std::string("YAML: ") + e.what(), "body");
  }
}

Result<json> ReadJsonOrYaml(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::NotFound("cannot read " + path);
  std::ostringstream ss;
  ss << in.rdbuf();
  const std::string text = ss.str();
  auto ends = [&](const char* e) {
    std::string ext(e);
    return path.size() >= ext.size() && path.compare(path.size() - ext.size(), ext.size(), ext) == 0;
  };
  if (ends(".yaml") || ends(".yml")) {
    auto r = YamlToJson(text);
    if (!r.ok()) return Status::Invalid(path + ": " + r.status().message(), "file");
    return r;
  }
  json j = json::parse(text, nullptr, false);
  if (j.is_discarded()) {
    try {
      [[maybe_unused]] const json again = json::parse(text);  // throws what the first parse did not keep
    } catch (const json::parse_error& e) {
      return Status::Invalid(path + ": malformed JSON: " + e.what(), "file");
    }
  }
  return j;
}

std::vector<std::string> DeclaredKeys(const std::string& text, const std::string& member) {
  std::vector<std::string> out;
  auto j = nlohmann::ordered_json::parse(text, nullptr, false);
  if (!j.is_discarded()) {
    if (j.is_object() && j.contains(member) && j[member].is_object())
      for (auto& [k, v] : j[member].items()) out.push_back(k);
    return out;
  }
  try {
    YAML::Node n = YAML::Load(text);
    if (n.IsMap() && n[member] && n[member].IsMap())
      for (const auto& kv : n[member]) out.push_back(kv.first.as<std::string>());
  } catch (const std::exception&) {
    out.clear();
  }
  return out;
}

std::vector<std::string> DeclaredKeysInFile(const std::string& path, const std::string& member) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return in ? DeclaredKeys(ss.str(), member) : std::vector<std::string>{};
}

}  // namespace gauntlet
