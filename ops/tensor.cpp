#include "ops/tensor.hpp"

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <new>
#include <sstream>

#include <sys/mman.h>

#include "ops/memory_budget.hpp"
#include "ops/variant.hpp"

namespace tagflow::ops {

namespace {

#if defined(__SANITIZE_ADDRESS__)
#define TAGFLOW_BUFFER_CACHE 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TAGFLOW_BUFFER_CACHE 0
#endif
#endif
#ifndef TAGFLOW_BUFFER_CACHE
#define TAGFLOW_BUFFER_CACHE 1
#endif

// Freed tensor buffers a thread keeps for its next allocation of exactly
// the same size: a loop's body allocates the same shapes every iteration,
// and glibc serves blocks above its per-thread cache (1 KiB) from shared
// bins, ~0.5 µs a 16 KiB tensor with its aligned allocation and free. A
// thread keeps at most kCachedBuffers buffers of kMaxCachedBuffer bytes or
// less, replaced round-robin; the memory budget is charged by tensors as
// before (a kept buffer is nobody's). Off under AddressSanitizer, which
// must see every free to find uses after it.
// Set when the thread's cache is destroyed: tensors freed later in the
// thread's exit (or the process's, by static destructors) free directly.
thread_local bool buffer_cache_gone = false;

class BufferCache {
 public:
  static constexpr int kCachedBuffers = 16;
  static constexpr size_t kMaxCachedBuffer = size_t{1} << 20;

  ~BufferCache() {
    for (int i = 0; i < count_; ++i) std::free(entries_[i].data);
    buffer_cache_gone = true;
  }
  // A kept buffer of `bytes`, or null.
  void* take(size_t bytes) {
    for (int i = 0; i < count_; ++i)
      if (entries_[i].bytes == bytes) {
        void* p = entries_[i].data;
        entries_[i] = entries_[--count_];
        return p;
      }
    return nullptr;
  }
  // Keeps p or frees it.
  void give(void* p, size_t bytes) {
    if (!TAGFLOW_BUFFER_CACHE || bytes > kMaxCachedBuffer) {
      std::free(p);
      return;
    }
    if (count_ < kCachedBuffers) {
      entries_[count_++] = {p, bytes};
      return;
    }
    std::free(entries_[next_].data);
    entries_[next_] = {p, bytes};
    next_ = (next_ + 1) % kCachedBuffers;
  }

 private:
  struct Entry {
    void* data;
    size_t bytes;
  };
  Entry entries_[kCachedBuffers] = {};
  int count_ = 0;
  int next_ = 0;
};

BufferCache& buffer_cache() {
  thread_local BufferCache cache;
  return cache;
}

void* take_buffer(size_t bytes) { return buffer_cache_gone ? nullptr : buffer_cache().take(bytes); }

void give_buffer(void* p, size_t bytes) {
  if (buffer_cache_gone) std::free(p);
  else buffer_cache().give(p, bytes);
}

}  // namespace

// The storage behind a Tensor: raw aligned bytes, std::string objects or
// VariantPtrs. Object arrays are held by unique_ptrs (8 bytes each, not a
// vector's 24).
class TensorBuffer {
 public:
  static constexpr size_t kInlineBytes = 32;
  static constexpr size_t kAlignment = 64;
  static constexpr size_t kHugePage = size_t{2} << 20;

