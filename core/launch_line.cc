#include "core/launch_line.h"

#include <algorithm>
#include <map>
#include <set>

namespace gauntlet {

std::string ShellQuote(const std::string& w) {
  if (!w.empty() && w.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-+=/.,:@%{}") ==
                        std::string::npos)
    return w;
  std::string out = "'";
  for (char c : w) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

namespace {

bool UsesParam(const std::string& s, const Suite& suite) {
  for (const auto& p : PlaceholdersIn(s))
    if (suite.Param(p)) return true;
  return false;
}

}  // namespace

LaunchLine LaunchFor(const Suite& suite, const Config& config) {
  std::map<std::string, std::string> vars;
  for (const auto& p : suite.params) {
    auto it = config.find(p.name);
    if (it != config.end()) vars[p.name] = it->second;
    else if (p.def) vars[p.name] = *p.def;
  }
  LaunchLine line;
  std::set<std::string> seen;  // the same flag in two stages is said once
  auto add = [&](std::vector<std::string> words) {
    std::string k;
    for (auto& w : words) k += w + '\0';
    if (!seen.insert(k).second) return;
    for (auto& w : words) line.flags.push_back(std::move(w));
  };
  for (const auto& st : suite.stages) {
    bool uses = false;
    for (size_t i = 0; i < st.argv.size(); ++i) {
      const std::string& a = st.argv[i];
      if (!UsesParam(a, suite)) continue;
      uses = true;
      const bool flag_before = i > 0 && st.argv[i - 1].size() > 1 && st.argv[i - 1][0] == '-' &&
                               PlaceholdersIn(st.argv[i - 1]).empty();
      if (flag_before) add({st.argv[i - 1], Substitute(a, vars)});
      else add({Substitute(a, vars)});
    }
    std::vector<std::string> env;
    if (st.spec.contains("env") && st.spec["env"].is_object())
      for (auto& [k, v] : st.spec["env"].items())
        if (v.is_string() && UsesParam(v.get<std::string>(), suite)) {
          env.push_back(k + "=" + Substitute(v.get<std::string>(), vars));
          uses = true;
        }
    for (auto& e : env)
      if (std::find(line.env.begin(), line.env.end(), e) == line.env.end()) line.env.push_back(e);
    if (uses && line.shell.empty()) {
      for (auto& e : env) {
        const size_t eq = e.find('=');
        line.shell += e.substr(0, eq + 1) + ShellQuote(e.substr(eq + 1)) + " ";
      }
      for (size_t i = 0; i < st.argv.size(); ++i) line.shell += (i ? " " : "") + ShellQuote(Substitute(st.argv[i], vars));
    }
  }
  return line;
}

}  // namespace gauntlet
