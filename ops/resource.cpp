#include "ops/resource.hpp"

#include <algorithm>
#include <complex>
#include <type_traits>
#include <vector>

#include "ops/lookup_table.hpp"

namespace tagflow::ops {

namespace {

std::string variable_named(const std::string& name) { return "variable '" + name + "'"; }

Status not_initialized(const std::string& name) {
  return Status(Error::failed_precondition, variable_named(name) + " is not initialized");
}

}  // namespace

Tensor make_handle(const std::string& name) {
  Tensor t(DType::resource, Shape{});
  *t.mutable_data<std::string>() = name;
  return t;
}

Expected<std::string> handle_name(const Tensor& handle, const char* what) {
  if (!handle.valid() || handle.dtype() != DType::resource || !handle.shape().is_scalar())
    return Status(Error::invalid_argument,
                  std::string(what) + " must be a scalar resource handle, got " +
                      (handle.valid() ? handle.debug_string(4) : std::string("no tensor")));
  const std::string& name = handle.scalar_value<std::string>();
  if (name.empty())
    return Status(Error::invalid_argument, std::string(what) + " is a handle with no name");
  return name;
}

Status accumulate(Tensor& target, const Tensor& delta, bool subtract) {
  if (target.dtype() != delta.dtype() || target.shape() != delta.shape())
    return Status(Error::invalid_argument,
                  std::string("cannot ") + (subtract ? "subtract " : "add ") +
                      dtype_name(delta.dtype()) + delta.shape().to_string() +
                      (subtract ? " from " : " to ") + dtype_name(target.dtype()) +
                      target.shape().to_string() + ": dtype and shape must match");
  Tensor out = target.is_unique() ? target : Tensor(target.dtype(), target.shape());
  const int64_t n = target.num_elements();
  bool numeric = false;
  dispatch_pod(target.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (!std::is_same_v<T, bool>) {
      numeric = true;
      const T* a = target.data<T>();
      const T* b = delta.data<T>();
      T* o = out.mutable_data<T>();
      for (int64_t i = 0; i < n; ++i) o[i] = static_cast<T>(subtract ? a[i] - b[i] : a[i] + b[i]);
    }
  });
  if (!numeric)
    return Status(Error::unimplemented,
                  "cannot add or subtract values of dtype " + dtype_name(target.dtype()));
  target = std::move(out);
  return ok_status();
}

// --- resources -------------------------------------------------------------

struct ResourceManager::Variable {
  std::mutex mu;
  DType dtype = DType::invalid;  // declared, or of the first value assigned
  PartialShape shape{true, {}};  // declared
  Tensor value;                  // invalid until assigned
};

struct ResourceManager::Stack {
  Stack(std::string n, uint64_t step, DType type, int64_t max)
      : name(std::move(n)), step_id(step), elem_type(type), max_size(max) {}

  const std::string name;
  const uint64_t step_id;
  const DType elem_type;
  const int64_t max_size;  // < 0: unlimited
  std::mutex mu;
  std::vector<Tensor> elems;
  bool closed = false;

  Status check_open() const {
    if (!closed) return ok_status();
    return Status(Error::failed_precondition, "stack '" + name + "' has been closed");
  }
  // Frees the elements; returns how many and their bytes.
  std::pair<int64_t, int64_t> close() {
    std::lock_guard<std::mutex> lock(mu);
    closed = true;
    int64_t bytes = 0;
    for (const Tensor& t : elems) bytes += static_cast<int64_t>(t.byte_size());
    const auto n = static_cast<int64_t>(elems.size());
    elems = {};
    return {n, bytes};
  }
};

ResourceManager::ResourceManager() = default;
ResourceManager::~ResourceManager() = default;

// --- variables -------------------------------------------------------------

std::shared_ptr<ResourceManager::Variable> ResourceManager::find_variable(
    const std::string& name) const {
  std::shared_lock<std::shared_mutex> lock(variables_mu_);
  auto it = variables_.find(name);
  return it == variables_.end() ? nullptr : it->second;
}

std::shared_ptr<ResourceManager::Variable> ResourceManager::find_or_add_variable(
    const std::string& name) {
  if (auto v = find_variable(name)) return v;
  std::unique_lock<std::shared_mutex> lock(variables_mu_);
  auto& slot = variables_[name];
  if (!slot) slot = std::make_shared<Variable>();
  return slot;
}

Status ResourceManager::declare_variable(const std::string& name, DType dtype,
                                         const PartialShape& shape) {
  auto var = find_or_add_variable(name);
  std::lock_guard<std::mutex> lock(var->mu);
  if (var->dtype == DType::invalid) {
    var->dtype = dtype;
    var->shape = shape;
    return ok_status();
  }
  if (var->dtype != dtype)
    return Status(Error::invalid_argument, variable_named(name) + " has dtype " +
                                               dtype_name(var->dtype) + ", not " +
                                               dtype_name(dtype));
  if (var->shape.unknown_rank) var->shape = shape;
  return ok_status();
}

