#include "core/suite.h"

#include "core/dispatch.h"

#include "core/smoke_reference.h"

#include <algorithm>
#include <set>

#include "core/nearest.h"
#include "core/signature_rule.h"
#include "core/stage_limits.h"
#include "core/user_regex.h"

namespace gauntlet {
using nlohmann::json;

namespace {
const UserRegex& Arch() {
  static const UserRegex kArch = UserRegex::Fixed("^sm_[0-9]{2,3}[af]?$");
  return kArch;
}


Status ParseParam(const std::string& name, const json& v, ParamSpec* p) {
  std::string f = "parameters." + name;
  p->name = name;
  static const UserRegex kName = UserRegex::Fixed("^[A-Za-z_][A-Za-z0-9_]*$");
  if (!kName.FullMatch(name)) return Status::Invalid("parameter names are identifiers", f);
  if (v.is_array()) {
    if (v.empty()) return Status::Invalid("value list is empty", f);
    p->values.reserve(v.size());
    p->positions.reserve(v.size());
    for (size_t i = 0; i < v.size(); ++i) {
      auto s = ScalarString(v[i]);
      if (!s) return Status::Invalid("values must be strings or numbers", f + "[" + std::to_string(i) + "]");
      // A hash set, not a scan of the values so far: 100,000 values register in milliseconds.
      if (!p->positions.emplace(*s, static_cast<int>(i)).second)
        return Status::Invalid("duplicate value '" + *s + "'", f);
      p->values.push_back(*s);
    }
    return Status::Ok();
  }
  if (!v.is_object()) return Status::Invalid("a parameter is a list of values or an object", f);
  if (v.contains("values")) {
    ParamSpec inner;
    if (Status s = ParseParam(name, v["values"], &inner); !s.ok()) return Status::Invalid(s.message(), f + ".values");
    p->values = std::move(inner.values);
    p->positions = std::move(inner.positions);
  }
  if (v.contains("pattern")) {
    if (!v["pattern"].is_string()) return Status::Invalid("pattern must be a string", f + ".pattern");
    auto re = UserRegex::Compile(v["pattern"].get<std::string>());
    if (!re.ok()) return Status::Invalid("bad pattern: " + re.status().message(), f + ".pattern");
    p->pattern = v["pattern"].get<std::string>();
    p->compiled = std::move(*re);
  }
  if (v.contains("default")) {
    auto s = ScalarString(v["default"]);
    if (!s) return Status::Invalid("default must be a string or number", f + ".default");
    p->def = *s;
  }
  if (v.contains("ordered")) {
    if (!v["ordered"].is_boolean()) return Status::Invalid("ordered is true or false", f + ".ordered");
    // A bisection searches the declared list: its order is the parameter's meaning. (Read from the
    // definition by IsOrdered, core/bisect.h.)
    if (v["ordered"].get<bool>() && p->values.size() < 2)
      return Status::Invalid("an ordered parameter declares at least two values, oldest first", f + ".values");
  }
  if (p->values.empty() && !p->pattern) return Status::Invalid("needs values or a pattern", f);
  if (p->values.empty() && !p->def) return Status::Invalid("a pattern-only parameter needs a default", f);
  if (p->def && !p->Accepts(*p->def)) return Status::Invalid("default is not an accepted value", f + ".default");
  return Status::Ok();
}
}  // namespace

std::optional<std::string> ScalarString(const json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_number_integer()) return std::to_string(v.get<int64_t>());
  if (v.is_number()) return v.dump();
  if (v.is_boolean()) return v.get<bool>() ? "true" : "false";
  return std::nullopt;
}

int ParamSpec::IndexOf(const std::string& v) const {
  if (!positions.empty()) {
    auto it = positions.find(v);
    return it == positions.end() ? -1 : it->second;
  }
  auto it = std::find(values.begin(), values.end(), v);
  return it == values.end() ? -1 : static_cast<int>(it - values.begin());
}

bool ParamSpec::Accepts(const std::string& v) const {
  if (IndexOf(v) >= 0) return true;
  if (compiled) return compiled->FullMatch(v);
  if (!pattern) return false;
  auto re = UserRegex::Compile(*pattern);
  return re.ok() && re->FullMatch(v);
}

const ParamSpec* Suite::Param(const std::string& n) const {
  for (const auto& p : params)
    if (p.name == n) return &p;
  return nullptr;
}

