#!/usr/bin/env node
// ONNX Runtime (onnxruntime-node, CPU execution provider) on the models of
// make_models.py: per-iteration cost by the slope between two trip counts;
// for a loop-free forward pass (cnn_*), the median time of one run.
//
//   node bench.mjs [--case ID,...] [--threads 1,2] [--reps 9] [--warmup 2]
//                  [--n LO,HI] [--models DIR] [--check N,...] [--values DIR]
//
// For each case, ORT variant and intra-op thread count: a session
// (intraOpNumThreads T, interOpNumThreads 1, sequential execution, default
// graph optimisation "all"), W warm-up runs at each n, then R runs at n = LO
// and R at n = HI, alternating; medians. us_per_iter = (median(HI) -
// median(LO)) / (HI - LO) * 1000, which cancels the per-call cost (feeds,
// binding, the promise's setImmediate hop, outputs). One JSON line per
// measurement on stdout.
//
// A forward case ("forward": true: no loop and no n; its input x is fed): W
// warm-up runs, then the case's runs.ort runs one after the other, each timed;
// us_per_iter is the median of one run in µs (binding costs included: there is
// no second n to cancel them), us_per_iter_min the fastest.
//
// --case takes ids and families: "rnn" selects every RNN size, "cnn" both
// batches. onnxruntime-node is loaded from ./node_modules, or from the folder
// ORT_NODE_MODULES names (a node_modules where it is installed).
//
// --check N,...: no timing; run each variant once at each N (1 thread; a
// structural case at its own n, a forward case once; `--check ''` at the
// tagflow n of cases.json),
// compare with reference.mjs, print one JSON line each, and with --values DIR
// write the output to DIR/ort.CASE.VARIANT.N.json (for side_by_side's
// comparison with tagflow).
import { readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createRequire } from 'node:module';
import { loadWeights, expected, rnnSequence, cnnInputNCHW, compare, agrees, family, selected, median }
  from './reference.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const require = createRequire(import.meta.url);
// onnxruntime-node from ORT_NODE_MODULES if set, else by Node's lookup (./node_modules).
const ortDir = process.env.ORT_NODE_MODULES ? join(process.env.ORT_NODE_MODULES, 'onnxruntime-node') : null;
let ort;
try {
  ort = require(ortDir ?? 'onnxruntime-node');
} catch (e) {
  throw new Error(`cannot load onnxruntime-node${ortDir ? ` from ${ortDir}` : ''}: run \`npm ci --ignore-scripts\` ` +
                  `in ${here}, or set ORT_NODE_MODULES to a node_modules folder that has it\n${e.message}`);
}
const ortVersion = JSON.parse(readFileSync(ortDir ? join(ortDir, 'package.json')
                                                  : require.resolve('onnxruntime-node/package.json'), 'utf8')).version;

function parseArgs(argv) {
  const a = { cases: null, threads: [1, 2], reps: 9, warmup: 2, n: null, models: join(here, 'build', 'models'),
              check: null, values: null };
  for (let i = 0; i < argv.length; ++i) {
    const k = argv[i];
    const v = () => {
      if (i + 1 >= argv.length) throw new Error(`${k} needs a value`);
      return argv[++i];
    };
    const ints = (s) => s.split(',').filter((x) => x !== '').map((x) => parseInt(x, 10));
    if (k === '--case') a.cases = v().split(',');
    else if (k === '--threads') a.threads = ints(v());
    else if (k === '--reps') a.reps = parseInt(v(), 10);
    else if (k === '--warmup') a.warmup = parseInt(v(), 10);
    else if (k === '--n') a.n = ints(v());
    else if (k === '--models') a.models = v();
    else if (k === '--check') a.check = ints(v());
    else if (k === '--values') a.values = v();
    else if (k === '-h' || k === '--help') {
      console.log(readFileSync(fileURLToPath(import.meta.url), 'utf8').split('\nimport ')[0]);
      process.exit(0);
    } else throw new Error(`unknown argument ${k}`);
  }
  return a;
}

const args = parseArgs(process.argv.slice(2));
const { cases } = JSON.parse(readFileSync(join(here, 'cases.json'), 'utf8'));
const w = loadWeights(join(args.models, 'weights.json'));

function sessionOptions(threads) {
  return { intraOpNumThreads: threads, interOpNumThreads: 1, executionMode: 'sequential',
           graphOptimizationLevel: 'all' };
}

// What one run at n needs: the session's model path and its feeds.
function runSpec(c, v, n) {
  const model = join(args.models, v.model.replace('{n}', String(n)));
  let feeds;
  const B = c.params?.B ?? 1;
  if (v.feed === 'm0') feeds = { m0: new ort.Tensor('float32', Float32Array.from(w.m0), [w.H, w.H]) };
  else if (v.feed === 'xs') {
    // [n, IN] for the batch-1 Scan RNN (the anchor's), else [n, B, IN].
    const dims = family(c) === 'rnn' && B === 1 ? [n, w.IN] : [n, B, w.IN];
    feeds = { xs: new ort.Tensor('float32', rnnSequence(w, n, B), dims) };
  } else if (v.feed === 'x') feeds = { x: new ort.Tensor('float32', cnnInputNCHW(w, B), [B, 3, 32, 32]) };
  else feeds = { n: new ort.Tensor('int32', Int32Array.of(n), []) };
  return { model, feeds };
}

