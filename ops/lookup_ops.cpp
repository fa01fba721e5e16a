// TensorFlow's lookup-table ops (core/ops/lookup_ops.cc) and their kernels:
// HashTableV2, MutableHashTableV2 and MutableHashTableOfTensorsV2 find or
// make their table (ops/lookup_table.hpp) in the ResourceManager and output
// a handle naming it; LookupTableFindV2, InsertV2, RemoveV2, SizeV2,
// ExportV2, ImportV2, InitializeTableV2 and InitializeTableFromTextFileV2
// take that handle. Signatures, attrs and defaults are TensorFlow's. The
// three table-making ops are stateful, as in TensorFlow, and so — unlike
// there — are the five that change a table (Insert, Remove, Import and the
// two initializers): tagflow's graph passes keep a stateful node where
// TensorFlow relies on a function's control outputs or on its executor
// running an untaken loop's body once, so a table is never left
// uninitialized by an optimisation. None has a gradient (TensorFlow
// declares none).
//
// Naming. A table is named container + "/" + shared_name, or shared_name
// alone when container is empty; an empty shared_name is the node's name
// (TensorFlow's use_node_name_sharing, and its private per-kernel table,
// which a per-session ResourceManager makes the same thing). A node naming
// an existing table must declare its kind, dtypes and value shape.
#include <algorithm>

#include "ops/array_ops.hpp"
#include "ops/lookup_table.hpp"
#include "ops/op_def.hpp"
#include "ops/resource.hpp"
#include "ops/shape_fns.hpp"
#include "ops/state_kernels.hpp"

namespace tagflow::ops {

namespace {

using state_kernels::session_state;
using Made = Expected<std::unique_ptr<Kernel>>;

Expected<std::shared_ptr<LookupTable>> table_of(const KernelContext& ctx, ResourceManager* rm) {
  TF_ASSIGN_OR_RETURN(std::string name, handle_name(ctx.input(0), "table_handle"));
  return rm->table(name);
}

// --- making tables ------------------------------------------------------------

std::string spec_text(const TableSpec& s) {
  std::string value = dtype_name(s.value_dtype);
  if (!s.value_shape.is_scalar()) value += s.value_shape.to_string();
  return std::string(table_kind_op(s.kind)) + " " + dtype_name(s.key_dtype) + " -> " + value;
}

// The table a node found must be the one it declares.
Status check_declared(const LookupTable& table, const TableSpec& declared) {
  const TableSpec& have = table.spec();
  if (have.kind == declared.kind && have.key_dtype == declared.key_dtype && have.value_dtype == declared.value_dtype &&
      have.value_shape == declared.value_shape)
    return ok_status();
  return Status(Error::invalid_argument, "Conflicting key/value dtypes: the node declares " + spec_text(declared) +
                                             ", but the shared table '" + table.name() + "' is " + spec_text(have));
}

class MakeTableKernel final : public Kernel {
 public:
  MakeTableKernel(std::string name, TableSpec spec)
      : name_(std::move(name)), spec_(std::move(spec)), handle_(make_handle(name_)) {}

  Status compute(KernelContext& ctx) const override {
    TF_ASSIGN_OR_RETURN(ResourceManager * rm, session_state(ctx, 0, 1));
    TF_ASSIGN_OR_RETURN(auto table, rm->create_table(name_, [this] { return make_lookup_table(name_, spec_); }));
    TF_RETURN_IF_ERROR(check_declared(*table, spec_));
    ctx.set_output(0, handle_);
    return ok_status();
  }