namespace {
// The length of an identifier placeholder "{name}" starting at s[i] ('{'), or 0 if there is none:
// braces around anything else (a Python dict in an argv element) are literal text.
size_t PlaceholderAt(const std::string& s, size_t i) {
  size_t j = i + 1;
  if (j >= s.size() || !(isalpha(static_cast<unsigned char>(s[j])) || s[j] == '_')) return 0;
  while (j < s.size() && (isalnum(static_cast<unsigned char>(s[j])) || s[j] == '_')) ++j;
  return j < s.size() && s[j] == '}' ? j - i + 1 : 0;
}
}  // namespace

std::vector<std::string> PlaceholdersIn(const std::string& s) {
  std::vector<std::string> out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '{') continue;
    if (size_t n = PlaceholderAt(s, i)) {
      out.push_back(s.substr(i + 1, n - 2));
      i += n - 1;
    }
  }
  return out;
}

std::string Substitute(const std::string& s, const std::map<std::string, std::string>& vars) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    if (c == '{') {
      if (size_t n = PlaceholderAt(s, i)) {
        auto it = vars.find(s.substr(i + 1, n - 2));
        if (it != vars.end()) {
          out += it->second;
          i += n - 1;
          continue;
        }
      }
    }
    out += c;
  }
  return out;
}

Status ParseRequirements(const json& j, const std::string& f, Requirements* r) {
  if (!j.is_object()) return Status::Invalid("must be an object", f);
  for (auto& [k, v] : j.items()) {
    if (k == "gpus") {
      if (!v.is_number_integer() || v.get<int>() < 0 || v.get<int>() > 64)
        return Status::Invalid("gpus is an integer from 0 to 64", f + ".gpus");
      r->gpus = v.get<int>();
    } else if (k == "arch") {
      json arr = v.is_string() ? json::array({v}) : v;
      if (!arr.is_array()) return Status::Invalid("arch is a list like [\"sm_90\"]", f + ".arch");
      for (auto& a : arr) {
        if (!a.is_string() || !Arch().FullMatch(a.get<std::string>()))
          return Status::Invalid("arch is written sm_XY (e.g. sm_90, sm_120)", f + ".arch");
        r->arch.push_back(a.get<std::string>());
      }
    } else if (k == "min_memory_gb") {
      if (!v.is_number() || v.get<double>() < 0) return Status::Invalid("min_memory_gb is a number", f + "." + k);
      r->min_memory_gb = v.get<double>();
    } else if (k == "labels") {
      if (!v.is_object()) return Status::Invalid("labels is an object of strings", f + ".labels");
      for (auto& [lk, lv] : v.items()) {
        if (!lv.is_string()) return Status::Invalid("label values are strings", f + ".labels." + lk);
        r->labels[lk] = lv.get<std::string>();
      }
    } else {
      return Status::Invalid("unknown field", f + "." + k);
    }
  }
  return Status::Ok();
}

