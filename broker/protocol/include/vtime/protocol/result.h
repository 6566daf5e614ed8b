// Result<T>: a value or one human-readable error line, for APIs that must never throw on bad
// input (a peer's malformed message, a user's broken platform file).
//
// Example:
//     Result<Message> r = parse_message(bytes, Direction::to_batsim);
//     if (!r) { std::fprintf(stderr, "%s\n", r.error().c_str()); return 3; }
//     const Message& m = *r;
#pragma once

#include <cassert>
#include <string>
#include <utility>
#include <variant>

namespace vtime::protocol {

// Tag type so that Result<std::string> stays unambiguous.
struct Error {
  std::string message;
};

template <class T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::in_place_index<0>, std::move(value)) {}  // NOLINT: implicit by design
  Result(Error e) : v_(std::in_place_index<1>, std::move(e)) {}      // NOLINT: implicit by design

  bool ok() const { return v_.index() == 0; }
  explicit operator bool() const { return ok(); }

  T& value() & { assert(ok()); return std::get<0>(v_); }
  const T& value() const& { assert(ok()); return std::get<0>(v_); }
  T&& value() && { assert(ok()); return std::get<0>(std::move(v_)); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

  const std::string& error() const { assert(!ok()); return std::get<1>(v_).message; }

 private:
  std::variant<T, Error> v_;
};

}  // namespace vtime::protocol
