// LookupTable: a key-value table kept by the session's ResourceManager, the
// state behind TensorFlow's lookup ops (HashTableV2, MutableHashTableV2,
// MutableHashTableOfTensorsV2 and the LookupTable*V2 / InitializeTable*V2
// ops of ops/lookup_ops.cpp). Keys are scalars (int32, int64 or string);
// each value is a tensor of the table's value shape ([] except for
// MutableHashTableOfTensorsV2, whose values are vectors).
//
// Two kinds, as TensorFlow's: a HashTable is filled once by `initialize`
// and read-only afterwards; a mutable table takes inserts, removals and
// imports at any time. The methods check their arguments against the
// table's dtypes and shapes with TensorFlow's rules (LookupInterface's
// Check* functions) and say what is wrong, naming the table.
//
// Thread-safe: kernels of one step, and of concurrent steps, may use one
// table at once. Readers (find, size, export) share a lock; writers take
// it alone.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "ops/shape.hpp"
#include "ops/status.hpp"
#include "ops/tensor.hpp"

namespace tagflow::ops {

enum class TableKind {
  hash_table,                     // HashTableV2: initialized once
  mutable_hash_table,             // MutableHashTableV2: scalar values
  mutable_hash_table_of_tensors,  // MutableHashTableOfTensorsV2: vector values
};

// The op that makes a table of the kind: "HashTableV2", ...
const char* table_kind_op(TableKind kind);

// What a table is: made by one node, and what every later node that names
// the same table must declare again (shared_name semantics).
struct TableSpec {
  TableKind kind = TableKind::hash_table;
  DType key_dtype = DType::invalid;
  DType value_dtype = DType::invalid;
  Shape value_shape;  // [] for the scalar-valued kinds
};

class LookupTable {
 public:
  virtual ~LookupTable() = default;
  LookupTable(const LookupTable&) = delete;
  LookupTable& operator=(const LookupTable&) = delete;

  const std::string& name() const { return name_; }
  const TableSpec& spec() const { return spec_; }
  // "HashTableV2 'name' (int64 -> string)": how errors name the table.
  std::string description() const;

  // The number of entries (0 for a HashTable not yet initialized).
  virtual int64_t size() const = 0;
  // The values of `keys` (any shape), default_value where a key is absent,
  // into a tensor of shape keys.shape + value_shape. default_value has the
  // value shape, or that full shape (a default per key: mutable tables).
  virtual Expected<Tensor> find(const Tensor& keys, const Tensor& default_value) const = 0;
  // Adds or replaces entries: values has shape keys.shape + value_shape.
  // unimplemented for a HashTable.
  virtual Status insert(const Tensor& keys, const Tensor& values) = 0;
  // Removes the entries of `keys` that exist. unimplemented for a HashTable.
  virtual Status remove(const Tensor& keys) = 0;
  // Replaces every entry (a mutable table) or initializes (a HashTable).
  virtual Status import_values(const Tensor& keys, const Tensor& values) = 0;
  // Every entry: keys [n] and values [n] + value_shape, in no set order.
  struct Entries {
    Tensor keys;
    Tensor values;
  };
  virtual Expected<Entries> export_values() const = 0;

  // Whether InitializeTableV2 and InitializeTableFromTextFileV2 apply.
  virtual bool initializable() const { return false; }
  virtual bool is_initialized() const { return false; }
  // Fills a HashTable from key and value tensors of one shape. Done once:
  // initializing an initialized table again with as many entries as it
  // holds does nothing; with another number it is failed_precondition
  // (TensorFlow compares the counts, not the entries). A key given twice
  // with two values is failed_precondition and leaves the table as it was.
  virtual Status initialize(const Tensor& keys, const Tensor& values);

 protected:
  LookupTable(std::string name, TableSpec spec) : name_(std::move(name)), spec_(std::move(spec)) {}

  // TensorFlow's argument checks (LookupInterface), with messages naming
  // this table: the dtypes of keys and values, values of shape
  // keys.shape + value_shape, a default of value_shape or that full shape.
  Status check_key_dtype(const Tensor& keys) const;
  Status check_keys_and_values(const Tensor& keys, const Tensor& values) const;
  Status check_find_arguments(const Tensor& keys, const Tensor& default_value) const;
  // keys.shape + value_shape.
  Expected<Shape> value_shape_for(const Tensor& keys) const;

 private:
  std::string name_;
  TableSpec spec_;
};

// The key/value dtypes for which TensorFlow registers CPU kernels of the
// kind (lookup_table_op.cc); an unimplemented error naming the op and the
// pair otherwise.
Status check_table_dtypes(TableKind kind, DType key_dtype, DType value_dtype);

// A new empty table named `name`. A MutableHashTableOfTensorsV2 needs a
// vector value shape, as TensorFlow's; the dtypes must pass
// check_table_dtypes.
Expected<std::shared_ptr<LookupTable>> make_lookup_table(const std::string& name, const TableSpec& spec);

// InitializeTableFromTextFileV2 (lookup_text_file.cpp): one entry per line
// of a local text file, read with TensorFlow's rules (lookup_util.cc).
struct TextFileColumns {
  int64_t key_index = 0;    // >= 0 a field, -1 the line number, -2 the whole line
  int64_t value_index = 0;  // the same
  int64_t vocab_size = -1;  // -1: every line; else exactly (at least) that many lines
  char delimiter = '\t';
  int64_t offset = 0;  // added to line numbers (and, as TensorFlow does, to int32 fields)
};
Status initialize_from_text_file(LookupTable& table, const std::string& filename, const TextFileColumns& columns);

}  // namespace tagflow::ops
