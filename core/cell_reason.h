// What a failed result says to a person, in words that need no docs open: the verdict's label, then
// the signature's reason ("unsupported: dtype", "timeout in stage check", "crashed: exit code 1").
// The one mapping from verdict and signature to a cell's words: the CLI's matrix and the daemon's
// Markdown use it, and the daemon sends it with each matrix cell (`reason`), which the dashboard
// shows as it is.
#pragma once
#include <string>
#include <string_view>
#include <vector>

namespace gauntlet {

// The most columns (text_width.h) ReasonText takes: a matrix cell's reason, not its evidence.
inline constexpr size_t kReasonColumns = 60;

// `verdict` and `signature` (docs/CLASSIFIER.md "Signatures") as words, at most kReasonColumns wide
// (cut with "…"): the verdict's label, then ": " and the reason the signature carries, with
// identifiers spelled as words ("no_kernel_image" -> "no kernel image"; "sm_120a" stays), an
// exception's type left out when it has a message ("crashed: Error Internal"), keyed facts read
// as phrases ("exit code 1", "signal SIGSEGV"), and a timeout named after its stage ("timeout in
// stage check"). A skip says what settled it: "skipped: unsupported: needs sm100". The label alone
// when the signature says no more; "" for no verdict.
// `stages`, when given, are the suite's stage names: a one-word reason that is one of them reads
// "<label> in stage <name>" ("wrong output in stage bench"); without them only a timeout's does,
// any word but the worker's own timeout keys (nccl_watchdog, server_not_ready, rank_hang,
// stage_limit) taken for a stage. Pure; thread-safe.
std::string ReasonText(std::string_view verdict, std::string_view signature,
                       const std::vector<std::string>* stages = nullptr);

}  // namespace gauntlet
