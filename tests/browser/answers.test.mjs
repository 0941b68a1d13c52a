// Answers you can trust: matrix cells whose configs disagree look it and say why. The ui-mixed
// fixture suite (fixtures/suites/mixed_stage.py) makes each kind of cell for real: with the rows
// set to `kernel`, the hidden `batch` decides the outcome, so `split` is mixed (batch 64 runs out
// of memory), `flaky` is flaky (batch 8 fails on every run after its first: `repeats: 2`),
// `steady` passes with a throughput range and `broken` fails. Also: reuse counted as reuse, a
// target no node can run named by its requirement, and the explorer's suite-version picker.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import {after, afterEach, before, describe, it} from 'node:test';
import {launch} from './lib/browser.mjs';
import {closePages, newPage, open, shot} from './lib/page.mjs';
import {finish, FIXTURES, startStack, until} from './lib/stack.mjs';

const H200 = 'NVIDIA H200 · sm_90 · x1';
const LAYOUT = 'rows=kernel&cols=hardware';

let stack;
let browser;
let mixed;  // the finished ui-mixed sweep (every kernel × batch, twice), as the API reports it

before(async () => {
  stack = await startStack();
  // Where the flaky kernel counts its runs: fresh per stack, so its first run passes.
  const state = path.join(stack.dir, 'flaky-state');
  fs.mkdirSync(state);
  await stack.worker('h200', 'h200', {env: {GAUNTLET_FIXTURE_STATE: state}});
  // No reuse: the second repeat of a config must run, or nothing can be flaky.
  const s = await stack.sweep({suite: 'ui-mixed', name: 'disagreements', targets: [{arch: 'sm_90'}], repeats: 2, reuse: false});
  assert.equal(s.trials, 24);
  mixed = await stack.waitSweep(s.id);
  browser = await launch();
  await browser.context.grantPermissions(['clipboard-read', 'clipboard-write'], {origin: stack.url});
});

after(() => finish(browser, stack));

/** Every cell of the matrix on the page: row keys, column, classes, text. */
const cells = (page) => page.evaluate(() => {
  const grid = document.querySelector('.mx[role=table]');
  const cols = [...grid.querySelectorAll('.mx-head [role=columnheader]')].map((th) => th.textContent);
  const out = [];
  for (const tr of grid.querySelectorAll('.mx-body[role=row]')) {
    const keys = [...tr.querySelectorAll('[role=rowheader]')].map((th) => th.textContent);
    [...tr.children].forEach((td, i) => {
      if (td.getAttribute('role') === 'cell') out.push({row: keys.join(' / '), col: cols[i], cls: td.className, text: td.textContent});
    });
  }
  return out;
});

/** One cell's classes, text and computed look, by row key and column. */
const cell = (page, row, col) => page.evaluate(([r, c]) => {
  const grid = document.querySelector('.mx[role=table]');
  const cols = [...grid.querySelectorAll('.mx-head [role=columnheader]')].map((th) => th.textContent);
  for (const tr of grid.querySelectorAll('.mx-body[role=row]')) {
    if (tr.querySelector('[role=rowheader]').textContent !== r) continue;
    const td = tr.children[cols.indexOf(c)];
    const st = getComputedStyle(td);
    return {cls: td.className, text: td.textContent, image: st.backgroundImage, outline: st.outlineStyle,
      link: td.querySelector('a')?.getAttribute('href') ?? null, button: !!td.querySelector('button.mx-open')};
  }
  return null;
}, [row, col]);

/** Clicks a mixed or flaky cell and waits for its breakdown dialog. */
async function openBreakdown(page, row) {
  await page.locator('.mx-body[role=row]', {has: page.locator(`[role=rowheader]:text-is("${row}")`)}).locator('button.mx-open').click();
  const dialog = page.locator('dialog[data-testid=breakdown][open]');
  await dialog.waitFor();
  return dialog;
}

/** The breakdown's rows: verdict → {configs, batch values, trials link}. */
const breakdownRows = (dialog) => dialog.locator('tbody tr[data-verdict]').evaluateAll((trs) => Object.fromEntries(trs.map((tr) =>
  [tr.dataset.verdict, {configs: tr.querySelector('[data-testid=configs]').textContent,
    batch: tr.querySelector('[data-param=batch]').textContent, link: tr.querySelector('[data-testid=trials-link]').getAttribute('href')}])));

const apiCell = async (query, row) => (await stack.get(`/api/v1/matrix?${query}`)).cells.find((c) => c.row.join(' / ') === row);