  TensorBuffer(DType dtype, int64_t n, bool zero_fill) {
    if (dtype == DType::variant) {
      charge(n, sizeof(VariantPtr));
      try {
        variants_ = std::make_unique<VariantPtr[]>(static_cast<size_t>(n));
      } catch (...) {
        if (budget_) budget_->release(charged_);
        throw;
      }
      return;
    }
    if (dtype_is_object(dtype)) {
      charge(n, sizeof(std::string));
      try {
        strings_ = std::make_unique<std::string[]>(static_cast<size_t>(n));
      } catch (...) {
        if (budget_) budget_->release(charged_);
        throw;
      }
      return;
    }
    // A shape's element count fits int64, but its bytes may not: refuse
    // (run_kernel reports it as resource_exhausted) rather than wrap.
    const size_t element = static_cast<size_t>(dtype_size(dtype));
    if (element > 0 && static_cast<size_t>(n) > SIZE_MAX / element) throw std::bad_alloc();
    bytes_ = static_cast<size_t>(n) * element;
    if (bytes_ <= kInlineBytes) {
      data_ = inline_;
      if (zero_fill) std::memset(inline_, 0, sizeof(inline_));
    } else {
      // A large buffer is aligned to and asks for huge pages: its first
      // touch then faults in 2 MiB at a time, not 4 KiB (a 16 MiB tensor
      // arriving from another process took ~4,000 page faults).
      const size_t align = bytes_ >= kHugePage ? kHugePage : kAlignment;
      size_t rounded = (bytes_ + align - 1) / align * align;
      charge(static_cast<int64_t>(rounded), 1);
      if (align == kAlignment) data_ = take_buffer(rounded);
      if (data_ == nullptr) data_ = std::aligned_alloc(align, rounded);
      if (data_ == nullptr) {
        if (budget_) budget_->release(charged_);
        throw std::bad_alloc();
      }
#ifdef MADV_HUGEPAGE
      if (align == kHugePage) (void)::madvise(data_, rounded, MADV_HUGEPAGE);
#endif
      if (zero_fill) std::memset(data_, 0, bytes_);
    }
  }
  ~TensorBuffer() {
    if (data_ != nullptr && data_ != inline_) {
      // The block's size as the constructor rounded it.
      if (bytes_ < kHugePage) give_buffer(data_, (bytes_ + kAlignment - 1) / kAlignment * kAlignment);
      else std::free(data_);
    }
    if (budget_) budget_->release(charged_);
  }
  TensorBuffer(const TensorBuffer&) = delete;
  TensorBuffer& operator=(const TensorBuffer&) = delete;

  void* data() {
    if (data_ != nullptr) return data_;
    return strings_ ? static_cast<void*>(strings_.get()) : static_cast<void*>(variants_.get());
  }
  // Counts n elements of `size` bytes against the allocating thread's
  // memory budget, if it has one (ops/memory_budget.hpp); may throw
  // MemoryLimitExceeded.
  void charge(int64_t n, size_t size) {
    MemoryBudget* budget = current_memory_budget();
    if (budget == nullptr) return;
    const int64_t bytes = n > std::numeric_limits<int64_t>::max() / static_cast<int64_t>(size)
                              ? std::numeric_limits<int64_t>::max()
                              : n * static_cast<int64_t>(size);
    budget->charge(bytes);
    charged_ = bytes;
    budget_ = budget->shared_from_this();
  }
  size_t bytes() const { return bytes_; }
  bool is_object() const { return data_ == nullptr; }
  bool is_variant() const { return variants_ != nullptr; }

