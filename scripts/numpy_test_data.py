#!/usr/bin/python3
# Writes the NumPy files of tests/data/numpy/ with NumPy itself (Debian's
# python3-numpy), so that tagflow's reader (ops/npy.cpp) is tested on what
# NumPy writes, not on what tagflow thinks it writes:
#   /usr/bin/python3 scripts/numpy_test_data.py tests/data/numpy
import os
import sys

import numpy as np

out = sys.argv[1]
os.makedirs(out, exist_ok=True)


def save(name, array, **kw):
    np.save(os.path.join(out, name), array, **kw)


save("f32_2x3.npy", (np.arange(6, dtype=np.float32) * 0.5 - 1).reshape(2, 3))
save("f64_fortran.npy", np.asfortranarray(np.arange(24, dtype=np.float64).reshape(2, 3, 4)))
save("i64_big_endian.npy", np.array([1, -2, 300000000000], dtype=">i8"))
save("i32_scalar.npy", np.array(7, dtype=np.int32))
save("bool.npy", np.array([[True, False], [False, True]]))
save("u8.npy", np.array([0, 7, 255], dtype=np.uint8))
save("f16.npy", np.array([0.5, -2.0, 65504.0], dtype=np.float16))
save("c64_big_endian.npy", np.array([1 + 2j, -3.5j], dtype=">c8"))
save("f32_empty_0x3.npy", np.zeros((0, 3), dtype=np.float32))
save("bytes.npy", np.array([b"ab", b"", b"xyz"]))
save("unicode.npy", np.array(["h\u00e9llo", "\u03c9", "\U0001F600"]))
save("object.npy", np.array([1, "a"], dtype=object), allow_pickle=True)
save("x_3x1.npy", np.array([[1.0], [2.0], [5.0]], dtype=np.float32))
with open(os.path.join(out, "f32_v2.npy"), "wb") as f:
    np.lib.format.write_array(f, np.array([1.5, 2.5], dtype=np.float32), version=(2, 0))
np.savez(os.path.join(out, "arrays.npz"), x=np.array([1.0, 2.0, 5.0], dtype=np.float32),
         n=np.array([[1, 2], [3, 4]], dtype=np.int32))
np.savez_compressed(os.path.join(out, "compressed.npz"), only=np.arange(100, dtype=np.int64))
