// Labels re-judge stored trials inside one write: the trial's row, its latest result, an audit row,
// and the results index of each cell touched, rebuilt from that cell's stored results
// (store/cell_rebuild.h), so the matrix, regressions and drift read the new verdicts at once.
#include "store/labels.h"

#include <set>
#include <tuple>

#include "core/basis.h"
#include "store/cell_rebuild.h"
#include "store/store_rows.h"

namespace gauntlet::store {
using nlohmann::json;

namespace {

constexpr int64_t kMaxRejudged = 200000;  // trials one label re-judges in its write (bounded)

// The failing verdicts a triage group can hold, as SQL.
constexpr const char* kFailures = "('crashed', 'wrong_output', 'oom', 'unsupported', 'timeout', 'infra_error', 'fallback')";
// A result judged from the exit status alone; rows stored before bases existed by their signature
// (core/basis.h UnclassifiedSignature).
constexpr const char* kUnclassified =
    "(r.basis = 'exit_status' OR (r.basis = '' AND (r.signature LIKE 'crashed:exit\\_code:%' ESCAPE '\\' OR"
    " (r.signature LIKE 'crashed:signal:%' AND r.signature NOT IN ('crashed:signal:SIGSEGV', 'crashed:signal:SIGILL',"
    " 'crashed:signal:SIGBUS', 'crashed:signal:SIGFPE')))))";

Label ReadLabel(sql::Stmt& s) {
  Label l;
  l.id = s.Int(0);
  l.signature = s.Text(1);
  l.match = s.Text(2);
  if (!s.IsNull(3)) l.suite = s.Text(3);
  l.verdict = detail::VerdictColumn(s.TextView(4));
  l.new_signature = s.Text(5);
  l.note = s.Text(6);
  l.created_by = s.Text(7);
  l.created_at = s.Int(8);
  if (!s.IsNull(9)) l.withdrawn_at = s.Int(9);
  l.withdrawn_by = s.IsNull(10) ? "" : s.Text(10);
  l.rejudged = s.Int(11);
  return l;
}

constexpr const char* kLabelCols =
    "SELECT id, signature, match, suite, verdict, new_signature, note, created_by, created_at, withdrawn_at,"
    " withdrawn_by, rejudged, announced FROM labels";

struct Touched {
  int64_t trial = 0, attempt = 0;
  std::string verdict, signature, suite, config_key, hardware;
  int64_t version = 0;
  std::string basis;  // the latest result's, before the change
};

// Sets trial `t`'s verdict and signature (its row and its latest result) and records the change.
void Rejudge(sql::Db& db, const Touched& t, const std::string& verdict, const std::string& signature,
             const std::string& basis, int64_t label, const std::string& by, int64_t now) {
  auto& u = db.Cached("UPDATE trials SET verdict = ?, signature = ? WHERE id = ?");
  u.Bind(1, verdict).Bind(2, signature).Bind(3, t.trial).Run();
  auto& r = db.Cached("UPDATE results SET verdict = ?, signature = ?, basis = ? WHERE trial_id = ? AND attempt = ?");
  r.Bind(1, verdict).Bind(2, signature).Bind(3, basis).Bind(4, t.trial).Bind(5, t.attempt).Run();
  auto& a = db.Cached(
      "INSERT INTO verdict_audit(trial_id, label_id, from_verdict, from_signature, from_basis, to_verdict, to_signature, at, by)"
      " VALUES(?,?,?,?,?,?,?,?,?)");
  a.Bind(1, t.trial).Bind(2, label).Bind(3, t.verdict).Bind(4, t.signature).Bind(5, t.basis).Bind(6, verdict);
  a.Bind(7, signature).Bind(8, now).Bind(9, by).Run();
}

void RebuildTouched(sql::Db& db, const std::vector<Touched>& touched) {
  std::set<std::tuple<std::string, int64_t, std::string, std::string>> cells;
  for (const Touched& t : touched) cells.emplace(t.suite, t.version, t.config_key, t.hardware);
  for (const auto& [suite, version, key, hw] : cells) RebuildCell(db, suite, version, key, hw);
}

}  // namespace

bool LabelMatches(const Label& l, const std::string& suite, const std::string& signature, const std::string& evidence) {
  if (l.withdrawn_at || l.signature != signature) return false;
  if (l.suite && *l.suite != suite) return false;
  return l.match.empty() || evidence.find(l.match) != std::string::npos;
}

std::string LabelSignature(const Label& l) {
  return !l.new_signature.empty() ? l.new_signature : std::string(Name(l.verdict)) + ":label:" + std::to_string(l.id);
}

Result<std::vector<TriageItem>> Triage(Store& store, const std::optional<std::string>& suite, int limit) {
  return detail::Guard([&]() -> Result<std::vector<TriageItem>> {
    return store.Read([&](sql::Db& db) -> Result<std::vector<TriageItem>> {
      std::string sql =
          std::string("SELECT r.signature, r.evidence, COUNT(*), MAX(t.id), group_concat(DISTINCT su.name)"
                      " FROM trials t JOIN suites su ON su.id = t.suite_id"
                      " JOIN results r ON r.trial_id = t.id AND r.attempt = (SELECT MAX(attempt) FROM results WHERE trial_id = t.id)"
                      " WHERE t.state = 'done' AND t.verdict IN ") +
          kFailures + " AND " + kUnclassified + (suite ? " AND su.name = ?" : "") +
          " GROUP BY r.signature, r.evidence ORDER BY COUNT(*) DESC, MAX(t.id) DESC LIMIT ?";
      auto s = db.Prepare(sql);
      int i = 0;
      if (suite) s.Bind(++i, *suite);
      s.Bind(++i, static_cast<int64_t>(std::clamp(limit, 1, 500)));
      std::vector<TriageItem> out;
      while (s.Step()) {
        TriageItem it{s.Text(0), s.Text(1), s.Int(2), s.Int(3), {}};
        std::string names = s.IsNull(4) ? "" : s.Text(4);
        for (size_t at = 0; at <= names.size() && it.suites.size() < 8;) {
          size_t comma = names.find(',', at);
          if (comma == std::string::npos) comma = names.size();
          if (comma > at) it.suites.push_back(names.substr(at, comma - at));
          at = comma + 1;
        }
        out.push_back(std::move(it));
      }
      return out;
    });
  });
}

Result<Label> AddLabel(Store& store, Label l) {
  if (l.signature.empty()) return Status::Invalid("name the signature to label", "signature");
  if (!Info(l.verdict).rule || (l.verdict == Verdict::kPassed && l.match.empty()))
    return Status::Invalid("a label gives a verdict a signature rule may give (passed only with a match)", "verdict");
  if (l.signature.size() > 512 || l.match.size() > 512 || l.note.size() > 2000 || l.new_signature.size() > 512)
    return Status::Invalid("signature and match are at most 512 bytes, the note 2000", "note");
  return detail::Guard([&]() -> Result<Label> {
    return store.Write([&](sql::Db& db) -> Result<Label> {
      l.created_at = NowMs();
      auto ins = db.Prepare(
          "INSERT INTO labels(signature, match, suite, verdict, new_signature, note, created_by, created_at)"
          " VALUES(?,?,?,?,?,?,?,?)");
      ins.Bind(1, l.signature).Bind(2, l.match).Bind(3, l.suite).Bind(4, Name(l.verdict)).Bind(5, l.new_signature);
      ins.Bind(6, l.note).Bind(7, l.created_by).Bind(8, l.created_at).Run();
      l.id = db.LastInsertId();
      const std::string signature = LabelSignature(l);
      auto q = db.Prepare(
          "SELECT t.id, r.attempt, t.verdict, t.signature, su.name, su.version, t.config_key,"
          " COALESCE(NULLIF(r.hardware, ''), t.hardware, ''), r.evidence, r.basis"
          " FROM trials t JOIN suites su ON su.id = t.suite_id"
          " JOIN results r ON r.trial_id = t.id AND r.attempt = (SELECT MAX(attempt) FROM results WHERE trial_id = t.id)"
          " WHERE t.state = 'done' AND t.signature = ? ORDER BY t.id LIMIT ?");
      q.Bind(1, l.signature).Bind(2, kMaxRejudged);
      std::vector<Touched> touched;
      while (q.Step()) {
        Touched t{q.Int(0), q.Int(1), q.Text(2), q.Text(3), q.Text(4), q.Text(6), q.Text(7), q.Int(5), q.Text(9)};
        if (LabelMatches(l, t.suite, t.signature, q.Text(8))) touched.push_back(std::move(t));
      }
      for (const Touched& t : touched)
        Rejudge(db, t, std::string(Name(l.verdict)), signature, std::string(Name(Basis::kLabel)), l.id, l.created_by,
                l.created_at);
      l.rejudged = static_cast<int64_t>(touched.size());
      auto n = db.Prepare("UPDATE labels SET rejudged = ?, new_signature = ? WHERE id = ?");
      n.Bind(1, l.rejudged).Bind(2, l.new_signature).Bind(3, l.id).Run();
      RebuildTouched(db, touched);
      return l;
    });
  });
}

Result<Label> WithdrawLabel(Store& store, int64_t id, const std::string& by) {
  return detail::Guard([&]() -> Result<Label> {
    return store.Write([&](sql::Db& db) -> Result<Label> {
      auto s = db.Prepare(std::string(kLabelCols) + " WHERE id = ?");
      s.Bind(1, id);
      if (!s.Step()) return Status::NotFound("no label " + std::to_string(id));
      Label l = ReadLabel(s);
      if (l.withdrawn_at) return Status::Invalid("label " + std::to_string(id) + " is already withdrawn", "id");
      const int64_t now = NowMs();
      const std::string signature = LabelSignature(l);
      // The trials it changed that still carry its verdict, with what they had before it.
      auto q = db.Prepare(
          "SELECT a.trial_id, r.attempt, t.verdict, t.signature, su.name, su.version, t.config_key,"
          " COALESCE(NULLIF(r.hardware, ''), t.hardware, ''), a.from_verdict, a.from_signature, a.from_basis, r.basis"
          " FROM verdict_audit a JOIN trials t ON t.id = a.trial_id JOIN suites su ON su.id = t.suite_id"
          " JOIN results r ON r.trial_id = t.id AND r.attempt = (SELECT MAX(attempt) FROM results WHERE trial_id = t.id)"
          " WHERE a.label_id = ? AND a.to_signature = ? AND t.signature = ? AND t.verdict = ?");
      q.Bind(1, id).Bind(2, signature).Bind(3, signature).Bind(4, Name(l.verdict));
      struct Back {
        Touched now;
        std::string verdict, signature, basis;  // what it had before the label
      };
      std::vector<Back> back;
      while (q.Step())
        back.push_back({{q.Int(0), q.Int(1), q.Text(2), q.Text(3), q.Text(4), q.Text(6), q.Text(7), q.Int(5), q.Text(11)},
                        q.Text(8), q.Text(9), q.Text(10)});
      std::vector<Touched> touched;
      for (const Back& b : back) {
        Rejudge(db, b.now, b.verdict, b.signature, b.basis, id, by, now);  // its basis back too
        touched.push_back(b.now);
      }
      auto u = db.Prepare("UPDATE labels SET withdrawn_at = ?, withdrawn_by = ?, rejudged = ? WHERE id = ?");
      u.Bind(1, now).Bind(2, by).Bind(3, static_cast<int64_t>(touched.size())).Bind(4, id).Run();
      l.withdrawn_at = now;
      l.withdrawn_by = by;
      l.rejudged = static_cast<int64_t>(touched.size());
      RebuildTouched(db, touched);
      return l;
    });
  });
}

Result<std::vector<Label>> ListLabels(Store& store) {
  return detail::Guard([&]() -> Result<std::vector<Label>> {
    return store.Read([&](sql::Db& db) {
      auto s = db.Prepare(std::string(kLabelCols) + " ORDER BY id DESC LIMIT 1000");
      std::vector<Label> out;
      while (s.Step()) out.push_back(ReadLabel(s));
      return out;
    });
  });
}

Result<std::vector<Label>> ActiveLabels(Store& store) {
  return detail::Guard([&]() -> Result<std::vector<Label>> {
    return store.Read([&](sql::Db& db) {
      auto s = db.Prepare(std::string(kLabelCols) + " WHERE withdrawn_at IS NULL ORDER BY id");
      std::vector<Label> out;
      while (s.Step()) out.push_back(ReadLabel(s));
      return out;
    });
  });
}

Result<std::vector<VerdictChange>> TrialAudit(Store& store, int64_t trial) {
  return detail::Guard([&]() -> Result<std::vector<VerdictChange>> {
    return store.Read([&](sql::Db& db) {
      auto s = db.Prepare(
          "SELECT label_id, from_verdict, from_signature, to_verdict, to_signature, by, at FROM verdict_audit"
          " WHERE trial_id = ? ORDER BY id LIMIT 100");
      s.Bind(1, trial);
      std::vector<VerdictChange> out;
      while (s.Step()) out.push_back({s.Int(0), s.Text(1), s.Text(2), s.Text(3), s.Text(4), s.Text(5), s.Int(6)});
      return out;
    });
  });
}

Result<std::vector<LabelNews>> UnannouncedLabelNews(Store& store, int limit) {
  return detail::Guard([&]() -> Result<std::vector<LabelNews>> {
    return store.Read([&](sql::Db& db) {
      // announced: 0 nothing yet, 1 its labelling, 2 its withdrawal too (migration 19).
      auto& s = db.Cached(std::string(kLabelCols) +
                          " WHERE announced = 0 OR (withdrawn_at IS NOT NULL AND announced < 2) ORDER BY id LIMIT ?");
      s.Bind(1, limit);
      std::vector<LabelNews> out;
      std::vector<int64_t> announced;
      while (s.Step()) {
        out.push_back({ReadLabel(s), false, {}});
        announced.push_back(s.Int(12));
      }
      s.Reset();
      auto& t = db.Cached("SELECT trial_id FROM verdict_audit WHERE label_id = ? AND at = ? ORDER BY trial_id LIMIT ?");
      for (size_t i = 0; i < out.size(); ++i) {
        LabelNews& n = out[i];
        n.withdrawn = announced[i] >= 1;
        t.Bind(1, n.label.id).Bind(2, n.withdrawn ? *n.label.withdrawn_at : n.label.created_at).Bind(3, LabelNews::kNewsTrials);
        while (t.Step()) n.trials.push_back(t.Int(0));
        t.Reset();
      }
      return out;
    });
  });
}

}  // namespace gauntlet::store
