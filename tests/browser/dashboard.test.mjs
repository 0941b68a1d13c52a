// The dashboard against a real daemon and real workers: a sweep of the ui-fixture suite runs on a
// 2×H200 (sm_90) node and a 1×RTX PRO 6000 (sm_120) node, then every page is opened and checked
// for what a person would look for. Screenshots go to build/browser-screenshots/.
import assert from 'node:assert/strict';
import {after, afterEach, before, describe, it} from 'node:test';
import {launch} from './lib/browser.mjs';
import {closePages, newPage, open, shot} from './lib/page.mjs';
import {finish, startStack, until} from './lib/stack.mjs';

const TARGETS = [{arch: 'sm_90'}, {arch: 'sm_120'}];
const H200 = 'NVIDIA H200 · sm_90 · x1';
const RTX = 'NVIDIA RTX PRO 6000 Blackwell · sm_120 · x1';

let stack;
let browser;
let first;  // the finished first sweep, as the API reports it

before(async () => {
  stack = await startStack();
  await stack.worker('h200');
  await stack.worker('sm120');
  const s = await stack.sweep({suite: 'ui-fixture', name: 'bring-up', targets: TARGETS});
  assert.equal(s.trials, 16);
  first = await stack.waitSweep(s.id);
  browser = await launch();
});

after(() => finish(browser, stack));

/** The cell of the sweep matrix for a row (backend, dtype) and a column. */
const cell = (page, backend, dtype, col) => page.evaluate(([b, d, c]) => {
  const grid = document.querySelector('.mx[role=table]');
  const cols = [...grid.querySelectorAll('.mx-head [role=columnheader]')].map((th) => th.textContent);
  for (const tr of grid.querySelectorAll('.mx-body[role=row]')) {
    const keys = [...tr.querySelectorAll('[role=rowheader]')].map((th) => th.textContent);
    if (keys[0] === b && keys[1] === d) {
      const td = tr.children[cols.indexOf(c)];
      return {cls: td.className, text: td.textContent, href: td.querySelector('a')?.getAttribute('href'),
        bg: getComputedStyle(td).backgroundColor};
    }
  }
  return null;
}, [backend, dtype, col]);

const rgb = (s) => s.match(/\d+/g).slice(0, 3).map(Number);

/** Elements whose style attribute sets anything but a custom property: a fixed look that belongs in app.css. */
const inlineLooks = (page) => page.evaluate(() => [...document.querySelectorAll('[style]')]
  .filter((el) => [...el.style].some((p) => !p.startsWith('--')))
  .map((el) => `<${el.tagName.toLowerCase()} class="${el.getAttribute('class') || ''}" style="${el.getAttribute('style')}">`));

/** The sweeps' `failed` column of the daemon's own CSV export, by sweep id. */
async function failedByCsv() {
  const csv = await (await fetch(`${stack.url}/api/v1/sweeps?format=csv`)).text();
  const [head, ...lines] = csv.trim().split('\n').map((l) => l.split(','));
  const col = head.indexOf('failed');
  assert.ok(col > 0, `a failed column in ${head}`);
  return new Map(lines.map((f) => [Number(f[0]), Number(f[col])]));
}

