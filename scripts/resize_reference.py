#!/usr/bin/python3
"""Expected values of tests/ops/image_resize_ops_test.cpp's resize tests, computed
with numpy from TensorFlow's documented resize rules, independently of
tagflow's kernels:

  scale       in / out, or (in - 1) / (out - 1) with align_corners (out > 1)
  bilinear    position i * scale, or (i + 0.5) * scale - 0.5 with
              half_pixel_centers; lower = max(floor(p), 0), upper =
              min(ceil(p), in - 1), lerp = p - floor(p); rows then columns
              interpolated as top + (bottom - top) * lerp
  nearest     position i * scale, or (i + 0.5) * scale with
              half_pixel_centers; floor, or round half away from zero with
              align_corners; clamped to in - 1 (and to 0 with half pixels)

All arithmetic in float32, as TensorFlow's kernels do. Run:
    /usr/bin/python3 scripts/resize_reference.py
and paste each printed line into the test it names."""
import numpy as np

f32 = np.float32


def scale_of(n_in, n_out, align_corners):
    if align_corners and n_out > 1:
        return f32(n_in - 1) / f32(n_out - 1)
    return f32(n_in) / f32(n_out)


def bilinear_axis(n_out, n_in, scale, half_pixel):
    i = np.arange(n_out).astype(f32)
    p = (i + f32(0.5)) * scale - f32(0.5) if half_pixel else i * scale
    lo = np.maximum(np.floor(p), 0).astype(np.int64)
    hi = np.minimum(np.ceil(p), n_in - 1).astype(np.int64)
    return lo, hi, (p - np.floor(p)).astype(f32)


def bilinear(images, out_h, out_w, align_corners=False, half_pixel=False):
    images = images.astype(f32)
    _, h, w, _ = images.shape
    if (out_h, out_w) == (h, w):
        return images
    ylo, yhi, yl = bilinear_axis(out_h, h, scale_of(h, out_h, align_corners), half_pixel)
    xlo, xhi, xl = bilinear_axis(out_w, w, scale_of(w, out_w, align_corners), half_pixel)
    xl = xl[None, None, :, None]
    yl = yl[None, :, None, None]
    top = images[:, ylo][:, :, xlo] + (images[:, ylo][:, :, xhi] - images[:, ylo][:, :, xlo]) * xl
    bottom = images[:, yhi][:, :, xlo] + (images[:, yhi][:, :, xhi] - images[:, yhi][:, :, xlo]) * xl
    return (top + (bottom - top) * yl).astype(f32)


def nearest_axis(n_out, n_in, scale, align_corners, half_pixel):
    i = np.arange(n_out).astype(f32)
    p = (i + f32(0.5)) * scale if half_pixel else i * scale
    # round half away from zero (C's roundf), not numpy's round half to even
    idx = np.floor(p + f32(0.5)) if align_corners else np.floor(p)
    idx = np.minimum(idx.astype(np.int64), n_in - 1)
    return np.maximum(idx, 0) if half_pixel else idx


def nearest(images, out_h, out_w, align_corners=False, half_pixel=False):
    _, h, w, _ = images.shape
    ys = nearest_axis(out_h, h, scale_of(h, out_h, align_corners), align_corners, half_pixel)
    xs = nearest_axis(out_w, w, scale_of(w, out_w, align_corners), align_corners, half_pixel)
    return images[:, ys][:, :, xs]


def show(name, values):
    print(f"{name}: {{{', '.join(repr(float(v)) if isinstance(v, np.floating) else str(v) for v in values.ravel())}}}")


def main():
    a = np.array([1, 2, 4, 8, 16, 32], dtype=f32).reshape(1, 2, 3, 1)
    show("bilinear_upscale 2x3->4x5", bilinear(a, 4, 5))
    b = np.arange(16, dtype=f32).reshape(1, 4, 4, 1) * f32(1.5)
    show("bilinear_downscale 4x4->3x2", bilinear(b, 3, 2))
    c = np.array([0, 10, 20, 40], dtype=f32).reshape(1, 2, 2, 1)
    show("bilinear_align_corners 2x2->3x3", bilinear(c, 3, 3, align_corners=True))
    d = np.arange(24, dtype=f32).reshape(2, 2, 3, 2) * f32(0.25) - f32(1)  # batch 2, 2 channels
    show("bilinear_half_pixel 2x3->3x5 (b2, c2)", bilinear(d, 3, 5, half_pixel=True))
    show("bilinear_half_pixel_downscale 4x4->3x2", bilinear(b, 3, 2, half_pixel=True))

    n = np.arange(6).reshape(1, 2, 3, 1)
    show("nearest_upscale 2x3->4x5", nearest(n, 4, 5))
    m = np.arange(9).reshape(1, 3, 3, 1)
    show("nearest_align_corners 3x3->5x4", nearest(m, 5, 4, align_corners=True))
    q = np.arange(16).reshape(1, 4, 4, 1)
    show("nearest_half_pixel 4x4->3x2", nearest(q, 3, 2, half_pixel=True))
    show("nearest_downscale 4x4->3x2", nearest(q, 3, 2))
    r = np.arange(24).reshape(2, 2, 3, 2)
    show("nearest_half_pixel_upscale 2x3->3x5 (b2, c2)", nearest(r, 3, 5, half_pixel=True))


if __name__ == "__main__":
    main()