 private:
  alignas(16) unsigned char inline_[kInlineBytes];
  void* data_ = nullptr;
  size_t bytes_ = 0;
  std::unique_ptr<std::string[]> strings_;
  std::unique_ptr<VariantPtr[]> variants_;
  std::shared_ptr<MemoryBudget> budget_;  // what this buffer is counted in
  int64_t charged_ = 0;
};

namespace {

// A tensor's representation that owns its storage.
struct OwnedRep final : detail::TensorHead {
  OwnedRep(DType d, const Shape& s, bool zero_fill) : buffer(base_dtype(d), s.num_elements(), zero_fill) {
    dtype = d;
    shape = s;
    data = buffer.data();
    root = this;
  }
  TensorBuffer buffer;
};

// Another dtype or shape of a representation's storage; `base` is the
// owning representation itself, never another view.
struct ViewRep final : detail::TensorHead {
  ViewRep(DType d, const Shape& s, Tensor owner, detail::TensorHead* owner_head)
      : base(std::move(owner)) {
    dtype = d;
    shape = s;
    view = true;
    data = owner_head->data;
    root = owner_head;
  }
  Tensor base;
};

const TensorBuffer& buffer_of(const detail::TensorHead* h) { return static_cast<const OwnedRep*>(h->root)->buffer; }

}  // namespace

void detail::destroy_tensor(TensorHead* head) noexcept {
  if (head->view) delete static_cast<ViewRep*>(head);
  else delete static_cast<OwnedRep*>(head);
}

Tensor::Tensor(DType dtype, const Shape& shape) : bits_(reinterpret_cast<uintptr_t>(new OwnedRep(dtype, shape, true))) {}

Tensor Tensor::uninitialized(DType dtype, const Shape& shape) { return Tensor(new OwnedRep(dtype, shape, false)); }

size_t Tensor::byte_size() const {
  if (bits_ == 0) return 0;
  const TensorBuffer& b = buffer_of(head());
  return b.is_object() ? 0 : b.bytes();
}

size_t Tensor::heap_bytes() const {
  if (bits_ == 0) return 0;
  // The representation and its storage; a view's own object besides.
  size_t n = sizeof(OwnedRep) + (head()->view ? sizeof(ViewRep) : 0);
  const TensorBuffer& b = buffer_of(head());
  if (!b.is_object()) return n + (b.bytes() > TensorBuffer::kInlineBytes ? b.bytes() : 0);
  if (b.is_variant()) {
    const VariantPtr* v = data<VariantPtr>();
    for (int64_t i = 0; i < num_elements(); ++i) n += sizeof(VariantPtr) + (v[i] ? v[i]->heap_bytes() : 0);
    return n;
  }
  const auto* s = data<std::string>();
  for (int64_t i = 0; i < num_elements(); ++i) n += sizeof(std::string) + (s[i].capacity() > 15 ? s[i].capacity() + 1 : 0);
  return n;
}

Expected<Tensor> Tensor::reshaped(const Shape& shape) const {
  if (shape.num_elements() != num_elements()) {
    return Status(Error::invalid_argument,
                  "cannot reshape a tensor of " + std::to_string(num_elements()) +
                      " elements " + this->shape().to_string() + " into shape " + shape.to_string() +
                      " with " + std::to_string(shape.num_elements()) + " elements");
  }
  if (bits_ == 0 || shape == this->shape()) return *this;
  detail::TensorHead* root = head()->root;
  Tensor owner = head()->view ? static_cast<const ViewRep*>(head())->base : Tensor(*this);
  return Tensor(new ViewRep(dtype(), shape, std::move(owner), root));
}

Tensor Tensor::with_dtype(DType dtype) const {
  assert(dtype_size(dtype) == dtype_size(this->dtype()) &&
         dtype_is_object(dtype) == dtype_is_object(this->dtype()));
  if (bits_ == 0 || dtype == this->dtype()) return *this;
  detail::TensorHead* root = head()->root;
  Tensor owner = head()->view ? static_cast<const ViewRep*>(head())->base : Tensor(*this);
  return Tensor(new ViewRep(dtype, shape(), std::move(owner), root));
}

namespace {

template <class T>
bool elements_equal(const T& a, const T& b) {
  if constexpr (std::is_floating_point_v<T>) {
    return a == b || (std::isnan(a) && std::isnan(b));
  } else {
    return a == b;
  }
}

template <class T>
void print_element(std::ostream& os, const T& v) {
  if constexpr (std::is_same_v<T, bool>) {
    os << (v ? "true" : "false");
  } else if constexpr (std::is_same_v<T, int8_t> || std::is_same_v<T, uint8_t>) {
    os << static_cast<int>(v);
  } else if constexpr (std::is_same_v<T, Eigen::half> || std::is_same_v<T, Eigen::bfloat16>) {
    os << static_cast<float>(v);
  } else if constexpr (std::is_same_v<T, std::complex<float>> ||
                       std::is_same_v<T, std::complex<double>>) {
    os << "(" << v.real() << "," << v.imag() << ")";
  } else {
    os << v;
  }
}

void print_string(std::ostream& os, const std::string& s) {
  os << '"';
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') os << '\\' << c;
    else if (c >= 32 && c < 127) os << c;
    else {
      char buf[8];
      std::snprintf(buf, sizeof(buf), "\\%03o", c);
      os << buf;
    }
  }
  os << '"';
}

// Prints elements [offset, offset + count of this sub-array) nested by dims.
template <class T>
void print_nested(std::ostream& os, const T* data, const Shape& shape, int axis,
                  int64_t offset, int64_t& budget) {
  if (axis == shape.rank()) {
    if (budget-- <= 0) return;
    if constexpr (std::is_same_v<T, std::string>) print_string(os, data[offset]);
    else if constexpr (std::is_same_v<T, VariantPtr>) os << variant_debug_string(data[offset]);
    else print_element(os, data[offset]);
    return;
  }
  int64_t stride = 1;
  for (int i = axis + 1; i < shape.rank(); ++i) stride *= shape.dim(i);
  os << '[';
  for (int64_t i = 0; i < shape.dim(axis); ++i) {
    if (budget <= 0) {
      os << "...";
      break;
    }
    if (i > 0) os << ',';
    print_nested(os, data, shape, axis + 1, offset + i * stride, budget);
  }
  os << ']';
}

}  // namespace

