// The matrix at a real size, on a one-hardware fleet: 600 rows × 24 columns of results, all on `cpu`
// (a store written by the browser_fixture_store fixture: tests/support/browser_fixture_store.cc).
// The hardware is said once and a parameter takes the columns, every cell's words are whole, the
// headers stay in view however far it scrolls, the compact heat view fits the 24 columns on one
// screen with each cell's words on hover, "Copy as Markdown" copies what `gauntlet matrix --format
// markdown` prints, and a cell's rerun says how many trials it starts before it starts any.
import assert from 'node:assert/strict';
import {spawnSync} from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import {after, afterEach, before, describe, it} from 'node:test';
import {launch} from './lib/browser.mjs';
import {closePages, newPage, open, shot} from './lib/page.mjs';
import {ROOT, Stack, until} from './lib/stack.mjs';

const ROWS = 600;
const COLS = 24;
let stack;
let browser;
let sweep;

before(async () => {
  stack = new Stack({keep: !!process.env.GAUNTLET_KEEP});
  const fixture = process.env.GAUNTLET_FIXTURE_STORE || path.join(ROOT, 'build', 'bin', 'browser_fixture_store');
  assert.ok(fs.existsSync(fixture), `${fixture} is missing: build it (ninja -C build browser_fixture_store)`);
  const made = spawnSync(fixture, [path.join(stack.dir, 'gauntlet.db'), String(ROWS), String(COLS)], {encoding: 'utf8'});
  assert.equal(made.status, 0, made.stderr);
  await stack.start();
  sweep = (await stack.get('/api/v1/sweeps')).items.find((s) => s.suite === 'wide-grid');
  assert.ok(sweep, 'the fixture store holds the wide-grid sweep');
  browser = await launch();
  await browser.context.grantPermissions(['clipboard-read', 'clipboard-write'], {origin: stack.url});
});

after(async () => {
  await browser?.close();
  if (stack) {
    if (process.exitCode) console.log(`daemon log tail:\n${stack.log('serve')}`);
    await stack.stop();
  }
});

/** Waits until every row of the matrix is in the DOM (the rest are appended in idle time). */
const complete = (page) => page.waitForSelector('.mx[data-complete=true]', {timeout: 60000});

/** A cell by row key and column: its text, classes and whether its words overflow their box. */
const cellAt = (page, row, col) => page.evaluate(([r, c]) => {
  const grid = document.querySelector('.mx[role=table]');
  const cols = [...grid.querySelectorAll('.mx-head [role=columnheader]')].map((th) => th.textContent);
  const tr = [...grid.querySelectorAll('.mx-body[role=row]')].find((x) => x.querySelector('[role=rowheader]').textContent === r);
  const td = tr.children[cols.indexOf(c)];
  td.scrollIntoView({block: 'center', inline: 'center'});
  const inner = td.firstElementChild;
  return {text: td.textContent, cls: td.className, clipped: inner.scrollWidth > inner.clientWidth + 1 || inner.scrollHeight > inner.clientHeight + 1};
}, [row, col]);

/** Cells laid out in the scroll box now whose words do not fit their box: none may be cut. */
const clippedInView = (page) => page.evaluate(() => {
  const wrap = document.querySelector('.matrix-wrap').getBoundingClientRect();
  const out = [];
  for (const td of document.querySelectorAll('.mx-body [role=cell]')) {
    const b = td.getBoundingClientRect();
    if (b.bottom < wrap.top || b.top > wrap.bottom || b.right < wrap.left || b.left > wrap.right) continue;
    const inner = td.firstElementChild;
    if (inner && (inner.scrollWidth > inner.clientWidth + 1 || inner.scrollHeight > inner.clientHeight + 1)) out.push(td.textContent);
  }
  return out;
});