Expected<Tensor> ResourceManager::read_variable(const std::string& name) const {
  auto var = find_variable(name);
  if (var == nullptr) return not_initialized(name);
  std::lock_guard<std::mutex> lock(var->mu);
  if (!var->value.valid()) return not_initialized(name);
  return var->value;
}

bool ResourceManager::is_initialized(const std::string& name) const {
  auto var = find_variable(name);
  if (var == nullptr) return false;
  std::lock_guard<std::mutex> lock(var->mu);
  return var->value.valid();
}

Status ResourceManager::assign_variable(const std::string& name, const Tensor& value,
                                        bool validate_shape) {
  if (!value.valid())
    return Status(Error::invalid_argument, "cannot assign no tensor to " + variable_named(name));
  auto var = find_or_add_variable(name);
  std::lock_guard<std::mutex> lock(var->mu);
  if (var->dtype != DType::invalid && var->dtype != value.dtype())
    return Status(Error::invalid_argument, "cannot assign a " + dtype_name(value.dtype()) +
                                               " value to " + variable_named(name) +
                                               " of dtype " + dtype_name(var->dtype));
  if (validate_shape) {
    const bool ok = fits_partial_shape(var->shape, value.shape()) &&
                    (!var->value.valid() || var->value.shape() == value.shape());
    if (!ok)
      return Status(Error::invalid_argument,
                    "cannot assign a value of shape " + value.shape().to_string() + " to " +
                        variable_named(name) + " of shape " +
                        (var->value.valid() ? var->value.shape().to_string()
                                            : var->shape.to_string()) +
                        " (validate_shape is set)");
  }
  if (var->dtype == DType::invalid) var->dtype = value.dtype();
  var->value = value;
  return ok_status();
}

Status ResourceManager::update_variable(const std::string& name, const Tensor& delta,
                                        bool subtract) {
  auto var = find_variable(name);
  if (var == nullptr) return not_initialized(name);
  std::lock_guard<std::mutex> lock(var->mu);
  if (!var->value.valid()) return not_initialized(name);
  const Tensor& v = var->value;
  if (!delta.valid() || delta.dtype() != v.dtype() || delta.shape() != v.shape())
    return Status(Error::invalid_argument,
                  std::string("cannot ") + (subtract ? "subtract " : "add ") +
                      (delta.valid() ? dtype_name(delta.dtype()) + delta.shape().to_string()
                                     : std::string("no tensor")) +
                      (subtract ? " from " : " to ") + variable_named(name) + ", which is " +
                      dtype_name(v.dtype()) + v.shape().to_string());
  Status s = accumulate(var->value, delta, subtract);
  if (!s.ok()) return s.with_prefix(variable_named(name) + ": ");
  return ok_status();
}

Status ResourceManager::assign_add(const std::string& name, const Tensor& delta) {
  return update_variable(name, delta, false);
}

Status ResourceManager::assign_sub(const std::string& name, const Tensor& delta) {
  return update_variable(name, delta, true);
}

Status ResourceManager::modify_variable(const std::string& name,
                                        const std::function<Status(Tensor& value)>& update) {
  return update_variables({name}, [&](const std::vector<Tensor*>& values) {
    Status s = update(*values[0]);
    if (!s.ok()) return s.with_prefix(variable_named(name) + ": ");
    return ok_status();
  });
}

Status ResourceManager::update_variables(const std::vector<std::string>& names,
                                         const VariableUpdate& update) {
  std::vector<std::shared_ptr<Variable>> vars;
  for (const std::string& name : names) {
    auto var = find_variable(name);
    if (var == nullptr) return not_initialized(name);
    vars.push_back(std::move(var));
  }
  std::vector<size_t> order(names.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return names[a] < names[b]; });
  std::vector<std::unique_lock<std::mutex>> locks;
  for (size_t k = 0; k < order.size(); ++k)
    if (k == 0 || names[order[k]] != names[order[k - 1]]) locks.emplace_back(vars[order[k]]->mu);
  std::vector<Tensor*> values;
  for (size_t i = 0; i < vars.size(); ++i) {
    if (!vars[i]->value.valid()) return not_initialized(names[i]);
    values.push_back(&vars[i]->value);
  }
  return update(values);
}

// --- stacks ----------------------------------------------------------------

std::string ResourceManager::next_name(const std::string& node_name, uint64_t step_id) {
  return node_name + "#" + std::to_string(next_id_.fetch_add(1)) + "@step" +
         std::to_string(step_id);
}