describe('dashboard', () => {
  afterEach(closePages);

  it('lists sweeps with progress bars and verdict counts', async () => {
    const page = await newPage(browser.context);
    await open(page, stack.url, '#/sweeps', 'sweeps');
    const row = page.locator(`tr[data-sweep="${first.id}"]`);
    assert.match(await row.locator('[data-testid=done-total]').textContent(), /16\/16 done · 100%/);
    for (const [v, n] of Object.entries(first.by_verdict))
      assert.equal(await row.locator(`.count[data-verdict="${v}"] b`).textContent(), String(n), `count of ${v}`);
    assert.ok(await row.locator('.progress .seg-passed.segf-ok').count(), 'a green segment for passed trials');
    assert.ok(await row.locator('.progress .seg-crashed.segf-bad').count(), 'a red segment for crashed trials');
    await shot(page, '01-sweeps');
    assert.deepEqual(page.errors, []);
    await page.close();
  });

  it('says how a finished sweep ended, and counts one trial in the singular', async () => {
    // One trial that passes; delay=1 keeps it out of the history test's config.
    const one = await stack.sweep({suite: 'ui-fixture', name: 'one trial', reuse: false, targets: [{arch: 'sm_90'}],
      parameters: {backend: ['cutlass'], dtype: ['bf16'], delay: ['1']}});
    assert.equal(one.trials, 1);
    await stack.waitSweep(one.id);
    // What "failed" means is the daemon's (its CSV export), not this page's.
    const failed = await failedByCsv();
    assert.ok(failed.get(first.id) > 0, 'the fixture sweep has failures');
    assert.equal(failed.get(one.id), 0);

    const page = await newPage(browser.context);
    await open(page, stack.url, '#/sweeps', 'sweeps');
    const state = (id) => page.locator(`tr[data-sweep="${id}"] [data-testid=sweep-state]`).textContent();
    assert.equal(await state(first.id), `finished · ${failed.get(first.id)} failed`);
    assert.equal(await state(one.id), 'finished', 'no failure count when nothing failed');
    assert.equal(await page.locator(`tr[data-sweep="${one.id}"] [role=progressbar]`).getAttribute('aria-label'), '1 of 1 trial done');
    assert.equal(await page.locator(`tr[data-sweep="${first.id}"] [role=progressbar]`).getAttribute('aria-label'), '16 of 16 trials done');

    await open(page, stack.url, `#/sweeps/${first.id}`, 'sweep');
    assert.equal(await page.locator('[data-testid=sweep-state]').textContent(), `finished · ${failed.get(first.id)} failed`);
    assert.equal(await page.locator('[data-testid=trials-shown]').textContent(), '16 trials shown');
    await open(page, stack.url, `#/sweeps/${one.id}`, 'sweep');
    assert.equal(await page.locator('[data-testid=sweep-state]').textContent(), 'finished');
    assert.equal(await page.locator('[data-testid=trials-shown]').textContent(), '1 trial shown');
    assert.deepEqual(page.errors, []);
    await page.close();
  });

  it('keeps the Took column on one line when the trial table is squeezed', async () => {
    const page = await newPage(browser.context);
    await page.setViewportSize({width: 480, height: 900});
    await open(page, stack.url, `#/sweeps/${first.id}`, 'sweep');
    const rows = await page.locator('table[aria-label=Trials] tbody tr').evaluateAll((trs) => trs.map((tr) => {
      // Line boxes of a cell's text: one per distinct top among its fragments.
      const lines = (el) => {
        const r = document.createRange();
        r.selectNodeContents(el);
        return new Set([...r.getClientRects()].filter((b) => b.width > 0).map((b) => Math.round(b.top))).size;
      };
      const took = tr.querySelector('[data-testid=took]');
      return {config: lines(tr.querySelector('[data-testid=config]')), took: lines(took), text: took.textContent};
    }));
    // Only meaningful if the table really is squeezed: the config column wraps at this width.
    assert.ok(rows.some((r) => r.config > 1), 'the config column wraps at 480 px');
    const timed = rows.filter((r) => r.text);
    assert.ok(timed.length, 'some trials have a duration');
    for (const r of timed) assert.equal(r.took, 1, `"${r.text}" on one line`);
    await shot(page, '12-sweep-narrow');
    assert.deepEqual(page.errors, []);
    await page.close();
  });

  it('keeps both key columns of the matrix in view when it scrolls sideways', async () => {
    const page = await newPage(browser.context);
    await page.setViewportSize({width: 480, height: 900});
    await open(page, stack.url, `#/sweeps/${first.id}`, 'sweep');
    const at = () => page.evaluate(() => {
      const wrap = document.querySelector('.matrix-wrap');
      const [a, b] = document.querySelectorAll('.mx-body [role=rowheader]');
      const x = (el) => Math.round(el.getBoundingClientRect().left - wrap.getBoundingClientRect().left - wrap.clientLeft);
      return {a: x(a), b: x(b), aw: Math.round(a.getBoundingClientRect().width), scroll: wrap.scrollLeft};
    });
    const before = await at();
    await page.locator('.matrix-wrap').evaluate((w) => w.scrollTo(w.scrollWidth, 0));
    const after = await at();
    assert.ok(after.scroll > 100, `the matrix scrolls at 480 px (${after.scroll} px)`);
    assert.deepEqual([after.a, after.b], [before.a, before.b], 'the keys stay where they were');
    assert.equal(after.b, after.a + after.aw, 'the second key sits right after the first');
    assert.deepEqual(page.errors, []);
    await page.close();
  });

  it('shows a sweep: counts, prune savings, matrix coloured by verdict with reasons, clusters, trials', async () => {
    const page = await newPage(browser.context);
    await open(page, stack.url, `#/sweeps/${first.id}`, 'sweep');
    assert.equal(await page.locator('h1').textContent(), 'bring-up');
    // How many trials pruning saves depends on which ran first; the page must say what the API says.
    assert.ok(first.pruned.trials >= 1, 'the fixture makes the scheduler prune');
    assert.match(await page.locator('[data-testid=pruned]').textContent(), new RegExp(`Pruning skipped ${first.pruned.trials} trials?`));
    // Columns are hardware classes, rows backend × dtype.
    const heads = await page.locator('.mx-head [role=columnheader]').allTextContents();
    assert.deepEqual(heads.slice(0, 2), ['backend', 'dtype']);
    assert.ok(heads.includes(H200) && heads.includes(RTX), `hardware columns in ${heads}`);
    assert.equal(await page.locator('.mx-body[role=row]').count(), 8);

    const ok = await cell(page, 'cutlass', 'bf16', H200);
    assert.match(ok.cls, /v-passed/);
    assert.match(ok.text, /✓ [\d,]+(\.\d+)? tok\/s/);
    const [r, g, b] = rgb(ok.bg);
    assert.ok(g > r && g > b, `passed cell is green, got ${ok.bg}`);
    // trtllm refuses sm_120 and triton crashes everywhere; which of a pair runs first (and which is
    // then skipped as already settled) is up to the scheduler, so each pair holds one of two verdicts.
    const refused = [await cell(page, 'trtllm', 'bf16', RTX), await cell(page, 'trtllm', 'fp8', RTX)];
    assert.ok(refused.some((c) => /v-unsupported/.test(c.cls)), 'trtllm is unsupported on sm_120');
    for (const c of refused) {
      assert.match(c.cls, /v-(unsupported|skipped)/);
      assert.match(c.text, /^(⚠ unsupported|⊘ skipped: unsupported): .*SM100/, 'the verdict and the reason are in the cell');
    }
    const triton = [];
    for (const d of ['bf16', 'fp8']) for (const hw of [H200, RTX]) triton.push(await cell(page, 'triton', d, hw));
    for (const c of triton) assert.match(c.cls, /v-(crashed|skipped)/);
    const crash = triton.find((c) => /v-crashed/.test(c.cls));
    assert.match(crash.text, /^✗ crashed: illegal memory access/, 'the verdict, then its reason');
    const [cr, cg] = rgb(crash.bg);
    assert.ok(cr > cg, `crashed cell is red, got ${crash.bg}`);
    if (first.by_verdict.skipped) assert.ok([...refused, ...triton].some((c) => /v-skipped/.test(c.cls)), 'a skipped cell');
    const garbage = await cell(page, 'cudnn', 'fp8', H200);
    assert.match(garbage.cls, /v-wrong_output/);
    assert.match(garbage.text, /^✗ wrong output(: garbage| in stage bench)/);

    // Counts next to the progress bar match the API; the clusters name the explaining parameter.
    for (const [v, n] of Object.entries(first.by_verdict))
      assert.equal(await page.locator(`section .count[data-verdict="${v}"] b`).textContent(), String(n));
    const crashCluster = page.locator('tr[data-signature="crashed:illegal_memory_access"]');
    assert.match(await crashCluster.textContent(), /backend = triton/);
    assert.equal(await page.locator('table[aria-label=Trials] tbody tr').count(), 16);
    await shot(page, '02-sweep');

    // A verdict chip filters the trial list (and the URL says so).
    await page.locator('section .count[data-verdict="crashed"]').click();
    await page.waitForSelector('html[data-ready="sweep"]');
    assert.match(page.url(), /verdict=crashed/);
    await until('the filtered trial list', async () => (await page.locator('table[aria-label=Trials] tbody tr').count()) === first.by_verdict.crashed);

    // A cell links to its trial.
    await page.goto(`${stack.url}/#/sweeps/${first.id}`);
    await page.waitForSelector('html[data-ready="sweep"]');
    await page.click(`.mx a[href="${garbage.href}"]`);
    await page.waitForSelector('html[data-ready="trial"]');
    assert.equal(await page.locator('[data-testid=verdict]').first().textContent(), 'wrong output');
    assert.deepEqual(page.errors, []);
    await page.close();
  });

  it('shows only the matrix rows that fail, kept in the URL', async () => {
    const page = await newPage(browser.context);
    await open(page, stack.url, '#/matrix?suite=ui-fixture&rows=backend,dtype', 'matrix');
    await page.waitForSelector('.mx[role=table] .mx-body');
    const all = await page.locator('.mx-body[role=row]').count();
    await page.locator('[data-testid=only-failing]').check();
    await page.waitForURL(/only=failing/);
    await page.waitForSelector('html[data-ready="matrix"]');
    await until('fewer rows', async () => (await page.locator('.mx-body[role=row]').count()) < all);
    // Every row left holds a failure, and none that was left out did.
    const rows = await page.locator('.mx-body[role=row]').evaluateAll((trs) => trs.map((tr) =>
      [...tr.querySelectorAll('[role=cell]')].some((td) => /\bvf-(bad|warn|infra)\b|\bmx-(mixed|flaky)\b/.test(td.className))));
    assert.ok(rows.length > 0 && rows.every(Boolean), `rows: ${rows}`);
    assert.ok(await page.locator('[data-testid=only-failing]').isChecked());
    assert.deepEqual(page.errors, []);
    await page.close();
  });

  it('explores the matrix with other rows and columns, kept in the URL', async () => {
    const page = await newPage(browser.context);
    await open(page, stack.url, '#/matrix?suite=ui-fixture', 'matrix');
    await page.selectOption('select[name=cols]', 'dtype');
    await page.waitForURL(/cols=dtype/);
    await page.waitForSelector('html[data-ready="matrix"]');
    await until('dtype columns', async () => {
      const heads = await page.locator('.mx-head [role=columnheader]').allTextContents();
      return heads.includes('bf16') && heads.includes('fp8');
    });
    const url = page.url();
    await page.reload();
    await page.waitForSelector('html[data-ready="matrix"]');
    assert.equal(await page.locator('select[name=cols]').inputValue(), 'dtype', 'a reload shows the same view');
    assert.ok(url.includes('rows='), url);
    await shot(page, '03-matrix-explorer');
    assert.deepEqual(page.errors, []);
    await page.close();
  });

  it('shows a trial: stages, metrics, throughput chart, log, evidence link', async () => {
    const {items} = await stack.get(`/api/v1/trials?sweep=${first.id}&verdict=skipped`);
    const skipped = items[0];
    const page = await newPage(browser.context);
    await open(page, stack.url, `#/trials/${skipped.id}`, 'trial');
    await page.click('[data-testid=evidence-trial]');
    await page.waitForSelector('html[data-ready="trial"]');
    assert.match(page.url(), new RegExp(`#/trials/${skipped.evidence_trial}$`));

    const passed = (await stack.get(`/api/v1/trials?sweep=${first.id}&verdict=passed&param.backend=cutlass`)).items[0];
    await open(page, stack.url, `#/trials/${passed.id}`, 'trial');
    assert.equal(await page.locator('tr[data-stage]').count(), 2);
    assert.match(await page.locator('tr[data-stage=bench]').textContent(), /passed/);
    assert.match(await page.locator('tr[data-metric="output_tok_s@c64"]').textContent(), /tok\/s/);
    assert.equal(await page.locator('[data-testid="chart-output_tok_s"] svg circle').count(), 3, 'one point per concurrency');
    await page.waitForSelector('[data-testid=log-status][data-state=done]');
    assert.match(await page.locator('[data-testid=log]').textContent(), /=== trial \d+: passed/);
    await shot(page, '04-trial');
    assert.deepEqual(page.errors, []);
    await page.close();
  });

  it('lists nodes with their GPUs, state and heartbeat age', async () => {
    const page = await newPage(browser.context);
    await open(page, stack.url, '#/nodes', 'nodes');
    assert.equal(await page.locator('tr[data-node=h200] li[data-gpu]').count(), 2);
    assert.equal(await page.locator('tr[data-node=sm120] li[data-gpu]').count(), 1);
    assert.match(await page.locator('tr[data-node=sm120]').textContent(), /sm_120/);
    assert.equal(await page.locator('tr[data-node=h200] [data-testid=node-state]').textContent(), 'online');
    assert.match(await page.locator('tr[data-node=h200] [data-testid=heartbeat]').textContent(), /s ago/);
    assert.equal(await page.locator('tr[data-node=h200] [data-testid=software]').textContent(), 'cuda 13.0 · driver 580.159.04');
    assert.deepEqual(page.errors, []);
    await page.close();
  });

  it('says a node without driver or CUDA versions runs unknown software', async () => {
    // No GPUs, so it never takes a trial from the other tests' sweeps.
    await stack.worker('bare');
    const {items} = await stack.get('/api/v1/nodes');
    const fp = items.find((n) => n.name === 'bare').fingerprint;
    // Its versions are empty; the kernel recorder, its trials' isolation and its stage limits are
    // capabilities beside them (all unavailable here: the harness's folders are closed to other users).
    const {kernel_recorder: recorder, isolation, limits, ...versions} = fp;
    assert.ok(Object.values(versions).every((v) => v === ''), `the worker reports empty versions: ${JSON.stringify(fp)}`);
    assert.match(recorder, /^unavailable/);
    assert.match(isolation, /^(off: |trial users)/);
    assert.match(limits, /^(not )?enforced$/);
    const page = await newPage(browser.context);
    await open(page, stack.url, '#/nodes', 'nodes');
    assert.equal(await page.locator('tr[data-node=bare] [data-testid=software]').textContent(), 'unknown');
    assert.match(await page.locator('tr[data-node=bare]').textContent(), /CPU only/);
    assert.match(await page.locator('[data-testid=nodes-summary]').textContent(), /^3 nodes, 3 GPUs: /);
    await shot(page, '05-nodes');
    assert.deepEqual(page.errors, []);
    await page.close();
  });

  it('shows a GPU its worker holds back, with the reason and the pids', async () => {
    // A node that speaks the worker protocol itself: it says GPU 1 is held back and asks for nothing.
    const gpu = {name: 'NVIDIA H200', compute_capability: '9.0', memory_mb: 143771};
    const reg = await stack.post('/api/v1/nodes/register', {name: 'held',
      inventory: {gpus: [{...gpu, index: 0, uuid: 'GPU-held-0'}, {...gpu, index: 1, uuid: 'GPU-held-1'}]}});
    const reason = 'GPU 1 still has processes after its trial: 4242 (python3)';
    const r = await fetch(`${stack.url}/api/v1/nodes/${reg.node}/lease`, {method: 'POST', headers: {'Content-Type': 'application/json'},
      body: JSON.stringify({free_gpus: [], held_back: [{gpu: 1, reason, pids: [4242]}], wait_s: 0})});
    assert.equal(r.status, 204);
    const page = await newPage(browser.context);
    await open(page, stack.url, '#/nodes', 'nodes');
    const held = page.locator('tr[data-node=held] li[data-gpu="1"] [data-testid=held-back]');
    await held.waitFor();
    assert.match(await held.textContent(), /held back/);
    assert.equal(await held.locator('.held-reason').textContent(), reason);
    assert.equal(await page.locator('tr[data-node=held] li[data-gpu="0"] [data-testid=held-back]').count(), 0);
    assert.match(await page.locator('[data-testid=nodes-summary]').textContent(), /; 1 GPU held back$/);
    await shot(page, '05b-nodes-held-back');
    assert.deepEqual(page.errors, []);
    await page.close();
  });

  it('shows failure clusters and regressions', async () => {
    const page = await newPage(browser.context);
    await open(page, stack.url, '#/clusters?suite=ui-fixture', 'clusters');
    const sigs = await page.locator('tr[data-signature]').evaluateAll((trs) => trs.map((t) => t.dataset.signature));
    assert.ok(sigs.includes('crashed:illegal_memory_access'), sigs.join());
    assert.ok(sigs.some((s) => s.startsWith('unsupported:')), sigs.join());
    assert.match(await page.locator('tr[data-signature="crashed:illegal_memory_access"] .badge').textContent(), /crashed/);
    await page.waitForSelector('[data-testid=no-regressions], table[aria-label=Regressions]');
    await shot(page, '06-clusters');
    assert.deepEqual(page.errors, []);
    await page.close();
  });

  it('sets no fixed look inline on any page (only computed values, as custom properties)', async () => {
    const passed = (await stack.get(`/api/v1/trials?sweep=${first.id}&verdict=passed&param.backend=cutlass`)).items[0];
    const key = encodeURIComponent('backend=cutlass&delay=0&dtype=bf16');
    const page = await newPage(browser.context);
    for (const [hash, ready, wait] of [
      ['#/sweeps', 'sweeps', '.progress > span'],
      [`#/sweeps/${first.id}`, 'sweep', '.mx[data-complete=true]'],
      ['#/matrix?suite=ui-fixture', 'matrix', '.mx[data-complete=true]'],
      [`#/trials/${passed.id}`, 'trial', '.chart-legend i'],
      ['#/nodes', 'nodes', 'li[data-gpu]'],
      ['#/clusters?suite=ui-fixture', 'clusters', 'tr[data-signature] .progress > span'],
      [`#/history?suite=ui-fixture&config=${key}`, 'history', '[data-testid=throughput-chart] .chart-legend i'],
    ]) {
      await open(page, stack.url, hash, ready);
      await page.waitForSelector(wait);
      assert.deepEqual(await inlineLooks(page), [], hash);
    }
    // The computed values still reach the page through custom properties: legend swatches have
    // their series' colour, and a finished sweep's bar segments fill the bar.
    const swatches = await page.locator('[data-testid=throughput-chart] .chart-legend i').evaluateAll((is) => is.map((i) => getComputedStyle(i).backgroundColor));
    assert.equal(new Set(swatches).size, swatches.length, `one colour per series: ${swatches}`);
    assert.ok(swatches.every((c) => c !== 'rgba(0, 0, 0, 0)'), `coloured swatches: ${swatches}`);
    await open(page, stack.url, '#/sweeps', 'sweeps');
    const [bar, segs] = await page.locator(`tr[data-sweep="${first.id}"] .progress`).evaluate((b) =>
      [b.clientWidth, [...b.children].reduce((a, s) => a + s.getBoundingClientRect().width, 0)]);
    assert.ok(Math.abs(bar - segs) < 2, `segments fill the bar of a finished sweep: ${segs} of ${bar} px`);
    assert.deepEqual(page.errors, []);
    await page.close();
  });

  it('updates the sweep list live over SSE and follows a running trial\'s log', async () => {
    const page = await newPage(browser.context);
    await open(page, stack.url, '#/sweeps', 'sweeps');
    await page.waitForSelector('#live[data-state=live]');
    await page.evaluate(() => (window.__sameDocument = true));
    // Submitted behind the page's back: it must appear and progress without a reload.
    const s2 = await stack.sweep({suite: 'ui-fixture', name: 'live one', reuse: false, targets: TARGETS,
      parameters: {backend: ['cutlass'], delay: ['2']}});
    const row = page.locator(`tr[data-sweep="${s2.id}"]`);
    await row.waitFor({timeout: 10000});
    assert.match(await row.textContent(), /live one/);
    await until('the new sweep to show progress', async () => /[1-4]\/4 done/.test(await row.locator('[data-testid=done-total]').textContent()), {timeoutMs: 60000});
    await shot(page, '07-sweeps-live');
    await until('the new sweep to finish on screen', async () => /4\/4 done/.test(await row.locator('[data-testid=done-total]').textContent()), {timeoutMs: 60000});
    assert.equal(await page.evaluate(() => window.__sameDocument), true, 'updated in place, not reloaded');

    // A trial followed from queued to done: its log grows while it runs, then the verdict lands.
    const s3 = await stack.sweep({suite: 'ui-fixture', name: 'log tail', reuse: false, targets: [{arch: 'sm_90'}],
      parameters: {backend: ['cutlass'], dtype: ['bf16'], delay: ['3']}});
    const trial = (await stack.get(`/api/v1/trials?sweep=${s3.id}`)).items[0];
    await open(page, stack.url, `#/trials/${trial.id}`, 'trial');
    const log = page.locator('[data-testid=log]');
    await until('log lines while the trial runs', async () => /step 1\/3/.test(await log.textContent()), {timeoutMs: 30000});
    const whileRunning = await page.locator('[data-testid=state]').textContent();
    assert.notEqual(whileRunning, 'done', 'the log tail shows output before the trial finishes');
    await shot(page, '08-trial-log-tail');
    await page.waitForSelector('[data-testid=log-status][data-state=done]', {timeout: 30000});
    assert.match(await log.textContent(), /step 3\/3[\s\S]*=== trial \d+: passed/);
    await until('the verdict to arrive over SSE', async () => (await page.locator('[data-testid=verdict]').first().textContent()) === 'passed');
    assert.deepEqual(page.errors, []);
    await page.close();
  });

  it('notes targets no node can run, and cancels the sweep from the page', async () => {
    const s = await stack.sweep({suite: 'ui-fixture', name: 'no such hardware', targets: [{arch: 'sm_100'}],
      parameters: {backend: ['cutlass'], dtype: ['bf16']}});
    const page = await newPage(browser.context);
    page.on('dialog', (d) => d.accept());
    await open(page, stack.url, `#/sweeps/${s.id}`, 'sweep');
    // The target, the requirement no node meets (the suite's GPU and the target's arch) and the nodes.
    const {unmatched_targets: [u]} = await stack.get(`/api/v1/sweeps/${s.id}`);
    assert.equal(u.requires, 'requires.gpus: 1, arch: sm_100');
    const li = page.locator('[data-testid=unmatched] li');
    assert.equal(await li.locator('code').first().textContent(), 'arch=sm_100');
    assert.equal(await li.locator('[data-testid=requires]').textContent(), u.requires);
    assert.equal(await li.locator('[data-testid=nodes]').textContent(), u.nodes);
    // In no particular order: the daemon lists them as it holds them.
    assert.match(u.nodes, /(^|, )h200 \(NVIDIA H200 · sm_90 · x2\)(, |$)/);
    assert.match(u.nodes, /(^|, )sm120 \(NVIDIA RTX PRO 6000 Blackwell · sm_120 · x1\)(, |$)/);
    await shot(page, '09-sweep-unmatched');
    await page.getByRole('button', {name: 'Cancel sweep'}).click();
    await until('the page to show the sweep cancelled', async () => (await page.locator('[data-testid=sweep-state]').textContent()) === 'cancelled');
    assert.equal(await page.locator('section .count[data-verdict=cancelled] b').textContent(), '1');
    assert.deepEqual(page.errors, []);
    await page.close();
  });

  it('charts one config over time per hardware class', async () => {
    const page = await newPage(browser.context);
    const key = 'backend=cutlass&delay=0&dtype=bf16';
    await open(page, stack.url, `#/history?suite=ui-fixture&config=${encodeURIComponent(key)}`, 'history');
    assert.equal(await page.locator('[data-testid=config-key]').textContent(), key);
    await page.waitForSelector('[data-testid=metric-chart] svg circle');
    assert.equal(await page.locator('[data-testid=metric-chart] svg circle').count(), 2, 'one run on each hardware class');
    await page.waitForSelector('[data-testid=throughput-chart] svg polyline');
    assert.equal(await page.locator('[data-testid=throughput-chart] svg polyline').count(), 2, 'a throughput line per hardware class');
    assert.equal(await page.locator('table[aria-label="Runs of this config"] tbody tr').count(), 2);
    await shot(page, '10-history');
    assert.deepEqual(page.errors, []);
    await page.close();
  });

  it('says which node out of service a waiting sweep needs, and how it is resumed', async () => {
    const nodes = (await stack.get('/api/v1/nodes')).items;
    const sm120 = nodes.find((n) => n.name === 'sm120');
    await stack.post(`/api/v1/nodes/${sm120.id}/quarantine`, {reason: 'preflight failed: memory bandwidth 0.4 TB/s'});
    const s = await stack.sweep({suite: 'ui-fixture', name: 'waits for sm120', targets: [{arch: 'sm_120'}],
      parameters: {backend: ['cutlass'], dtype: ['bf16']}, reuse: false});
    const page = await newPage(browser.context);
    await open(page, stack.url, `#/sweeps/${s.id}`, 'sweep');
    const li = page.locator(`[data-testid=held-out] li[data-node="${sm120.id}"]`);
    await li.waitFor();
    assert.equal(await li.locator('a').textContent(), 'sm120');
    assert.equal(await li.locator('[data-testid=held-out-reason]').textContent(), 'preflight failed: memory bandwidth 0.4 TB/s');
    assert.equal(await li.locator('code').textContent(), `gauntlet nodes resume ${sm120.id}`);
    assert.match(await li.textContent(), /sm120 is quarantined/);
    await shot(page, '09b-sweep-held-out');
    // Resumed, the sweep runs and the note goes.
    await stack.post(`/api/v1/nodes/${sm120.id}/resume`, {});
    await stack.waitSweep(s.id);
    await until('the note to go', async () => (await page.locator('[data-testid=held-out]').count()) === 0);
    assert.deepEqual(page.errors, []);
    await page.close();
  });
});
