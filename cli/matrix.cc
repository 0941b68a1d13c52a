// `gauntlet matrix`: the pivot of GET /api/v1/matrix as a terminal table (coloured by verdict, cut to
// the terminal's width), or the API's CSV, JSON or Markdown (a table ready to paste into an issue,
// like the bring-up tables people write by hand, "✅ 2,100 tok/s", "❌ crashed: Error Internal", with
// the hardware and fingerprint it was judged on). Cells whose configs disagree say so
// (core/matrix_cells.h), and lines under the grid say how.
#include <iostream>
#include <map>
#include <memory>

#include "cli/cli_common.h"
#include "cli/commands.h"
#include "cli/suggest.h"
#include "core/matrix_cells.h"
#include "http/http.h"

namespace gauntlet::cli {
using nlohmann::json;

namespace {

struct MatrixOpts {
  net::Conn conn;
  std::string suite, rows, cols = "hardware", format = "table", fingerprint, suite_version;
  // or "dispatch": the kernel family that carried each cell (issue 30); "drift": where the runs
  // disagree with the declared support; "evidence": how far each cell's evidence goes (issue 32)
  std::string layer = "verdict";
  int64_t sweep = 0;
  bool wide = false;
};

std::string MatrixQuery(const MatrixOpts& o) {
  std::string q = "/api/v1/matrix?cols=" + http::UrlEncode(o.cols);
  if (!o.suite.empty()) q += "&suite=" + http::UrlEncode(o.suite);
  if (!o.rows.empty()) q += "&rows=" + http::UrlEncode(o.rows);
  if (o.sweep > 0) q += "&sweep=" + std::to_string(o.sweep);
  if (!o.fingerprint.empty()) q += "&fingerprint=" + http::UrlEncode(o.fingerprint);
  if (!o.suite_version.empty()) q += "&suite_version=" + http::UrlEncode(o.suite_version);
  if (o.layer != "verdict") q += "&layer=" + http::UrlEncode(o.layer);
  return q;
}

// "demo-bringup v1 · latest verdicts · metric output_tok_s": what the grid is of.
std::string Title(const json& m, const MatrixOpts& o) {
  std::string t = Str(m["suite"]);
  const json& v = m["suite_version"];
  if (v.is_number()) t += " v" + v.dump();
  else if (v == "all") t += " · all versions";
  t += o.sweep > 0 ? " · sweep " + std::to_string(o.sweep) : " · latest verdicts";
  if (m["key_metric"].is_string()) t += " · metric " + m["key_metric"].get<std::string>();
  return t;
}

// One row per row key: the keys (a repeated outer key blanked, so the groups stand out), then a cell
// per column, coloured by verdict on a terminal.
Rows GridRows(const json& m) {
  std::map<std::pair<json, std::string>, const json*> at;
  for (auto& cell : m["cells"]) at[{cell["row"], Str(cell["col"])}] = &cell;
  Rows rows;
  std::vector<std::string> prev;
  for (auto& rk : m["row_keys"]) {
    std::vector<std::string> row;
    for (size_t i = 0; i < rk.size(); ++i) {
      std::string v = Str(rk[i]);
      row.push_back(rk.size() > 1 && i == 0 && !prev.empty() && prev[0] == v ? "" : v);
    }
    prev.clear();
    for (auto& k : rk) prev.push_back(Str(k));
    for (auto& col : m["col_keys"]) {
      auto it = at.find({rk, Str(col)});
      if (it == at.end()) {
        row.push_back("-");
        continue;
      }
      const std::string text = CellText(*it->second) + LayerText(*it->second);
      row.push_back(VerdictColor(CellVerdict(*it->second)) + text + Reset());
    }
    rows.push_back(std::move(row));
  }
  return rows;
}

void PrintGrid(const json& m, const MatrixOpts& o) {
  std::vector<std::string> head;
  for (auto& r : m["rows"]) head.push_back(Str(r));
  const size_t keys = head.size();
  for (auto& col : m["col_keys"]) head.push_back(Str(col));
  std::cout << Title(m, o) << "\n\n";
  // A terminal wraps a long line wherever it ends, mid-cell; cut cells to the width instead, unless
  // asked for whole cells (--wide).
  if (o.wide) SetWholeCells(true);
  const size_t width = TerminalWidth();
  PrintTable(head, GridRows(m), width, keys);
  const auto lines = Disagreements(m);
  if (lines.empty()) return;
  std::cout << "\nmixed and flaky cells:\n";
  for (auto& l : lines) std::cout << (width ? CutToWidth("  " + l, width) : "  " + l) << "\n";
}

}  // namespace

void AddMatrixCommand(CLI::App& app, int* code) {
  auto o = std::make_shared<MatrixOpts>();
  auto c = app.add_subcommand("matrix", "Which configurations pass on which hardware: the results pivot");
  c->footer("Cells: ✅ key metric range when every config passed, ❌/⚠/⏳ verdict with a short reason, ◐ mixed\n"
            "(configs disagree: k/n passed), ↯ flaky (one config judged more than one way), … pending counts.\n"
            "Example: gauntlet matrix --suite nvfp4-gemm --rows backend --cols hardware --format markdown");
  c->add_option("--suite", o->suite, "suite name (default with --sweep: the sweep's)");
  c->add_option("--sweep", o->sweep, "only this sweep's trials (default: the latest verdict of every sweep)");
  c->add_option("--rows", o->rows, "one or two parameters, comma-separated (default: the suite's first two)");
  c->add_option("--cols", o->cols, "'hardware' or a parameter")->capture_default_str();
  c->add_option("--fingerprint", o->fingerprint, "only results with this software fingerprint (canonical JSON)");
  c->add_option("--suite-version", o->suite_version, "N or all: results of that suite version (default: the latest)")
      ->check([](const std::string& v) {
        return v == "all" || v == "latest" || (!v.empty() && v.find_first_not_of("0123456789") == std::string::npos)
                   ? std::string()
                   : std::string("a version number, latest or all");
      });
  c->add_option("--format", o->format, "output: table, csv, json, markdown")
      ->check(CLI::IsMember({"table", "csv", "json", "markdown"}))
      ->capture_default_str();
  c->add_flag("--wide", o->wide, "print cells whole, wider than the terminal if need be");
  c->add_option("--layer", o->layer,
                "verdict; dispatch: also the kernel family that carried each cell's latest run; drift: where the runs "
                "disagree with the declared support; evidence: how far each cell's evidence goes")
      ->check(CLI::IsMember({"verdict", "dispatch", "drift", "evidence"}))
      ->capture_default_str();
  AddConnOptions(c, &o->conn);
  c->callback([o, code] {
    if (o->suite.empty() && o->sweep <= 0) {
      std::cerr << "gauntlet: matrix needs --suite NAME or --sweep ID\n";
      return void(*code = 2);
    }
    net::Resolve(&o->conn);
    net::Client client(o->conn.server, o->conn.token);
    const std::string q = MatrixQuery(*o);
    int status = 0;
    auto fail = [&] {
      if (status == 404 && !o->suite.empty()) SuggestSuite(client, o->suite);
      if (status == 422)
        if (auto known = SuiteParameters(client, o->suite, o->sweep)) {
          std::vector<std::string> names;
          for (auto& [k, v] : *known) names.push_back(k);
          SuggestParameterName("--rows", o->rows, names);
          names.push_back("hardware");
          SuggestParameterName("--cols", o->cols, names);
        }
      *code = 2;
    };
    // The daemon's CSV (one line per cell) and Markdown (the one the dashboard copies), as they are.
    if (o->format == "csv" || o->format == "markdown") {
      auto r = CallRaw(client, "GET", q + "&format=" + o->format, {}, &status);
      if (!r) return fail();
      std::cout << r->body;
      return;
    }
    auto m = Call(client, "GET", q, {}, &status);
    if (!m) return fail();
    if (o->format == "json") {
      std::cout << m->dump(2) << "\n";
      return;
    }
    if ((*m)["row_keys"].empty()) {
      std::cerr << "gauntlet: no results for " << Str((*m)["suite"])
                << (o->sweep > 0 ? " in sweep " + std::to_string(o->sweep) : "")
                << ((*m)["suite_version"].is_number() ? " (version " + (*m)["suite_version"].dump() + ")" : "")
                << " yet\n";
      // Results of an earlier version are not shown by default; say where they are.
      if (o->suite_version.empty() && (*m)["suite_version"].is_number() && (*m)["suite_version"].get<int>() > 1)
        std::cerr << "gauntlet: earlier versions of the suite may have some: --suite-version all\n";
      return;
    }
    PrintGrid(*m, *o);
  });
}

}  // namespace gauntlet::cli
