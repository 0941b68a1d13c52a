// Issue 32 in the dashboard against a real daemon and worker: the best configuration per hardware
// (split by a parameter, its markdown), the check as a form whose answer is the URL, and declared
// support held against the runs. Three real runs of each ui-fixture config on an H200 worker.
import assert from 'node:assert/strict';
import {after, afterEach, before, describe, it} from 'node:test';
import {launch} from './lib/browser.mjs';
import {closePages, newPage, open, shot} from './lib/page.mjs';
import {finish, startStack, until} from './lib/stack.mjs';

let stack;
let browser;
let hardware;

before(async () => {
  stack = await startStack();
  await stack.worker('h200');
  const s = await stack.sweep({suite: 'ui-fixture', name: 'three runs each', repeats: 3, reuse: false, prune: false,
    targets: [{arch: 'sm_90'}]});
  await stack.waitSweep(s.id, 180000);
  hardware = (await stack.get('/api/v1/recommend?suite=ui-fixture')).items[0].hardware;
  browser = await launch();
});

after(() => finish(browser, stack));

describe('answers people act on', () => {
  afterEach(closePages);

  it('shows the best configuration per hardware and dtype, with its flags and a markdown export', async () => {
    const page = await newPage(browser.context);
    await open(page, stack.url, '#/best?suite=ui-fixture&by=dtype', 'best');
    const fp8 = page.locator('[data-testid=best-table] tr[data-region="dtype=fp8"]');
    assert.equal(await fp8.count(), 1);
    // trtllm is the fastest fp8 backend of the fixture, well beyond its 3% run-to-run spread.
    assert.match(await fp8.locator('[data-testid=flags]').innerText(), /trtllm fp8/);
    assert.equal(await fp8.getAttribute('data-decision'), 'beyond_noise');
    assert.match(await fp8.innerText(), /3\/3/);
    assert.match(await fp8.innerText(), /benchmarked/);
    assert.match(await page.locator('[data-testid=markdown]').inputValue(), /\*\*Best configuration per hardware\*\*/);
    // Unticking the split is in the URL: one region, and a shared link opens the same view.
    await page.locator('input[name=by][value=dtype]').uncheck();
    // Polled from here: the dashboard's CSP allows no eval, which waitForFunction needs.
    // The page keeps data-ready from its last render while the next one loads: wait for the one
    // region too (a loaded run read the two of the previous render).
    await until('the page to show the new choice', () => page.evaluate(() => location.hash === '#/best?suite=ui-fixture' &&
      document.documentElement.dataset.ready === 'best' &&
      document.querySelectorAll('[data-testid=best-table] tbody tr').length === 1));
    assert.equal(await page.locator('[data-testid=best-table] tbody tr').count(), 1);
    await shot(page, 'best');
    assert.deepEqual(page.errors, []);
  });

  it('checks a configuration from a form whose answer is the URL, and points a failing one to its neighbours', async () => {
    const page = await newPage(browser.context);
    const hash = `#/check?suite=ui-fixture&hardware=${encodeURIComponent(hardware)}&config=${encodeURIComponent('backend=triton&delay=0&dtype=bf16')}`;
    await open(page, stack.url, hash, 'check');
    const answer = page.locator('[data-testid=check-answer]');
    assert.equal(await answer.getAttribute('data-known'), 'fails');
    assert.match(await answer.innerText(), /Known to fail/);
    assert.match(await answer.innerText(), /exit status 1/);
    assert.ok(await page.locator('[data-testid=nearest] li').count() >= 1);
    assert.match(await page.locator('[data-testid=nearest] li').first().innerText(), /changes backend/);
    // The form: pick cutlass and ask again.
    const form = page.locator('form[aria-label="Configuration to check"]');
    await form.locator('select[name=backend]').selectOption('cutlass');
    await form.locator('button[type=submit]').click();
    // Polled from here: the dashboard's CSP allows no eval, which waitForFunction needs.
    // The hash changes at once and `ready` still says `check` from the first answer until the page
    // re-renders: the new answer is what is waited for (under load the old one was read).
    await until('the page to answer for the new choice', async () => (await page.evaluate(() => location.hash.includes('backend%3Dcutlass') &&
      document.documentElement.dataset.ready === 'check')) && (await page.locator('[data-testid=check-answer]').getAttribute('data-known')) === 'passes');
    await shot(page, 'check');
    assert.deepEqual(page.errors, []);
  });

  it('holds the declared support against the runs', async () => {
    const page = await newPage(browser.context);
    await open(page, stack.url, '#/drift?suite=ui-fixture', 'drift');
    assert.equal(await page.locator('[data-testid=no-declaration]').count(), 1);
    // The daemon's 404 for a suite without a declaration is what the page explains; Chromium logs
    // every 404 it fetched, so that one is not an error of the page.
    assert.ok(page.errors.every((e) => /404/.test(e)), page.errors.join('\n'));
    page.errors.length = 0;
    await stack.put('/api/v1/suites/ui-fixture/declared', {source: {url: 'https://example.org/table', version: '2.0'},
      rules: [{when: {backend: 'triton'}, hardware: 'sm_90', supported: true},
              {when: {backend: 'cudnn'}, supported: false, note: 'Blackwell only'}]});
    await open(page, stack.url, '#/drift?suite=ui-fixture&x=1', 'drift');
    assert.match(await page.locator('[data-testid=drift-summary]').innerText(), /2 supported but failing, 1 unsupported but passing/);
    assert.equal(await page.locator('[data-testid=drift-table] tr[data-kind=supported_but_failing]').count(), 2);
    assert.equal(await page.locator('[data-testid=drift-table] tr[data-kind=unsupported_but_passing]').count(), 1);
    assert.match(await page.locator('[data-testid=markdown]').inputValue(), /Source: https:\/\/example.org\/table \(version 2.0\)/);
    await shot(page, 'drift');
    assert.deepEqual(page.errors, []);
  });

  it('shows the drift and the evidence of each cell as matrix layers, the layer in the URL', async () => {
    await stack.put('/api/v1/suites/ui-fixture/declared', {source: {url: 'https://example.org/table', version: '2.0'},
      rules: [{when: {backend: 'triton'}, hardware: 'sm_90', supported: true},
              {when: {backend: 'cudnn'}, supported: false, note: 'Blackwell only'}]});
    const page = await newPage(browser.context);
    await open(page, stack.url, '#/matrix?suite=ui-fixture&rows=backend,dtype&cols=hardware&layer=drift', 'matrix');
    const cellsText = () => page.evaluate(() => [...document.querySelectorAll('.mx-cell')].map((c) => c.textContent).join('\n'));
    await until('the drift layer in the cells', async () => /declared supported, fails/.test(await cellsText()));
    assert.equal(await page.locator('select[name=layer]').inputValue(), 'drift');
    const text = await cellsText();
    assert.match(text, /declared unsupported, passes/);
    // The same judgement as the drift page: as many failing cells as the answer has items.
    const api = await stack.get('/api/v1/matrix?suite=ui-fixture&rows=backend,dtype&cols=hardware&layer=drift');
    const failing = api.cells.filter((c) => c.drift?.kind === 'supported_but_failing').length;
    assert.ok(failing >= 1);
    assert.equal(await page.locator('.mx-cell.drift-supported_but_failing').count(), failing);
    // The layer picker is the URL: evidence, then a shared link opens the same view.
    await page.locator('select[name=layer]').selectOption('evidence');
    // Polled from here: the dashboard's CSP allows no eval, which waitForFunction needs.
    await until('the evidence layer', () => page.evaluate(() => location.hash.includes('layer=evidence') &&
      [...document.querySelectorAll('.mx-cell')].some((c) => c.textContent.includes('[benchmarked]'))));
    const shared = await page.evaluate(() => location.hash);
    const again = await newPage(browser.context);
    await open(again, stack.url, shared, 'matrix');
    await until('the shared link to show the evidence', () => again.evaluate(() =>
      [...document.querySelectorAll('.mx-cell')].some((c) => c.textContent.includes('[benchmarked]'))));
    assert.equal(await again.locator('select[name=layer]').inputValue(), 'evidence');
    await shot(page, 'matrix-evidence');
    assert.deepEqual(page.errors, []);
    assert.deepEqual(again.errors, []);
  });
});
