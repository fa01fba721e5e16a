// The two kinds of LookupTable (ops/lookup_table.hpp). Both keep their
// entries in TableRows: a hash index from key to a dense row number, and
// the values of all rows in one flat tensor of the value dtype, row r at
// [r * width, (r + 1) * width). Removing a row moves the last row into it,
// so rows stay dense and an export is two copies. Only the index knows the
// key's C++ type; values move as elements (tensor_copy.hpp), whatever
// their dtype.
#include "ops/lookup_table.hpp"

#include <algorithm>
#include <mutex>
#include <shared_mutex>
#include <unordered_map>
#include <utility>
#include <vector>

#include "ops/tensor_copy.hpp"

namespace tagflow::ops {

// --- names and argument checks ----------------------------------------------

const char* table_kind_op(TableKind kind) {
  switch (kind) {
    case TableKind::hash_table:
      return "HashTableV2";
    case TableKind::mutable_hash_table:
      return "MutableHashTableV2";
    case TableKind::mutable_hash_table_of_tensors:
      return "MutableHashTableOfTensorsV2";
  }
  return "a lookup table";
}

std::string LookupTable::description() const {
  std::string value = dtype_name(spec_.value_dtype);
  if (!spec_.value_shape.is_scalar()) value += spec_.value_shape.to_string();
  return std::string(table_kind_op(spec_.kind)) + " '" + name_ + "' (" + dtype_name(spec_.key_dtype) + " -> " +
         value + ")";
}

Status LookupTable::initialize(const Tensor&, const Tensor&) {
  return Status(Error::invalid_argument, description() + " is not initializable: only a HashTableV2 is");
}

Status LookupTable::check_key_dtype(const Tensor& keys) const {
  if (keys.dtype() == spec_.key_dtype) return ok_status();
  return Status(Error::invalid_argument, "keys are " + dtype_name(keys.dtype()) + ", but " + description() +
                                             " has " + dtype_name(spec_.key_dtype) + " keys");
}

Expected<Shape> LookupTable::value_shape_for(const Tensor& keys) const {
  std::vector<int64_t> dims = keys.shape().dims();
  for (int64_t d : spec_.value_shape.dims()) dims.push_back(d);
  auto shape = Shape::make(dims);
  if (!shape.ok())
    return Status(Error::invalid_argument, "keys of shape " + keys.shape().to_string() + " with values of shape " +
                                               spec_.value_shape.to_string() + " in " + description() +
                                               " make a shape tagflow cannot hold: " + shape.status().message());
  return shape;
}

Status LookupTable::check_keys_and_values(const Tensor& keys, const Tensor& values) const {
  TF_RETURN_IF_ERROR(check_key_dtype(keys));
  if (values.dtype() != spec_.value_dtype)
    return Status(Error::invalid_argument, "values are " + dtype_name(values.dtype()) + ", but " + description() +
                                               " has " + dtype_name(spec_.value_dtype) + " values");
  TF_ASSIGN_OR_RETURN(Shape expected, value_shape_for(keys));
  if (values.shape() != expected)
    return Status(Error::invalid_argument, "values of shape " + values.shape().to_string() + " for keys of shape " +
                                               keys.shape().to_string() + ": " + description() + " expects " +
                                               expected.to_string());
  return ok_status();
}

Status LookupTable::check_find_arguments(const Tensor& keys, const Tensor& default_value) const {
  TF_RETURN_IF_ERROR(check_key_dtype(keys));
  if (default_value.dtype() != spec_.value_dtype)
    return Status(Error::invalid_argument, "default_value is " + dtype_name(default_value.dtype()) + ", but " +
                                               description() + " has " + dtype_name(spec_.value_dtype) + " values");
  TF_ASSIGN_OR_RETURN(Shape full, value_shape_for(keys));
  if (default_value.shape() != spec_.value_shape && default_value.shape() != full)
    return Status(Error::invalid_argument, "default_value has shape " + default_value.shape().to_string() + ": " +
                                               description() + " takes " + spec_.value_shape.to_string() +
                                               " (one for all keys) or " + full.to_string() + " (one per key)");
  return ok_status();
}

Status check_table_dtypes(TableKind kind, DType key, DType value) {
  using D = DType;
  auto any_of = [value](std::initializer_list<DType> allowed) {
    return std::find(allowed.begin(), allowed.end(), value) != allowed.end();
  };
  bool ok = false;
  const bool mutable_table = kind != TableKind::hash_table;
  if (key == D::int32) {
    ok = any_of({D::float64, D::float32, D::int32}) || (!mutable_table && value == D::string);
  } else if (key == D::int64) {
    ok = any_of({D::float64, D::float32, D::int32, D::int64, D::string}) ||
         (kind == TableKind::mutable_hash_table && value == D::variant);
  } else if (key == D::string) {
    ok = any_of({D::boolean, D::float64, D::float32, D::int32, D::int64}) || (!mutable_table && value == D::string);
  }
  if (ok) return ok_status();
  return Status(Error::unimplemented, std::string(table_kind_op(kind)) + " has no kernel for " + dtype_name(key) +
                                          " keys and " + dtype_name(value) +
                                          " values (TensorFlow registers its CPU kernels for other pairs only)");
}

namespace {

// --- the key index ------------------------------------------------------------

// Keys to dense row numbers 0..size()-1. Not thread-safe: its table's
// lock guards it.
class KeyIndex {
 public:
  virtual ~KeyIndex() = default;
  virtual int64_t size() const = 0;
  // The row of keys[i], or -1.
  virtual int64_t find(const Tensor& keys, int64_t i) const = 0;
  // The row of keys[i], a new one (at size()) if it had none.
  virtual std::pair<int64_t, bool> insert(const Tensor& keys, int64_t i) = 0;
  // Removes keys[i] and returns the row it had (-1 if none); the last row
  // is renumbered to that row.
  virtual int64_t remove(const Tensor& keys, int64_t i) = 0;
  virtual void clear() = 0;
  // The keys of rows 0..size()-1 into `out`, a tensor of size() elements.
  virtual void write_keys(Tensor& out) const = 0;
};

template <class K>
class TypedKeyIndex final : public KeyIndex {
 public:
  int64_t size() const override { return static_cast<int64_t>(by_row_.size()); }

