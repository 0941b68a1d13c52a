// A program or test runner the node lacks, as the program that looked for it says so: the node's
// fault (infra_error, so the trial runs elsewhere), named, never the configuration's crash.
//   CPython's -m (runpy):  "/usr/bin/python3: No module named pytest"
//                          "python3: Error while finding module specification for 'pytest.x' (...)"
//   POSIX shells:          "sh: 1: pytest: not found" (dash), "bash: line 1: ctest: command not found"
//   env(1) in a shebang:   "/usr/bin/env: 'python3': No such file or directory"
// and a test runner that cannot write where it must ("Cannot create log file: LastTest.log", CTest).
// Each is the tool's own fixed wording (CPython Modules/main.c pymain_run_module via runpy's
// _get_module_details; dash's and bash's command lookup; coreutils env's execvp failure), matched
// by its structure: the tool's name first, the missing one's name where the format puts it.
#include <string>
#include <string_view>
#include <vector>

#include "classifier/builtin_rules.h"
#include "classifier/normalize.h"
#include "classifier/rule_words.h"

namespace gauntlet::classifier {
using namespace rule_words;

namespace {

// "python", "python3", "python3.11": CPython's own name for itself in argv[0].
bool IsPython(std::string_view path) {
  std::string_view b = PathBasename(path);
  if (b.rfind("python", 0) != 0) return false;
  for (char ch : b.substr(6))
    if (!(ch >= '0' && ch <= '9') && ch != '.') return false;
  return path.find(' ') == std::string_view::npos;
}

bool IsShell(std::string_view path) {
  const std::string_view b = PathBasename(path);
  return b == "sh" || b == "bash" || b == "dash" || b == "ksh" || b == "ash";
}

// A name as a program or module is spelled: no spaces, quotes stripped (ASCII or the typographic
// ones coreutils prints in UTF-8 locales).
std::string CleanName(std::string_view s) {
  for (std::string_view q : {"\xe2\x80\x98", "\xe2\x80\x99", "'", "\"", "`"}) {
    if (s.rfind(q, 0) == 0) s.remove_prefix(q.size());
    if (s.size() >= q.size() && s.substr(s.size() - q.size()) == q) s.remove_suffix(q.size());
  }
  if (s.empty() || s.size() > 120 || s.find(' ') != std::string_view::npos) return "";
  return std::string(s);
}

std::vector<std::string_view> SplitColons(std::string_view s) {
  std::vector<std::string_view> out;
  while (true) {
    const size_t at = s.find(": ");
    out.push_back(s.substr(0, at));
    if (at == std::string_view::npos) return out;
    s = s.substr(at + 2);
  }
}

std::optional<RuleHit> MissingTool(const LineContext& c) {
  const std::string_view line = TrimSpace(c.raw);
  const std::vector<std::string_view> parts = SplitColons(line);
  if (parts.size() < 2) return std::nullopt;
  std::string name;
  std::string what = "program_not_found";
  constexpr std::string_view kNoModule = "No module named ";
  if (IsPython(parts[0]) && parts[1].rfind(kNoModule, 0) == 0 && parts.size() == 2) {
    name = CleanName(parts[1].substr(kNoModule.size()));
    what = "runner_missing";
  } else if (constexpr std::string_view kSpec = "Error while finding module specification for '";
             IsPython(parts[0]) && parts[1].rfind(kSpec, 0) == 0) {
    std::string_view rest = parts[1].substr(kSpec.size());
    name = CleanName(rest.substr(0, rest.find('\'')));
    name = name.substr(0, name.find('.'));  // the package the dotted module lives in
    what = "runner_missing";
  } else if (IsShell(parts[0]) && parts.size() >= 3 &&
             (parts.back() == "not found" || parts.back() == "command not found")) {
    name = CleanName(parts[parts.size() - 2]);
  } else if (PathBasename(parts[0]) == "env" && parts.size() == 3 && parts[2] == "No such file or directory") {
    name = CleanName(parts[1]);
  }
  if (name.empty()) return std::nullopt;
  // Secondary: such a line explains a failure nothing more specific does (the stage's own program
  // could not start), but a helper a script runs may print it harmlessly ("sh: 1: git: not found")
  // before the real failure, which must keep deciding.
  return Hit("missing_tool", Verdict::kInfraError, "infra_error:" + what + ":" + name, Tier::kSecondary);
}

// CTest that cannot write its own log in the build folder it runs in (cmCTest.cxx: "Cannot create
// log file: LastTest.log", after "Problem opening file: <path>"): the folder is not the trial's to
// write (a build folder shared between trials, each its own user), so no test ran; the node's setup.
std::optional<RuleHit> RunnerCannotWrite(const LineContext& c) {
  if (TrimSpace(c.raw).rfind("Cannot create log file: ", 0) != 0) return std::nullopt;
  return Hit("missing_tool", Verdict::kInfraError, "infra_error:runner_cannot_write:ctest");
}

}  // namespace

void BuiltinRules::AddMissingToolRule() {
  Add("missing_tool", {"no module named", "module specification", "not found", "no such file or directory"}, MissingTool,
      Basis::kMessage);
  Add("runner_cannot_write", {"cannot create log file"}, RunnerCannotWrite, Basis::kMessage);
}

}  // namespace gauntlet::classifier
