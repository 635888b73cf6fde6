// braid/status.h: errors as values.
//
// Every fallible function inside braid returns a Status (or a Result<T>, a
// value or a Status). The C API turns the code into an ncclResult_t in one
// place (src/api/) and keeps the message for ncclGetLastError().
#pragma once

#include <string>
#include <utility>
#include <variant>

namespace braid {

/// Error classes; the numeric values equal NCCL's ncclResult_t on purpose.
enum class ErrorCode : int {
  kSuccess = 0,
  kCudaError = 1,        ///< a CUDA runtime call failed
  kSystemError = 2,      ///< a system call failed (socket, shm, mmap, ...)
  kInternalError = 3,    ///< a bug in braid or a broken invariant
  kInvalidArgument = 4,  ///< the caller passed a bad value
  kInvalidUsage = 5,     ///< the call is not allowed now or not implemented
  kRemoteError = 6,      ///< a peer failed, vanished or timed out
  kInProgress = 7,       ///< a non-blocking operation has not finished
};

/// Short name of an ErrorCode ("invalid argument", ...).
const char* errorCodeName(ErrorCode code);

/// A code and, on failure, a message that says what went wrong.
class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(ErrorCode code, std::string message) : code_(code), message_(std::move(message)) {}

  static Status success() { return Status(); }

  bool ok() const { return code_ == ErrorCode::kSuccess; }
  ErrorCode code() const { return code_; }
  const std::string& message() const { return message_; }

  /// Prepends context ("while connecting to rank 3: ") to the message.
  Status withContext(const std::string& context) const {
    return ok() ? *this : Status(code_, context + ": " + message_);
  }
  /// The same for a literal, which then becomes a string only on failure: every call of the
  /// API passes one on its way out, and a tiny call's path has no time for building strings.
  Status withContext(const char* context) const {
    return ok() ? Status() : Status(code_, std::string(context) + ": " + message_);
  }

 private:
  ErrorCode code_ = ErrorCode::kSuccess;
  std::string message_;
};

inline Status invalidArgument(std::string m) { return {ErrorCode::kInvalidArgument, std::move(m)}; }
inline Status invalidUsage(std::string m) { return {ErrorCode::kInvalidUsage, std::move(m)}; }
inline Status internalError(std::string m) { return {ErrorCode::kInternalError, std::move(m)}; }
inline Status systemError(std::string m) { return {ErrorCode::kSystemError, std::move(m)}; }
inline Status remoteError(std::string m) { return {ErrorCode::kRemoteError, std::move(m)}; }

/// Either a value or a failed Status.
template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}         // NOLINT: implicit by design
  Result(Status status) : v_(std::move(status)) {}  // NOLINT: implicit by design

  bool ok() const { return std::holds_alternative<T>(v_); }
  const Status& status() const {
    static const Status kOk;
    return ok() ? kOk : std::get<Status>(v_);
  }
  T& value() & { return std::get<T>(v_); }
  const T& value() const& { return std::get<T>(v_); }
  T&& value() && { return std::get<T>(std::move(v_)); }

 private:
  std::variant<T, Status> v_;
};

}  // namespace braid

/// Returns early from the enclosing function when a Status is not ok.
#define BRAID_TRY(expr)                                    \
  do {                                                     \
    ::braid::Status braid_try_status_ = (expr);            \
    if (!braid_try_status_.ok()) return braid_try_status_; \
  } while (0)

#define BRAID_CONCAT_INNER_(a, b) a##b
#define BRAID_CONCAT_(a, b) BRAID_CONCAT_INNER_(a, b)

/// `BRAID_ASSIGN_OR_RETURN(auto x, makeX());` unwraps a Result or returns its Status.
#define BRAID_ASSIGN_OR_RETURN(lhs, expr) \
  BRAID_ASSIGN_OR_RETURN_IMPL_(BRAID_CONCAT_(braid_result_, __LINE__), lhs, expr)
#define BRAID_ASSIGN_OR_RETURN_IMPL_(tmp, lhs, expr) \
  auto tmp = (expr);                                 \
  if (!tmp.ok()) return tmp.status();                \
  lhs = std::move(tmp).value()
