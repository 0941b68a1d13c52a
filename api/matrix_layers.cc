#include "api/matrix_layers.h"

#include <map>
#include <vector>

#include "core/drift.h"
#include "store/declared_support.h"
#include "store/suite_runs.h"

namespace gauntlet::api {
using nlohmann::json;

Result<std::optional<Declared>> DeclaredFor(store::Store& store, const Suite& suite, json* source) {
  auto stored = store::GetDeclared(store, suite.name);
  if (!stored.ok()) return stored.status();
  if (!*stored) return std::optional<Declared>();
  json body = **stored;
  if (source) *source = {{"url", body["source"].value("url", "")}, {"version", body["source"].value("version", "")},
                         {"updated_at", body["updated_at"]}};
  body.erase("updated_at");
  auto d = ParseDeclared(body, suite);
  if (!d.ok())
    return Status::Conflict("the declared support no longer fits " + suite.name + " v" + std::to_string(suite.version) +
                            ": " + d.status().field() + ": " + d.status().message() + "; PUT it again");
  return std::optional<Declared>(std::move(*d));
}

namespace {

using CellKey = std::pair<json, std::string>;  // (row values, column value), as the matrix keys cells

CellKey KeyOf(const ConfigRuns& c, const json& rows, const std::string& cols) {
  json rk = json::array();
  auto value = [&](const std::string& p) {
    auto it = c.config.find(p);
    return it == c.config.end() ? std::string() : it->second;
  };
  for (auto& r : rows) rk.push_back(value(r.get<std::string>()));
  return {rk, cols == "hardware" ? c.hardware : value(cols)};
}

json DriftCell(const std::vector<DriftItem>& items) {
  if (items.empty()) return nullptr;
  json counts = json::object();
  const DriftItem* top = &items[0];
  for (const auto& it : items) {
    counts[DriftKindName(it.kind)] = counts.value(DriftKindName(it.kind), int64_t{0}) + 1;
    if (it.kind < top->kind || (it.kind == top->kind && it.runs->config_key < top->runs->config_key)) top = &it;
  }
  const ConfigRuns& c = *top->runs;
  json by = json::array();
  if (top->rule) by.push_back("table");
  if (c.claim) by.push_back("framework");
  json cell = {{"kind", DriftKindName(top->kind)}, {"counts", counts}, {"config_key", c.config_key}, {"declared_by", by},
               {"signature", nullptr}, {"metric", nullptr}, {"reason", c.claim ? json(c.claim->reason) : json(nullptr)}};
  if (top->kind == DriftKind::kSupportedButFailing) cell["signature"] = c.latest_signature;
  if (top->kind == DriftKind::kUnsupportedButPassing)
    if (auto m = Summarize(c.metric))
      cell["metric"] = {{"name", c.metric_name}, {"unit", c.metric_unit}, {"mean", m->mean}, {"n", m->n}};
  return cell;
}

}  // namespace

Status AddJudgedLayer(store::Store& store, const std::string& layer, const std::optional<std::string>& fingerprint, json* m) {
  if (!(*m)["suite_version"].is_number_integer())
    return Status::Invalid("the " + layer + " layer judges one suite version: name it (or leave suite_version out)",
                           "suite_version");
  auto row = store.GetSuite((*m)["suite"].get<std::string>(), (*m)["suite_version"].get<int>());
  if (!row.ok()) return row.status();
  auto suite = ParseSuite(row->definition);
  if (!suite.ok()) return suite.status();
  suite->id = row->id;
  suite->version = row->version;
  auto declared = DeclaredFor(store, *suite, nullptr);
  if (!declared.ok()) return declared.status();
  const Declared* d = *declared ? &**declared : nullptr;
  auto runs = store::LoadSuiteRuns(store, {suite->id, std::nullopt, fingerprint, ""});
  if (!runs.ok()) return runs.status();
  const std::string cols = (*m)["cols"].get<std::string>();
  std::map<CellKey, std::vector<DriftItem>> by;
  for (const auto& c : *runs) by[KeyOf(c, (*m)["rows"], cols)].push_back(JudgeDrift(c, d));
  for (auto& cell : (*m)["cells"]) {
    auto it = by.find({cell["row"], cell["col"].get<std::string>()});
    const std::vector<DriftItem> none;
    const std::vector<DriftItem>& items = it == by.end() ? none : it->second;
    if (layer == "drift") {
      std::vector<DriftItem> ran;
      for (const auto& i : items)
        if (i.runs->runs > 0) ran.push_back(i);  // as GET /api/v1/drift: only what was observed
      cell["drift"] = DriftCell(ran);
      continue;
    }
    json counts = json::object();
    Evidence weakest = Evidence::kBenchmarked;
    for (const auto& i : items) {
      counts[EvidenceName(i.evidence)] = counts.value(EvidenceName(i.evidence), int64_t{0}) + 1;
      weakest = std::min(weakest, i.evidence);
    }
    cell["evidence"] = EvidenceName(items.empty() ? Evidence::kNone : weakest);
    cell["evidence_counts"] = counts;
  }
  (*m)["layer"] = layer;
  (*m)["declared"] = d ? json{{"url", d->url}, {"version", d->version}} : json(nullptr);
  return Status::Ok();
}

}  // namespace gauntlet::api