namespace {

// name, version, description, requires, parameters.
Status ParseHeader(const json& j, Suite* s) {
  if (!j.contains("name") || !j["name"].is_string()) return Status::Invalid("name is required", "name");
  s->name = j["name"];
  static const UserRegex kSuiteName = UserRegex::Fixed("^[a-z0-9][a-z0-9._-]{0,63}$");
  if (!kSuiteName.FullMatch(s->name))
    return Status::Invalid("name is lower-case letters, digits, '.', '_' or '-'", "name");
  if (j.contains("version")) {
    if (!j["version"].is_number_integer() || j["version"].get<int>() < 1)
      return Status::Invalid("version is a positive integer", "version");
    s->version = j["version"];
  }
  if (j.contains("description")) {
    if (!j["description"].is_string()) return Status::Invalid("description is a string", "description");
    s->description = j["description"];
  }
  if (j.contains("requires"))
    if (Status st = ParseRequirements(j["requires"], "requires", &s->requires_); !st.ok()) return st;
  if (!j.contains("parameters") || !j["parameters"].is_object())
    return Status::Invalid("parameters is an object", "parameters");
  for (auto& [name, v] : j["parameters"].items()) {
    ParamSpec p;
    if (Status st = ParseParam(name, v, &p); !st.ok()) return st;
    s->params.push_back(std::move(p));
  }
  return Status::Ok();
}

// " (did you mean NAME?)" for the suite's parameter nearest `word`, or "".
std::string DidYouMean(const std::string& word, const Suite& s) {
  std::vector<std::string> names;
  for (auto& p : s.params) names.push_back(p.name);
  auto n = Nearest(word, names);
  return n ? " (did you mean " + *n + "?)" : "";
}

// An argv whose every placeholder names a parameter or a built-in (`known`); copied to `out` if given.
Status CheckArgv(const json& argv, const std::string& f, const std::set<std::string>& known,
                 std::vector<std::string>* out) {
  if (!argv.is_array() || argv.empty()) return Status::Invalid("argv is a non-empty list of strings", f);
  for (size_t i = 0; i < argv.size(); ++i) {
    std::string fi = f + "[" + std::to_string(i) + "]";
    if (!argv[i].is_string()) return Status::Invalid("argv elements are strings", fi);
    for (auto& ph : PlaceholdersIn(argv[i]))
      if (!known.count(ph)) {
        const auto near = Nearest(ph, {known.begin(), known.end()});
        return Status::Invalid("placeholder {" + ph + "} names no parameter" + (near ? " (did you mean {" + *near + "}?)" : ""), fi);
      }
    if (out) out->push_back(argv[i]);
  }
  return Status::Ok();
}

// A typo in a field name is an unknown field, never a field silently ignored.
Status OnlyFields(const json& obj, std::initializer_list<const char*> allowed, const std::string& f) {
  for (auto& [k, v] : obj.items()) {
    bool known = false;
    std::string list;
    for (const char* a : allowed) {
      known = known || k == a;
      list += (list.empty() ? "" : ", ") + std::string(a);
    }
    if (!known) return Status::Invalid("unknown field (expected one of " + list + ")", f + (f.empty() ? "" : ".") + k);
  }
  return Status::Ok();
}

// A server stage's own fields: ready, smoke, bench.
Status CheckServerStage(const json& st, const std::string& f, const std::vector<ParamSpec>& params) {
  if (st.contains("ready") && !st["ready"].is_object()) return Status::Invalid("ready is an object", f + ".ready");
  if (st.contains("ready"))
    if (Status s = OnlyFields(st["ready"], {"path", "timeout_s"}, f + ".ready"); !s.ok()) return s;
  if (st.contains("smoke")) {
    const json& smoke = st["smoke"];
    if (!smoke.is_array() && !smoke.is_object())
      return Status::Invalid("smoke is a list of prompts, or an object with prompts and a reference", f + ".smoke");
    std::string fp = f + ".smoke";
    if (smoke.is_object()) {
      if (Status s = OnlyFields(smoke, {"prompts", "reference"}, fp); !s.ok()) return s;
      if (!smoke.contains("prompts") || !smoke["prompts"].is_array() || smoke["prompts"].empty())
        return Status::Invalid("prompts is a non-empty list", fp + ".prompts");
      if (smoke.contains("reference"))
        if (auto r = ParseSmokeReference(smoke["reference"], st.value("name", ""), &params, fp + ".reference"); !r.ok())
          return r.status();
      fp += ".prompts";
    }
    const json& prompts = SmokePrompts(st);
    for (size_t k = 0; k < prompts.size(); ++k) {
      const json& sm = prompts[k];
      std::string fk = fp + "[" + std::to_string(k) + "]";
      if (!sm.is_object() || !sm.contains("prompt") || !sm["prompt"].is_string())
        return Status::Invalid("a smoke entry needs a prompt", fk);
      if (Status s = OnlyFields(sm, {"prompt", "expect", "regex", "max_tokens", "chat"}, fk); !s.ok()) return s;
      if (sm.contains("regex")) {
        if (!sm["regex"].is_string()) return Status::Invalid("regex is a string", fk + ".regex");
        auto re = UserRegex::Compile(sm["regex"].get<std::string>());
        if (!re.ok()) return Status::Invalid("bad regex: " + re.status().message(), fk + ".regex");
      }
    }
  }
  if (st.contains("bench") && !st["bench"].is_object()) return Status::Invalid("bench is an object", f + ".bench");
  if (st.contains("bench"))
    if (Status s = OnlyFields(st["bench"], {"concurrency", "requests", "input_tokens", "output_tokens", "chat"}, f + ".bench");
        !s.ok())
      return s;
  return Status::Ok();
}

// stages[i], named `f`; `s` holds the parameters already.
Result<Stage> ParseStage(const json& st, const std::string& f, const Suite& s, const std::set<std::string>& known) {
  if (!st.is_object()) return Status::Invalid("a stage is an object", f);
  // value("kind", "") throws type_error for a kind that is not a string: ParseSuite returns errors,
  // and the suite folder is read outside any handler's net (the daemon died at start).
  const std::string kind = st.contains("kind") && st["kind"].is_string() ? st["kind"].get<std::string>() : "";
  if (kind != "command" && kind != "server" && kind != "probe")
    return Status::Invalid("unknown stage kind '" + kind + "' (command, server or probe)", f + ".kind");
  const bool server = kind == "server";
  // A probe asks the framework and records its answer (SUITE_FORMAT.md "probe stages"): it decides
  // no verdict of the config, so it has no gate, no kernels to judge and no test runner.
  if (Status s = server ? OnlyFields(st, {"name", "kind", "timeout_s", "gate_on", "argv", "env", "ready", "smoke", "bench",
                                          "chat", "description", "comment", "dispatch", "record_kernels", "limits"}, f)
                 : kind == "probe" ? OnlyFields(st, {"name", "kind", "timeout_s", "argv", "env", "framework", "description",
                                                     "comment", "limits"}, f)
                        : OnlyFields(st, {"name", "kind", "timeout_s", "gate_on", "argv", "env", "ranks", "junit", "description",
                                          "comment", "dispatch", "record_kernels", "limits"}, f);
      !s.ok())
    return s;
  if (st.contains("framework")) {
    const json& fw = st["framework"];
    if (!fw.is_string() || fw.get<std::string>().empty() || fw.get<std::string>().size() > 128)
      return Status::Invalid("framework names the fingerprint key of the framework asked (\"torch\"): a string of 1 to 128 bytes",
                             f + ".framework");
  }
  if (st.contains("limits"))
    if (Status s = ValidateStageLimits(st["limits"], f + ".limits"); !s.ok()) return s;
  Stage stage;
  stage.spec = st;
  if (!st.contains("name") || !st["name"].is_string() || st["name"].get<std::string>().empty())
    return Status::Invalid("name is required", f + ".name");
  stage.name = st["name"];
  stage.kind = kind;
  if (st.contains("timeout_s")) {
    // Bounded because it becomes an int (here and in the worker): 1e300 was undefined behaviour
    // and in practice a negative limit; under a second it became 0.
    const double t = st["timeout_s"].is_number() ? st["timeout_s"].get<double>() : 0;
    if (!(t >= 1 && t <= kMaxStageTimeoutS))
      return Status::Invalid("timeout_s is a number of seconds from 1 to " + std::to_string(kMaxStageTimeoutS) + " (a year)",
                             f + ".timeout_s");
    stage.timeout_s = static_cast<int>(t);
  }
  if (st.contains("gate_on")) {
    if (!st["gate_on"].is_array()) return Status::Invalid("gate_on is a list of parameter names", f + ".gate_on");
    for (auto& g : st["gate_on"]) {
      if (!g.is_string()) return Status::Invalid("gate_on names no parameter", f + ".gate_on");
      if (!s.Param(g.get<std::string>()))
        return Status::Invalid("gate_on names no parameter: '" + g.get<std::string>() + "'" + DidYouMean(g, s), f + ".gate_on");
      stage.gate_on.push_back(g);
    }
  }
  if (Status e = CheckArgv(st.value("argv", json()), f + ".argv", known, &stage.argv); !e.ok()) return e;
  if (st.contains("env")) {
    if (!st["env"].is_object()) return Status::Invalid("env is an object of strings", f + ".env");
    for (auto& [k, v] : st["env"].items())
      if (!v.is_string()) return Status::Invalid("env values are strings", f + ".env." + k);
  }
  if (st.contains("ranks")) {
    // One process per rank, supervised by the worker as torchrun's agent would (workers/rank_group.h).
    const json& r = st["ranks"];
    const bool ok = (r.is_number_integer() && r.get<int64_t>() >= 1 && r.get<int64_t>() <= 64) || r == "gpus";
    if (!ok) return Status::Invalid("ranks is an integer from 1 to 64 or \"gpus\" (one per GPU)", f + ".ranks");
  }
  // Kernel recording (docs/KERNELS.md "Kernel recorder"): on by default on GPU nodes.
  if (st.contains("record_kernels") && !st["record_kernels"].is_boolean())
    return Status::Invalid("record_kernels is true or false", f + ".record_kernels");
  if (st.contains("dispatch")) {
    if (st.value("record_kernels", true) == false)
      return Status::Invalid("dispatch expectations need the kernel record (record_kernels is false)", f + ".dispatch");
    if (Status e = CheckDispatchSpec(st["dispatch"], f + ".dispatch", s); !e.ok()) return e;
  }
  if (st.contains("junit")) {
    // The JUnit XML file the stage's test runner writes (pytest --junitxml, gtest
    // --gtest_output=xml:PATH, ctest --output-junit); relative paths are in the trial's workdir.
    const json& p = st["junit"];
    if (!p.is_string() || p.get<std::string>().empty() || p.get<std::string>().size() > 4096)
      return Status::Invalid("junit is the path of the JUnit XML file the stage writes (a non-empty string, e.g. "
                             "\"{workdir}/junit.xml\")", f + ".junit");
    if (p.get<std::string>().find('\0') != std::string::npos)
      return Status::Invalid("junit is a path and holds no NUL byte", f + ".junit");
    for (auto& ph : PlaceholdersIn(p.get<std::string>()))
      if (!known.count(ph)) return Status::Invalid("placeholder {" + ph + "} names no parameter", f + ".junit");
  }
  if (stage.kind == "server")
    if (Status e = CheckServerStage(st, f, s.params); !e.ok()) return e;
  return stage;
}

}  // namespace

