#include "api/requests.h"

#include <string>
#include <utility>

#include "core/kernel_record.h"
#include "core/field_limits.h"
#include "core/hardware.h"
#include "core/utf8.h"
#include "core/sweep.h"
#include "core/basis.h"
#include "core/verdict.h"

namespace gauntlet::api {
using nlohmann::json;

Result<daemon::SweepSubmission> ParseSweepSubmission(json body) {
  auto req = ParseSweepRequest(body);
  if (!req.ok()) return req.status();
  return daemon::SweepSubmission{std::move(*req), std::move(body)};
}

namespace {
// The rerun's "configs": config keys, or objects of parameter values that a trial's config holds.
Status ParseRerunConfigs(const json& configs, daemon::RerunSelection& sel) {
  for (size_t i = 0; i < configs.size(); ++i) {
    const json& c = configs[i];
    const std::string field = "configs[" + std::to_string(i) + "]";
    if (c.is_string()) {
      sel.config_keys.insert(c.get<std::string>());
    } else if (c.is_object()) {
      std::map<std::string, std::string> match;
      for (auto& [p, v] : c.items()) {
        if (!v.is_string()) return Status::Invalid("a parameter value is a string", field + "." + p);
        match[p] = v.get<std::string>();
      }
      sel.config_matches.push_back(std::move(match));
    } else {
      return Status::Invalid("a config is a config key (\"a=x&b=y\") or an object of parameter values", field);
    }
  }
  return Status::Ok();
}
}  // namespace

Result<daemon::RerunSelection> ParseRerunSelection(const json& body) {
  daemon::RerunSelection sel;
  if (body.is_null()) return sel;
  if (!body.is_object()) return Status::Invalid("a rerun's body is an object (or empty)", "body");
  for (auto& [k, v] : body.items())
    if (k != "verdicts" && k != "configs" && k != "targets" && k != "dry_run")
      return Status::Invalid("unknown field (allowed: verdicts, configs, targets, dry_run)", k);
  if (body.contains("dry_run")) {
    if (!body["dry_run"].is_boolean()) return Status::Invalid("dry_run is true or false", "dry_run");
    sel.dry_run = body["dry_run"].get<bool>();
  }
  sel.names_verdicts = body.contains("verdicts");
  auto list = [&](const char* name) -> Result<json> {
    if (!body.contains(name)) return json::array();
    if (!body[name].is_array()) return Status::Invalid("must be a list", name);
    return body[name];
  };
  auto verdicts = list("verdicts");
  if (!verdicts.ok()) return verdicts.status();
  for (size_t i = 0; i < verdicts->size(); ++i) {
    const json& v = (*verdicts)[i];
    const std::optional<Verdict> parsed = v.is_string() ? ParseVerdict(v.get<std::string>()) : std::nullopt;
    if (!parsed)
      return Status::Invalid("not a verdict (one of " + JoinNames(VerdictNames()) + ")",
                             "verdicts[" + std::to_string(i) + "]");
    sel.verdicts.insert(*parsed);
  }
  auto configs = list("configs");
  if (!configs.ok()) return configs.status();
  if (Status s = ParseRerunConfigs(*configs, sel); !s.ok()) return s;
  auto targets = list("targets");
  if (!targets.ok()) return targets.status();
  for (size_t i = 0; i < targets->size(); ++i) {
    const json& t = (*targets)[i];
    if (t.is_number_integer() && t.get<int64_t>() >= 0) sel.target_indexes.insert(t.get<int64_t>());
    else if (t.is_string()) sel.hardware.insert(t.get<std::string>());
    else
      return Status::Invalid("a target is the sweep's target index (0, 1, ...) or a hardware class",
                             "targets[" + std::to_string(i) + "]");
  }
  return sel;
}

namespace {
// A fingerprint is what its probe printed: kept whole, so bounded as JSON text.
Status CheckFingerprint(const json& f) {
  const size_t bytes = SafeDump(f).size();
  if (bytes > limits::kFingerprintBytes)
    return Status::Invalid("the fingerprint is " + std::to_string(bytes) + " bytes of JSON; at most " +
                               std::to_string(limits::kFingerprintBytes),
                           "fingerprint");
  return Status::Ok();
}

// A free-text field of at most `max` bytes: kInvalid naming it past that.
Status CheckLength(const std::string& value, size_t max, const std::string& field) {
  if (value.size() <= max) return Status::Ok();
  return Status::Invalid(field + " is " + std::to_string(value.size()) + " bytes; at most " + std::to_string(max),
                         field);
}
}  // namespace

Result<daemon::Registration> ParseRegistration(const json& body) {
  if (!body.is_object()) return Status::Invalid("body is an object", "");
  daemon::Registration reg;
  reg.name = body.value("name", "");
  if (reg.name.empty() || reg.name.size() > 200)
    return Status::Invalid("name is required (at most 200 characters)", "name");
  auto inv = ParseInventory(body.value("inventory", json::object()));
  if (!inv.ok()) return Status::Invalid(inv.status().message(), "inventory." + inv.status().field());
  reg.inventory = std::move(*inv);
  if (body.contains("labels")) {
    if (Status s = CheckLabels(body["labels"], "labels"); !s.ok()) return s;
    for (auto& [k, v] : body["labels"].items()) reg.inventory.labels[k] = v.get<std::string>();
    if (reg.inventory.labels.size() > limits::kLabels)
      return Status::Invalid("at most " + std::to_string(limits::kLabels) + " labels, the inventory's included",
                             "labels");
  }
  reg.fingerprint = body.value("fingerprint", json::object());
  if (Status s = CheckFingerprint(reg.fingerprint); !s.ok()) return s;
  return reg;
}

daemon::HeartbeatRequest ParseHeartbeat(const json& body) {
  return daemon::HeartbeatRequest{body.is_object() && body.value("running", false)};
}

namespace {
// The report's "tests": {"cases": [{"stage", "name", "outcome", "verdict", "signature", "evidence",
// "seconds"}], "not_sent": N} (workers/test_outcomes.h). Cases past kMaxStoredTestCases are counted,
// not kept; a case that is not an object, lacks a name, or has a verdict that is not one is a 422.
Status ParseReportTests(const json& t, store::ResultRow* r) {
  if (!t.is_object()) return Status::Invalid("tests is an object with cases", "tests");
  if (t.contains("not_sent")) {
    if (!t["not_sent"].is_number_unsigned()) return Status::Invalid("not_sent is a count", "tests.not_sent");
    r->tests_not_stored = static_cast<int64_t>(std::min<uint64_t>(t["not_sent"].get<uint64_t>(), 1u << 30));
  }
  if (!t.contains("cases")) return Status::Ok();
  const json& cases = t["cases"];
  if (!cases.is_array()) return Status::Invalid("cases is a list", "tests.cases");
  for (size_t i = 0; i < cases.size(); ++i) {
    const std::string f = "tests.cases[" + std::to_string(i) + "]";
    const json& c = cases[i];
    if (!c.is_object() || !c.contains("name") || !c["name"].is_string())
      return Status::Invalid("a test case is an object with a name", f);
    const std::string v = c.value("verdict", "");
    const std::optional<Verdict> verdict = ParseVerdict(v);
    if (!verdict || !Info(*verdict).reported)
      return Status::Invalid("verdict '" + v + "' is not one of " +
                                 JoinNames(VerdictNames([](const VerdictInfo& x) { return x.reported; })),
                             f + ".verdict");
    if (r->tests.size() >= store::kMaxStoredTestCases) {
      ++r->tests_not_stored;
      continue;
    }
    auto str = [&](const char* k) { return c.contains(k) && c[k].is_string() ? c[k].get<std::string>() : std::string(); };
    store::TestCaseRow row{str("stage"), str("name"), str("outcome"), *verdict, str("signature"), str("evidence")};
    if (c.contains("seconds") && c["seconds"].is_number()) row.seconds = c["seconds"].get<double>();
    r->tests.push_back(std::move(row));
  }
  return Status::Ok();
}
}  // namespace

Result<store::ResultRow> ParseReport(json body) {
  if (!body.is_object()) return Status::Invalid("body is an object", "");
  store::ResultRow r;
  const std::string verdict = body.value("verdict", "");
  const std::optional<Verdict> parsed = ParseVerdict(verdict);
  if (!parsed || !Info(*parsed).reported)
    return Status::Invalid("verdict '" + verdict + "' is not one of " +
                               JoinNames(VerdictNames([](const VerdictInfo& i) { return i.reported; })),
                           "verdict");
  r.verdict = *parsed;
  auto str = [&](const char* k) -> std::string {
    return body.contains(k) && body[k].is_string() ? body[k].get<std::string>() : "";
  };
  r.signature = str("signature");
  if (Status s = CheckLength(r.signature, limits::kSignatureBytes, "signature"); !s.ok()) return s;
  r.evidence = str("evidence").substr(0, 2000);
  // An older worker sends no basis: the result is stored without one, never refused.
  if (const std::string b = str("basis"); !b.empty()) {
    r.basis = ParseBasis(b);
    if (!r.basis) {
      std::string names;
      for (int i = 0; i < kBasisCount; ++i) names += (i ? ", " : "") + std::string(Name(static_cast<Basis>(i)));
      return Status::Invalid("basis '" + b + "' is not one of " + names, "basis");
    }
  }
  r.failing_stage = str("failing_stage");
  if (Status s = CheckLength(r.failing_stage, limits::kStageNameBytes, "failing_stage"); !s.ok()) return s;
  if (body.contains("exit_code") && body["exit_code"].is_number_integer()) r.exit_code = body["exit_code"].get<int>();
  if (body.contains("signal") && body["signal"].is_string()) r.signal = body["signal"].get<std::string>();
  if (body.contains("metrics")) {
    if (!body["metrics"].is_object()) return Status::Invalid("metrics is an object", "metrics");
    r.metrics = std::move(body["metrics"]);
  }
  if (body.contains("stages")) {
    if (!body["stages"].is_array()) return Status::Invalid("stages is a list", "stages");
    r.stages = std::move(body["stages"]);
  }
  if (body.contains("fingerprint")) {
    if (Status s = CheckFingerprint(body["fingerprint"]); !s.ok()) return s;
    r.fingerprint = std::move(body["fingerprint"]);
  }
  if (body.contains("kernels") && !body["kernels"].is_null()) {
    auto k = NormalizeKernelRecordJson(body["kernels"]);
    if (!k.ok()) return k.status();
    r.kernels = std::move(*k);
  }
  if (body.contains("tests"))
    if (Status s = ParseReportTests(body["tests"], &r); !s.ok()) return s;
  return r;
}

Result<daemon::LauncherReport> ParseLauncherReport(const json& body) {
  if (!body.is_object()) return Status::Invalid("a launcher report is an object", "body");
  if (body.contains("jobs") && !body["jobs"].is_array()) return Status::Invalid("jobs is a list", "jobs");
  if (body.contains("jobs") && body["jobs"].size() > limits::kLauncherJobs)
    return Status::Invalid("at most " + std::to_string(limits::kLauncherJobs) + " jobs in one report", "jobs");
  if (body.contains("kind") && !body["kind"].is_string()) return Status::Invalid("kind is a string", "kind");
  daemon::LauncherReport r;
  r.kind = body.value("kind", "slurm");
  if (Status s = CheckLength(r.kind, limits::kLauncherKindBytes, "kind"); !s.ok()) return s;
  r.jobs = body.value("jobs", json::array());
  r.queued = body.value("queued", json());
  r.unplaceable = body.value("unplaceable", json());
  return r;
}

}  // namespace gauntlet::api
