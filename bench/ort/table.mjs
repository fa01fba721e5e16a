#!/usr/bin/env node
// The side-by-side table from a results folder of side_by_side.sh:
//   node table.mjs DIR       # DIR/results.jsonl, DIR/check.jsonl, DIR/values/
// Per-iteration figures are the median over rounds of each round's slope
// (each slope itself from medians of many runs); the range over rounds is
// shown when there was more than one round.
import { readFileSync, existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { compare, agrees, median, TOLERANCE } from './reference.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const dir = process.argv[2];
if (!dir) throw new Error('usage: node table.mjs RESULTS_DIR');
const lines = (f) => (existsSync(f) ? readFileSync(f, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l)) : []);
const results = lines(join(dir, 'results.jsonl'));
const checks = lines(join(dir, 'check.jsonl'));
// The cases this folder has figures or values for.
const seen = new Set([...results, ...checks].map((r) => r.case));
const cases = JSON.parse(readFileSync(join(here, 'cases.json'), 'utf8')).cases.filter((c) => seen.has(c.id));

const fmt = (x) => {
  if (x === undefined || x === null || Number.isNaN(x)) return '—';
  const a = Math.abs(x);
  return a >= 100 ? x.toFixed(0) : a >= 10 ? x.toFixed(1) : a >= 1 ? x.toFixed(2) : x.toFixed(3);
};

// median (and range) over rounds of us_per_iter for one measurement key.
function figure(filter) {
  const rs = results.filter((r) => !r.error && Object.entries(filter).every(([k, v]) => r[k] === v));
  if (!rs.length) return null;
  const xs = rs.map((r) => r.us_per_iter);
  return { med: median(xs), min: Math.min(...xs), max: Math.max(...xs), rounds: xs.length,
           ok: rs.every((r) => r.values_ok !== false), n: [rs[0].n_lo, rs[0].n_hi], runs: rs[0].runs };
}
const show = (f) => (!f ? 'n/m' : f.rounds > 1 ? `${fmt(f.med)} (${fmt(f.min)}–${fmt(f.max)})` : fmt(f.med)) + (f && !f.ok ? ' ✗' : '');

const out = [];
out.push('| case | ORT variant | n (ORT) | ORT 1 thread, µs/iter | ORT 2 threads | tagflow form | n (tagflow) | tagflow 1 thread, µs/iter | tagflow 2 threads | tagflow / ORT (1 thread) |');
out.push('|---|---|---|---|---|---|---|---|---|---|');
for (const c of cases) {
  for (const v of c.ort) {
    const o1 = figure({ runtime: 'ort', case: c.id, variant: v.variant, threads: 1 });
    const o2 = figure({ runtime: 'ort', case: c.id, variant: v.variant, threads: 2 });
    for (const t of c.tagflow) {
      const t1 = figure({ runtime: 'tagflow', case: c.id, form: t.form, threads: 1 });
      const t2 = figure({ runtime: 'tagflow', case: c.id, form: t.form, threads: 2 });
      const ratio = o1 && t1 ? `${(t1.med / o1.med).toFixed(2)}×` : '—';
      const tn = t1 ?? t2;
      const tnText = !tn ? '—' : t.steps ? `${tn.n.join(' / ')} steps of ${t.steps} nodes`
                   : c.forward ? `${tn.n.join(' / ')} steps` : tn.n.join(' / ');
      const on = o1 ?? o2;
      const onText = !on ? '—' : c.structural ? `${on.n.join(' / ')} nodes` : c.forward ? `${on.runs} runs` : on.n.join(' / ');
      out.push(`| ${c.id} | ${v.variant} | ${onText} | ${show(o1)} | ${show(o2)} | ${t.form} | ${tnText} | ${show(t1)} | ${show(t2)} | ${ratio} |`);
    }
  }
}
out.push('');
out.push('µs/iter: (median time at the larger n − median at the smaller n) / (difference of n); mm_chain: per MatMul node of a loop-free graph; cnn: per forward pass, for ORT the median of single runs (the binding\'s cost per call included), for tagflow the slope between two --steps. ✗: a value check failed in those runs. n/m: not measured.');

// Values: both runtimes at tagflow's n, against each other and the reference.
const valuesDir = join(dir, 'values');
if (existsSync(valuesDir)) {
  const load = (f) => JSON.parse(readFileSync(join(valuesDir, f), 'utf8'));
  const files = readdirSync(valuesDir);
  out.push('');
  out.push('| case | n | ORT variant | tagflow form | ORT first values | tagflow first values | max abs diff | agree |');
  out.push('|---|---|---|---|---|---|---|---|');
  for (const c of cases) {
    // Trip counts (for mm_chain: node counts) either runtime has values for.
    const ns = c.forward ? [1] : [...new Set([...c.n.ort, ...c.n.tagflow])].sort((x, y) => x - y);
    for (const n of ns) {
      for (const v of c.ort) {
        const of = `ort.${c.id}.${v.variant}.${n}.json`;
        for (const t of c.tagflow) {
          const tf = `tagflow.${c.id}.${t.form}.${n}.json`;
          if (!files.includes(of) && !files.includes(tf)) continue;
          if (c.structural && !(files.includes(of) && files.includes(tf))) continue;  // one side has this n only
          if (!files.includes(of) || !files.includes(tf)) {
            out.push(`| ${c.id} | ${n} | ${v.variant} | ${t.form} | ${files.includes(of) ? 'ok' : 'missing'} | ${files.includes(tf) ? 'ok' : 'missing'} | — | — |`);
            continue;
          }
          const a = load(of).values;
          const b = load(tf).values;
          const cmp = compare(b, a);
          const first = (xs) => xs.slice(0, 3).map((x) => (Number.isInteger(x) ? String(x) : x.toPrecision(7))).join(', ');
          out.push(`| ${c.id} | ${n} | ${v.variant} | ${t.form} | ${first(a)} | ${first(b)} | ${cmp.maxAbs === 0 ? '0 (exact)' : cmp.maxAbs.toExponential(2)} | ${agrees(c, cmp) ? 'yes' : 'NO'} |`);
        }
      }
    }
  }
}
out.push('');
out.push(`agree: integer and permutation cases bit for bit; rnn, lstm and cnn within ${TOLERANCE} × max(1, largest |value|) (for rnn and lstm, |h| < 1: ${TOLERANCE} absolute). cnn: n is one forward pass.`);
const bad = checks.filter((r) => r.error || (r.vs_reference && !r.vs_reference.ok));
out.push('');
out.push(bad.length ? `Against the plain-JS reference, ${bad.length} check(s) failed or errored:\n` + bad.map((r) => '    ' + JSON.stringify(r)).join('\n')
                    : `Every result (${checks.length} checks) agrees with the plain-JS reference (reference.mjs).`);
const errors = results.filter((r) => r.error);
if (errors.length) out.push('Errors in timing runs:\n' + errors.map((r) => '    ' + JSON.stringify(r)).join('\n'));
console.log(out.join('\n'));