std::string ResourceManager::create_stack(const std::string& node_name, uint64_t step_id,
                                          DType elem_type, int64_t max_size) {
  std::string name = next_name(node_name, step_id);
  auto stack = std::make_shared<Stack>(name, step_id, elem_type, max_size);
  std::lock_guard<std::mutex> lock(stacks_mu_);
  stacks_.emplace(name, std::move(stack));
  return name;
}

Expected<std::shared_ptr<ResourceManager::Stack>> ResourceManager::find_stack(
    const std::string& name) const {
  std::lock_guard<std::mutex> lock(stacks_mu_);
  auto it = stacks_.find(name);
  if (it == stacks_.end())
    return Status(Error::not_found, "stack '" + name +
                                        "' does not exist (never created, or freed when its "
                                        "step ended)");
  return it->second;
}

Status ResourceManager::push_stack(const std::string& name, const Tensor& elem) {
  TF_ASSIGN_OR_RETURN(auto stack, find_stack(name));
  std::lock_guard<std::mutex> lock(stack->mu);
  TF_RETURN_IF_ERROR(stack->check_open());
  if (!elem.valid() || elem.dtype() != stack->elem_type)
    return Status(Error::invalid_argument,
                  "cannot push a " + (elem.valid() ? dtype_name(elem.dtype()) : "missing") +
                      " value onto stack '" + name + "' of " + dtype_name(stack->elem_type));
  if (stack->max_size >= 0 && static_cast<int64_t>(stack->elems.size()) >= stack->max_size)
    return Status(Error::out_of_range, "stack '" + name + "' is full: it already holds its "
                                           "max_size of " + std::to_string(stack->max_size) +
                                           " elements");
  stack->elems.push_back(elem);
  count_stack(1, static_cast<int64_t>(elem.byte_size()));
  return ok_status();
}

void ResourceManager::count_stack(int64_t entries, int64_t bytes) {
  std::lock_guard<std::mutex> lock(stats_mu_);
  StackStats& s = stack_stats_;
  s.entries += entries;
  s.bytes += bytes;
  if (entries > 0) s.pushes += entries;
  s.peak_entries = std::max(s.peak_entries, s.entries);
  s.peak_bytes = std::max(s.peak_bytes, s.bytes);
}

ResourceManager::StackStats ResourceManager::stack_stats() const {
  std::lock_guard<std::mutex> lock(stats_mu_);
  return stack_stats_;
}

void ResourceManager::reset_stack_peaks() {
  std::lock_guard<std::mutex> lock(stats_mu_);
  stack_stats_.peak_entries = stack_stats_.entries;
  stack_stats_.peak_bytes = stack_stats_.bytes;
}

Expected<Tensor> ResourceManager::pop_stack(const std::string& name) {
  TF_ASSIGN_OR_RETURN(auto stack, find_stack(name));
  std::lock_guard<std::mutex> lock(stack->mu);
  TF_RETURN_IF_ERROR(stack->check_open());
  if (stack->elems.empty())
    return Status(Error::out_of_range, "stack '" + name + "' is empty: nothing to pop");
  Tensor top = std::move(stack->elems.back());
  stack->elems.pop_back();
  {
    std::lock_guard<std::mutex> stats(stats_mu_);
    stack_stats_.entries -= 1;
    stack_stats_.bytes -= static_cast<int64_t>(top.byte_size());
    stack_stats_.pops += 1;
  }
  return top;
}

Status ResourceManager::close_stack(const std::string& name) {
  TF_ASSIGN_OR_RETURN(auto stack, find_stack(name));
  const auto [n, bytes] = stack->close();
  count_stack(-n, -bytes);
  return ok_status();
}

// --- TensorArrays ----------------------------------------------------------

Expected<std::string> ResourceManager::create_tensor_array(const std::string& node_name,
                                                           uint64_t step_id,
                                                           const TensorArray::Options& options) {
  if (options.size < 0 || options.size > kMaxTensorArraySize)
    return Status(Error::invalid_argument,
                  "TensorArray size must be in [0, " + std::to_string(kMaxTensorArraySize) +
                      "], got " + std::to_string(options.size));
  std::string name = next_name(node_name, step_id);
  auto array = std::make_shared<TensorArray>(name, step_id, options);
  std::lock_guard<std::mutex> lock(arrays_mu_);
  arrays_.emplace(name, std::move(array));
  return name;
}

Expected<std::shared_ptr<TensorArray>> ResourceManager::tensor_array(
    const std::string& name) const {
  std::lock_guard<std::mutex> lock(arrays_mu_);
  auto it = arrays_.find(name);
  if (it == arrays_.end())
    return Status(Error::not_found, "TensorArray '" + name +
                                        "' does not exist (never created, or freed when its "
                                        "step ended)");
  return it->second;
}

