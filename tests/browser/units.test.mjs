// The dashboard's pure helpers, in Node without a browser: what a cell says, which layout a sweep
// gets by default, how numbers, counts and config keys are written.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import {register} from 'node:module';
import {it} from 'node:test';
import {Stack} from './lib/stack.mjs';

// The verdict vocabulary comes from a real daemon, as in the browser (lib/vocabulary_hooks.mjs); the
// dashboard's modules are imported once it is in place.
const stack = await new Stack().start();
const served = await (await fetch(stack.url + '/web/js/vocabulary.js')).text();
await stack.stop();
register('./lib/vocabulary_hooks.mjs', import.meta.url, {data: {source: served}});
const {defaultLayout, sweepValues} = await import('../../web/js/components/matrix_controls.js');
const {byConcurrency} = await import('../../web/js/components/metrics.js');
const {fmtFingerprint, fmtNum, noun, plural} = await import('../../web/js/dom.js');
const {sweepState} = await import('../../web/js/components/progress.js');
const {makeKey, parseKey} = await import('../../web/js/pages/history.js');
const {howItRan} = await import('../../web/js/pages/trial.js');
const {cellFace, driftText, failingRows, metricRange} = await import('../../web/js/components/matrix.js');
const {oneHardware} = await import('../../web/js/components/matrix_layout.js');
const {LAYERS, versionChoices} = await import('../../web/js/pages/matrix.js');
const {VERDICTS, bySeverity, failedCount, segmentClass, shortReason, verdictClass, verdictFamily, verdictIcon, verdictLabel} = await import('../../web/js/verdict.js');

it('takes the verdicts, their order and labels from the daemon', () => {
  assert.deepEqual(VERDICTS, ['passed', 'unsupported', 'crashed', 'wrong_output', 'fallback', 'timeout', 'oom', 'infra_error',
    'cancelled', 'skipped']);
  assert.equal(verdictLabel('oom'), 'out of memory');
  assert.equal(verdictLabel('wrong_output'), 'wrong output');
});

it('says why a cell failed in a few words', () => {
  assert.equal(shortReason('crashed', 'crashed:illegal_memory_access'), 'illegal memory access');
  assert.equal(shortReason('wrong_output', 'wrong_output:bench'), 'garbage output');
  assert.equal(shortReason('skipped', 'skipped:crashed:illegal_memory_access'), 'illegal memory access');
  assert.equal(shortReason('crashed', 'crashed:RuntimeError:Error Internal@modelopt_quant.py'), 'RuntimeError:Error Internal');
  assert.equal(shortReason('timeout', ''), 'timeout');
  assert.ok(shortReason('unsupported', 'unsupported:' + 'x'.repeat(80)).length <= 32);
});

it('colours verdicts by family', () => {
  assert.equal(verdictClass('oom'), 'v-oom vf-bad');
  // Every verdict the daemon serves has a badge colour and a progress colour, from its family alone:
  // a verdict added to the vocabulary (fallback was one) is never blank.
  const css = fs.readFileSync(new URL('../../web/app.css', import.meta.url), 'utf8');
  for (const v of VERDICTS) {
    const family = verdictFamily(v);
    assert.match(css, new RegExp(`\\.vf-${family} \\{ color: var\\(--`), `${v}: no badge colour for family ${family}`);
    assert.match(css, new RegExp(`\\.segf-${family} \\{ background: #`), `${v}: no progress colour for family ${family}`);
    assert.match(segmentClass(v), new RegExp(`\\bsegf-${family}\\b`));
  }
  assert.ok(VERDICTS.includes('fallback'));
  assert.equal(verdictClass(null), 'v-pending');
  assert.equal(verdictIcon('passed'), '✓');
  assert.equal(verdictIcon('wrong_output'), '✗');
  assert.equal(verdictIcon('infra_error'), verdictIcon('timeout'));
  assert.equal(verdictIcon('skipped'), verdictIcon('cancelled'));
});