describe('answers you can trust', () => {
  afterEach(closePages);

  it('shows a mixed cell as mixed, and its breakdown names the hidden values per verdict', async () => {
    const page = await newPage(browser.context);
    await open(page, stack.url, `#/sweeps/${mixed.id}?${LAYOUT}`, 'sweep');
    const split = await cell(page, 'split', H200);
    assert.match(split.cls, /\bmx-mixed\b/);
    assert.doesNotMatch(split.cls, /\bmx-flaky\b/);
    // Split between passed's family and the most severe verdict's (out of memory: bad).
    assert.match(split.cls, /\bv-oom\b.*\blo-ok\b.*\bhi-bad\b/);
    assert.equal(split.text, '◐ mixed: 2/3 passed · ✗ out of memory 1');
    assert.match(split.image, /^linear-gradient/, `a split background: ${split.image}`);
    assert.ok(split.button && split.link == null, 'a mixed cell opens its breakdown rather than one trial');

    // Cells that agree keep their looks: a failed one its verdict colour and reason, linked to its trial.
    const broken = await cell(page, 'broken', H200);
    assert.match(broken.cls, /\bv-crashed\b/);
    assert.doesNotMatch(broken.cls, /mx-mixed|mx-flaky/);
    assert.equal(broken.text, '✗ crashed: illegal memory access · 6 runs');
    assert.equal(broken.image, 'none');
    assert.match(broken.link, /^#\/trials\/\d+$/);
    await shot(page, '13-matrix-mixed');

    const dialog = await openBreakdown(page, 'split');
    assert.equal(await dialog.locator('h2').textContent(), `kernel = split · ${H200}`);
    assert.match(await dialog.locator('[data-testid=breakdown-summary]').textContent(), /^Mixed: 2 of 3 configs passed; the matrix hides batch\. Runs: 4 passed, 2 out of memory\.$/);
    const rows = await breakdownRows(dialog);
    assert.deepEqual(Object.keys(rows), ['passed', 'oom'], 'one row per verdict, in the vocabulary\'s order');
    assert.equal(rows.passed.batch, '1, 8');
    assert.equal(rows.passed.configs, '2');
    assert.equal(rows.oom.batch, '64');
    assert.equal(rows.oom.configs, '1');
    await shot(page, '14-matrix-breakdown');

    // The out-of-memory row links to exactly its trials: both runs of batch 64.
    const link = new URLSearchParams(rows.oom.link.split('?')[1]);
    assert.deepEqual(Object.fromEntries(link), {suite: 'ui-mixed', sweep: String(mixed.id), 'param.kernel': 'split',
      hardware: H200, verdict: 'oom', 'param.batch': '64'});
    await dialog.locator('tr[data-verdict=oom] [data-testid=trials-link]').click();
    await page.waitForSelector('html[data-ready="trials"]');
    const configs = await page.locator('table[aria-label=Trials] [data-testid=config]').allTextContents();
    assert.deepEqual(configs, ['batch=64, kernel=split', 'batch=64, kernel=split']);
    assert.deepEqual(await page.locator('table[aria-label=Trials] tbody .badge').allTextContents(), ['out of memory', 'out of memory']);
    assert.equal(await page.locator('dialog[open]').count(), 0, 'the breakdown closed with the page it belonged to');
    assert.deepEqual(page.errors, []);
    await page.close();
  });

  it('marks a flaky cell flaky, unlike a mixed one, and names the config', async () => {
    const api = await apiCell(`sweep=${mixed.id}&${LAYOUT}`, 'flaky');
    assert.equal(api.state, 'flaky', 'the fixture made a flaky cell');
    const page = await newPage(browser.context);
    await open(page, stack.url, `#/sweeps/${mixed.id}?${LAYOUT}`, 'sweep');
    const flaky = await cell(page, 'flaky', H200);
    assert.match(flaky.cls, /\bmx-flaky\b.*\blo-ok\b.*\bhi-bad\b/);
    assert.doesNotMatch(flaky.cls, /\bmx-mixed\b/);
    // Which run of batch 8 finished last (the pass or the crash) is up to the two GPUs, so how many
    // configs count as passed comes from the API; the crash is named either way.
    // The measured pass rate of the cell's runs leads (issue 21), then the verdicts its runs got.
    assert.equal(flaky.text, `≈ flaky: ${api.pass_rate.passed}/${api.pass_rate.runs} runs passed · ✗ crashed ${api.counts.crashed}`);
    assert.match(flaky.image, /^repeating-linear-gradient/, `stripes, not the mixed split: ${flaky.image}`);
    assert.equal(flaky.outline, 'dashed');
    assert.ok(flaky.button);
    assert.equal(await page.locator('.legend .mx-flaky').count(), 1, 'the legend explains the flaky look');
    assert.equal(await page.locator('.legend .mx-mixed').count(), 1, 'and the mixed one');

    const dialog = await openBreakdown(page, 'flaky');
    assert.match(await dialog.locator('[data-testid=breakdown-summary]').textContent(), /^Flaky: [23] of 3 configs passed; .* Runs: 5 passed, 1 crashed\.$/);
    const named = await dialog.locator('[data-testid=flaky-config]').allTextContents();
    assert.equal(named.length, 1);
    assert.match(named[0], /^batch=8: 1\/2 passed = 50% \(95% Wilson interval \d+%–\d+%\); every run, latest trial #\d+$/);
    const rows = await breakdownRows(dialog);
    const eight = Object.keys(rows).find((v) => rows[v].batch.split(', ').includes('8'));
    assert.equal(eight, api.breakdown.find((b) => b.values.batch.includes('8')).verdict, 'batch 8 under its latest verdict');
    // "every run" lists both of batch 8's runs: one passed, one crashed.
    await dialog.locator('[data-testid=flaky-config] a', {hasText: 'every run'}).click();
    await page.waitForSelector('html[data-ready="trials"]');
    const verdicts = await page.locator('table[aria-label=Trials] tbody .badge').allTextContents();
    assert.deepEqual(verdicts.sort(), ['crashed', 'passed']);
    assert.deepEqual(page.errors, []);
    await page.close();
  });

  it('shows a passed cell\'s key metric as min–max over its configs, one number when they agree', async () => {
    const page = await newPage(browser.context);
    await open(page, stack.url, `#/sweeps/${mixed.id}?${LAYOUT}`, 'sweep');
    const steady = await cell(page, 'steady', H200);
    assert.match(steady.cls, /\bv-passed\b/);
    assert.doesNotMatch(steady.cls, /mx-mixed|mx-flaky/);
    assert.equal(steady.text, '✓ 100–6,400 tok/s · 6 runs');
    assert.match(steady.link, /^#\/trials\/\d+$/);
    // One config per cell (columns by batch): min and max are its one value.
    await open(page, stack.url, `#/sweeps/${mixed.id}?rows=kernel&cols=batch`, 'sweep');
    assert.equal((await cell(page, 'steady', '8')).text, '✓ 800 tok/s · 2 runs');
    assert.equal((await cell(page, 'split', '1')).text, '✓ 50 tok/s · 2 runs');
    assert.deepEqual(page.errors, []);
    await page.close();
  });

  it('shows each cell the same way on the sweep page and in the matrix explorer', async () => {
    const page = await newPage(browser.context);
    const views = {};
    // The explorer over all sweeps reads the daemon's per-cell index, not this sweep's trials; while
    // this is the suite's only sweep the two must agree, and so must what the pages draw.
    for (const [name, hash, ready] of [['sweep page', `#/sweeps/${mixed.id}?${LAYOUT}`, 'sweep'],
      ['explorer, this sweep', `#/matrix?suite=ui-mixed&sweep=${mixed.id}&${LAYOUT}`, 'matrix'],
      ['explorer, all sweeps', `#/matrix?suite=ui-mixed&${LAYOUT}`, 'matrix']]) {
      await open(page, stack.url, hash, ready);
      const dialog = await openBreakdown(page, 'split');
      views[name] = {cells: await cells(page), breakdown: await breakdownRows(dialog)};
      // Links differ by view (a sweep's trials or the suite's); what they say must not.
      for (const r of Object.values(views[name].breakdown)) delete r.link;
    }
    const base = views['sweep page'];
    assert.equal(base.cells.length, 4);
    assert.ok(base.cells.some((c) => /mx-mixed/.test(c.cls)) && base.cells.some((c) => /mx-flaky/.test(c.cls)), 'both kinds of disagreement are compared');
    assert.deepEqual(views['explorer, this sweep'], base);
    assert.deepEqual(views['explorer, all sweeps'], base);
    await shot(page, '15-explorer-mixed');
    assert.deepEqual(page.errors, []);
    await page.close();
  });

  it('copies the matrix as Markdown naming the GPU, its driver and CUDA, the node and the fingerprint', async () => {
    const page = await newPage(browser.context);
    await open(page, stack.url, `#/sweeps/${mixed.id}?${LAYOUT}`, 'sweep');
    await page.locator('[data-testid=copy-markdown]').click();
    await until('the copy', async () => (await page.locator('[data-testid=copy-status]').textContent()) === 'Copied as Markdown.');
    const md = (await page.evaluate(() => navigator.clipboard.readText())).split('\n');
    // fixtures/inventory-h200.json: 2 × H200 of 143,771 MiB, driver 580.159.04, CUDA 13.0; the worker is `h200`.
    assert.ok(md.includes(`- \`${H200}\`: 140 GiB, driver 580.159.04, CUDA 13.0 on \`h200\``), md.slice(0, 8).join('\n'));
    assert.ok(md.some((l) => l.startsWith('Software fingerprint: `{')), md.slice(0, 8).join('\n'));
    assert.ok(md.includes(`| kernel | ${H200} |`), md.join('\n'));
    assert.deepEqual(page.errors, []);
    await page.close();
  });

  it('counts reused verdicts as reused, not as pruned or skipped', async () => {
    // The same configs again, reuse on (the default): the first sweep's verdicts settle them.
    const s = await stack.sweep({suite: 'ui-mixed', name: 'again', targets: [{arch: 'sm_90'}], parameters: {kernel: ['steady']}});
    const done = await stack.waitSweep(s.id);
    assert.equal(done.reused, 3, 'the daemon reused all three');
    const page = await newPage(browser.context);
    await open(page, stack.url, `#/sweeps/${s.id}?${LAYOUT}`, 'sweep');
    assert.equal(await page.locator('[data-testid=reused]').textContent(),
      'Reused: 3 trials took the verdict of an earlier trial instead of running (reuse matches suite version, hardware class and fingerprint); they count under their verdicts above.');
    assert.equal(await page.locator('[data-testid=pruned]').count(), 0, 'reuse is not pruning');
    assert.equal(await page.locator('section .count[data-verdict=skipped]').count(), 0, 'nor skipping');
    assert.equal(await page.locator('section .count[data-verdict=passed] b').textContent(), '3');
    const from = await page.locator('table[aria-label=Trials] [data-testid=reused-from]').allTextContents();
    assert.equal(from.length, 3, 'each trial says which it reused');
    for (const f of from) assert.match(f, /^reused #\d+$/);
    // The matrix cell counts runs only: this sweep ran nothing, so no "N runs", its copies said apart.
    assert.equal((await cell(page, 'steady', H200)).text, '✓ 100–6,400 tok/s · 3 reused');
    // Across all sweeps: the first sweep's six runs, and the three copies apart from them.
    await open(page, stack.url, `#/matrix?suite=ui-mixed&${LAYOUT}`, 'matrix');
    assert.equal((await cell(page, 'steady', H200)).text, '✓ 100–6,400 tok/s · 6 runs · 3 reused');
    await shot(page, '16-sweep-reused');
    assert.deepEqual(page.errors, []);
    await page.close();
  });

  it('names the requirement no node meets, and the nodes, for a sweep without targets', async () => {
    // A suite that needs more GPUs than any node has, and a sweep that names no target: the page
    // printed its target as {} before.
    await stack.put('/api/v1/suites/ui-needs-four', {requires: {gpus: 4}, parameters: {x: ['1']},
      stages: [{name: 'run', kind: 'command', argv: ['true']}]});
    const s = await stack.sweep({suite: 'ui-needs-four'});
    const swept = await until('the target to be unmatched', async () => {
      const j = await stack.get(`/api/v1/sweeps/${s.id}`);
      return j.unmatched_targets?.length && j;
    });
    const u = swept.unmatched_targets[0];
    const page = await newPage(browser.context);
    await open(page, stack.url, `#/sweeps/${s.id}`, 'sweep');
    const note = page.locator('[data-testid=unmatched]');
    assert.equal(await note.locator('[data-testid=requires]').textContent(), 'requires.gpus: 4');
    assert.equal(await note.locator('[data-testid=nodes]').textContent(), u.nodes);
    assert.match(u.nodes, /^h200 \(NVIDIA H200 · sm_90 · x2\)$/, 'the API names the node and its hardware');
    assert.equal(await note.locator('li').textContent(),
      'The suite (the sweep names no target) needs requires.gpus: 4. Nodes: h200 (NVIDIA H200 · sm_90 · x2).');
    assert.doesNotMatch(await note.textContent(), /\{\}/);
    await shot(page, '17-sweep-unmatched-requirement');
    await stack.post(`/api/v1/sweeps/${s.id}/cancel`, {});
    assert.deepEqual(page.errors, []);
    await page.close();
  });

  it('picks the suite version in the explorer: latest by default, any one, or all, kept in the URL', async () => {
    // Version 2 of ui-mixed (PUT, so no suite folder: the fixture script by its absolute path) runs
    // one config; the earlier sweeps were all version 1.
    const v1 = JSON.parse(fs.readFileSync(path.join(FIXTURES, 'suites', 'ui-mixed.json'), 'utf8'));
    const dir = path.join(FIXTURES, 'suites');
    const abs = (st) => ({...st, argv: st.argv.map((a) => a.replace('{suite_dir}', dir))});
    const {version, ...rest} = v1;
    const v2 = await stack.put('/api/v1/suites/ui-mixed', {...rest, description: 'version 2', fingerprint: abs(v1.fingerprint),
      stages: v1.stages.map(abs)});
    assert.equal(v2.version, version + 1);
    const s = await stack.sweep({suite: 'ui-mixed', name: 'v2', targets: [{arch: 'sm_90'}], parameters: {kernel: ['steady'], batch: ['1']}});
    assert.equal((await stack.waitSweep(s.id)).suite_version, 2);

    const page = await newPage(browser.context);
    const rows = () => page.locator('.mx-body [role=rowheader]').allTextContents();
    await open(page, stack.url, `#/matrix?suite=ui-mixed&${LAYOUT}`, 'matrix');
    const picker = page.locator('select[name=suite_version]');
    assert.deepEqual(await picker.locator('option').allTextContents(), ['latest (v2)', 'v2', 'v1', 'all versions']);
    assert.equal(await picker.inputValue(), '', 'latest by default');
    assert.deepEqual(await rows(), ['steady'], 'the latest version holds only its own run');
    assert.match(await page.locator('[data-testid=matrix-note]').textContent(), /of version 2, across all sweeps/);
    assert.equal((await cell(page, 'steady', H200)).text, '✓ 100 tok/s');

    await picker.selectOption('1');
    await page.waitForURL(/suite_version=1/);
    await page.waitForSelector('html[data-ready="matrix"]');
    await until('version 1\'s rows', async () => (await rows()).length === 4);
    assert.match((await cell(page, 'split', H200)).cls, /\bmx-mixed\b/);
    assert.match(page.url(), /rows=kernel/, 'the other controls stay');
    await page.reload();
    await page.waitForSelector('html[data-ready="matrix"]');
    assert.equal(await picker.inputValue(), '1', 'a reload shows the same version');
    assert.deepEqual(await rows(), ['steady', 'split', 'flaky', 'broken']);

    await picker.selectOption('all');
    await page.waitForURL(/suite_version=all/);
    await page.waitForSelector('html[data-ready="matrix"]');
    await until('every version\'s rows', async () => (await rows()).length === 4);
    assert.match(await page.locator('[data-testid=matrix-note]').textContent(), /of all versions/);

    // A sweep has its own version: the picker is not offered as if it chose one.
    await open(page, stack.url, `#/matrix?suite=ui-mixed&sweep=${mixed.id}&${LAYOUT}`, 'matrix');
    assert.equal(await picker.isDisabled(), true);
    assert.match(await page.locator('[data-testid=matrix-note]').textContent(), /of version 1, in sweep/);
    await shot(page, '18-explorer-version');
    assert.deepEqual(page.errors, []);
    await page.close();
  });

  it('shows a bisection with its interval, its answer and each probe', async () => {
    const versions = Array.from({length: 40}, (_, i) => String(i + 1));
    const script = 'import sys\nv = int(sys.argv[1])\nif v >= 17:\n    print("RuntimeError: regressed in %d" % v, file=sys.stderr)\n    sys.exit(1)\nprint("ok")\n';
    await stack.put('/api/v1/suites/ui-bisect', {name: 'ui-bisect', parameters: {version: {values: versions, ordered: true}},
      stages: [{name: 'run', kind: 'command', argv: ['python3', '-c', script, '{version}']}]});
    const b = await stack.post('/api/v1/bisect', {suite: 'ui-bisect', parameter: 'version', good: '1', bad: '40'});
    assert.equal(b.kind, 'bisect');
    const done = await stack.waitSweep(b.id);
    assert.equal(done.search.first_bad, '17');
    const page = await newPage(browser.context);
    await open(page, stack.url, `#/sweeps/${b.id}`, 'sweep');
    const view = page.locator('[data-testid=search]');
    assert.match(await view.textContent(), /^Bisecting version from 1 \(good\) to 40 \(bad\): found/);
    assert.equal(await view.locator('[data-testid=first-bad]').textContent(), '17');
    assert.match(await view.locator('[data-testid=search-interval]').textContent(), /last good 16/);
    const steps = await view.locator('[data-testid=search-steps] li').allTextContents();
    assert.equal(steps.length, done.search.steps.length);
    assert.ok(steps.length <= 6, `${steps.length} probes`);
    assert.match(steps[0], /^version=20 crashed trial #\d+$/);
    await shot(page, '19-bisection');
    assert.deepEqual(page.errors, []);
    await page.close();
  });
});
