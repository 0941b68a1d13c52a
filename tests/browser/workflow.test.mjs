// Issue 20 in the dashboard against a real daemon and worker: rerun from a failed cell, from a sweep
// and from a trial (each a new sweep linked to the original), the compare page (changes first, a
// matrix coloured by change, the choice kept in the URL), and the list filters kept in the URL.
import assert from 'node:assert/strict';
import {after, afterEach, before, describe, it} from 'node:test';
import {launch} from './lib/browser.mjs';
import {closePages, newPage, open, shot} from './lib/page.mjs';
import {finish, startStack, until} from './lib/stack.mjs';

const H200 = 'NVIDIA H200 · sm_90 · x1';
const LAYOUT = 'rows=backend,dtype&cols=hardware';

let stack;
let browser;
let first;

before(async () => {
  stack = await startStack();
  await stack.worker('h200');
  const s = await stack.sweep({suite: 'ui-fixture', name: 'week-one', targets: [{arch: 'sm_90'}]});
  first = await stack.waitSweep(s.id);
  browser = await launch();
});

after(() => finish(browser, stack));

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
    // A rerun starts trials: it says how many and waits for a yes.
    const confirm = page.locator('dialog[data-testid=confirm][open]');
    await confirm.waitFor();
    assert.equal(await confirm.locator('h2').textContent(), `Rerun the failed trials of cudnn · fp8 · ${H200}?`);
    assert.match(await confirm.locator('[data-testid=confirm-text]').textContent(), /^This starts 1 new trial in a new sweep/);
    await confirm.locator('[data-testid=confirm-ok]').click();
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
    const confirm = page.locator('dialog[data-testid=confirm][open]');
    assert.match(await confirm.locator('[data-testid=confirm-text]').textContent(), new RegExp(`^This starts ${failed} new trials? in a new sweep`));
    await confirm.locator('[data-testid=confirm-ok]').click();
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
    // The changes table lists what changed, most severe first, and nothing unchanged or gone (those
    // are counted under it and shown in the matrix).
    const order = ['broke', 'flaky', 'fixed', 'changed', 'new'];
    const changed = cmp.items.filter((i) => order.includes(i.change)).sort((x, y) => order.indexOf(x.change) - order.indexOf(y.change));
    assert.ok(changed.length > 0);
    const rows = page.locator('table[aria-label=Changes] tbody tr');
    assert.equal(await rows.count(), changed.length);
    assert.deepEqual(await rows.evaluateAll((trs) => trs.map((tr) => tr.dataset.change)), changed.map((i) => i.change));
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
    // Gone rows do not lead the changes: they are counted under the table.
    assert.equal(await page.locator('table[aria-label=Changes] tbody tr[data-change=gone]').count(), 0);
    assert.match(await page.locator('[data-testid=gone-count]').textContent(), /^\d+ config × hardware.* not run in B \(gone\)/);
    assert.deepEqual(page.errors, []);
  });

  it('filters sweeps by suite, state, source and submitter, kept in the URL', async () => {
    const page = await newPage(browser.context);
    await open(page, stack.url, '#/sweeps', 'sweeps');
    await page.locator('[data-testid=filter-source]').selectOption('rerun');
    await page.locator('[data-testid=filter-state]').selectOption('finished');
    await page.locator('form[aria-label="Filter sweeps"] button[type=submit]').click();
    const want = (await stack.get('/api/v1/sweeps?source=rerun&state=finished')).items.map((s) => String(s.id));
    assert.ok(want.length > 0);
    // The page keeps data-ready from its last render while the filtered one loads: wait for the rows
    // the filter must show, not for the flag alone (a run under load read the unfiltered list).
    const shown = async () => page.locator('tr[data-sweep]').evaluateAll((trs) => trs.map((tr) => tr.dataset.sweep));
    await until('the filtered list', async () => page.url().includes('source=rerun') && page.url().includes('state=finished') &&
      (await page.locator('html[data-ready=sweeps]').count()) && JSON.stringify(await shown()) === JSON.stringify(want));
    assert.deepEqual(await shown(), want);
    assert.match(await page.locator(`tr[data-sweep="${want[0]}"] [data-testid=sweep-origin]`).textContent(), new RegExp(`^rerun of #${first.id}`));
    // The filters survive a reload from the URL alone, and a filter matching nothing says so.
    await open(page, stack.url, '#/sweeps?suite=ui-fixture&submitted_by=sha256:nobody', 'sweeps');
    assert.equal(await page.locator('tr[data-sweep]').count(), 0);
    assert.match(await page.locator('table[aria-label=Sweeps] tbody').textContent(), /No sweep matches these filters/);
    assert.equal(await page.locator('[data-testid=filter-suite]').inputValue(), 'ui-fixture');
    assert.deepEqual(page.errors, []);
  });

  it('filters trials by verdict, signature and parameter, and sorts by a column', async () => {
    const page = await newPage(browser.context);
    await open(page, stack.url, `#/trials?sweep=${first.id}`, 'trials');
    await page.locator('[data-testid=filter-verdict]').selectOption('passed');
    await page.locator('[data-testid=filter-params]').fill('dtype=fp8');
    await page.locator('form[aria-label="Filter trials"] button[type=submit]').click();
    await until('the filtered trials', async () => page.url().includes('verdict=passed') && page.url().includes('param.dtype=fp8') &&
      page.url().includes(`sweep=${first.id}`) && (await page.locator('html[data-ready=trials]').count()));
    const want = (await stack.get(`/api/v1/trials?sweep=${first.id}&verdict=passed&param.dtype=fp8`)).items;
    assert.ok(want.length > 1);
    // The page keeps data-ready from its last render while the next one loads: wait for what it
    // must show, not for the flag alone.
    const rows = page.locator('table[aria-label=Trials] tbody tr');
    await until('the filtered rows', async () => (await rows.count()) === want.length);
    const configs = () => page.locator('[data-testid=config]').allTextContents();
    const ascending = (t) => t.every((x, i) => i === 0 || t[i - 1].localeCompare(x) <= 0);
    // Sort by config, then the other way; the order is in the URL.
    await page.locator('button.sort[data-sort=config]').click();
    const asc = await until('sorted by config', async () => {
      const t = await configs();
      return page.url().includes('sort=config') && t.length === want.length && ascending(t) && t;
    });
    assert.deepEqual(asc, [...asc].sort((a, b) => a.localeCompare(b)));
    // The daemon sorted them (the whole listing, so page 2 would continue this order), not the page.
    const bySort = (await stack.get(`/api/v1/trials?sweep=${first.id}&verdict=passed&param.dtype=fp8&sort=config`)).items;
    assert.deepEqual(asc, bySort.map((t) => Object.entries(t.config).map(([k, v]) => `${k}=${v}`).join(', ')));
    await page.locator('button.sort[data-sort=config]').click();
    await until('sorted the other way', async () => page.url().includes('desc=1') &&
      JSON.stringify(await configs()) === JSON.stringify([...asc].reverse()));
    assert.equal(await page.locator('th[aria-sort=descending]').count(), 1);
    assert.deepEqual(page.errors, []);
  });

  it('links a failure cluster to the trials of its one signature', async () => {
    const page = await newPage(browser.context);
    await open(page, stack.url, `#/sweeps/${first.id}`, 'sweep');
    const link = page.locator('tr[data-signature="crashed:illegal_memory_access"] [data-testid=signature-trials]');
    await link.click();
    await until('the trials of one signature', async () => page.url().includes('signature=crashed') &&
      (await page.locator('html[data-ready=trials]').count()));
    assert.ok(page.url().includes(`sweep=${first.id}`));
    const want = (await stack.get(`/api/v1/trials?sweep=${first.id}&signature=crashed:illegal_memory_access`)).items;
    assert.ok(want.length > 0);
    assert.equal(await page.locator('table[aria-label=Trials] tbody tr').count(), want.length);
    assert.equal(await page.locator('[data-testid=filter-signature]').inputValue(), 'crashed:illegal_memory_access');
    assert.deepEqual(page.errors, []);
  });
});