Expected<std::string> ResourceManager::tensor_array_grad(const std::string& name,
                                                         const std::string& source) {
  // Under arrays_mu_ throughout, so that concurrent first calls make one
  // gradient array. Lock order: arrays_mu_, then an array's own mutex.
  std::lock_guard<std::mutex> lock(arrays_mu_);
  auto it = arrays_.find(name);
  if (it == arrays_.end())
    return Status(Error::not_found, "TensorArray '" + name +
                                        "' does not exist (never created, or freed when its "
                                        "step ended)");
  TensorArray& forward = *it->second;
  std::string grad_name = name + "@" + source;
  if (arrays_.count(grad_name) != 0) return grad_name;
  TF_ASSIGN_OR_RETURN(TensorArray::Options options, forward.grad_options());
  auto grad = std::make_shared<TensorArray>(grad_name, forward.step_id(), options);
  TF_RETURN_IF_ERROR(forward.prepare_gradient(*grad));
  arrays_.emplace(grad_name, std::move(grad));
  return grad_name;
}

Status ResourceManager::close_tensor_array(const std::string& name) {
  TF_ASSIGN_OR_RETURN(auto array, tensor_array(name));
  array->close();
  return ok_status();
}

// --- steps -----------------------------------------------------------------

// --- queues ----------------------------------------------------------------

Expected<std::shared_ptr<FifoQueue>> ResourceManager::create_queue(const std::string& name, const DTypes& types,
                                                                   const std::vector<PartialShape>& shapes,
                                                                   int64_t capacity) {
  std::lock_guard<std::mutex> lock(queues_mu_);
  auto& slot = queues_[name];
  if (!slot) {
    slot = std::make_shared<FifoQueue>(name, types, shapes, capacity);
    return slot;
  }
  TF_RETURN_IF_ERROR(slot->check_signature(types, shapes, capacity));
  return slot;
}

Expected<std::shared_ptr<FifoQueue>> ResourceManager::queue(const std::string& name) const {
  std::lock_guard<std::mutex> lock(queues_mu_);
  auto it = queues_.find(name);
  if (it == queues_.end())
    return Status(Error::not_found, "no queue '" + name + "': no FIFOQueueV2 node has made it in this session");
  return it->second;
}

// --- lookup tables ---------------------------------------------------------

Expected<std::shared_ptr<LookupTable>> ResourceManager::create_table(const std::string& name,
                                                                     const TableFactory& make) {
  std::lock_guard<std::mutex> lock(tables_mu_);
  auto& slot = tables_[name];
  if (!slot) {
    Expected<std::shared_ptr<LookupTable>> made = make();
    if (!made.ok()) {
      tables_.erase(name);
      return made.status();
    }
    slot = std::move(*made);
  }
  return slot;
}

Expected<std::shared_ptr<LookupTable>> ResourceManager::table(const std::string& name) const {
  std::lock_guard<std::mutex> lock(tables_mu_);
  auto it = tables_.find(name);
  if (it == tables_.end())
    return Status(Error::not_found,
                  "no lookup table '" + name + "': no HashTableV2 or MutableHashTableV2 node has made it in this session");
  return it->second;
}

void ResourceManager::end_step(uint64_t step_id) {
  // Closed as well as dropped: a kernel still holding one sees an error.
  std::vector<std::shared_ptr<Stack>> stacks;
  {
    std::lock_guard<std::mutex> lock(stacks_mu_);
    for (auto it = stacks_.begin(); it != stacks_.end();) {
      if (it->second->step_id != step_id) {
        ++it;
        continue;
      }
      stacks.push_back(std::move(it->second));
      it = stacks_.erase(it);
    }
  }
  std::vector<std::shared_ptr<TensorArray>> arrays;
  {
    std::lock_guard<std::mutex> lock(arrays_mu_);
    for (auto it = arrays_.begin(); it != arrays_.end();) {
      if (it->second->step_id() != step_id) {
        ++it;
        continue;
      }
      arrays.push_back(std::move(it->second));
      it = arrays_.erase(it);
    }
  }
  for (auto& s : stacks) {
    const auto [n, bytes] = s->close();
    count_stack(-n, -bytes);
  }
  for (auto& a : arrays) a->close();
}

size_t ResourceManager::num_stacks() const {
  std::lock_guard<std::mutex> lock(stacks_mu_);
  return stacks_.size();
}

size_t ResourceManager::num_tensor_arrays() const {
  std::lock_guard<std::mutex> lock(arrays_mu_);
  return arrays_.size();
}

Expected<Tensor> deref(const Tensor& ref_value, ResourceManager& resources) {
  TF_ASSIGN_OR_RETURN(std::string name, handle_name(ref_value, "a ref"));
  return resources.read_variable(name);
}

}  // namespace tagflow::ops
