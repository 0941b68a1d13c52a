// The triage page against a real daemon and worker (docs/CLASSIFIER.md "Triage"): a stage that fails
// with words no rule knows is listed as unclassified with its last line; labelling it from the page
// re-judges its trials (the API agrees), and withdrawing the label brings them back.
import assert from 'node:assert/strict';
import {after, afterEach, before, describe, it} from 'node:test';
import {launch} from './lib/browser.mjs';
import {closePages, newPage, open, shot} from './lib/page.mjs';
import {finish, startStack, until} from './lib/stack.mjs';

const SIG = 'crashed:exit_code:3';
let stack;
let browser;
let sweep;

before(async () => {
  stack = await startStack();
  await stack.worker('h200');
  await stack.put('/api/v1/suites/frob', {
    name: 'frob', parameters: {tag: ['a', 'b']},
    stages: [{name: 'run', kind: 'command', argv: ['python3', '-c', "import sys; print('frobnicator gave up (code 7)'); sys.exit(3)", '{tag}']}],
  });
  const s = await stack.sweep({suite: 'frob', prune: false, reuse: false});
  sweep = await stack.waitSweep(s.id);
  browser = await launch();
});

after(() => finish(browser, stack));

describe('triage', () => {
  afterEach(closePages);

  it('lists unclassified failures, labels one from the page and withdraws it', async () => {
    assert.equal(sweep.by_verdict.crashed, 2);
    const page = await newPage(browser.context);
    await open(page, stack.url, '#/triage', 'triage');
    const row = page.locator(`tr[data-signature="${SIG}"]`);
    await until('the unclassified group', async () => (await row.count()) === 1);
    assert.equal(await row.locator('[data-testid=evidence]').textContent(), 'frobnicator gave up (code 7)');
    assert.match(await row.textContent(), /unclassified/);
    await shot(page, 'triage');
    await row.locator('select[name=verdict]').selectOption('unsupported');
    await row.locator('input[name=note]').fill('not built for this GPU');
    await row.locator('button[type=submit]').click();
    await until('the label to re-judge both trials', async () => {
      const trials = (await stack.get(`/api/v1/trials?sweep=${sweep.id}`)).items;
      return trials.every((t) => t.verdict === 'unsupported');
    });
    await until('the page to list the label, and the group gone', async () =>
      (await page.locator('tr[data-label]').count()) === 1 && (await page.locator(`tr[data-signature="${SIG}"]`).count()) === 0);
    const trial = await stack.get(`/api/v1/trials/${(await stack.get(`/api/v1/trials?sweep=${sweep.id}`)).items[0].id}`);
    assert.equal(trial.basis, 'label');
    assert.equal(trial.audit[0].from.signature, SIG);
    await page.locator('tr[data-label] [data-testid=withdraw]').click();
    await until('the withdrawal', async () => /withdrawn by/.test(await page.locator('tr[data-label]').textContent()) &&
      (await page.locator(`tr[data-signature="${SIG}"]`).count()) === 1);
    assert.deepEqual(page.errors, []);
  });
});