const sessions = new Map();
async function session(model, threads) {
  const key = `${model}|${threads}`;
  if (!sessions.has(key)) sessions.set(key, await ort.InferenceSession.create(model, sessionOptions(threads)));
  return sessions.get(key);
}

async function timed(s, feeds, output) {
  const t0 = process.hrtime.bigint();
  const out = await s.run(feeds);
  const t1 = process.hrtime.bigint();
  return { ms: Number(t1 - t0) / 1e6, data: out[output].data, dims: out[output].dims };
}

const stats = (xs) => ({ median: median(xs), min: Math.min(...xs), max: Math.max(...xs) });
const round = (x, d = 4) => Number(x.toPrecision(d));

// A forward case: the median of single runs.
async function measureForward(c, v, threads) {
  const spec = runSpec(c, v, 1);
  const s = await session(spec.model, threads);
  let ok = null;
  for (let i = 0; i < Math.max(args.warmup, 1); ++i) {
    const r = await timed(s, spec.feeds, v.output);
    if (i === 0) ok = agrees(c, compare(Array.from(r.data, Number), expected(c, 1, w)));
  }
  const runs = c.runs?.ort ?? args.reps;
  const ts = [];
  for (let i = 0; i < runs; ++i) ts.push((await timed(s, spec.feeds, v.output)).ms);
  const T = stats(ts);
  return {
    runtime: 'ort', ort_version: ortVersion, case: c.id, variant: v.variant, threads, runs,
    run_ms: mapRound(T), us_per_iter: round(T.median * 1000), us_per_iter_min: round(T.min * 1000),
    per: 'run (median)', values_ok: ok,
  };
}

async function measure(c, v, threads) {
  if (c.forward) return measureForward(c, v, threads);
  const [lo, hi] = args.n ?? c.n.ort;
  const a = runSpec(c, v, lo);
  const b = runSpec(c, v, hi);
  const sa = await session(a.model, threads);
  const sb = await session(b.model, threads);
  const check = {};
  for (let i = 0; i < args.warmup; ++i) {
    for (const [n, s, spec] of [[lo, sa, a], [hi, sb, b]]) {
      const r = await timed(s, spec.feeds, v.output);
      if (i === 0) check[n] = agrees(c, compare(Array.from(r.data, Number), expected(c, n, w)));
    }
  }
  const tlo = [];
  const thi = [];
  for (let i = 0; i < args.reps; ++i) {
    tlo.push((await timed(sa, a.feeds, v.output)).ms);
    thi.push((await timed(sb, b.feeds, v.output)).ms);
  }
  const L = stats(tlo);
  const Hs = stats(thi);
  const per = (x, y) => ((y - x) / (hi - lo)) * 1000;
  return {
    runtime: 'ort', ort_version: ortVersion, case: c.id, variant: v.variant, threads, n_lo: lo, n_hi: hi,
    reps: args.reps, lo_ms: mapRound(L), hi_ms: mapRound(Hs),
    us_per_iter: round(per(L.median, Hs.median)), us_per_iter_min: round(per(L.min, Hs.min)),
    intercept_ms: round(L.median - (lo * per(L.median, Hs.median)) / 1000),
    values_ok: check[lo] && check[hi],
  };
}

function mapRound(s) {
  return Object.fromEntries(Object.entries(s).map(([k, x]) => [k, round(x, 5)]));
}

async function checkValues(c, v, n) {
  const spec = runSpec(c, v, n);
  const s = await session(spec.model, 1);
  const r = await timed(s, spec.feeds, v.output);
  const values = Array.from(r.data, Number);
  const cmp = compare(values, expected(c, n, w));
  if (args.values) {
    mkdirSync(args.values, { recursive: true });
    writeFileSync(join(args.values, `ort.${c.id}.${v.variant}.${n}.json`),
                  JSON.stringify({ runtime: 'ort', case: c.id, variant: v.variant, n, dims: r.dims, values }));
  }
  return {
    runtime: 'ort', ort_version: ortVersion, case: c.id, variant: v.variant, n, dims: r.dims,
    first: values.slice(0, 4), vs_reference: { max_abs: cmp.maxAbs, exact: cmp.exact, ok: agrees(c, cmp) },
  };
}

for (const c of cases) {
  if (!selected(c, args.cases)) continue;
  for (const v of c.ort) {
    if (args.check) {
      // A structural case has one model per n: check the n it has; a forward
      // case has no n (one run, n = 1).
      const ns = c.forward ? [1] : c.structural ? c.n.ort : args.check.length ? args.check : c.n.tagflow;
      for (const n of ns) console.log(JSON.stringify(await checkValues(c, v, n)));
      continue;
    }
    for (const t of args.threads) console.log(JSON.stringify(await measure(c, v, t)));
  }
}
