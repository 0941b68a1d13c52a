#include "cli/cli.h"

#include "cli/commands.h"

namespace gauntlet::cli {

void AddClientCommands(CLI::App& app, int* code) {
  // The order of these calls is the order of `gauntlet --help` and of the completion's commands.
  cli::AddSubmitCommand(app, code);
  cli::AddStatusCommand(app, code);
  cli::AddTrialsCommand(app, code);
  cli::AddSuitesCommand(app, code);
  cli::AddCancelCommand(app, code);
  cli::AddRerunCommand(app, code);
  cli::AddLogsCommand(app, code);
  cli::AddNodesCommand(app, code);
  cli::AddMatrixCommand(app, code);
  cli::AddDiffCommand(app, code);
  cli::AddRegressionsCommand(app, code);
  cli::AddFlakyCommand(app, code);
  cli::AddTriageCommand(app, code);
  cli::AddAdviceCommands(app, code);
  cli::AddBisectCommand(app, code);
  cli::AddCompletionCommand(app);
}

}  // namespace gauntlet::cli
