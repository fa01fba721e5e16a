// The attrs of a node that its inputs decide: each type attr (T, Tidx, a
// type list) from the dtypes of the inputs that use it, and each number
// attr (N) from how many inputs its list argument takes. Shared by
// GraphBuilder and gradients(), which add nodes by op name and inputs.
#pragma once

#include <string>
#include <vector>

#include "ops/attr_value.hpp"
#include "ops/op_def.hpp"
#include "ops/status.hpp"

namespace tagflow::graph {
inline namespace builder {

// `inputs` are the dtypes of all data inputs, flat. A list argument takes
// as many inputs as its attr in `attrs` says or, if the attr is not given,
// all that the other arguments leave (at most one such argument). Attrs
// already in `attrs` are kept; the result is checked when the attrs are
// completed (OpDef::check_and_complete_attrs). Errors begin with `where`.
ops::Status infer_type_attrs(const ops::OpDef& def, const std::vector<ops::DType>& inputs,
                             ops::AttrMap& attrs, const std::string& where);

}  // namespace builder
}  // namespace tagflow::graph