 private:
  std::string name_;
  TableSpec spec_;
  Tensor handle_;  // shared by every call: tensors are immutable
};

Expected<Shape> value_shape_attr(const KernelInit& init) {
  TF_ASSIGN_OR_RETURN(PartialShape p, init.attr<PartialShape>("value_shape"));
  if (p.unknown_rank || std::any_of(p.dims.begin(), p.dims.end(), [](int64_t d) { return d < 0; }))
    return Status(Error::invalid_argument, "attr 'value_shape' is " + p.to_string() + ": it must be fully defined");
  return Shape::make(p.dims);
}

Made make_table_kernel(const KernelInit& init, TableKind kind) {
  TF_ASSIGN_OR_RETURN(std::string container, init.attr<std::string>("container"));
  TF_ASSIGN_OR_RETURN(std::string shared_name, init.attr<std::string>("shared_name"));
  TableSpec spec;
  spec.kind = kind;
  TF_ASSIGN_OR_RETURN(spec.key_dtype, init.attr<DType>("key_dtype"));
  TF_ASSIGN_OR_RETURN(spec.value_dtype, init.attr<DType>("value_dtype"));
  if (kind == TableKind::mutable_hash_table_of_tensors) {
    TF_ASSIGN_OR_RETURN(spec.value_shape, value_shape_attr(init));
  }
  TF_RETURN_IF_ERROR(check_table_dtypes(kind, spec.key_dtype, spec.value_dtype));
  std::string name = shared_name.empty() ? init.node_name : shared_name;
  if (!container.empty()) name = container + "/" + name;
  return std::unique_ptr<Kernel>(new MakeTableKernel(std::move(name), std::move(spec)));
}

Made hash_table(const KernelInit& init) { return make_table_kernel(init, TableKind::hash_table); }
Made mutable_hash_table(const KernelInit& init) { return make_table_kernel(init, TableKind::mutable_hash_table); }
Made mutable_hash_table_of_tensors(const KernelInit& init) {
  return make_table_kernel(init, TableKind::mutable_hash_table_of_tensors);
}

// --- using tables -------------------------------------------------------------

// An output dtype the node declares must be the table's.
Status check_output_dtype(const LookupTable& table, const char* output, DType declared, DType have) {
  if (declared == have) return ok_status();
  return Status(Error::invalid_argument, std::string("the node declares output '") + output + "' as " +
                                             dtype_name(declared) + ", but " + table.description() + " gives " +
                                             dtype_name(have));
}

class FindKernel final : public Kernel {
 public:
  explicit FindKernel(DType out) : out_(out) {}

  Status compute(KernelContext& ctx) const override {
    TF_ASSIGN_OR_RETURN(ResourceManager * rm, session_state(ctx, 3, 1));
    TF_ASSIGN_OR_RETURN(auto table, table_of(ctx, rm));
    TF_RETURN_IF_ERROR(check_output_dtype(*table, "values", out_, table->spec().value_dtype));
    TF_ASSIGN_OR_RETURN(Tensor values, table->find(ctx.input(1), ctx.input(2)));
    ctx.set_output(0, std::move(values));
    return ok_status();
  }

 private:
  DType out_;
};

Made find(const KernelInit& init) { return std::unique_ptr<Kernel>(new FindKernel(init.output_types[0])); }

Status insert(KernelContext& ctx) {
  TF_ASSIGN_OR_RETURN(ResourceManager * rm, session_state(ctx, 3, 0));
  TF_ASSIGN_OR_RETURN(auto table, table_of(ctx, rm));
  return table->insert(ctx.input(1), ctx.input(2));
}

Status remove(KernelContext& ctx) {
  TF_ASSIGN_OR_RETURN(ResourceManager * rm, session_state(ctx, 2, 0));
  TF_ASSIGN_OR_RETURN(auto table, table_of(ctx, rm));
  return table->remove(ctx.input(1));
}

Status import_values(KernelContext& ctx) {
  TF_ASSIGN_OR_RETURN(ResourceManager * rm, session_state(ctx, 3, 0));
  TF_ASSIGN_OR_RETURN(auto table, table_of(ctx, rm));
  return table->import_values(ctx.input(1), ctx.input(2));
}

Status size(KernelContext& ctx) {
  TF_ASSIGN_OR_RETURN(ResourceManager * rm, session_state(ctx, 1, 1));
  TF_ASSIGN_OR_RETURN(auto table, table_of(ctx, rm));
  ctx.set_output(0, Tensor::scalar<int64_t>(table->size()));
  return ok_status();
}

class ExportKernel final : public Kernel {
 public:
  ExportKernel(DType keys, DType values) : keys_(keys), values_(values) {}

  Status compute(KernelContext& ctx) const override {
    TF_ASSIGN_OR_RETURN(ResourceManager * rm, session_state(ctx, 1, 2));
    TF_ASSIGN_OR_RETURN(auto table, table_of(ctx, rm));
    TF_RETURN_IF_ERROR(check_output_dtype(*table, "keys", keys_, table->spec().key_dtype));
    TF_RETURN_IF_ERROR(check_output_dtype(*table, "values", values_, table->spec().value_dtype));
    TF_ASSIGN_OR_RETURN(LookupTable::Entries entries, table->export_values());
    ctx.set_output(0, std::move(entries.keys));
    ctx.set_output(1, std::move(entries.values));
    return ok_status();
  }

