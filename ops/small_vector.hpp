// SmallVector<T, N>: a vector of trivially copyable T that keeps up to N
// elements inside itself and only larger lists on the heap — the size of a
// std::vector (24 bytes for the lists used here), without an allocation for
// the common small case. Graph nodes use it for their data inputs and
// dtypes, which are one to three entries almost always: a graph of 10^6
// nodes saves three allocations per node (docs/performance.md, "Large
// graphs"). The subset of std::vector's interface that tagflow uses;
// iterators are pointers and, as with std::vector, growing may move the
// elements. A plain value; thread-compatible.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <new>
#include <stdexcept>
#include <type_traits>
#include <vector>

namespace tagflow::ops {

template <class T, uint32_t N>
class SmallVector {
  static_assert(std::is_trivially_copyable_v<T>, "SmallVector holds trivially copyable elements");

 public:
  using value_type = T;
  using size_type = size_t;
  using iterator = T*;
  using const_iterator = const T*;

  SmallVector() = default;
  SmallVector(size_t n, const T& value) { assign(n, value); }
  SmallVector(std::initializer_list<T> values) { assign(values.begin(), values.end()); }
  SmallVector(const std::vector<T>& values) { assign(values.begin(), values.end()); }  // NOLINT: implicit
  template <class It, class = decltype(*std::declval<It>())>
  SmallVector(It first, It last) { assign(first, last); }
  SmallVector(const SmallVector& o) { assign(o.begin(), o.end()); }
  SmallVector(SmallVector&& o) noexcept { steal(o); }
  SmallVector& operator=(const SmallVector& o) {
    if (this != &o) assign(o.begin(), o.end());
    return *this;
  }
  SmallVector& operator=(SmallVector&& o) noexcept {
    if (this != &o) {
      release();
      steal(o);
    }
    return *this;
  }
  SmallVector& operator=(std::initializer_list<T> values) {
    assign(values.begin(), values.end());
    return *this;
  }
  ~SmallVector() { release(); }

  T* data() { return is_inline() ? inline_data() : heap(); }
  const T* data() const { return is_inline() ? inline_data() : heap(); }
  T* begin() { return data(); }
  T* end() { return data() + size_; }
  const T* begin() const { return data(); }
  const T* end() const { return data() + size_; }
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  size_t capacity() const { return capacity_; }
  T& operator[](size_t i) { return data()[i]; }
  const T& operator[](size_t i) const { return data()[i]; }
  T& at(size_t i) { return i < size_ ? data()[i] : throw std::out_of_range("SmallVector::at"); }
  const T& at(size_t i) const { return i < size_ ? data()[i] : throw std::out_of_range("SmallVector::at"); }
  T& front() { return data()[0]; }
  const T& front() const { return data()[0]; }
  T& back() { return data()[size_ - 1]; }
  const T& back() const { return data()[size_ - 1]; }
  // Whether the elements live on the heap (for memory accounting).
  bool on_heap() const { return !is_inline(); }

  void clear() { size_ = 0; }
  void reserve(size_t n) {
    if (n <= capacity_) return;
    T* grown = static_cast<T*>(std::malloc(n * sizeof(T)));
    if (grown == nullptr) throw std::bad_alloc();
    std::memcpy(static_cast<void*>(grown), data(), size_ * sizeof(T));
    const uint32_t size = size_;
    release();
    set_heap(grown);
    capacity_ = static_cast<uint32_t>(n);
    size_ = size;
  }
  void resize(size_t n, const T& value = T()) {
    reserve(n);
    std::fill(data() + std::min<size_t>(size_, n), data() + n, value);
    size_ = static_cast<uint32_t>(n);
  }
  void push_back(const T& value) {
    if (size_ == capacity_) {
      const T copy = value;  // value may be an element
      reserve(2 * static_cast<size_t>(capacity_));
      data()[size_++] = copy;
      return;
    }
    data()[size_++] = value;
  }
  void pop_back() { --size_; }
  template <class It>
  void assign(It first, It last) {
    clear();
    reserve(static_cast<size_t>(std::distance(first, last)));
    for (; first != last; ++first) data()[size_++] = *first;
  }
  void assign(size_t n, const T& value) {
    clear();
    resize(n, value);
  }
  T* erase(const T* pos) {
    T* p = data() + (pos - data());
    std::copy(p + 1, end(), p);
    --size_;
    return p;
  }

  std::vector<T> to_vector() const { return {begin(), end()}; }
  friend bool operator==(const SmallVector& a, const SmallVector& b) {
    return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin());
  }
  friend bool operator!=(const SmallVector& a, const SmallVector& b) { return !(a == b); }

 private:
  bool is_inline() const { return capacity_ == N; }
  T* inline_data() { return reinterpret_cast<T*>(storage_); }
  const T* inline_data() const { return reinterpret_cast<const T*>(storage_); }
  T* heap() const {
    T* p;
    std::memcpy(&p, storage_, sizeof p);
    return p;
  }
  void set_heap(T* p) { std::memcpy(storage_, &p, sizeof p); }
  void release() {
    if (!is_inline()) std::free(heap());
    capacity_ = N;
    size_ = 0;
  }
  // Takes o's elements (its heap block, or a copy of its inline ones).
  void steal(SmallVector& o) {
    std::memcpy(storage_, o.storage_, sizeof storage_);
    capacity_ = o.capacity_;
    size_ = o.size_;
    o.capacity_ = N;
    o.size_ = 0;
  }

  // The elements while there are at most N, else a pointer to them.
  alignas(T) alignas(T*) unsigned char storage_[N * sizeof(T) > sizeof(T*) ? N * sizeof(T) : sizeof(T*)];
  uint32_t size_ = 0;
  uint32_t capacity_ = N;  // N: the elements are inline
};

}  // namespace tagflow::ops
