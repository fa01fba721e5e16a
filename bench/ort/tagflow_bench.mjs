#!/usr/bin/env node
// tagflow's CLI on the graphs of make_graphs.py, timed as whole processes:
// per-iteration cost by the slope between two trip counts, which cancels
// process start, graph import and session creation. A loop-free forward
// pass (cnn_*, "forward": true) is run with --steps N instead: the slope
// between two N is the cost of one step (one forward pass).
//
//   node tagflow_bench.mjs --tagflow PATH [--case ID,...] [--form tf1,tf2]
//                          [--threads 1,2] [--reps 5] [--warmup 1] [--n LO,HI]
//                          [--check N,...] [--values DIR]
//
// Each run: `tagflow run GRAPH --feed n=N --fetch NAME --threads T --quiet
// --max-print K` (plus the case's args; a case with "steps" runs its fixed
// graph with --steps N instead), wall time from spawn to exit (process.hrtime
// around spawnSync). W warm-up runs at each n (the first prints every element
// and is checked against reference.mjs: values_ok), then R runs at LO and R
// at HI, alternating, printing one element; medians. us_per_iter =
// (median(HI) - median(LO)) / (HI - LO) * 1000 (divided by the node count
// for a steps case). One JSON line per measurement on stdout. A case's
// "feeds" (NAME=@FILE, FILE relative to this folder) are passed as --feed.
// --case takes ids and families: "rnn" selects every RNN size.
// Graphs run through tagflow's optimizer passes (--optimize default, as ORT
// runs with graphOptimizationLevel 'all'; a case's own --optimize wins);
// TAGFLOW_OPTIMIZE=none runs them as written.
// --check N,...: no timing; one run at each N (a steps case: one step) with
// the first of --threads, compared with reference.mjs; --values DIR writes
// the values to DIR/tagflow.CASE.FORM.N.json (N: the reference's n).
import { readFileSync, writeFileSync, mkdirSync, existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { spawnSync } from 'node:child_process';
import { loadWeights, expected, compare, agrees, selected, median } from './reference.mjs';

const here = dirname(fileURLToPath(import.meta.url));

function parseArgs(argv) {
  const a = { tagflow: process.env.TAGFLOW ?? null, cases: null, forms: null, threads: [1], reps: 5, warmup: 1,
              n: null, check: null, values: null, models: join(here, 'build', 'models') };
  for (let i = 0; i < argv.length; ++i) {
    const k = argv[i];
    const v = () => {
      if (i + 1 >= argv.length) throw new Error(`${k} needs a value`);
      return argv[++i];
    };
    const ints = (s) => s.split(',').filter((x) => x !== '').map((x) => parseInt(x, 10));
    if (k === '--tagflow') a.tagflow = v();
    else if (k === '--case') a.cases = v().split(',');
    else if (k === '--form') a.forms = v().split(',');
    else if (k === '--threads') a.threads = ints(v());
    else if (k === '--reps') a.reps = parseInt(v(), 10);
    else if (k === '--warmup') a.warmup = parseInt(v(), 10);
    else if (k === '--n') a.n = ints(v());
    else if (k === '--check') a.check = ints(v());
    else if (k === '--values') a.values = v();
    else if (k === '--models') a.models = v();
    else if (k === '-h' || k === '--help') {
      console.log(readFileSync(fileURLToPath(import.meta.url), 'utf8').split('\nimport ')[0]);
      process.exit(0);
    } else throw new Error(`unknown argument ${k}`);
  }
  if (!a.tagflow) throw new Error('give --tagflow PATH (or TAGFLOW=PATH): the tagflow CLI binary');
  if (!existsSync(a.tagflow)) throw new Error(`no tagflow binary at ${a.tagflow}`);
  return a;
}

const args = parseArgs(process.argv.slice(2));
const { cases } = JSON.parse(readFileSync(join(here, 'cases.json'), 'utf8'));
const w = loadWeights(join(args.models, 'weights.json'));

// tagflow prints `NAME = VALUES  (dtype, shape [d0,d1])`; VALUES nested [..].
function parseFetch(stdout, fetch) {
  const line = stdout.split('\n').find((l) => l.startsWith(fetch + ' = '));
  if (!line) return null;
  const body = line.slice(fetch.length + 3);
  const cut = body.lastIndexOf('  (');
  const valuesText = cut >= 0 ? body.slice(0, cut) : body;
  const meta = cut >= 0 ? body.slice(cut + 3, -1) : '';
  let values = (valuesText.match(/-?(?:\d+\.?\d*(?:e[-+]?\d+)?|nan|inf)/gi) ?? []).map(Number);
  // 9 significant digits name a float32 exactly; read them back as float32.
  if (meta.startsWith('float32')) values = values.map(Math.fround);
  return { values, meta, truncated: valuesText.includes('...') };
}

// Whether run n means --steps n (a fixed graph run n times in one session),
// and the nodes (or forward passes) one step holds.
const bySteps = (c, t) => Boolean(t.steps || c.forward);
const perStep = (t) => t.steps ?? 1;

// One process. A case with `steps`, or a forward case, runs its fixed graph
// n times in one session (--steps n) instead of feeding n. print: the
// elements printed (all for a value check; 1 in timed runs, so that printing
// is not timed).
function runOnce(c, t, n, threads, print = 1 << 20) {
  const graph = join(here, t.graph.replace('{n}', String(n)));
  const argv = ['run', graph, '--fetch', t.fetch, '--threads', String(threads), '--quiet', '--max-print', String(print)];
  if (!(t.args ?? []).includes('--optimize')) argv.push('--optimize', process.env.TAGFLOW_OPTIMIZE ?? 'default');
  if (bySteps(c, t)) argv.push('--steps', String(n));
  else if (!c.structural) argv.push('--feed', `n=${n}`);
  for (const f of t.feeds ?? []) {
    const [name, value] = [f.slice(0, f.indexOf('=')), f.slice(f.indexOf('=') + 1)];
    argv.push('--feed', value.startsWith('@') ? `${name}=@${join(here, value.slice(1))}` : f);
  }
  if (t.args) argv.push(...t.args);
  const t0 = process.hrtime.bigint();
  const r = spawnSync(args.tagflow, argv, { encoding: 'utf8', maxBuffer: 1 << 26 });
  const t1 = process.hrtime.bigint();
  if (r.error) throw r.error;
  if (r.status !== 0) {
    throw new Error(`tagflow ${argv.join(' ')}: exit ${r.status} ${r.signal ?? ''}\n${r.stderr.slice(0, 2000)}`);
  }
  return { ms: Number(t1 - t0) / 1e6, out: parseFetch(r.stdout, t.fetch), stdout: r.stdout };
}

// What the reference computes for run n: the trip count, the node count of
// a graph run by steps, or 1 (one forward pass).
const refN = (c, t, n) => (t.steps ? t.steps : c.forward ? 1 : n);

function checkResult(c, t, n, out) {
  if (!out) return { ok: false, why: 'fetch not printed' };
  const cmp = compare(out.values, expected(c, refN(c, t, n), w));
  return { ok: agrees(c, cmp) && !out.truncated, max_abs: cmp.maxAbs, exact: cmp.exact };
}

const stats = (xs) => ({ median: median(xs), min: Math.min(...xs), max: Math.max(...xs) });
const round = (x, d = 4) => Number(x.toPrecision(d));
const mapRound = (s) => Object.fromEntries(Object.entries(s).map(([k, x]) => [k, round(x, 5)]));

function measure(c, t, threads) {
  const [lo, hi] = args.n ?? c.n.tagflow;
  const ok = {};
  for (let i = 0; i < args.warmup; ++i) {
    for (const n of [lo, hi]) {
      const r = runOnce(c, t, n, threads, i === 0 ? 1 << 20 : 1);
      if (i === 0) ok[n] = checkResult(c, t, n, r.out).ok;
    }
  }
  const tlo = [];
  const thi = [];
  for (let i = 0; i < args.reps; ++i) {
    tlo.push(runOnce(c, t, lo, threads, 1).ms);
    thi.push(runOnce(c, t, hi, threads, 1).ms);
  }
  const L = stats(tlo);
  const H = stats(thi);
  // µs per iteration; a graph run by steps: per node (µs per step / nodes),
  // a forward case: per step.
  const per = (x, y) => ((y - x) / (hi - lo)) * 1000 / perStep(t);
  return {
    runtime: 'tagflow', case: c.id, form: t.form, threads, n_lo: lo, n_hi: hi, reps: args.reps,
    ...(t.steps ? { steps_of_nodes: t.steps } : {}), ...(c.forward ? { per: 'step (slope over --steps)' } : {}),
    lo_ms: mapRound(L), hi_ms: mapRound(H), us_per_iter: round(per(L.median, H.median)),
    us_per_iter_min: round(per(L.min, H.min)),
    intercept_ms: round(L.median - (lo * per(L.median, H.median) * perStep(t)) / 1000),
    values_ok: args.warmup > 0 ? ok[lo] && ok[hi] : null,
  };
}

function checkValues(c, t, n) {
  const r = runOnce(c, t, n, args.threads[0]);
  const res = checkResult(c, t, n, r.out);
  const rn = refN(c, t, n);
  if (args.values && r.out) {
    mkdirSync(args.values, { recursive: true });
    writeFileSync(join(args.values, `tagflow.${c.id}.${t.form}.${rn}.json`),
                  JSON.stringify({ runtime: 'tagflow', case: c.id, form: t.form, n: rn, meta: r.out.meta, values: r.out.values }));
  }
  return { runtime: 'tagflow', case: c.id, form: t.form, n: rn, ms: round(r.ms), meta: r.out?.meta,
           first: r.out?.values.slice(0, 4), vs_reference: res };
}

for (const c of cases) {
  if (!selected(c, args.cases)) continue;
  for (const t of c.tagflow) {
    if (args.forms && !args.forms.includes(t.form) && !((c.structural || c.forward) && args.forms.length)) continue;
    try {
      if (args.check) {
        const ns = bySteps(c, t) ? [1] : c.structural ? c.n.tagflow : args.check.length ? args.check : c.n.tagflow;
        for (const n of ns) console.log(JSON.stringify(checkValues(c, t, n)));
        continue;
      }
      for (const th of args.threads) console.log(JSON.stringify(measure(c, t, th)));
    } catch (e) {
      console.log(JSON.stringify({ runtime: 'tagflow', case: c.id, form: t.form, error: String(e.message ?? e).slice(0, 1500) }));
    }
  }
}
