// Issue 20 in the dashboard against a real daemon and worker: rerun from a failed cell, from a sweep
// and from a trial (each a new sweep linked to the original), the compare page (changes first, a
// matrix coloured by change, the choice kept in the URL), and the list filters kept in the URL.
import assert from 'node:assert/strict';
import {after, afterEach, before, describe, it} from 'node:test';
import {launch} from './lib/browser.mjs';
import {closePages, newPage, open, shot} from './lib/page.mjs';
import {Stack, until} from './lib/stack.mjs';

const H200 = 'NVIDIA H200 · sm_90 · x1';
const LAYOUT = 'rows=backend,dtype&cols=hardware';

let stack;
let browser;
let first;

before(async () => {
  stack = await new Stack({keep: !!process.env.GAUNTLET_KEEP}).start();
  await stack.worker('h200');
  const s = await stack.sweep({suite: 'ui-fixture', name: 'week-one', targets: [{arch: 'sm_90'}]});
  first = await stack.waitSweep(s.id);
  browser = await launch();
});

after(async () => {
  await browser?.close();
  if (stack) {
    if (process.exitCode) console.log(`daemon log tail:\n${stack.log('serve')}`);
    await stack.stop();
  }
});

/** The trials of a sweep, as the API lists them. */
const trialsOf = async (id) => (await stack.get(`/api/v1/trials?sweep=${id}&limit=1000`)).items;

/** Waits until the page shows a sweep other than `not`, and returns that sweep's id. */
const movedToSweep = (page, not) => until('the page to move to the new sweep', async () => {
  const m = /#\/sweeps\/(\d+)/.exec(page.url());
  return m && Number(m[1]) !== not && (await page.locator('html[data-ready=sweep]').count()) && Number(m[1]);
});

describe('the first week', () => {
  afterEach(closePages);

  it('reruns the failed trials of one matrix cell as a new, linked sweep', async () => {
    const page = await newPage(browser.context);
    await open(page, stack.url, `#/sweeps/${first.id}?${LAYOUT}`, 'sweep');
    // Only cells with failed trials have the action: a passed cell has none.
    const row = (b, d) => page.locator('.mx-body[role=row]').filter({has: page.locator(`[role=rowheader]:text-is("${b}")`)})
      .filter({has: page.locator(`[role=rowheader]:text-is("${d}")`)});
    assert.equal(await row('cutlass', 'bf16').locator('button.mx-rerun').count(), 0);
    const garbage = row('cudnn', 'fp8').locator('[role=cell] button.mx-rerun');
    assert.equal(await garbage.count(), 1);
    assert.equal(await garbage.getAttribute('aria-label'), 'Rerun the failed trials of this cell');
    await garbage.click();
    const id = await movedToSweep(page, first.id);
    const s = await stack.get(`/api/v1/sweeps/${id}`);
    assert.equal(s.rerun_of, first.id);
    assert.equal(s.source, 'rerun');
    const ts = await trialsOf(id);
    assert.deepEqual(ts.map((t) => [t.config.backend, t.config.dtype]), [['cudnn', 'fp8']]);
    // The new sweep's page links back, and to what changed.
    assert.equal(await page.locator('[data-testid=rerun-of]').getAttribute('href'), `#/sweeps/${first.id}`);
    assert.equal(await page.locator('[data-testid=compare-link]').getAttribute('href'), `#/compare?a=${first.id}&b=${id}`);
    await shot(page, '30-rerun-cell');
    assert.deepEqual(page.errors, []);
  });

  it('reruns a whole sweep\'s failures, and one trial, from their pages', async () => {
    const page = await newPage(browser.context);
    await open(page, stack.url, `#/sweeps/${first.id}`, 'sweep');
    const failed = Object.entries(first.by_verdict).filter(([v]) => v !== 'passed' && v !== 'skipped').reduce((n, [, k]) => n + k, 0);
    assert.ok(failed > 0, 'the fixture fails somewhere');
    const button = page.locator('[data-testid=rerun-sweep]');
    assert.match(await button.textContent(), new RegExp(`Rerun ${failed} failed trials?`));
    await button.click();
    const id = await movedToSweep(page, first.id);
    assert.equal((await trialsOf(id)).length, failed);
    // A trial: exactly it again.
    const crashed = (await trialsOf(first.id)).find((t) => t.verdict === 'crashed');
    await open(page, stack.url, `#/trials/${crashed.id}`, 'trial');
    await page.locator('[data-testid=rerun-trial]').click();
    const one = await movedToSweep(page, first.id);
    const ts = await trialsOf(one);
    assert.equal(ts.length, 1);
    assert.equal(ts[0].config_key, crashed.config_key);
    assert.deepEqual(page.errors, []);
  });

  it('compares two sweeps: changes first, a matrix coloured by change, the choice in the URL', async () => {
    const r = await stack.post(`/api/v1/sweeps/${first.id}/rerun`, {verdicts: ['crashed']});
    await stack.waitSweep(r.id);
    const page = await newPage(browser.context);
    await open(page, stack.url, `#/compare?a=${r.id}&b=${first.id}`, 'compare');
    const cmp = await stack.get(`/api/v1/compare?a=${r.id}&b=${first.id}`);
    for (const [c, n] of Object.entries(cmp.summary))
      if (n && c !== 'pending') assert.equal(await page.locator(`[data-testid=compare-summary] [data-change=${c}]`).textContent(), `${n} ${c}`);
    // The changes table lists what changed, in the API's order, and nothing unchanged.
    const changed = cmp.items.filter((i) => i.change !== 'same');
    assert.ok(changed.length > 0);
    const rows = page.locator('table[aria-label=Changes] tbody tr');
    assert.equal(await rows.count(), changed.length);
    assert.equal(await rows.first().getAttribute('data-change'), changed[0].change);
    // The matrix: one row per config, configs with changes on top, cells coloured by change.
    const matrix = page.locator('[data-testid=compare-matrix]');
    const configs = await matrix.locator('tbody tr').evaluateAll((trs) => trs.map((tr) => tr.dataset.config));
    assert.equal(configs.length, new Set(cmp.items.map((i) => i.config_key)).size);
    const sameAt = configs.findIndex((c) => cmp.items.find((i) => i.config_key === c).change === 'same');
    const newAt = configs.findIndex((c) => cmp.items.find((i) => i.config_key === c).change === 'new');
    assert.ok(newAt >= 0 && sameAt >= 0 && newAt < sameAt, `changed configs first: ${configs}`);
    const bg = (sel) => matrix.locator(sel).first().evaluate((td) => getComputedStyle(td).backgroundColor);
    assert.notEqual(await bg('td[data-change=new]'), await bg('td[data-change=same]'));
    assert.match(await matrix.locator('td[data-change=same]').first().textContent(), /crashed/);
    await shot(page, '31-compare');
    // Swapping the sides through the form changes the URL, and new becomes gone.
    await page.locator('[data-testid=input-a]').fill(String(first.id));
    await page.locator('[data-testid=input-b]').fill(String(r.id));
    await page.locator('form[aria-label="What to compare"] button[type=submit]').click();
    await until('the swapped comparison', async () => page.url().includes(`a=${first.id}&b=${r.id}`) &&
      (await page.locator('html[data-ready=compare]').count()) &&
      (await page.locator('[data-testid=compare-summary] [data-change=gone]').count()));
    assert.deepEqual(page.errors, []);
  });
});
