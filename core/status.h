// Status and Result<T>: the error style of the store and the scheduler.
// A Status is ok or carries a code and a message; codes map to HTTP answers at the API boundary.
#pragma once
#include <string>
#include <utility>
#include <variant>

namespace gauntlet {

enum class Code { kOk, kNotFound, kInvalid, kConflict, kUnavailable, kInternal, kForbidden };

// A value: copy it freely; a const Status may be read from any thread. [[nodiscard]]: a call whose
// Status nobody reads is a bug the build rejects (-Werror=unused-result); drop one on purpose only
// through IgnoreError, which names why.
class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(Code code, std::string message, std::string field = {})
      : code_(code), message_(std::move(message)), field_(std::move(field)) {}
  static Status Ok() { return {}; }
  static Status NotFound(std::string m) { return {Code::kNotFound, std::move(m)}; }
  static Status Invalid(std::string m, std::string field = {}) { return {Code::kInvalid, std::move(m), std::move(field)}; }
  static Status Conflict(std::string m) { return {Code::kConflict, std::move(m)}; }
  static Status Internal(std::string m) { return {Code::kInternal, std::move(m)}; }
  bool ok() const { return code_ == Code::kOk; }
  Code code() const { return code_; }
  const std::string& message() const { return message_; }
  // The request field at fault (JSON pointer-ish, e.g. "parameters.model"), empty if none.
  const std::string& field() const { return field_; }

 private:
  Code code_ = Code::kOk;
  std::string message_;
  std::string field_;
};

// Either a value or a non-ok Status (built from an ok Status it would be neither: don't). value(),
// * and -> require ok() (else std::bad_variant_access) and return references into this Result;
// status() of an ok Result is a shared static Ok.
template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}
  Result(Status status) : v_(std::move(status)) {}
  bool ok() const { return std::holds_alternative<T>(v_); }
  const Status& status() const {
    static const Status kOk;
    return ok() ? kOk : std::get<Status>(v_);
  }
  T& value() { return std::get<T>(v_); }
  const T& value() const { return std::get<T>(v_); }
  T& operator*() { return value(); }
  const T& operator*() const { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

 private:
  std::variant<T, Status> v_;
};

// Drops `status` on purpose: `why` says why nothing needs to happen when it failed (best-effort
// cleanup, a failure already reported another way). The reason is for the reader; it is not logged
// (a failure worth logging is handled, not ignored). Pure; thread-safe.
inline void IgnoreError(const Status& status, const char* why) {
  (void)status;
  (void)why;
}

}  // namespace gauntlet