describe('a 600 × 24 matrix on one hardware class', () => {
  afterEach(closePages);

  it('says the hardware once, pivots a parameter into the columns, and cuts no cell', async () => {
    const page = await newPage(browser.context);
    await open(page, stack.url, '#/matrix?suite=wide-grid', 'matrix');
    await complete(page);
    assert.equal(await page.locator('[data-testid=one-hardware]').textContent(), 'Every result here is on cpu; the columns are col.');
    const heads = await page.locator('.mx-head [role=columnheader]').allTextContents();
    assert.deepEqual(heads, ['row', ...Array.from({length: COLS}, (_, i) => `c${String(i).padStart(2, '0')}`)]);
    assert.equal(await page.locator('.mx-body[role=row]').count(), ROWS);
    // Words a person reads without the docs: the verdict, then its reason.
    assert.equal((await cellAt(page, 'r000', 'c04')).text, '⚠ unsupported: dtype');
    assert.equal((await cellAt(page, 'r000', 'c05')).text, '✗ unclassified: exit code 1');
    assert.equal((await cellAt(page, 'r000', 'c06')).text, '◷ timeout in stage check');
    const mixed = await cellAt(page, 'r300', 'c07');  // k = 7207: k % 9 = 7
    assert.equal(mixed.text, '◐ mixed: 1/2 passed · ✗ out of memory 1');
    assert.match(mixed.cls, /mx-mixed/);
    assert.equal(mixed.clipped, false, 'a mixed cell is read whole');
    assert.deepEqual(await clippedInView(page), []);
    // The CSV link asks for what is on screen.
    assert.match(await page.locator('a[download]').getAttribute('href'), /rows=row&cols=col/);
    await shot(page, '40-matrix-600x24');
    assert.deepEqual(page.errors, []);
  });

  it('gives a single hardware column the room its cells need when the person asks for it', async () => {
    const page = await newPage(browser.context);
    await open(page, stack.url, '#/matrix?suite=wide-grid&rows=row&cols=hardware', 'matrix');
    await complete(page);
    assert.equal(await page.locator('[data-testid=one-hardware]').textContent(), 'Every result here is on cpu.');
    assert.deepEqual(await page.locator('.mx-head [role=columnheader]').allTextContents(), ['row', 'cpu']);
    // Row r000 folds its 26 configs (24 columns, two with a second batch), which disagree: a long
    // mixed text, read whole, most severe verdicts first.
    const first = await cellAt(page, 'r000', 'cpu');
    assert.equal(first.text, '◐ mixed: 16/26 passed · ✗ crashed 3 · ✗ out of memory 2 · ⚠ unsupported 3 · ◷ timeout 2');
    assert.equal(first.clipped, false);
    assert.deepEqual(await clippedInView(page), []);
    assert.deepEqual(page.errors, []);
  });

  it('keeps the column and row headers in view at the far corner', async () => {
    const page = await newPage(browser.context);
    await open(page, stack.url, '#/matrix?suite=wide-grid', 'matrix');
    await complete(page);
    const at = () => page.evaluate(() => {
      const wrap = document.querySelector('.matrix-wrap');
      const box = wrap.getBoundingClientRect();
      const head = document.querySelector('.mx-head').getBoundingClientRect();
      // The row key of a row in the middle of the box's view.
      const rows = [...document.querySelectorAll('.mx-body')];
      const mid = rows.find((r) => r.getBoundingClientRect().top > box.top + box.height / 2);
      const key = mid.querySelector('[role=rowheader]');
      return {headTop: head.top - box.top, keyLeft: key.getBoundingClientRect().left - box.left, key: key.textContent,
        scrolled: [wrap.scrollLeft, wrap.scrollTop]};
    });
    await page.locator('.matrix-wrap').evaluate((w) => w.scrollTo(w.scrollWidth, w.scrollHeight));
    await until('the scroll to reach the corner', async () => (await at()).scrolled[1] > 1000);
    const corner = await at();
    assert.ok(corner.scrolled[0] > 300, `it scrolls sideways (${corner.scrolled})`);
    assert.ok(Math.abs(corner.headTop) <= 2, `the column headers stay at the top (${corner.headTop} px off)`);
    assert.ok(Math.abs(corner.keyLeft) <= 2, `the row keys stay at the left (${corner.keyLeft} px off)`);
    assert.match(corner.key, /^r5\d\d$/, 'a row near the end is in view');
    assert.deepEqual(await clippedInView(page), []);
    assert.deepEqual(page.errors, []);
  });

  it('has a compact heat view that fits every column and says each cell on hover', async () => {
    const page = await newPage(browser.context);
    await open(page, stack.url, '#/matrix?suite=wide-grid', 'matrix');
    await complete(page);
    const fits = () => page.evaluate(() => {
      const wrap = document.querySelector('.matrix-wrap');
      return document.querySelector('.mx').getBoundingClientRect().width <= wrap.clientWidth;
    });
    assert.equal(await fits(), false, 'the text view is wider than the screen');
    await page.locator('[data-testid=heat-toggle]').click();
    assert.equal(await page.locator('[data-testid=heat-toggle]').getAttribute('aria-pressed'), 'true');
    assert.match(page.url(), /view=heat/);
    assert.equal(await fits(), true, 'all 24 columns fit');
    const cellLink = page.locator('.mx-body').filter({has: page.locator('[role=rowheader]:text-is("r000")')}).locator('[role=cell]').nth(6).locator('a');
    await cellLink.hover();
    await until('the cell\'s title', async () => /timeout in stage check/.test((await cellLink.getAttribute('title')) || ''));
    assert.match(await cellLink.getAttribute('title'), /^◷ timeout in stage check\n/);
    await shot(page, '41-matrix-heat');
    // A reload keeps the view.
    await page.reload();
    await page.waitForSelector('html[data-ready="matrix"]');
    assert.equal(await page.locator('.matrix-view.mx-heat').count(), 1);
    assert.deepEqual(page.errors, []);
  });

  it('copies the Markdown gauntlet matrix prints, hardware and fingerprint included', async () => {
    const page = await newPage(browser.context);
    await open(page, stack.url, '#/matrix?suite=wide-grid', 'matrix');
    await page.locator('[data-testid=copy-markdown]').click();
    await until('the copy', async () => (await page.locator('[data-testid=copy-status]').textContent()) === 'Copied as Markdown.');
    const copied = await page.evaluate(() => navigator.clipboard.readText());
    const cli = spawnSync(stack.bin, ['matrix', '--server', stack.url, '--suite', 'wide-grid', '--rows', 'row', '--cols', 'col',
      '--format', 'markdown'], {encoding: 'utf8', maxBuffer: 64 << 20});
    assert.equal(cli.status, 0, cli.stderr);
    assert.equal(copied, cli.stdout, 'the dashboard copies what the CLI prints');
    const lines = copied.split('\n');
    assert.equal(lines[0], '**wide-grid** v1 · latest verdicts · metric output_tok_s');
    assert.ok(lines.includes('Hardware:') && lines.includes('- `cpu`: no node on record ran it'), copied.slice(0, 400));
    assert.ok(lines.includes('Software fingerprint: `{"mylib":"1.0"}`'), copied.slice(0, 400));
    const first = lines.find((l) => l.startsWith('| `r000` |'));
    assert.ok(first.startsWith('| `r000` | ✅ 1,000 tok/s | ✅ 1,001 tok/s | ✅ 1,002 tok/s | ✅ 1,003 tok/s | ⚠ unsupported: dtype | ' +
      '❌ unclassified: exit code 1 | ⏳ timeout in stage check | ◐ mixed: 1/2 passed · out of memory 1 | ✅ 1,008 tok/s |'), first);
    assert.equal(lines.filter((l) => l.startsWith('| `r')).length, ROWS);
    assert.deepEqual(page.errors, []);
  });

  it('asks before a cell\'s rerun starts trials, saying how many', async () => {
    const page = await newPage(browser.context);
    await open(page, stack.url, `#/sweeps/${sweep.id}`, 'sweep');
    const before = (await stack.get('/api/v1/sweeps')).items.length;
    const crashed = page.locator('.mx-body').filter({has: page.locator('[role=rowheader]:text-is("r000")')}).locator('[role=cell]').nth(5);
    assert.equal(await crashed.locator('a').textContent(), '✗ unclassified: exit code 1');
    await crashed.locator('button.mx-rerun').click();
    const dialog = page.locator('dialog[data-testid=confirm][open]');
    await dialog.waitFor();
    assert.equal(await dialog.locator('h2').textContent(), 'Rerun the failed trials of r000 · c05?');
    assert.match(await dialog.locator('[data-testid=confirm-text]').textContent(), /^This starts 1 new trial in a new sweep/);
    assert.equal(await dialog.locator('[data-testid=confirm-ok]').textContent(), 'Start 1 trial');
    await dialog.locator('button[value=cancel]').click();
    await dialog.waitFor({state: 'detached'});
    assert.equal((await stack.get('/api/v1/sweeps')).items.length, before, 'cancelled: no sweep, no trial');
    assert.match(page.url(), new RegExp(`#/sweeps/${sweep.id}`));
    // Confirmed: the new sweep holds exactly that many trials.
    await crashed.locator('button.mx-rerun').click();
    await page.locator('dialog[data-testid=confirm][open] [data-testid=confirm-ok]').click();
    await until('the new sweep\'s page', () => page.evaluate((id) => /#\/sweeps\/(\d+)/.exec(location.hash)?.[1] !== String(id) &&
      document.documentElement.dataset.ready === 'sweep', sweep.id), {timeoutMs: 30000, everyMs: 50});
    const id = Number(/#\/sweeps\/(\d+)/.exec(page.url())[1]);
    const s = await stack.get(`/api/v1/sweeps/${id}`);
    assert.equal(s.rerun_of, sweep.id);
    assert.equal(s.trials, 1);
    assert.deepEqual(page.errors, []);
  });
});