bool Tensor::equals(const Tensor& o) const {
  if (dtype() != o.dtype() || shape() != o.shape() || valid() != o.valid()) return false;
  if (!valid()) return true;
  int64_t n = num_elements();
  if (base_dtype(dtype()) == DType::variant) {
    const auto* a = data<VariantPtr>();
    const auto* b = o.data<VariantPtr>();
    for (int64_t i = 0; i < n; ++i)
      if (!variants_equal(a[i], b[i])) return false;
    return true;
  }
  if (dtype_is_object(dtype())) {
    const auto* a = data<std::string>();
    const auto* b = o.data<std::string>();
    for (int64_t i = 0; i < n; ++i)
      if (a[i] != b[i]) return false;
    return true;
  }
  bool same = true;
  bool handled = dispatch_pod(base_dtype(dtype()), [&](auto tag) {
    using T = decltype(tag);
    const T* a = data<T>();
    const T* b = o.data<T>();
    for (int64_t i = 0; i < n && same; ++i) same = elements_equal(a[i], b[i]);
  });
  if (!handled) return std::memcmp(raw_data(), o.raw_data(), byte_size()) == 0;
  return same;
}

std::string Tensor::values_string(int64_t max_elements) const {
  if (!valid()) return "<invalid>";
  std::ostringstream os;
  os.precision(9);
  int64_t budget = max_elements;
  if (base_dtype(dtype()) == DType::variant) {
    print_nested(os, data<VariantPtr>(), shape(), 0, 0, budget);
  } else if (dtype_is_object(dtype())) {
    print_nested(os, data<std::string>(), shape(), 0, 0, budget);
  } else if (!dispatch_pod(base_dtype(dtype()), [&](auto tag) {
               using T = decltype(tag);
               print_nested(os, data<T>(), shape(), 0, 0, budget);
             })) {
    os << "<" << byte_size() << " bytes>";
  }
  return os.str();
}

std::string Tensor::debug_string(int64_t max_elements) const {
  if (!valid()) return "<invalid tensor>";
  return dtype_name(dtype()) + shape().to_string() + " " + values_string(max_elements);
}

double element_as_double(const Tensor& t, int64_t i) {
  double out = 0;
  dispatch_pod(base_dtype(t.dtype()), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_same_v<T, std::complex<float>> || std::is_same_v<T, std::complex<double>>) {
      out = static_cast<double>(t.data<T>()[i].real());
    } else {
      out = static_cast<double>(t.data<T>()[i]);
    }
  });
  return out;
}

}  // namespace tagflow::ops