it('lays a sweep out with the parameters that vary', () => {
  const suite = {parameters: {a: ['1', '2', '3'], b: ['x', 'y'], c: ['p', 'q'], model: {pattern: '.*', default: 'm'}}};
  const sweep = {request: {parameters: {c: ['p']}}};
  const values = sweepValues(suite, sweep);
  assert.deepEqual(values, {a: ['1', '2', '3'], b: ['x', 'y'], c: ['p'], model: ['m']});
  assert.deepEqual(defaultLayout(values, 2), {rows: ['a', 'b'], cols: 'hardware'});
  assert.deepEqual(defaultLayout(values, 1), {rows: ['a'], cols: 'b'});
  assert.deepEqual(defaultLayout({a: ['1'], b: ['2']}, 1), {rows: ['a'], cols: 'hardware'});
  assert.deepEqual(defaultLayout({a: ['1', '2'], b: ['2']}, 1), {rows: ['a'], cols: 'hardware'});
});

it('writes numbers, fingerprints and config keys as the daemon does', () => {
  assert.equal(fmtNum(2100), '2,100');
  assert.equal(fmtNum(1234567.4), '1,234,567');
  assert.equal(fmtNum(-12345.6), '-12,346');
  assert.equal(fmtNum(3.14159), '3.14');
  assert.equal(fmtNum(null), '–');
  assert.equal(fmtFingerprint({framework: 'sglang 0.5', cuda: '13.0'}), 'framework sglang 0.5 · cuda 13.0');
  assert.equal(fmtFingerprint(null), 'unknown software');
  // A worker that found no driver or CUDA reports them empty: not versions worth printing.
  assert.equal(fmtFingerprint({cuda: '', driver: ''}), 'unknown software');
  assert.equal(fmtFingerprint({cuda: '13.0', driver: ''}), 'cuda 13.0');
  assert.equal(fmtFingerprint({cuda: '', driver: null}, 'unknown'), 'unknown');
  assert.deepEqual(parseKey('backend=cutlass&delay=0&dtype=bf16'), {backend: 'cutlass', delay: '0', dtype: 'bf16'});
  assert.equal(makeKey({dtype: 'bf16', backend: 'cutlass', delay: '0'}), 'backend=cutlass&delay=0&dtype=bf16');
  assert.equal(makeKey(parseKey('m=a/b=c&x=1')), 'm=a/b=c&x=1', 'a value holding "=" survives');
});

it('groups per-concurrency metrics for charts', () => {
  const g = byConcurrency({'output_tok_s@c1': {value: 400, unit: 'tok/s'}, 'output_tok_s@c64': {value: 2000, unit: 'tok/s'},
    'ttft_ms_p50@c1': {value: 30}, 'rel_err': {value: 0.001}});
  assert.deepEqual([...g.keys()], ['output_tok_s'], 'a metric with one level is not a chart');
  assert.deepEqual(g.get('output_tok_s').map((p) => p.c), [1, 64]);
});

it('counts things in the singular only when there is one', () => {
  assert.equal(plural(0, 'trial'), '0 trials');
  assert.equal(plural(1, 'trial'), '1 trial');
  assert.equal(plural(2, 'trial'), '2 trials');
  assert.equal(plural(65536, 'earlier byte'), '65,536 earlier bytes');
  assert.equal(plural(1, 'match', 'matches'), '1 match');
  assert.equal(plural(3, 'match', 'matches'), '3 matches');
  // Fractions are plural, and the noun agrees with the number as printed, not as stored.
  assert.equal(plural(0.5, 'GPU-hour'), '0.5 GPU-hours');
  assert.equal(plural(1.0001, 'GPU-hour'), '1 GPU-hour');
  assert.equal(noun(1, 'GPU'), 'GPU');
  assert.equal(noun(2, 'GPU'), 'GPUs');
});

