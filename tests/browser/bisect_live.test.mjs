// A bisection watched while it runs: 16 ordered versions whose first bad one is 11. Each probe's
// stage waits until the test creates a file named after its version (GAUNTLET_FIXTURE_HOLD), so the
// test sees the page show the probe being tried, lets it finish, and sees the good/bad interval
// narrow on the same page (no reload), then the first bad value. Nothing waits on time.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import {after, afterEach, before, describe, it} from 'node:test';
import {launch} from './lib/browser.mjs';
import {closePages, newPage, open, shot} from './lib/page.mjs';
import {finish, startStack, until} from './lib/stack.mjs';

let stack;
let browser;
let hold;  // the folder whose files let held probes finish

// Waits (polling the file system for the file the test creates) until it may finish, then fails
// from version 11 on.
const SCRIPT = [
  'import os, sys, time',
  'v = sys.argv[1]',
  'gate = os.path.join(os.environ["GAUNTLET_FIXTURE_HOLD"], v)',
  'while not os.path.exists(gate):',
  '    time.sleep(0.02)',
  'if int(v) >= 11:',
  '    print("RuntimeError: regressed in %s" % v, file=sys.stderr)',
  '    sys.exit(1)',
  'print("ok")',
].join('\n');

before(async () => {
  stack = await startStack();
  hold = path.join(stack.dir, 'hold');
  fs.mkdirSync(hold);
  await stack.worker('h200', 'h200', {env: {GAUNTLET_FIXTURE_HOLD: hold}});
  browser = await launch();
});

after(() => finish(browser, stack, {daemon: 'serve', worker: 'worker-h200'}));

describe('a live bisection', () => {
  afterEach(closePages);

  it('narrows its interval on screen as each probe finishes, then shows the first bad value', async () => {
    const versions = Array.from({length: 16}, (_, i) => String(i + 1));
    await stack.put('/api/v1/suites/ui-bisect-live', {name: 'ui-bisect-live', parameters: {version: {values: versions, ordered: true}},
      stages: [{name: 'run', kind: 'command', argv: ['python3', '-c', SCRIPT, '{version}']}]});
    const b = await stack.post('/api/v1/bisect', {suite: 'ui-bisect-live', parameter: 'version', good: '1', bad: '16'});
    const page = await newPage(browser.context);
    await open(page, stack.url, `#/sweeps/${b.id}`, 'sweep');
    await page.evaluate(() => (window.gauntletSamePage = true));  // gone if the page reloads

    const view = page.locator('[data-testid=search]');
    const interval = page.locator('[data-testid=search-interval]');
    // The page shows this interval and probe; each check waits for the page, never for a time.
    const shows = async (good, bad, trying) => {
      // Polled through page.evaluate: waitForFunction compiles its predicate with eval inside the
      // page, which the dashboard's Content-Security-Policy (no 'unsafe-eval') refuses.
      await until(`the interval ${good}..${bad} trying ${trying}`, () => page.evaluate(([g, bd, t]) => {
        const el = document.querySelector('[data-testid=search-interval]');
        return el && el.dataset.good === g && el.dataset.bad === bd && el.dataset.trying === t;
      }, [good, bad, trying]), {timeoutMs: 30000, everyMs: 50});
      assert.equal(await page.locator('[data-testid=search-strip] li.ss-trying').textContent(), trying);
      return (await interval.textContent()).trim();
    };
    const release = (v) => fs.writeFileSync(path.join(hold, v), '');

    assert.equal(await shows('1', '16', '8'), 'Between 1 (as given) and 16 (as given): 14 values left, trying 8');
    assert.equal(await view.locator('[data-testid=search-state]').textContent(), 'running');
    assert.equal(await page.locator('[data-testid=search-strip] li').count(), 16);
    release('8');
    assert.equal(await shows('8', '16', '12'), 'Between 8 (passed) and 16 (as given): 7 values left, trying 12');
    assert.equal(await page.locator('[data-testid=search-strip] li.ss-good').count(), 8);
    assert.equal(await page.locator('[data-testid=search-strip] li.ss-bad').count(), 1);
    await shot(page, '20-bisection-live');
    release('12');
    assert.equal(await shows('8', '12', '10'), 'Between 8 (passed) and 12 (failed): 3 values left, trying 10');
    release('10');
    assert.equal(await shows('10', '12', '11'), 'Between 10 (passed) and 12 (failed): 1 value left, trying 11');
    assert.deepEqual(await view.locator('[data-testid=search-steps] li code').allTextContents(),
      ['version=8', 'version=12', 'version=10']);
    release('11');

    await page.waitForSelector('[data-testid=search][data-state=found] [data-testid=first-bad]', {timeout: 30000});
    assert.equal(await view.locator('[data-testid=first-bad]').textContent(), '11');
    assert.match(await interval.textContent(), /last good 10/);
    assert.equal(await page.locator('[data-testid=search-strip] li.ss-trying').count(), 0);
    assert.equal(await page.locator('[data-testid=search-strip] li.ss-bad').count(), 6, '11..16 are bad');
    assert.equal(await page.evaluate(() => window.gauntletSamePage), true, 'the page updated in place');
    const done = await stack.waitSweep(b.id);
    assert.equal(done.search.first_bad, '11');
    assert.equal(done.trials, 4);

    // Its probes are results too: the regressions list the pinned gap, linked to this bisection.
    await open(page, stack.url, '#/clusters?suite=ui-bisect-live', 'clusters');
    const row = page.locator('table[aria-label=Regressions] tr[data-kind=ordered]');
    await row.first().waitFor();
    assert.equal(await row.count(), 1);
    const cells = await row.locator('td').allTextContents();
    assert.equal(cells[2], 'ordered: version');
    assert.match(cells[3], /^10 passed #\d+$/);
    assert.match(cells[4], /^11 crashed #\d+$/);
    assert.equal(cells[5], `bisection #${b.id} found: first bad 11`);
    assert.equal(await row.locator('[data-testid=regression-bisection] a').getAttribute('href'), `#/sweeps/${b.id}`);
    assert.deepEqual(page.errors, []);
    await page.close();
  });
});
