"""The constants every case shares, made the same way for the ONNX models
(make_models.py) and the TensorFlow graphs (make_graphs.py).

Every float is k / 4096 for an integer |k| < 8192, so it is exact in
float32 and in decimal (no rounding when written as text or bytes), and
both runtimes start from bit-identical constants.
"""

H = 64          # hidden size, matrix size
H_ANCHOR = H    # the RNN size of the anchor's "rnn" case
TABLE = 64      # rows of the RNN's input table: x_t = X[t mod TABLE]
SCALE = 4096.0  # the common denominator


def _lcg(seed):
    """Numerical Recipes' 32-bit LCG: deterministic, no library needed."""
    state = seed & 0xFFFFFFFF
    while True:
        state = (1664525 * state + 1013904223) & 0xFFFFFFFF
        yield state >> 8  # 24 bits


def _dyadic(gen, count, half_range):
    """count values k / 4096, k uniform in [-half_range, half_range]."""
    span = 2 * half_range + 1
    return [((next(gen) % span) - half_range) / SCALE for _ in range(count)]


def permutation(seed=7, size=H):
    """A permutation of range(size) (Fisher-Yates on the LCG)."""
    gen = _lcg(seed)
    p = list(range(size))
    for i in range(size - 1, 0, -1):
        j = next(gen) % (i + 1)
        p[i], p[j] = p[j], p[i]
    return p


def all_weights():
    """Flattened row-major lists (floats) and the permutation."""
    gen = _lcg(12345)
    perm = permutation()
    return {
        # MatMul loop: m_{t+1} = m_t @ K, K the permutation matrix of perm
        # (K[k][perm[k]] = 1): exact in any float arithmetic, so both
        # runtimes must agree bit for bit, and the values stay bounded.
        "m0": [(r * H + c + 1) / SCALE for r in range(H) for c in range(H)],
        "perm": perm,
        "K": [1.0 if j == perm[k] else 0.0 for k in range(H) for j in range(H)],
        # RNN: h_{t+1} = tanh(x_t W + h_t U + b); entries of W and U in
        # [-0.1, 0.1] (spectral radius of U about 0.46: contracting, so
        # rounding differences between runtimes do not grow with t).
        "X": _dyadic(gen, TABLE * H, 4095),   # [-1, 1]
        "W": _dyadic(gen, H * H, 409),
        "U": _dyadic(gen, H * H, 409),
        "b": _dyadic(gen, H, 409),
    }


# --- the cases added to the anchor's: RNNs of other sizes, an LSTM, a CNN ---

IN = 64                                  # input features of the RNNs and the LSTM (a row of X)
RNN_SHAPES = ((64, 1), (256, 1), (64, 32), (256, 32))   # (hidden H, batch B); (64, 1) is "rnn"
LSTM_HIDDEN = 64
LSTM_BATCHES = (1, 32)
CNN_BATCHES = (1, 32)
CNN_IMAGE = (32, 32, 3)                  # H, W, C of one input image (NHWC)
CNN_FILTERS = (16, 32)                   # the two 3x3 convolutions
CNN_CLASSES = 10


def rnn_name(H, B):
    """The case id: "rnn" for the anchor's size, else rnn_hH_bB."""
    return "rnn" if (H, B) == (64, 1) else "rnn_h%d_b%d" % (H, B)


def _half_range(H):
    """k's bound for a recurrent matrix with H rows: 409 (0.1) at H = 64,
    scaled by sqrt(64 / H) so that the spectral norm stays near 0.9 (the
    norm of a random H x H matrix grows as sqrt(H))."""
    return int(409 * (64.0 / H) ** 0.5)


def rnn_weights(w, H):
    """W [IN, H], U [H, H], b [H]; at H = 64 the anchor's own W, U, b."""
    if H == H_ANCHOR:
        return {"H": H, "W": w["W"], "U": w["U"], "b": w["b"]}
    gen = _lcg(1000 + H)
    return {"H": H, "W": _dyadic(gen, IN * H, 409), "U": _dyadic(gen, H * H, _half_range(H)),
            "b": _dyadic(gen, H, 409)}