it('says how a sweep stands, and how many of a finished one failed', () => {
  const by = {passed: 3, unsupported: 1, crashed: 2, wrong_output: 1, timeout: 1, skipped: 4, cancelled: 1};
  // Everything that is not passed and says something about the run: skipped and cancelled do not.
  assert.equal(failedCount(by), 5);
  assert.equal(failedCount({passed: 2, skipped: 1}), 0);
  assert.equal(failedCount(undefined), 0);
  assert.equal(sweepState({finished: true, by_verdict: by}), 'finished · 5 failed');
  assert.equal(sweepState({finished: true, by_verdict: {passed: 2}}), 'finished');
  assert.equal(sweepState({finished: true, by_verdict: {crashed: 12000}}), 'finished · 12,000 failed');
  assert.equal(sweepState({finished: false, running: 2, by_verdict: by}), 'running');
  assert.equal(sweepState({finished: false, running: 0}), 'queued');
  assert.equal(sweepState({finished: true, cancelled_at: 5, by_verdict: by}), 'cancelled');
});

const tok = (value) => ({name: 'tok_s', value, unit: 'tok/s'});

it('writes a passed cell\'s key metric as one number or a min–max range', () => {
  assert.equal(metricRange({metric_min: tok(1800), metric_max: tok(2100), metric: tok(2100)}), '1,800–2,100 tok/s');
  assert.equal(metricRange({metric_min: tok(2100), metric_max: tok(2100), metric: tok(2100)}), '2,100 tok/s');
  // Equal as printed is equal: 2,100.4 and 2,099.6 both read "2,100".
  assert.equal(metricRange({metric_min: tok(2099.6), metric_max: tok(2100.4)}), '2,100 tok/s');
  assert.equal(metricRange({metric_min: {value: 2, unit: 'ms'}, metric_max: {value: 3, unit: 's'}}), '2 ms–3 s');
  assert.equal(metricRange({metric: tok(5)}), '5 tok/s', 'an answer without min/max still shows its metric');
  assert.equal(metricRange({metric: null}), '');
});

it('says what a cell holds: agreeing cells their verdict and reason, disagreeing ones mixed k/n and the verdicts present', () => {
  const passed = cellFace({state: 'passed', verdict: 'passed', configs: 3, passed: 3, counts: {passed: 6},
    metric_min: tok(100), metric_max: tok(6400), metric: tok(6400)});
  assert.deepEqual(passed, {cls: 'v-passed vf-ok', text: '✓ 100–6,400 tok/s', runs: 6});
  // Runs are judged trials: pruned (skipped) and cancelled ones never ran, queued ones have not yet.
  assert.equal(cellFace({state: 'passed', verdict: 'passed', configs: 1, passed: 1,
    counts: {passed: 2, skipped: 3, cancelled: 1, infra_error: 1, queued: 1}, metric: tok(5)}).runs, 2);
  // A failed cell shows the daemon's words for its verdict and signature (core/cell_reason.h).
  const failed = cellFace({state: 'failed', verdict: 'crashed', signature: 'crashed:RuntimeError:boom', reason: 'crashed: boom', counts: {crashed: 1}});
  assert.deepEqual(failed, {cls: 'v-crashed vf-bad', text: '✗ crashed: boom', runs: 1});
  // A failure from the exit status alone is a guess: the daemon says "unclassified", and the cell is marked.
  const guess = cellFace({state: 'failed', verdict: 'crashed', signature: 'crashed:exit_code:1', reason: 'unclassified: exit code 1',
    unclassified: true, counts: {crashed: 1}});
  assert.deepEqual(guess, {cls: 'v-crashed vf-bad unclassified', text: '✗ unclassified: exit code 1', runs: 1});
  assert.equal(cellFace({state: 'failed', verdict: 'timeout', signature: 'timeout:check', reason: 'timeout in stage check'}).text, '◷ timeout in stage check');
  assert.equal(cellFace({state: 'failed', verdict: 'unsupported', signature: 'unsupported:dtype', reason: null}).text, '⚠ unsupported',
    'without the daemon\'s words, the verdict, never a bare signature part');
  assert.equal(cellFace({state: 'pending', verdict: null, counts: {queued: 2}}).text, '… queued');
  const mixed = cellFace({state: 'mixed', verdict: 'crashed', configs: 4, passed: 1, counts: {passed: 1, crashed: 2, unsupported: 1},
    breakdown: [{verdict: 'passed', configs: 1}, {verdict: 'unsupported', configs: 1}, {verdict: 'crashed', configs: 2}]});
  assert.equal(mixed.text, '◐ mixed: 1/4 passed · ✗ crashed 2 · ⚠ unsupported 1', 'most severe first, configs per verdict');
  assert.equal(mixed.cls, 'mx-mixed v-crashed vf-bad lo-ok hi-bad');
  // No config passed: the split runs from the mildest verdict to the worst.
  assert.equal(cellFace({state: 'mixed', verdict: 'crashed', configs: 2, passed: 0,
    breakdown: [{verdict: 'unsupported'}, {verdict: 'crashed'}]}).cls, 'mx-mixed v-crashed vf-bad lo-warn hi-bad');
  // Passed beside skipped (never run) is mixed too: green against grey.
  assert.equal(cellFace({state: 'mixed', verdict: 'passed', configs: 2, passed: 1,
    breakdown: [{verdict: 'passed'}, {verdict: 'skipped'}]}).cls, 'mx-mixed v-passed vf-ok lo-ok hi-none');
  // A flaky config whose latest run passed: its crash is still named, from the runs' counts.
  const flaky = cellFace({state: 'flaky', verdict: 'passed', configs: 3, passed: 3, counts: {passed: 5, crashed: 1},
    pass_rate: {passed: 5, runs: 6, rate: 5 / 6, low: 0.4, high: 0.97},
    breakdown: [{verdict: 'passed'}], flaky: [{config: {batch: '8'}, trial: 4}]});
  assert.equal(flaky.text, '≈ flaky: 5/6 runs passed · ✗ crashed 1');
  assert.equal(flaky.cls, 'mx-flaky v-passed vf-ok lo-ok hi-bad');
  assert.deepEqual(bySeverity(['passed', 'timeout', 'oom', 'skipped', 'crashed']), ['crashed', 'oom', 'timeout', 'passed', 'skipped']);
});