  int64_t find(const Tensor& keys, int64_t i) const override {
    auto it = rows_.find(keys.data<K>()[i]);
    return it == rows_.end() ? -1 : it->second;
  }

  std::pair<int64_t, bool> insert(const Tensor& keys, int64_t i) override {
    auto [it, added] = rows_.try_emplace(keys.data<K>()[i], size());
    if (added) by_row_.push_back(&*it);
    return {it->second, added};
  }

  int64_t remove(const Tensor& keys, int64_t i) override {
    auto it = rows_.find(keys.data<K>()[i]);
    if (it == rows_.end()) return -1;
    const int64_t row = it->second;
    Entry* last = by_row_.back();
    by_row_[static_cast<size_t>(row)] = last;
    last->second = row;
    by_row_.pop_back();
    rows_.erase(it);
    return row;
  }

  void clear() override {
    rows_.clear();
    by_row_.clear();
  }

  void write_keys(Tensor& out) const override {
    K* keys = out.mutable_data<K>();
    for (size_t r = 0; r < by_row_.size(); ++r) keys[r] = by_row_[r]->first;
  }

 private:
  using Entry = typename std::unordered_map<K, int64_t>::value_type;
  std::unordered_map<K, int64_t> rows_;
  std::vector<Entry*> by_row_;  // nodes of rows_: their addresses are stable
};

std::unique_ptr<KeyIndex> make_key_index(DType key_dtype) {
  switch (key_dtype) {
    case DType::int32:
      return std::make_unique<TypedKeyIndex<int32_t>>();
    case DType::int64:
      return std::make_unique<TypedKeyIndex<int64_t>>();
    default:
      return std::make_unique<TypedKeyIndex<std::string>>();
  }
}

// --- rows ---------------------------------------------------------------------

// The entries of one table. Not thread-safe: its table's lock guards it.
class TableRows {
 public:
  explicit TableRows(const TableSpec& spec)
      : spec_(spec), index_(make_key_index(spec.key_dtype)), width_(spec.value_shape.num_elements()) {}

