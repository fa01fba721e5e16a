// What every case must compute, in plain JavaScript (double precision), from
// the constants make_models.py wrote to build/models/weights.json; and the
// comparison of two results.
import { readFileSync } from 'node:fs';

export function loadWeights(path) {
  return JSON.parse(readFileSync(path, 'utf8'));
}

// perm composed with itself n times.
function permPower(perm, n) {
  let result = perm.map((_, k) => k);
  let base = perm.slice();
  while (n > 0) {
    if (n & 1) result = result.map((k) => base[k]);
    base = base.map((k) => base[k]);
    n = Math.floor(n / 2);
  }
  return result;
}

// m0 @ K^n, K the permutation matrix of perm (K[k][perm[k]] = 1): exact.
function matmulLoop(w, n) {
  const H = w.H;
  const q = permPower(w.perm, n);
  const out = new Array(H * H);
  for (let r = 0; r < H; ++r) for (let k = 0; k < H; ++k) out[r * H + q[k]] = w.m0[r * H + k];
  return out;
}

// The row of X that batch element k reads at step t.
const xRow = (w, t, k) => ((t + k) % w.TABLE) * w.IN;

// h = 0; for t < n: h = tanh(x_t W + h U + b), hidden H, batch B; x_t's
// row k is X[(t + k) mod TABLE]. W [IN, H], U [H, H], b [H].
function rnn(w, n, { H, B }) {
  const { W, U, b } = w[`rnn_h${H}`];
  const I = w.IN;
  let h = new Float64Array(B * H);
  for (let t = 0; t < n; ++t) {
    const next = new Float64Array(B * H);
    for (let k = 0; k < B; ++k) {
      const row = xRow(w, t, k);
      const s = Float64Array.from(b);
      for (let i = 0; i < I; ++i) {
        const x = w.X[row + i];
        for (let j = 0; j < H; ++j) s[j] += x * W[i * H + j];
      }
      for (let i = 0; i < H; ++i) {
        const hi = h[k * H + i];
        for (let j = 0; j < H; ++j) s[j] += hi * U[i * H + j];
      }
      for (let j = 0; j < H; ++j) next[k * H + j] = Math.tanh(s[j]);
    }
    h = next;
  }
  return Array.from(h);
}

const sigmoid = (x) => 1 / (1 + Math.exp(-x));

// h = c = 0; for t < n: [i f g o] = x_t W + h U + b (H columns each);
// c = sigmoid(f) c + sigmoid(i) tanh(g); h = sigmoid(o) tanh(c). The final h.
function lstm(w, n, { H, B }) {
  const { W, U, b } = w[`lstm_h${H}`];
  const I = w.IN;
  const G = 4 * H;
  let h = new Float64Array(B * H);
  const c = new Float64Array(B * H);
  for (let t = 0; t < n; ++t) {
    const next = new Float64Array(B * H);
    for (let k = 0; k < B; ++k) {
      const row = xRow(w, t, k);
      const s = Float64Array.from(b);
      for (let i = 0; i < I; ++i) {
        const x = w.X[row + i];
        for (let j = 0; j < G; ++j) s[j] += x * W[i * G + j];
      }
      for (let i = 0; i < H; ++i) {
        const hi = h[k * H + i];
        for (let j = 0; j < G; ++j) s[j] += hi * U[i * G + j];
      }
      for (let j = 0; j < H; ++j) {
        const cj = sigmoid(s[H + j]) * c[k * H + j] + sigmoid(s[j]) * Math.tanh(s[2 * H + j]);
        c[k * H + j] = cj;
        next[k * H + j] = sigmoid(s[3 * H + j]) * Math.tanh(cj);
      }
    }
    h = next;
  }
  return Array.from(h);
}

// NHWC convolution, 3x3, stride 1, SAME (zero padding 1), filter HWIO, + bias, relu.
function convRelu(x, [B, Hh, Ww, C], f, bias, O) {
  const out = new Float64Array(B * Hh * Ww * O);
  for (let n = 0; n < B; ++n)
    for (let y = 0; y < Hh; ++y)
      for (let xx = 0; xx < Ww; ++xx) {
        const acc = Float64Array.from(bias);
        for (let dy = 0; dy < 3; ++dy) {
          const sy = y + dy - 1;
          if (sy < 0 || sy >= Hh) continue;
          for (let dx = 0; dx < 3; ++dx) {
            const sx = xx + dx - 1;
            if (sx < 0 || sx >= Ww) continue;
            const base = ((n * Hh + sy) * Ww + sx) * C;
            for (let i = 0; i < C; ++i) {
              const v = x[base + i];
              const fb = ((dy * 3 + dx) * C + i) * O;
              for (let o = 0; o < O; ++o) acc[o] += v * f[fb + o];
            }
          }
        }
        const ob = ((n * Hh + y) * Ww + xx) * O;
        for (let o = 0; o < O; ++o) out[ob + o] = Math.max(0, acc[o]);
      }
  return out;
}

// NHWC max pool 2x2, stride 2.
function maxPool(x, [B, Hh, Ww, C]) {
  const h2 = Hh / 2;
  const w2 = Ww / 2;
  const out = new Float64Array(B * h2 * w2 * C).fill(-Infinity);
  for (let n = 0; n < B; ++n)
    for (let y = 0; y < Hh; ++y)
      for (let xx = 0; xx < Ww; ++xx)
        for (let c = 0; c < C; ++c) {
          const o = ((n * h2 + (y >> 1)) * w2 + (xx >> 1)) * C + c;
          out[o] = Math.max(out[o], x[((n * Hh + y) * Ww + xx) * C + c]);
        }
  return out;
}