 private:
  DType keys_;
  DType values_;
};

Made export_values(const KernelInit& init) {
  return std::unique_ptr<Kernel>(new ExportKernel(init.output_types[0], init.output_types[1]));
}

// --- initializing HashTables --------------------------------------------------

Expected<std::shared_ptr<LookupTable>> initializable_table(const KernelContext& ctx, ResourceManager* rm) {
  TF_ASSIGN_OR_RETURN(auto table, table_of(ctx, rm));
  if (!table->initializable())
    return Status(Error::invalid_argument, "Table " + table->description() +
                                               " is not initializable: only a HashTableV2 is initialized");
  return table;
}

Status initialize_table(KernelContext& ctx) {
  TF_ASSIGN_OR_RETURN(ResourceManager * rm, session_state(ctx, 3, 0));
  TF_ASSIGN_OR_RETURN(auto table, initializable_table(ctx, rm));
  const Tensor& keys = ctx.input(1);
  const Tensor& values = ctx.input(2);
  if (keys.rank() != 1)
    return Status(Error::invalid_argument, "Keys must be a vector: InitializeTableV2 of " + table->description() +
                                               " got keys of shape " + keys.shape().to_string());
  if (values.rank() != 1)
    return Status(Error::invalid_argument, "Values must be a vector: InitializeTableV2 of " +
                                               table->description() + " got values of shape " +
                                               values.shape().to_string());
  if (keys.num_elements() != values.num_elements())
    return Status(Error::invalid_argument, "Keys and values must have the same size: InitializeTableV2 of " +
                                               table->description() + " got " + std::to_string(keys.num_elements()) +
                                               " keys and " + std::to_string(values.num_elements()) + " values");
  return table->initialize(keys, values);
}

class TextFileInitKernel final : public Kernel {
 public:
  explicit TextFileInitKernel(TextFileColumns columns) : columns_(columns) {}

  Status compute(KernelContext& ctx) const override {
    TF_ASSIGN_OR_RETURN(ResourceManager * rm, session_state(ctx, 2, 0));
    TF_ASSIGN_OR_RETURN(auto table, initializable_table(ctx, rm));
    const Tensor& filename = ctx.input(1);
    if (filename.dtype() != DType::string || !filename.shape().is_scalar())
      return Status(Error::invalid_argument, "filename should be a single string, but got " +
                                                 filename.debug_string(4));
    const std::string& path = filename.scalar_value<std::string>();
    if (path.empty()) return Status(Error::invalid_argument, "filename cannot be empty");
    return initialize_from_text_file(*table, path, columns_);
  }