it('offers the latest suite version by default, then each one down to 1, then all', () => {
  assert.deepEqual(versionChoices(3).map((o) => [o.value, o.label]),
    [['', 'latest (v3)'], ['3', 'v3'], ['2', 'v2'], ['1', 'v1'], ['all', 'all versions']]);
});

it('lays parameters out in the order the suite declared them', () => {
  const suite = {parameters: {alpha: ['1', '2'], zeta: ['x', 'y']}, parameter_order: ['zeta', 'alpha']};
  const values = sweepValues(suite, {});
  assert.deepEqual(Object.keys(values), ['zeta', 'alpha']);
  assert.deepEqual(defaultLayout(values, 2), {rows: ['zeta', 'alpha'], cols: 'hardware'});
});

it('reshapes a one-hardware matrix so a parameter takes the columns, the cells unchanged', () => {
  const cell = (a, b, verdict) => ({row: [a, b], col: 'cpu', state: verdict === 'passed' ? 'passed' : 'failed', verdict});
  const m = {rows: ['size', 'dtype'], cols: 'hardware', hardware: ['cpu'], col_keys: ['cpu'],
    row_keys: [['s', 'fp8'], ['s', 'bf16'], ['m', 'bf16']], cells: [cell('s', 'fp8', 'passed'), cell('s', 'bf16', 'crashed'), cell('m', 'bf16', 'passed')]};
  const one = oneHardware(m, {order: ['bf16', 'fp8']});
  assert.equal(one.hardware, 'cpu');
  assert.deepEqual(one.layout, {rows: ['size'], cols: 'dtype'});
  assert.deepEqual(one.m.row_keys, [['s'], ['m']]);
  assert.deepEqual(one.m.col_keys, ['bf16', 'fp8'], 'the declared order');
  assert.deepEqual(one.m.cells.map((c) => [c.row, c.col, c.verdict]), [[['s'], 'fp8', 'passed'], [['s'], 'bf16', 'crashed'], [['m'], 'bf16', 'passed']]);
  assert.equal(one.m.one_hardware, 'cpu');
  // Columns the person chose, or one row parameter: the layout stays, the hardware is said once.
  assert.deepEqual(oneHardware(m, {explicit: true}).layout, {rows: ['size', 'dtype'], cols: 'hardware'});
  assert.equal(oneHardware(m, {explicit: true}).m.one_hardware, 'cpu');
  // Two classes: nothing to say once.
  assert.equal(oneHardware({...m, hardware: ['cpu', 'NVIDIA H200 · sm_90 · x1']}).hardware, null);
});