  int64_t size() const { return index_->size(); }
  int64_t find(const Tensor& keys, int64_t i) const { return index_->find(keys, i); }

  // Sets keys[i] to the value at values[i * width...]; *added says whether
  // the key is new (else its old value is replaced only if `replace`).
  Status put(const Tensor& keys, int64_t i, const Tensor& values, bool replace, int64_t* row, bool* added) {
    TF_RETURN_IF_ERROR(reserve(size() + 1));
    auto [r, is_new] = index_->insert(keys, i);
    if (is_new || replace) copy_elements(values, i * width_, values_, r * width_, width_);
    *row = r;
    *added = is_new;
    return ok_status();
  }

  void remove(const Tensor& keys, int64_t i) {
    const int64_t row = index_->remove(keys, i);
    const int64_t last = size();  // the row that moved into `row`
    if (row >= 0 && row != last) copy_elements(values_, last * width_, values_, row * width_, width_);
  }

  void clear() { index_->clear(); }

  // Row `row`'s value into out[at * width...].
  void copy_value(int64_t row, Tensor& out, int64_t at) const {
    copy_elements(values_, row * width_, out, at * width_, width_);
  }

  // Row `row`'s value as a tensor, for messages and comparisons.
  Tensor value_of(int64_t row) const { return slice(values_, row); }
  Tensor slice(const Tensor& values, int64_t i) const {
    Tensor t(spec_.value_dtype, spec_.value_shape);
    copy_elements(values, i * width_, t, 0, width_);
    return t;
  }

  Expected<LookupTable::Entries> entries() const {
    const int64_t n = size();
    std::vector<int64_t> dims = {n};
    for (int64_t d : spec_.value_shape.dims()) dims.push_back(d);
    TF_ASSIGN_OR_RETURN(Shape value_shape, Shape::make(dims));
    LookupTable::Entries out;
    TF_ASSIGN_OR_RETURN(out.keys, allocate_uninitialized(spec_.key_dtype, Shape{n}));
    TF_ASSIGN_OR_RETURN(out.values, allocate_uninitialized(spec_.value_dtype, value_shape));
    index_->write_keys(out.keys);
    copy_elements(values_, 0, out.values, 0, n * width_);
    return out;
  }

  void swap(TableRows& other) {
    std::swap(index_, other.index_);
    std::swap(values_, other.values_);
  }

 private:
  // Room for `rows` rows; the storage doubles so that inserting n keys
  // one at a time copies O(n) values.
  Status reserve(int64_t rows) {
    const int64_t capacity = width_ == 0 ? rows : (values_.valid() ? values_.num_elements() / width_ : 0);
    if (rows <= capacity || width_ == 0) return ok_status();
    const int64_t grown = std::max<int64_t>({rows, 2 * capacity, 16});
    TF_ASSIGN_OR_RETURN(Tensor bigger, allocate_tensor(spec_.value_dtype, Shape{grown * width_}));
    if (values_.valid()) copy_elements(values_, 0, bigger, 0, size() * width_);
    values_ = std::move(bigger);
    return ok_status();
  }

  TableSpec spec_;
  std::unique_ptr<KeyIndex> index_;
  int64_t width_;  // elements per value
  Tensor values_;  // never shared: only this object holds the buffer
};

// One element of `keys`, for messages.
std::string key_text(const Tensor& keys, int64_t i) {
  if (keys.dtype() == DType::string) return "\"" + keys.data<std::string>()[i] + "\"";
  return std::to_string(keys.dtype() == DType::int32 ? keys.data<int32_t>()[i] : keys.data<int64_t>()[i]);
}

// Writes the value of each key, or its default, into `out`.
void gather(const TableRows& rows, const Tensor& keys, const Tensor& default_value, bool per_key_default, Tensor& out) {
  const int64_t n = keys.num_elements();
  const int64_t width = out.num_elements() / std::max<int64_t>(n, 1);
  for (int64_t i = 0; i < n; ++i) {
    const int64_t row = rows.find(keys, i);
    if (row >= 0) rows.copy_value(row, out, i);
    else copy_elements(default_value, per_key_default ? i * width : 0, out, i * width, width);
  }
}

// --- HashTable ----------------------------------------------------------------

class HashTable final : public LookupTable {
 public:
  HashTable(std::string name, const TableSpec& spec) : LookupTable(std::move(name), spec), rows_(spec) {}

