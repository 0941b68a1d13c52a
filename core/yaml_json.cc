#include "core/yaml_json.h"

#include <yaml-cpp/yaml.h>

#include <fstream>
#include <regex>
#include <sstream>

namespace gauntlet {
using nlohmann::json;

namespace {
json Convert(const YAML::Node& n) {
  switch (n.Type()) {
    case YAML::NodeType::Null:
    case YAML::NodeType::Undefined: return nullptr;
    case YAML::NodeType::Sequence: {
      json a = json::array();
      for (const auto& e : n) a.push_back(Convert(e));
      return a;
    }
    case YAML::NodeType::Map: {
      json o = json::object();
      for (const auto& kv : n) o[kv.first.as<std::string>()] = Convert(kv.second);
      return o;
    }
    case YAML::NodeType::Scalar: {
      const std::string& s = n.Scalar();
      if (n.Tag() == "!") return s;  // quoted: always a string
      static const std::regex kInt("^[-+]?[0-9]+$");
      static const std::regex kFloat("^[-+]?([0-9]*\\.[0-9]+|[0-9]+\\.?[0-9]*)([eE][-+]?[0-9]+)?$");
      if (s == "true" || s == "True" || s == "TRUE") return true;
      if (s == "false" || s == "False" || s == "FALSE") return false;
      if (s == "null" || s == "~" || s == "Null" || s == "NULL") return nullptr;
      try {
        if (std::regex_match(s, kInt)) return std::stoll(s);
        if (std::regex_match(s, kFloat)) return std::stod(s);
      } catch (const std::exception&) {
      }
      return s;
    }
  }
  return nullptr;
}
}  // namespace

Result<json> YamlToJson(const std::string& text) {
  try {
    return Convert(YAML::Load(text));
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
      (void)json::parse(text);
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
