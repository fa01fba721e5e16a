// NumPy's array files: .npy (format versions 1.0, 2.0 and 3.0, as
// numpy.lib.format writes them) and .npz archives of them (np.savez, stored,
// and np.savez_compressed, deflated), read through libzip.
//
// dtypes. bool, int8..int64, uint8..uint64, float16 (read as half),
// float32, float64, complex64 and complex128, in either byte order;
// fixed-width byte strings ('S', trailing NUL bytes dropped, as NumPy drops
// them) and unicode strings ('U', stored as UTF-32, read as UTF-8) become
// string tensors. Object arrays are pickled Python objects and are refused,
// as are structured (record) dtypes. Fortran-ordered arrays are read into
// tagflow's row-major order.
//
// Writing produces format 1.0, little-endian, C order; string tensors are
// written as 'S' arrays of their longest element (a trailing NUL byte of an
// element is lost on reading, as in NumPy), bfloat16 — which NumPy has no
// dtype for — as float32, exactly.
//
// Plain functions; thread-safe.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "ops/status.hpp"
#include "ops/tensor.hpp"

namespace tagflow::ops {

// The array a .npy file's bytes hold; errors name `what` (a file name).
Expected<Tensor> parse_npy(std::string_view bytes, const std::string& what);
Expected<Tensor> read_npy_file(const std::string& path);

// The names of the arrays of an .npz file (its members without ".npy").
Expected<std::vector<std::string>> npz_keys(const std::string& path);
// The array `key` of an .npz file; not_found listing its keys if there is
// none of that name.
Expected<Tensor> read_npz_array(const std::string& path, const std::string& key);

// The bytes of a .npy file holding `t`; invalid_argument for resource and
// variant tensors, which have no NumPy form.
Expected<std::string> npy_bytes(const Tensor& t);
Status write_npy_file(const std::string& path, const Tensor& t);

}  // namespace tagflow::ops
