// Linux signals: every value, its verdict and why (classifier/status_vocabulary.h).
// Source: signals 1-31 as glibc 2.36 defines them for x86-64
// (/usr/include/x86_64-linux-gnu/bits/signum-generic.h and signum-arch.h; the same numbers as the
// kernel's asm-generic/signal.h), the aliases SIGIOT, SIGIO and SIGCLD last. Messages: glibc's
// strsignal. A fatal signal keeps the classifier's key crashed:signal:<NAME> (the one an exit
// status by that signal gets), an alias its canonical name's.
// Made by scripts/gen-status-messages.cc signals (the name, number and message columns); the
// verdicts and reasons are judged by hand under the policy in classifier/status/vocabularies.h.
#include "classifier/status/vocabularies.h"

namespace gauntlet::classifier {
namespace {

using enum Verdict;

// {name, number, message, verdict, reason[, key]}.
constexpr StatusValue kSignalsValues[] = {
    {"SIGHUP", 1, "Hangup",
     kInfraError, "the controlling terminal or session went away (an ssh or login lost), not the config"},
    {"SIGINT", 2, "Interrupt", kCrashed, "interrupted (Ctrl-C or SIGINT from outside)", "crashed:signal:SIGINT"},
    {"SIGQUIT", 3, "Quit",
     kCrashed, "quit from the keyboard or a watchdog, with a core dump", "crashed:signal:SIGQUIT"},
    {"SIGILL", 4, "Illegal instruction",
     kCrashed, "the process executed an illegal instruction", "crashed:signal:SIGILL"},
    {"SIGTRAP", 5, "Trace/breakpoint trap",
     kCrashed, "a trap or breakpoint instruction (__builtin_trap)", "crashed:signal:SIGTRAP"},
    {"SIGABRT", 6, "Aborted",
     kCrashed, "the process aborted itself (abort(), a failed check)", "crashed:signal:SIGABRT"},
    {"SIGBUS", 7, "Bus error",
     kCrashed, "a bus error: a bad memory access (often a truncated mmap or /dev/shm full)", "crashed:signal:SIGBUS"},
    {"SIGFPE", 8, "Floating point exception",
     kCrashed, "an arithmetic fault (integer division by zero)", "crashed:signal:SIGFPE"},
    {"SIGKILL", 9, "Killed",
     kCrashed, "killed (the OOM killer or a person; the log must say which)", "crashed:signal:SIGKILL"},
    {"SIGUSR1", 10, "User defined signal 1",
     kCrashed, "a user-defined signal ended it (sent by a tool or a scheduler)", "crashed:signal:SIGUSR1"},
    {"SIGSEGV", 11, "Segmentation fault",
     kCrashed, "a segmentation fault: an invalid memory access", "crashed:signal:SIGSEGV"},
    {"SIGUSR2", 12, "User defined signal 2",
     kCrashed, "a user-defined signal ended it (sent by a tool or a scheduler)", "crashed:signal:SIGUSR2"},
    {"SIGPIPE", 13, "Broken pipe",
     kCrashed, "a write to a pipe or socket whose reader is gone", "crashed:signal:SIGPIPE"},
    {"SIGALRM", 14, "Alarm clock", kTimeout, "an alarm timer expired: a time limit"},
    {"SIGTERM", 15, "Terminated", kCrashed, "terminated from outside", "crashed:signal:SIGTERM"},
    {"SIGSTKFLT", 16, "Stack fault",
     kCrashed, "a coprocessor stack fault (unused on Linux)", "crashed:signal:SIGSTKFLT"},
    {"SIGCHLD", 17, "Child exited", kPassed, "a child exited: ignored by default, ends nothing"},
    {"SIGCONT", 18, "Continued", kPassed, "a stopped process continued: ends nothing"},
    {"SIGSTOP", 19, "Stopped (signal)", kTimeout, "stopped from outside: the process hangs until its time limit"},
    {"SIGTSTP", 20, "Stopped", kTimeout, "stopped from the terminal: the process hangs until its time limit"},
    {"SIGTTIN", 21, "Stopped (tty input)",
     kTimeout, "stopped reading the terminal in the background: it hangs until its time limit"},
    {"SIGTTOU", 22, "Stopped (tty output)",
     kTimeout, "stopped writing the terminal in the background: it hangs until its time limit"},
    {"SIGURG", 23, "Urgent I/O condition", kPassed, "urgent socket data: ignored by default, ends nothing"},
    {"SIGXCPU", 24, "CPU time limit exceeded", kTimeout, "the CPU-time limit ran out"},
    {"SIGXFSZ", 25, "File size limit exceeded", kInfraError, "a file outgrew the file-size limit set on the node"},
    {"SIGVTALRM", 26, "Virtual timer expired", kTimeout, "a virtual (CPU-time) timer expired: a time limit"},
    {"SIGPROF", 27, "Profiling timer expired",
     kCrashed, "a profiling timer ended it (a profiler without its handler)", "crashed:signal:SIGPROF"},
    {"SIGWINCH", 28, "Window changed", kPassed, "the terminal was resized: ignored by default, ends nothing"},
    {"SIGPOLL", 29, "I/O possible",
     kCrashed, "an I/O-possible signal without a handler ended it", "crashed:signal:SIGIO"},
    {"SIGPWR", 30, "Power failure", kInfraError, "the node reported a power failure"},
    {"SIGSYS", 31, "Bad system call",
     kCrashed, "a bad system call (one a seccomp filter refused)", "crashed:signal:SIGSYS"},
    {"SIGIOT", 6, "Aborted", kCrashed, "the process aborted itself (SIGIOT is SIGABRT)", "crashed:signal:SIGABRT"},
    {"SIGIO", 29, "I/O possible",
     kCrashed, "an I/O-possible signal without a handler ended it", "crashed:signal:SIGIO"},
    {"SIGCLD", 17, "Child exited", kPassed, "a child exited (SIGCLD is SIGCHLD): ends nothing"},
};

}  // namespace

const StatusVocabulary& SignalsVocabulary() {
  static const StatusVocabulary k{
      "signals", "Linux signals",
      "bits/signum-generic.h, bits/signum-arch.h, glibc 2.36 (x86-64)",
      {"signal", "core dumped"}, kSignalsValues};
  return k;
}

}  // namespace gauntlet::classifier