it('says a cell\'s drift and evidence layers beside its verdict', () => {
  const base = {state: 'failed', verdict: 'wrong_output', signature: 'wrong_output:sdpa', counts: {wrong_output: 1}};
  const failing = cellFace({...base, drift: {kind: 'supported_but_failing', declared_by: ['framework'], signature: 'wrong_output:sdpa'}});
  assert.match(failing.text, /\[declared supported, fails \(framework\): wrong_output:sdpa\]$/);
  assert.match(failing.cls, /drift-supported_but_failing/);
  assert.equal(driftText({drift: {kind: 'unsupported_but_passing', declared_by: ['table'], metric: {mean: 812, unit: 'TFLOP/s'}}}),
    'declared unsupported, passes: 812 TFLOP/s');
  // Agreement adds nothing; a cell nobody ran has no drift.
  assert.equal(driftText({drift: {kind: 'agrees', declared_by: ['table']}}), '');
  assert.equal(driftText({drift: null}), '');
  const ev = cellFace({...base, evidence: 'dispatch_verified', evidence_counts: {dispatch_verified: 1}});
  assert.match(ev.text, /\[dispatch verified\]$/);
  assert.deepEqual(LAYERS.map((l) => l.value), ['', 'dispatch', 'drift', 'evidence']);
});

it('says how a trial ran: its own user or why not, and the limits a stage ran without', () => {
  const stages = [{name: 'kernel', isolation: 'trial user 61003'},
    {name: 'serve', isolation: 'trial user 61003', limits: 'not enforced: memory_mb 6144 (no controller)'}];
  assert.deepEqual(howItRan(stages), {isolation: 'trial user 61003', limits: 'serve: not enforced: memory_mb 6144 (no controller)',
    probe: '', dispatch: ''});
  assert.deepEqual(howItRan([{name: 'run'}]), {isolation: '', limits: '', probe: '', dispatch: ''});  // an older worker says nothing
  assert.deepEqual(howItRan(), {isolation: '', limits: '', probe: '', dispatch: ''});
  // A probe's answer and a dispatch check that could not decide are shown, with their reasons.
  const asked = howItRan([
    {name: 'ask', probe: {framework: 'torch', supported: false, reason: 'head_dim 512 > 256'}},
    {name: 'sdpa', dispatch: {status: 'unverified', param: 'backend', value: 'flash', reason: 'this node records no kernels'}},
  ]);
  assert.equal(asked.probe, 'ask: torch says unsupported: head_dim 512 > 256');
  assert.equal(asked.dispatch, 'sdpa: unverified (backend=flash): this node records no kernels');
});

it('shows only the rows of a matrix that fail, when asked', () => {
  const m = {rows: ['backend'], col_keys: ['H100', 'B200'], row_keys: [['a'], ['b'], ['c'], ['d']], cells: [
    {row: ['a'], col: 'H100', state: 'passed'}, {row: ['a'], col: 'B200', state: 'failed'},
    {row: ['b'], col: 'H100', state: 'passed'}, {row: ['b'], col: 'B200', state: 'skipped'},
    {row: ['c'], col: 'H100', state: 'mixed'}, {row: ['d'], col: 'H100', state: 'pending'}, {row: ['d'], col: 'B200', state: 'flaky'}]};
  const f = failingRows(m);
  assert.deepEqual(f.row_keys, [['a'], ['c'], ['d']]);
  assert.equal(f.cells.length, 5);
  assert.equal(m.row_keys.length, 4, 'the matrix itself is unchanged');
  assert.deepEqual(failingRows({row_keys: [['x']], cells: [{row: ['x'], state: 'passed'}]}).row_keys, []);
});