Result<Suite> ParseSuite(const json& j) {
  Suite s;
  if (!j.is_object()) return Status::Invalid("a suite is a JSON object", "");
  if (Status st = ParseHeader(j, &s); !st.ok()) return st;
  std::set<std::string> known;
  for (auto& p : s.params) known.insert(p.name);
  for (auto& b : BuiltinPlaceholders()) known.insert(b);
  if (j.contains("fingerprint")) {
    const json& fp = j["fingerprint"];
    if (!fp.is_object() || !fp.contains("argv")) return Status::Invalid("fingerprint needs argv", "fingerprint");
    if (Status st = OnlyFields(fp, {"argv", "env", "timeout_s"}, "fingerprint"); !st.ok()) return st;
    if (Status st = CheckArgv(fp["argv"], "fingerprint.argv", known, nullptr); !st.ok()) return st;
  }
  if (!j.contains("stages") || !j["stages"].is_array() || j["stages"].empty())
    return Status::Invalid("stages is a non-empty list", "stages");
  std::set<std::string> stage_names;
  int references = 0;
  for (size_t i = 0; i < j["stages"].size(); ++i) {
    const std::string f = "stages[" + std::to_string(i) + "]";
    auto stage = ParseStage(j["stages"][i], f, s, known);
    if (!stage.ok()) return stage.status();
    if (!stage_names.insert(stage->name).second) return Status::Invalid("duplicate stage name", f + ".name");
    if (stage->spec.contains("smoke") && stage->spec["smoke"].is_object() && stage->spec["smoke"].contains("reference") &&
        references++ > 0)
      return Status::Invalid("only one server stage of a suite may declare a reference", f + ".smoke.reference");
    s.stages.push_back(std::move(*stage));
  }
  if (auto rules = ParseSignatureRules(j.contains("signatures") ? j["signatures"] : json()); !rules.ok())
    return rules.status();
  static const std::set<std::string> kTop = {"name", "version", "description", "requires", "parameters",
                                             "fingerprint", "stages", "signatures", "key_metric", "cost_s", "limits"};
  for (auto& [k, v] : j.items())
    if (!kTop.count(k)) return Status::Invalid("unknown field", k);
  if (j.contains("limits"))
    if (Status st = ValidateStageLimits(j["limits"], "limits"); !st.ok()) return st;
  // Read later by the coordinator (value("cost_s", 60.0)) and the matrix: a suite accepted with a
  // cost_s that is not a number made every sweep of it a 400 about the sweep's body.
  if (j.contains("cost_s") && !(j["cost_s"].is_number() && j["cost_s"].get<double>() >= 0))
    return Status::Invalid("cost_s is a number of seconds, 0 or more", "cost_s");
  if (j.contains("key_metric") && !j["key_metric"].is_string()) return Status::Invalid("key_metric is a string", "key_metric");
  s.definition = j;
  return s;
}

}  // namespace gauntlet