// The CNN's logits [B, 10] for the first B images of cnn.x.
function cnn(w, { B }) {
  const p = w.cnn;
  const [C1, C2, K] = [p.b1.length, p.b2.length, p.bd.length];
  const a1 = maxPool(convRelu(p.x, [B, 32, 32, 3], p.w1, p.b1, C1), [B, 32, 32, C1]);
  const a2 = maxPool(convRelu(a1, [B, 16, 16, C1], p.w2, p.b2, C2), [B, 16, 16, C2]);
  const out = [];
  for (let n = 0; n < B; ++n) {
    const mean = new Float64Array(C2);
    for (let s = 0; s < 64; ++s) for (let c = 0; c < C2; ++c) mean[c] += a2[(n * 64 + s) * C2 + c] / 64;
    for (let k = 0; k < K; ++k) {
      let v = p.bd[k];
      for (let c = 0; c < C2; ++c) v += mean[c] * p.wd[c * K + k];
      out.push(v);
    }
  }
  return out;
}

// The family of a case (its reference): "rnn" for every RNN size.
export const family = (c) => c.family ?? c.id;

// The expected result of case c (an entry of cases.json) with trip count (or
// chain length) n; remembered, as the larger references take seconds.
const memo = new Map();
export function expected(c, n, w) {
  const key = `${c.id}|${n}`;
  if (!memo.has(key)) memo.set(key, compute(c, n, w));
  return memo.get(key);
}

function compute(c, n, w) {
  const params = c.params ?? {};
  switch (family(c)) {
    case 'count':
      return [n];
    case 'if':  // odd i: +5, even i: -2, for i = 0 .. n-1
      return [5 * Math.floor(n / 2) - 2 * Math.ceil(n / 2)];
    case 'matmul':
    case 'mm_chain':
      return matmulLoop(w, n);
    case 'rnn':
      return rnn(w, n, { H: 64, B: 1, ...params });
    case 'lstm':
      return lstm(w, n, params);
    case 'cnn':
      return cnn(w, params);
    default:
      throw new Error(`no reference for case ${c.id}`);
  }
}

// The scanned input of the Scan RNN and of ONNX's LSTM op: step t, batch
// element k is X[(t + k) mod TABLE]; [n, B, IN] (at batch 1 also [n, IN]).
export function rnnSequence(w, n, B = 1) {
  const I = w.IN ?? w.H;
  const xs = new Float32Array(n * B * I);
  for (let t = 0; t < n; ++t)
    for (let k = 0; k < B; ++k) xs.set(w.X.slice(xRow(w, t, k), xRow(w, t, k) + I), (t * B + k) * I);
  return xs;
}

// The CNN's input as ONNX takes it: the first B images of cnn.x, NHWC to NCHW.
export function cnnInputNCHW(w, B, [Hh, Ww, C] = [32, 32, 3]) {
  const x = w.cnn.x;
  const out = new Float32Array(B * C * Hh * Ww);
  for (let n = 0; n < B; ++n)
    for (let y = 0; y < Hh; ++y)
      for (let xx = 0; xx < Ww; ++xx)
        for (let c = 0; c < C; ++c) out[((n * C + c) * Hh + y) * Ww + xx] = x[((n * Hh + y) * Ww + xx) * C + c];
  return out;
}

// {count, maxAbs, maxRel, scale, exact} of a against b (arrays of numbers);
// scale: the largest |b|.
export function compare(a, b) {
  if (a.length !== b.length) return { count: [a.length, b.length], maxAbs: Infinity, maxRel: Infinity, exact: false };
  let maxAbs = 0;
  let maxRel = 0;
  let scale = 0;
  let exact = true;
  for (let i = 0; i < a.length; ++i) {
    const d = Math.abs(a[i] - b[i]);
    if (!(d === 0)) exact = false;
    if (Number.isNaN(d)) return { count: a.length, maxAbs: NaN, maxRel: NaN, exact: false };
    maxAbs = Math.max(maxAbs, d);
    maxRel = Math.max(maxRel, d / Math.max(Math.abs(b[i]), 1e-30));
    scale = Math.max(scale, Math.abs(b[i]));
  }
  return { count: a.length, maxAbs, maxRel, scale, exact };
}

// The tolerance of the cases computed with tanh, sigmoid or a convolution:
// every element within TOLERANCE x max(1, largest |value|) of the other's.
// (Outputs of the RNNs and the LSTM are in [-1, 1], so for them this is
// 1e-4 absolute, the anchor's bound for its RNN.)
export const TOLERANCE = 1e-4;
const approximate = new Set(['rnn', 'lstm', 'cnn']);

// Whether a result agrees with another: integers and the permutation
// products exactly, the rest within the tolerance.
export function agrees(c, cmp) {
  if (approximate.has(family(c))) return cmp.maxAbs <= TOLERANCE * Math.max(1, cmp.scale ?? 0);
  return cmp.exact;
}

// Whether case c is selected by a list of ids and families (--case, CASES).
export function selected(c, list) {
  return !list || list.includes(c.id) || list.includes(family(c));
}

export function median(xs) {
  const s = [...xs].sort((x, y) => x - y);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}
