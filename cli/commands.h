// The client subcommands, one function per family, each in the file named after it. AddClientCommands
// (cli/cli.h) calls them in the order `gauntlet --help` lists them. Every one adds its subcommand(s)
// to `app`, which owns them; each callback writes the exit status to *code (0 done, 1 a followed
// sweep has a failure, 2 an error, printed as one line), so `code` must outlive app.parse(). Call them
// once, before parsing, from the thread that parses; the callbacks run on that thread too.
#pragma once
#include <CLI/CLI.hpp>

namespace gauntlet::cli {

// `submit FILE [--name N] [--wait [--wait-for-nodes]] [--json]`: posts a sweep and optionally follows it (submit.cc).
void AddSubmitCommand(CLI::App& app, int* code);
// `status [SWEEP] [--limit N] [--wait] [--json]`: the latest sweeps or one, or follows one (status.cc).
void AddStatusCommand(CLI::App& app, int* code);
// `trials [filters...] [--order] [--limit] [--after]`: trials filtered as GET /api/v1/trials, paged
// through, saying when the limit cut them (trials.cc).
void AddTrialsCommand(CLI::App& app, int* code);
// `suites [NAME]`: the loaded suites, or one suite's definition; `suites push FILE` registers one (suites.cc).
void AddSuitesCommand(CLI::App& app, int* code);
// `cancel SWEEP | --trial ID`: cancels a sweep's unfinished trials or one trial (cancel.cc).
void AddCancelCommand(CLI::App& app, int* code);
// `logs TRIAL [-f]`: a trial's log, optionally followed until the trial is done; for a trial that
// never ran, why, and the trial whose log to read (trials.cc).
void AddLogsCommand(CLI::App& app, int* code);
// `nodes [--drain ID]`: the fleet, or drains one node (nodes.cc).
void AddNodesCommand(CLI::App& app, int* code);
// `rerun SWEEP [--failed] [--verdict V]... [--config K]... [--target T]... [--wait]`: a new sweep of a
// sweep's failed trials, printed with its dashboard URL (rerun.cc).
void AddRerunCommand(CLI::App& app, int* code);
// `diff A B [--format table|markdown|json|csv]`: what changed between two sweeps (or fingerprints or
// suite versions); exit 1 when something broke (diff.cc).
void AddDiffCommand(CLI::App& app, int* code);
// `matrix --suite S ...`: the results pivot as a table, CSV, JSON or Markdown (matrix.cc).
void AddMatrixCommand(CLI::App& app, int* code);
// `bisect --suite S --param P --good G --bad B [--set K=V]... [--target JSON] [--wait]`: starts a
// bisection over an ordered parameter and optionally follows it to its answer (bisect.cc).
void AddBisectCommand(CLI::App& app, int* code);
// `regressions [--suite S] [--kind K] [--threshold F]`: configs that got worse, ordered-parameter
// regressions with their bisection or the command that starts one (regressions.cc).
void AddRegressionsCommand(CLI::App& app, int* code);
// `flaky --suite S`: the suite's flaky cells with pass rates and Wilson intervals (flaky.cc).
void AddFlakyCommand(CLI::App& app, int* code);
// `best --suite S [--hardware H] [--by P,...] [--metric M]` and `check --suite S [--hardware H] --set K=V...`:
// what to run per hardware class, and whether one config is known to work (exit 0/1/3) (advice.cc).
void AddAdviceCommands(CLI::App& app, int* code);
// `triage [--suite S]`, `triage label SIGNATURE --verdict V [--match T] [--suite S] [--note N]`,
// `triage labels`, `triage withdraw ID`: unclassified failures and the labels people give them (triage.cc).
void AddTriageCommand(CLI::App& app, int* code);
// `completion [bash|zsh|fish]`: prints a completion script generated from `app`'s command tree as it is when
// the command runs, so it covers subcommands added after it too; `app` must outlive the parse
// (completion.cc). It never fails, so it takes no `code`.
void AddCompletionCommand(CLI::App& app);

}  // namespace gauntlet::cli