  bool initializable() const override { return true; }
  bool is_initialized() const override {
    std::shared_lock<std::shared_mutex> lock(mu_);
    return initialized_;
  }

  int64_t size() const override {
    std::shared_lock<std::shared_mutex> lock(mu_);
    return initialized_ ? rows_.size() : 0;
  }

  Expected<Tensor> find(const Tensor& keys, const Tensor& default_value) const override {
    TF_RETURN_IF_ERROR(check_find_arguments(keys, default_value));
    TF_ASSIGN_OR_RETURN(Shape shape, value_shape_for(keys));
    TF_ASSIGN_OR_RETURN(Tensor out, allocate_uninitialized(spec().value_dtype, shape));
    std::shared_lock<std::shared_mutex> lock(mu_);
    if (!initialized_)
      return Status(Error::failed_precondition, "Table not initialized: " + description() +
                                                    " is read before an InitializeTableV2 or "
                                                    "InitializeTableFromTextFileV2 has filled it");
    // TensorFlow's HashTable takes the first element of a per-key default
    // for every key: kept, so that lookups give what TensorFlow gives.
    gather(rows_, keys, default_value, /*per_key_default=*/false, out);
    return out;
  }

  Status insert(const Tensor& keys, const Tensor& values) override {
    TF_RETURN_IF_ERROR(check_keys_and_values(keys, values));
    return read_only("LookupTableInsertV2");
  }
  Status remove(const Tensor& keys) override {
    TF_RETURN_IF_ERROR(check_key_dtype(keys));
    return read_only("LookupTableRemoveV2");
  }
  Status import_values(const Tensor& keys, const Tensor& values) override {
    TF_RETURN_IF_ERROR(check_keys_and_values(keys, values));
    return initialize(keys, values);
  }

  Expected<Entries> export_values() const override {
    std::shared_lock<std::shared_mutex> lock(mu_);
    if (!initialized_) return Status(Error::aborted, "HashTable is not initialized: " + description() + " has no entries yet");
    return rows_.entries();
  }

  Status initialize(const Tensor& keys, const Tensor& values) override {
    if (keys.shape() != values.shape())
      return Status(Error::invalid_argument, "keys of shape " + keys.shape().to_string() + " and values of shape " +
                                                 values.shape().to_string() + " for " + description() +
                                                 ": they must have the same shape");
    if (keys.num_elements() == 0)
      return Status(Error::invalid_argument,
                    "keys and values cannot be empty tensors: " + description() + " is initialized with no entries");
    TF_RETURN_IF_ERROR(check_keys_and_values(keys, values));
    std::unique_lock<std::shared_mutex> lock(mu_);
    if (initialized_) return same_count(keys.num_elements());
    TableRows filled(spec());
    TF_RETURN_IF_ERROR(fill(filled, keys, values));
    rows_.swap(filled);
    initialized_ = true;
    return ok_status();
  }

 private:
  Status read_only(const char* op) const {
    return Status(Error::unimplemented, std::string(op) + " is not supported by " + description() +
                                            ": a HashTable is read-only once initialized");
  }

  // What initializing an initialized table again gives: TensorFlow accepts
  // the same number of entries as the same data.
  Status same_count(int64_t n) const {
    if (n == rows_.size()) return ok_status();
    return Status(Error::failed_precondition, "Table was already initialized with different data: " + description() +
                                                  " holds " + std::to_string(rows_.size()) + " entries, the new data " +
                                                  std::to_string(n));
  }

