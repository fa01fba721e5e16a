// Status and Expected<T>: errors as values, used by every tagflow layer.
//
// A Status is an error code from the one documented enum below plus a
// message that names what went wrong (node, tag, partition, file position).
// Nothing in tagflow throws across a layer or an actor boundary; functions
// that can fail return Status or Expected<T>. Plain values, thread-compatible.
#pragma once

#include <cassert>
#include <iosfwd>
#include <optional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>

namespace tagflow::ops {

// The error codes of tagflow. Documented in docs/errors.md.
enum class Error {
  ok = 0,
  invalid_argument,     // bad input value, attr or dtype
  not_found,            // a node, port, file, feed or fetch that does not exist
  unimplemented,        // an op with no kernel, a dtype a kernel does not take
  parse_error,          // malformed .pbtxt / .pb / literal
  invalid_graph,        // structural error: arity, cycle, frame analysis
  failed_precondition,  // e.g. reading an uninitialised variable
  out_of_range,         // index out of bounds, empty pop
  dead_value,           // a fetch or a Merge saw what the semantics forbid
  resource_exhausted,   // --max-iterations exceeded
  deadline_exceeded,    // --timeout reached
  aborted,              // the step was aborted because of another error
  unavailable,          // a peer partition died or cannot be reached
  data_loss,            // a file's bytes are corrupt or truncated (checkpoints)
  internal,             // a broken invariant inside tagflow
  cancelled,            // an operation cancelled: enqueue into a closed queue, a closed session
};

const char* to_string(Error e);
std::ostream& operator<<(std::ostream& os, Error e);

class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(Error code, std::string message)
      : code_(code), detail_(std::make_unique<Detail>(Detail{std::move(message), false})) {}
  Status(const Status& o) : code_(o.code_), detail_(o.detail_ ? std::make_unique<Detail>(*o.detail_) : nullptr) {}
  Status(Status&&) noexcept = default;
  Status& operator=(const Status& o) {
    if (this != &o) *this = Status(o);
    return *this;
  }
  Status& operator=(Status&&) noexcept = default;

  static Status ok_status() { return {}; }

  bool ok() const { return code_ == Error::ok; }
  Error code() const { return code_; }
  const std::string& message() const { return detail_ ? detail_->message : no_message(); }

  // "invalid_argument: Add 'x' ..." — for printing to a user.
  std::string to_string() const;

  // Returns a copy whose message starts with `context` (e.g. "in node 'a': ").
  Status with_prefix(const std::string& context) const;

  // Whether the message already says where the error happened (the node,
  // its tag and partition, the call chain of a function body), so that the
  // callers it passes through add no place of their own; and a copy that
  // says so. Kept by with_prefix.
  bool says_where() const { return detail_ && detail_->says_where; }
  Status saying_where() const {
    Status s(code_, message());
    s.detail_->says_where = true;
    return s;
  }

 private:
  // Everything but the code lives behind one pointer, null for ok: a
  // Status passes through the executor's per-node path at the cost of a
  // pointer (a std::string's move copies its inline characters).
  struct Detail {
    std::string message;
    bool says_where;
  };
  static const std::string& no_message();

  Error code_ = Error::ok;
  std::unique_ptr<Detail> detail_;
};

inline Status ok_status() { return {}; }

// User text of unbounded size (a literal, a configuration value, a name
// given on the command line) as an error message may echo it: itself when
// short, else its first `max_chars` bytes, "...", and its full length, so
// that a 60 KB literal is not printed back ("[1,2,3,...] (61440 bytes)").
std::string abbreviate(std::string_view text, size_t max_chars = 64);

template <class T>
class [[nodiscard]] Expected {
 public:
  Expected(T value) : value_(std::move(value)) {}
  Expected(Status status) : status_(std::move(status)) {
    assert(!status_.ok() && "an Expected<T> made from a Status must hold an error");
  }

  bool ok() const { return value_.has_value(); }
  explicit operator bool() const { return ok(); }
  const Status& status() const { return status_; }

  T& value() & { assert(ok()); return *value_; }
  const T& value() const& { assert(ok()); return *value_; }
  T&& value() && { assert(ok()); return std::move(*value_); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

 private:
  std::optional<T> value_;
  Status status_;
};

}  // namespace tagflow::ops

// Return early from a function returning Status or Expected<T>.
#define TF_RETURN_IF_ERROR(expr)                      \
  do {                                                \
    ::tagflow::ops::Status tf_status_ = (expr);       \
    if (!tf_status_.ok()) return tf_status_;          \
  } while (0)

#define TF_CONCAT_IMPL(a, b) a##b
#define TF_CONCAT(a, b) TF_CONCAT_IMPL(a, b)
// TF_ASSIGN_OR_RETURN(auto x, expected_expr);
#define TF_ASSIGN_OR_RETURN(lhs, expr)                              \
  auto TF_CONCAT(tf_expected_, __LINE__) = (expr);                  \
  if (!TF_CONCAT(tf_expected_, __LINE__).ok())                      \
    return TF_CONCAT(tf_expected_, __LINE__).status();              \
  lhs = std::move(TF_CONCAT(tf_expected_, __LINE__)).value()