def lstm_weights(H=LSTM_HIDDEN):
    """gates = x W + h U + b, columns [i | f | g | o], H each:
    W [IN, 4H], U [H, 4H], b [4H], entries in [-0.1, 0.1]."""
    gen = _lcg(2000 + H)
    return {"H": H, "W": _dyadic(gen, IN * 4 * H, 409), "U": _dyadic(gen, H * 4 * H, _half_range(H)),
            "b": _dyadic(gen, 4 * H, 409)}


def cnn_weights():
    """x [32, 32, 32, 3] (NHWC; batch B takes the first B images) in [-1, 1];
    filters HWIO (TensorFlow's layout) with entries about 1 / sqrt(fan-in)."""
    gen = _lcg(3000)
    h, wd, c = CNN_IMAGE
    f1, f2 = CNN_FILTERS
    return {
        "x": _dyadic(gen, max(CNN_BATCHES) * h * wd * c, 4095),
        "w1": _dyadic(gen, 3 * 3 * c * f1, 787),      # [3, 3, 3, 16], |w| <= 0.19
        "b1": _dyadic(gen, f1, 409),
        "w2": _dyadic(gen, 3 * 3 * f1 * f2, 341),     # [3, 3, 16, 32], |w| <= 0.083
        "b2": _dyadic(gen, f2, 409),
        "wd": _dyadic(gen, f2 * CNN_CLASSES, 724),    # [32, 10], |w| <= 0.18
        "bd": _dyadic(gen, CNN_CLASSES, 409),
    }


def hwio_to_oihw(w, kh, kw, ci, co):
    """A filter from TensorFlow's [kh, kw, in, out] to ONNX's [out, in, kh, kw]."""
    return [w[((y * kw + x) * ci + i) * co + o]
            for o in range(co) for i in range(ci) for y in range(kh) for x in range(kw)]


def extra_weights():
    """The constants of the added cases, by name (for weights.json)."""
    w = all_weights()
    out = {"IN": IN}
    for H in sorted({h for h, _ in RNN_SHAPES}):
        out["rnn_h%d" % H] = rnn_weights(w, H)
    out["lstm_h%d" % LSTM_HIDDEN] = lstm_weights()
    out["cnn"] = cnn_weights()
    return out


def spectral_norm(m, rows, cols, iters=60):
    """The largest singular value of m ([rows, cols], row-major), by power
    iteration on m^T m; plain Python."""
    v = [1.0] * cols
    sigma = 0.0
    for _ in range(iters):
        u = [sum(m[r * cols + c] * v[c] for c in range(cols)) for r in range(rows)]
        v = [sum(m[r * cols + c] * u[r] for r in range(rows)) for c in range(cols)]
        norm = sum(x * x for x in v) ** 0.5
        sigma = norm ** 0.5
        v = [x / norm for x in v]
    return sigma


def perm_power(perm, n):
    """perm composed with itself n times, as a list q with q[k] = perm^n(k)."""
    result = list(range(len(perm)))
    base = list(perm)
    while n > 0:
        if n & 1:
            result = [base[k] for k in result]
        base = [base[k] for k in base]
        n >>= 1
    return result


def matmul_loop_expected(w, n):
    """m0 @ K^n exactly: (m K)[r][perm[k]] = m[r][k], so after n steps
    m_n[r][perm^n(k)] = m0[r][k]."""
    q = perm_power(w["perm"], n)
    out = [0.0] * (H * H)
    m0 = w["m0"]
    for r in range(H):
        for k in range(H):
            out[r * H + q[k]] = m0[r * H + k]
    return out


if __name__ == "__main__":
    # The recurrent matrices' spectral norms (< 1: the recurrence contracts).
    e = extra_weights()
    for H in sorted({h for h, _ in RNN_SHAPES}):
        print("rnn_h%d  U [%d, %d]  spectral norm %.3f" % (H, H, H, spectral_norm(e["rnn_h%d" % H]["U"], H, H)))
    lh = LSTM_HIDDEN
    print("lstm_h%d U [%d, %d] spectral norm %.3f" % (lh, lh, 4 * lh, spectral_norm(e["lstm_h%d" % lh]["U"], lh, 4 * lh)))
