// Boxed<T>: an optional T kept on the heap, for the large fields most IR nodes and values leave
// empty (control flow, dot and convolution geometry, a pooling window, a value's known elements).
// An empty one costs a pointer where std::optional<T> costs sizeof(T): on a 100k-node model that
// was 40 MB of empty fields to allocate, fault in and move. It reads like std::optional (`if (n.dot)`, `n.dot->lhs_batch`,
// `*n.conv`, `n.dot = dims;`, `n.dot.value_or({})`) and copies deeply.
#pragma once

#include <memory>
#include <optional>
#include <utility>

namespace tpudoctor {

template <typename T>
class Boxed {
 public:
  Boxed() = default;
  Boxed(std::nullopt_t) {}  // NOLINT(google-explicit-constructor): reads like std::optional
  Boxed(T value) : box_(std::make_unique<T>(std::move(value))) {}  // NOLINT
  Boxed(std::optional<T> value) {                                  // NOLINT
    if (value) box_ = std::make_unique<T>(std::move(*value));
  }
  Boxed(const Boxed& other) : box_(other.box_ ? std::make_unique<T>(*other.box_) : nullptr) {}
  Boxed(Boxed&&) noexcept = default;
  Boxed& operator=(const Boxed& other) {
    if (this != &other) box_ = other.box_ ? std::make_unique<T>(*other.box_) : nullptr;
    return *this;
  }
  Boxed& operator=(Boxed&&) noexcept = default;

  bool has_value() const { return box_ != nullptr; }
  explicit operator bool() const { return has_value(); }
  T& operator*() { return *box_; }
  const T& operator*() const { return *box_; }
  T* operator->() { return box_.get(); }
  const T* operator->() const { return box_.get(); }
  T value_or(T fallback) const { return box_ ? *box_ : std::move(fallback); }
  void reset() { box_.reset(); }

  friend bool operator==(const Boxed& a, const T& b) { return a && *a == b; }

 private:
  std::unique_ptr<T> box_;
};

}  // namespace tpudoctor
