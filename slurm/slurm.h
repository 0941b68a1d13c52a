// `gauntlet slurm`: a launcher that watches the daemon's queue over the REST API and starts
// `gauntlet worker --exit-when-idle` as Slurm batch jobs when queued trials need hardware that no
// idle registered worker offers but a configured partition does (docs/DEPLOY.md, "Slurm").
//
// The launcher keeps no state of its own: each pass reads the queue (trials, their sweeps' targets
// and suites' requirements), the fleet (GET /api/v1/nodes) and its own jobs (squeue, by job name),
// plans, then submits (sbatch) or cancels pending jobs (scancel). A restarted launcher picks up
// where the last one left off. The planner is a pure function so it can be tested without Slurm.
#pragma once
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <map>
#include <string>
#include <vector>

#include "core/hardware.h"
#include "core/status.h"
#include "core/verdict.h"

namespace gauntlet::slurm {

// One kind of Slurm job the launcher may submit: where it runs and the hardware it gets.
struct SlurmPartition {
  std::string name;           // this entry's name: in job names and worker labels
  std::string partition;      // sbatch --partition (empty: the cluster's default)
  int gpus = 0;               // GPUs per job: --gres=gpu[:TYPE]:N (0: a CPU-only job)
  std::string gres_type;      // optional GRES type, e.g. "h200" for --gres=gpu:h200:N
  std::string constraint;     // sbatch --constraint (node features), e.g. "h200"
  std::string gpu_name;       // what the GPUs report, e.g. "NVIDIA H200" (matched against targets)
  std::string compute_capability;  // "9.0" (or write arch "sm_90")
  int64_t memory_mb = 0;      // per GPU
  std::map<std::string, std::string> labels;  // given to the workers (and matched against suites' labels)
  std::string time_limit = "01:00:00";        // sbatch --time
  int max_jobs = 4;           // jobs of this entry alive at once (pending + running)
  int max_trials = 0;         // trials per worker; 0: one per GPU, or `cpus` (or 1) on a CPU-only job
  int cpus = 0;               // --cpus-per-task (0: not given)
  std::string mem;            // --mem (e.g. "64G"; empty: not given)
  std::string account, qos;   // --account, --qos (empty: not given)
  double idle_exit_s = 60;    // the worker's --idle-exit-s
  std::string inventory;      // worker --inventory: declare the GPUs (nodes without NVML; tests)
  std::vector<std::string> sbatch_args;  // extra sbatch arguments, as given
  std::vector<std::string> worker_args;  // extra worker arguments, as given

  // What a job of this entry will offer, for matching: declared inventory or `gpus` x the model.
  Inventory offer;
  // Trials of `need` one job runs at once (0: it can't run them). Pure.
  int Slots(const Need& need) const;
};

struct SlurmConfig {
  std::vector<SlurmPartition> partitions;  // in order: a trial goes to the first entry that fits it
  std::string workdir = "./var/slurm/work";  // workers' --workdir root (per job: WORKDIR/JOBID)
  std::string log_dir = "./var/slurm/log";   // sbatch --output, and the job scripts
};

// Parses the launcher's config (JSON or YAML, already read; an entry's `inventory` file is read
// here) and fills each entry's `offer`; errors name the field.
Result<SlurmConfig> ParseSlurmConfig(const nlohmann::json& j);

// Inputs of one planning pass. (Named apart from the scheduler's QueuedTrial: two types of one name in
// namespace gauntlet linked into one binary break the one-definition rule and corrupt memory.)
struct SlurmQueuedTrial {
  int64_t id = 0;
  Need need;
};
struct FleetNode {
  int64_t id = 0;
  std::string name;
  NodeState state = NodeState::kOffline;  // as the daemon spelled it; an unknown spelling reads as offline
  Inventory inv;            // labels included
  int busy_gpus = 0;
  int running = 0;          // trials running there now
  bool waiting = false;     // long-polling for work: it has room now
  int64_t slurm_job = 0;    // the job that started it (label slurm_job), 0 for other workers
};
struct SlurmJob {
  int64_t id = 0;
  std::string entry;  // SlurmPartition::name
  std::string state;  // PENDING, CONFIGURING, RUNNING, COMPLETING, ...
};

// What one pass decided.
struct SlurmPlan {
  std::map<std::string, int> submit;  // entry -> jobs to submit now
  std::vector<int64_t> cancel;        // pending jobs the queue no longer needs
  nlohmann::json report;              // per entry: queued, covered, unplaceable, jobs; for logs and --once
};

// Decides what to submit and cancel. A queued trial is left alone when an idle registered worker
// that is not ours could run it (it will lease it soon). The rest go, in order, to the first entry
// that fits; they are packed onto free room of this launcher's registered workers, then onto its
// pending or starting jobs (oldest first), then onto new jobs (at most max_jobs alive per entry).
// Pending jobs left with nothing to do are cancelled. Pure; thread-safe.
SlurmPlan PlanSlurmJobs(const SlurmConfig& cfg, const std::vector<SlurmQueuedTrial>& queued,
                        const std::vector<FleetNode>& nodes, const std::vector<SlurmJob>& jobs);

// The functions below are pure. The batch script of an entry: exec's `exe worker` with the
// launcher's labels and exit-when-idle.
std::string SlurmJobScript(const SlurmConfig& cfg, const SlurmPartition& p, const std::string& exe,
                           const std::string& server, const std::string& launcher);
// sbatch's arguments (without the script path) for an entry.
std::vector<std::string> SbatchArgs(const SlurmConfig& cfg, const SlurmPartition& p, const std::string& launcher);
// The job name that marks an entry's jobs: gauntlet-LAUNCHER-ENTRY.
std::string SlurmJobName(const std::string& launcher, const std::string& entry);
// True when `s` may be a launcher or label name: non-empty, letters, digits and _ - . / : only.
bool SlurmSafeLabel(const std::string& s);

// Registers `gauntlet slurm`; its run sets *code to the exit status (`code` must outlive parsing).
void AddSlurmCommand(CLI::App& app, int* code);

}  // namespace gauntlet::slurm