  Status fill(TableRows& rows, const Tensor& keys, const Tensor& values) const {
    for (int64_t i = 0; i < keys.num_elements(); ++i) {
      int64_t row = 0;
      bool added = false;
      TF_RETURN_IF_ERROR(rows.put(keys, i, values, /*replace=*/false, &row, &added));
      if (added) continue;
      Tensor had = rows.value_of(row);
      Tensor now = rows.slice(values, i);
      if (had != now)
        return Status(Error::failed_precondition, "HashTable has different value for same key: " + description() +
                                                      " is given key " + key_text(keys, i) + " with " +
                                                      had.values_string(8) + " and " + now.values_string(8));
    }
    return ok_status();
  }

  mutable std::shared_mutex mu_;
  bool initialized_ = false;
  TableRows rows_;
};

// --- mutable tables -----------------------------------------------------------

class MutableHashTable final : public LookupTable {
 public:
  MutableHashTable(std::string name, const TableSpec& spec) : LookupTable(std::move(name), spec), rows_(spec) {}

  int64_t size() const override {
    std::shared_lock<std::shared_mutex> lock(mu_);
    return rows_.size();
  }

  Expected<Tensor> find(const Tensor& keys, const Tensor& default_value) const override {
    TF_RETURN_IF_ERROR(check_find_arguments(keys, default_value));
    TF_ASSIGN_OR_RETURN(Shape shape, value_shape_for(keys));
    TF_ASSIGN_OR_RETURN(Tensor out, allocate_uninitialized(spec().value_dtype, shape));
    // A default of the full shape gives each key its own (when the value
    // shape and the full shape are one, both readings agree).
    const bool per_key = default_value.shape() == shape;
    std::shared_lock<std::shared_mutex> lock(mu_);
    gather(rows_, keys, default_value, per_key, out);
    return out;
  }

  Status insert(const Tensor& keys, const Tensor& values) override {
    TF_RETURN_IF_ERROR(check_keys_and_values(keys, values));
    std::unique_lock<std::shared_mutex> lock(mu_);
    return put_all(keys, values);
  }

  Status remove(const Tensor& keys) override {
    TF_RETURN_IF_ERROR(check_key_dtype(keys));
    std::unique_lock<std::shared_mutex> lock(mu_);
    for (int64_t i = 0; i < keys.num_elements(); ++i) rows_.remove(keys, i);
    return ok_status();
  }

  Status import_values(const Tensor& keys, const Tensor& values) override {
    TF_RETURN_IF_ERROR(check_keys_and_values(keys, values));
    std::unique_lock<std::shared_mutex> lock(mu_);
    rows_.clear();
    return put_all(keys, values);
  }

  Expected<Entries> export_values() const override {
    std::shared_lock<std::shared_mutex> lock(mu_);
    return rows_.entries();
  }

 private:
  // A later duplicate of a key replaces the earlier one, as TensorFlow's
  // InsertOrUpdate does.
  Status put_all(const Tensor& keys, const Tensor& values) {
    for (int64_t i = 0; i < keys.num_elements(); ++i) {
      int64_t row = 0;
      bool added = false;
      TF_RETURN_IF_ERROR(rows_.put(keys, i, values, /*replace=*/true, &row, &added));
    }
    return ok_status();
  }

  mutable std::shared_mutex mu_;
  TableRows rows_;
};

}  // namespace

Expected<std::shared_ptr<LookupTable>> make_lookup_table(const std::string& name, const TableSpec& spec) {
  TF_RETURN_IF_ERROR(check_table_dtypes(spec.kind, spec.key_dtype, spec.value_dtype));
  switch (spec.kind) {
    case TableKind::hash_table:
      return std::shared_ptr<LookupTable>(std::make_shared<HashTable>(name, spec));
    case TableKind::mutable_hash_table:
      return std::shared_ptr<LookupTable>(std::make_shared<MutableHashTable>(name, spec));
    case TableKind::mutable_hash_table_of_tensors:
      if (spec.value_shape.rank() != 1)
        return Status(Error::invalid_argument, "Default value must be a vector: MutableHashTableOfTensorsV2 '" + name +
                                                   "' has value_shape " + spec.value_shape.to_string());
      return std::shared_ptr<LookupTable>(std::make_shared<MutableHashTable>(name, spec));
  }
  return Status(Error::internal, "unknown lookup table kind");
}

}  // namespace tagflow::ops
