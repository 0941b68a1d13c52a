// Python built-in exceptions: every value, its verdict and why (classifier/status_vocabulary.h).
// Source: every class in Python 3.11.7's builtins module that derives from BaseException (the docs'
// "Exception hierarchy", https://docs.python.org/3.11/library/exceptions.html#exception-hierarchy),
// depth first from BaseException; the aliases EnvironmentError and IOError (OSError itself) last.
// Python numbers no exceptions: `code` is the row's index. No messages: an exception's text is its
// own. A name matches only as the type of a "Type: message" line (status_vocabulary.cc).
// Made by scripts/gen-status-messages.cc python (the name, number and message columns); the
// verdicts and reasons are judged by hand under the policy in classifier/status/vocabularies.h.
#include "classifier/status/vocabularies.h"

namespace gauntlet::classifier {
namespace {

using enum Verdict;

// {name, number, message, verdict, reason[, key]}.
constexpr StatusValue kPythonValues[] = {
    {"BaseException", 0, "", kCrashed, "an exception escaped (the base class: the message says more)"},
    {"BaseExceptionGroup", 1, "", kCrashed, "several exceptions escaped together (the members say more)"},
    {"ExceptionGroup", 2, "", kCrashed, "several exceptions escaped together (the members say more)"},
    {"Exception", 3, "", kCrashed, "an exception escaped (the base class: the message says more)"},
    {"ArithmeticError", 4, "", kCrashed, "an arithmetic error"},
    {"FloatingPointError", 5, "", kCrashed, "a floating-point error"},
    {"OverflowError", 6, "", kCrashed, "a numeric overflow"},
    {"ZeroDivisionError", 7, "", kCrashed, "a division by zero"},
    {"AssertionError", 8, "", kWrongOutput, "a failed check (assert): the output or state was not what was expected"},
    {"AttributeError", 9, "", kCrashed, "a missing attribute: a bug or an API version mismatch"},
    {"BufferError", 10, "", kCrashed, "a buffer operation failed"},
    {"EOFError", 11, "", kCrashed, "input ended early"},
    {"ImportError", 12, "", kCrashed, "an import failed (the classifier decides optional backends elsewhere)"},
    {"ModuleNotFoundError", 13, "",
     kCrashed, "a module is not installed (the classifier decides optional backends elsewhere)"},
    {"LookupError", 14, "", kCrashed, "a lookup failed"},
    {"IndexError", 15, "", kCrashed, "an index out of range"},
    {"KeyError", 16, "", kCrashed, "a missing key"},
    {"MemoryError", 17, "", kOom, "Python could not allocate host memory", "oom:host"},
    {"NameError", 18, "", kCrashed, "an undefined name: a bug"},
    {"UnboundLocalError", 19, "", kCrashed, "a local variable used before assignment: a bug"},
    {"OSError", 20, "", kCrashed, "an operating-system call failed (its errno says more)"},
    {"BlockingIOError", 21, "", kCrashed, "a non-blocking operation would block"},
    {"ChildProcessError", 22, "", kCrashed, "a child-process operation failed"},
    {"ConnectionError", 23, "", kCrashed, "a connection failed"},
    {"BrokenPipeError", 24, "", kCrashed, "a write to a pipe or socket whose reader is gone"},
    {"ConnectionAbortedError", 25, "", kCrashed, "the connection was aborted"},
    {"ConnectionRefusedError", 26, "", kCrashed, "nothing listens at the address connected to"},
    {"ConnectionResetError", 27, "", kCrashed, "the peer reset the connection (it may have died)"},
    {"FileExistsError", 28, "", kCrashed, "the file already exists"},
    {"FileNotFoundError", 29, "", kCrashed, "a file the program needs does not exist"},
    {"InterruptedError", 30, "", kCrashed, "a system call was interrupted"},
    {"IsADirectoryError", 31, "", kCrashed, "a directory where a file was expected"},
    {"NotADirectoryError", 32, "", kCrashed, "a file where a directory was expected"},
    {"PermissionError", 33, "", kCrashed, "permission denied"},
    {"ProcessLookupError", 34, "", kCrashed, "no such process"},
    {"TimeoutError", 35, "", kTimeout, "an operation timed out"},
    {"ReferenceError", 36, "", kCrashed, "a weak reference's object is gone"},
    {"RuntimeError", 37, "", kCrashed, "a runtime error (the message says more)"},
    {"NotImplementedError", 38, "", kUnsupported, "the code path is not implemented for this configuration"},
    {"RecursionError", 39, "", kCrashed, "the recursion limit was exceeded"},
    {"StopAsyncIteration", 40, "", kCrashed, "StopAsyncIteration escaped an async iterator: a bug"},
    {"StopIteration", 41, "", kCrashed, "StopIteration escaped an iterator: a bug"},
    {"SyntaxError", 42, "", kCrashed, "a syntax error in the code run"},
    {"IndentationError", 43, "", kCrashed, "an indentation error in the code run"},
    {"TabError", 44, "", kCrashed, "mixed tabs and spaces in the code run"},
    {"SystemError", 45, "", kCrashed, "an internal interpreter error"},
    {"TypeError", 46, "", kCrashed, "a value of the wrong type: a bug or an API version mismatch"},
    {"ValueError", 47, "", kCrashed, "an invalid value (the message says more)"},
    {"UnicodeError", 48, "", kCrashed, "a text encoding error"},
    {"UnicodeDecodeError", 49, "", kCrashed, "bytes that do not decode"},
    {"UnicodeEncodeError", 50, "", kCrashed, "text that does not encode"},
    {"UnicodeTranslateError", 51, "", kCrashed, "text that does not translate"},
    {"Warning", 52, "", kPassed, "a warning: printed, and the program goes on"},
    {"BytesWarning", 53, "", kPassed, "a warning: printed, and the program goes on"},
    {"DeprecationWarning", 54, "", kPassed, "a warning: printed, and the program goes on"},
    {"EncodingWarning", 55, "", kPassed, "a warning: printed, and the program goes on"},
    {"FutureWarning", 56, "", kPassed, "a warning: printed, and the program goes on"},
    {"ImportWarning", 57, "", kPassed, "a warning: printed, and the program goes on"},
    {"PendingDeprecationWarning", 58, "", kPassed, "a warning: printed, and the program goes on"},
    {"ResourceWarning", 59, "", kPassed, "a warning: printed, and the program goes on"},
    {"RuntimeWarning", 60, "", kPassed, "a warning: printed, and the program goes on"},
    {"SyntaxWarning", 61, "", kPassed, "a warning: printed, and the program goes on"},
    {"UnicodeWarning", 62, "", kPassed, "a warning: printed, and the program goes on"},
    {"UserWarning", 63, "", kPassed, "a warning: printed, and the program goes on"},
    {"GeneratorExit", 64, "", kCrashed, "GeneratorExit escaped a generator: a bug"},
    {"KeyboardInterrupt", 65, "", kCrashed, "interrupted (Ctrl-C or SIGINT from outside)"},
    {"SystemExit", 66, "", kCrashed, "sys.exit() raised through the program (its exit code says more)"},
    {"EnvironmentError", 67, "", kCrashed, "an operating-system call failed (EnvironmentError is OSError)"},
    {"IOError", 68, "", kCrashed, "an operating-system call failed (IOError is OSError)"},
};

}  // namespace

const StatusVocabulary& PythonVocabulary() {
  static const StatusVocabulary k{
      "python", "Python built-in exceptions",
      "builtins, Python 3.11.7",
      {}, kPythonValues};
  return k;
}

}  // namespace gauntlet::classifier