 private:
  TextFileColumns columns_;
};

Made initialize_from_text_file_kernel(const KernelInit& init) {
  TextFileColumns columns;
  TF_ASSIGN_OR_RETURN(columns.key_index, init.attr<int64_t>("key_index"));
  TF_ASSIGN_OR_RETURN(columns.value_index, init.attr<int64_t>("value_index"));
  TF_ASSIGN_OR_RETURN(columns.vocab_size, init.attr<int64_t>("vocab_size"));
  TF_ASSIGN_OR_RETURN(columns.offset, init.attr<int64_t>("offset"));
  TF_ASSIGN_OR_RETURN(std::string delimiter, init.attr<std::string>("delimiter"));
  if (delimiter.size() != 1)
    return Status(Error::invalid_argument,
                  "delimiter should be only 1 char: attr 'delimiter' is \"" + delimiter + "\"");
  columns.delimiter = delimiter[0];
  return std::unique_ptr<Kernel>(new TextFileInitKernel(columns));
}

// --- shape functions ----------------------------------------------------------

// Input i, when its rank is known, has rank r.
Status input_rank(InferenceContext& c, int i, int r, const char* what) {
  const PartialShape& s = c.input_shape(i);
  if (s.unknown_rank || shape::rank(s) == r) return ok_status();
  return c.error(std::string(what) + " must have rank " + std::to_string(r) + ", got shape " + s.to_string());
}

Status handle_only(InferenceContext& c) { return input_rank(c, 0, 0, "table_handle"); }

Status size_shape(InferenceContext& c) {
  TF_RETURN_IF_ERROR(handle_only(c));
  c.set_output(0, shape::scalar());
  return ok_status();
}

// keys.shape + value_shape. The node does not say the value shape, but its
// default_value does, for the tables there are (scalar or vector values):
// a scalar default is one for scalar values; a vector default with scalar
// keys is the values' shape either way it is read; a default of rank 2 or
// more is one per key (the whole output).
Status find_shape(InferenceContext& c) {
  TF_RETURN_IF_ERROR(handle_only(c));
  const PartialShape& keys = c.input_shape(1);
  const PartialShape& fallback = c.input_shape(2);
  if (fallback.unknown_rank) return ok_status();
  if (shape::rank(fallback) == 0) c.set_output(0, keys);
  else if (shape::rank(fallback) >= 2) c.set_output(0, fallback);
  else if (!keys.unknown_rank && shape::rank(keys) == 0) c.set_output(0, fallback);
  return ok_status();
}

Status remove_shape(InferenceContext& c) {
  TF_RETURN_IF_ERROR(handle_only(c));
  const PartialShape& keys = c.input_shape(1);
  if (!keys.unknown_rank && shape::rank(keys) == 0) return c.error("keys must have rank at least 1, got a scalar");
  return ok_status();
}

Status export_shape(InferenceContext& c) {
  TF_RETURN_IF_ERROR(handle_only(c));
  c.set_output(0, shape::vector(-1));  // values: [n] + the table's value shape, not known here
  return ok_status();
}

Status import_shape(InferenceContext& c) {
  TF_RETURN_IF_ERROR(handle_only(c));
  TF_RETURN_IF_ERROR(input_rank(c, 1, 1, "keys"));
  const PartialShape& values = c.input_shape(2);
  if (values.unknown_rank) return ok_status();
  if (shape::rank(values) == 0) return c.error("values must have rank at least 1, got a scalar");
  if (!shape::dims_compatible(shape::dim(c.input_shape(1), 0), values.dims[0]))
    return c.error("keys " + c.input_shape(1).to_string() + " and values " + values.to_string() +
                   " differ in their first dimension");
  return ok_status();
}

Status initialize_shape(InferenceContext& c) {
  TF_RETURN_IF_ERROR(handle_only(c));
  TF_RETURN_IF_ERROR(input_rank(c, 1, 1, "keys"));
  if (!shape::merge(c.input_shape(1), c.input_shape(2)))
    return c.error("keys " + c.input_shape(1).to_string() + " and values " + c.input_shape(2).to_string() +
                   " must have one shape");
  return ok_status();
}

Status text_file_shape(InferenceContext& c) {
  TF_RETURN_IF_ERROR(handle_only(c));
  return input_rank(c, 1, 0, "filename");
}

// --- registration -------------------------------------------------------------

void register_table_op(OpRegistry& r, const char* name, KernelFactory kernel, bool value_shape) {
  OpDef d(name);
  d.shape_fn(shape_fns::scalars)
      .output("table_handle: resource")
      .attr("container", "string", std::string())
      .attr("shared_name", "string", std::string())
      .attr("use_node_name_sharing", "bool", false)
      .type_attr("key_dtype")
      .type_attr("value_dtype");
  if (value_shape) d.attr("value_shape", "shape", PartialShape{false, {}});
  register_builtin(r, std::move(d.stateful().kernel(std::move(kernel))));
}

}  // namespace

void register_lookup_ops(OpRegistry& r) {
  register_table_op(r, "HashTableV2", hash_table, false);
  register_table_op(r, "MutableHashTableV2", mutable_hash_table, false);
  register_table_op(r, "MutableHashTableOfTensorsV2", mutable_hash_table_of_tensors, true);
  register_builtin(r, OpDef("LookupTableFindV2").shape_fn(find_shape)
                          .input("table_handle: resource").input("keys: Tin").input("default_value: Tout")
                          .output("values: Tout")
                          .type_attr("Tin").type_attr("Tout")
                          .kernel(find));
  register_builtin(r, OpDef("LookupTableInsertV2").stateful().shape_fn(handle_only)
                          .input("table_handle: resource").input("keys: Tin").input("values: Tout")
                          .type_attr("Tin").type_attr("Tout")
                          .kernel_fn(insert));
  register_builtin(r, OpDef("LookupTableRemoveV2").stateful().shape_fn(remove_shape)
                          .input("table_handle: resource").input("keys: Tin")
                          .type_attr("Tin")
                          .kernel_fn(remove));
  register_builtin(r, OpDef("LookupTableSizeV2").shape_fn(size_shape)
                          .input("table_handle: resource").output("size: int64")
                          .kernel_fn(size));
  register_builtin(r, OpDef("LookupTableExportV2").shape_fn(export_shape)
                          .input("table_handle: resource")
                          .output("keys: Tkeys").output("values: Tvalues")
                          .type_attr("Tkeys").type_attr("Tvalues")
                          .kernel(export_values));
  register_builtin(r, OpDef("LookupTableImportV2").stateful().shape_fn(import_shape)
                          .input("table_handle: resource").input("keys: Tin").input("values: Tout")
                          .type_attr("Tin").type_attr("Tout")
                          .kernel_fn(import_values));
  register_builtin(r, OpDef("InitializeTableV2").stateful().shape_fn(initialize_shape)
                          .input("table_handle: resource").input("keys: Tkey").input("values: Tval")
                          .type_attr("Tkey").type_attr("Tval")
                          .kernel_fn(initialize_table));
  register_builtin(r, OpDef("InitializeTableFromTextFileV2").stateful().shape_fn(text_file_shape)
                          .input("table_handle: resource").input("filename: string")
                          .attr("key_index", "int", std::nullopt, -2)
                          .attr("value_index", "int", std::nullopt, -2)
                          .attr("vocab_size", "int", int64_t{-1}, -1)
                          .attr("delimiter", "string", std::string("\t"))
                          .attr("offset", "int", int64_t{0})
                          .kernel(initialize_from_text_file_kernel));
}

}  // namespace tagflow::ops
