// Tensor literals as users type them on the command line: `3`, `2.5`,
// `true`, `"text"`, `[1,2]`, `[[1.5,2],[3,4]]` (JSON syntax, read with
// nlohmann::json), typed by the dtype the graph expects. Nested lists must
// be rectangular. Stateless; thread-safe.
#pragma once

#include <string>

#include "ops/tensor.hpp"

namespace tagflow::ops {

// Errors name the literal and what is wrong (syntax with its position,
// ragged nesting, a value that does not fit the dtype).
Expected<Tensor> parse_tensor_literal(const std::string& text, DType dtype);

}  // namespace tagflow::ops
