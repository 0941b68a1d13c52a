// A daemon that requires tokens: the dashboard asks for one on 401, keeps it in localStorage, and
// sends it with every request, the event stream included.
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {after, before, it} from 'node:test';
import {launch} from './lib/browser.mjs';
import {newPage, shot} from './lib/page.mjs';
import {Stack, until} from './lib/stack.mjs';

const TOKEN = 'read-token-for-the-browser-test';
const SUBMIT = 'submit-token-for-the-browser-test';
const hash = (t) => crypto.createHash('sha256').update(t).digest('hex');
let stack;
let browser;
let dir;

before(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gauntlet-tokens-'));
  const file = path.join(dir, 'tokens');
  fs.writeFileSync(file, `read sha256:${hash(TOKEN)} browser\nsubmit sha256:${hash(SUBMIT)} ci\n`);
  stack = await new Stack({args: ['--tokens', file]}).start();
  browser = await launch();
});

after(async () => {
  await browser?.close();
  await stack?.stop();
  if (dir) fs.rmSync(dir, {recursive: true, force: true});
});

it('asks for a token on 401 and then shows the page with live updates', async () => {
  const r = await fetch(`${stack.url}/api/v1/sweeps`);
  assert.equal(r.status, 401, 'the daemon really requires a token');
  const page = await newPage(browser.context);
  await page.goto(`${stack.url}/#/sweeps`);
  const dialog = page.locator('#token-dialog');
  await dialog.waitFor({state: 'visible'});
  await shot(page, '11-token-dialog');
  await dialog.locator('input').fill(TOKEN);
  await dialog.locator('button[value=save]').click();
  await page.waitForSelector('html[data-ready="sweeps"]');
  assert.match(await page.locator('main').textContent(), /No sweeps yet/);
  await page.waitForSelector('#live[data-state=live]');
  assert.equal(await page.evaluate(() => localStorage.getItem('gauntlet.token')), TOKEN);
  // The failed first requests may log 401s to the console; nothing else may fail.
  assert.deepEqual(page.errors.filter((e) => !/401/.test(e)), []);
  await page.close();
});

it('asks for a token that may submit when a read token tries to rerun, then reruns', async () => {
  // A sweep no node runs, cancelled: its cancelled trials are what a rerun picks.
  const auth = {Authorization: `Bearer ${SUBMIT}`, 'Content-Type': 'application/json'};
  const made = await (await fetch(`${stack.url}/api/v1/sweeps`, {method: 'POST', headers: auth,
    body: JSON.stringify({suite: 'ui-fixture', parameters: {backend: ['cutlass'], dtype: ['bf16']}})})).json();
  assert.equal((await fetch(`${stack.url}/api/v1/sweeps/${made.id}/cancel`, {method: 'POST', headers: auth})).status, 200);
  const page = await newPage(browser.context);
  await page.goto(`${stack.url}/#/sweeps/${made.id}`);
  await page.evaluate((t) => localStorage.setItem('gauntlet.token', t), TOKEN);
  await page.reload();
  await page.waitForSelector('html[data-ready="sweep"]');
  await page.locator('[data-testid=rerun-sweep]').click();
  const dialog = page.locator('#token-dialog');
  await dialog.waitFor({state: 'visible'});
  assert.match(await dialog.locator('.token-why').textContent(), /needs the submit role/);
  await dialog.locator('input').fill(SUBMIT);
  await dialog.locator('button[value=save]').click();
  // With a token that may, the daemon counts what the rerun starts, and the person confirms it.
  const confirm = page.locator('dialog[data-testid=confirm][open]');
  await confirm.waitFor();
  assert.equal(await dialog.isVisible(), false, 'the token dialog closed once the token was saved');
  await confirm.locator('[data-testid=confirm-ok]').click();
  // Polled through page.evaluate: waitForFunction's eval is refused by the dashboard's CSP.
  await until('the new sweep\'s page', () => page.evaluate((id) => /#\/sweeps\/(\d+)/.exec(location.hash)?.[1] !== String(id) &&
    document.documentElement.dataset.ready === 'sweep', made.id), {timeoutMs: 30000, everyMs: 50});
  const id = Number(/#\/sweeps\/(\d+)/.exec(page.url())[1]);
  const s = await (await fetch(`${stack.url}/api/v1/sweeps/${id}`, {headers: auth})).json();
  assert.equal(s.rerun_of, made.id);
  assert.equal(s.submitted_by, 'ci');  // the token's name in the tokens file
  await page.locator('[data-testid=rerun-of]').waitFor();  // the new sweep's page, not the old one's
  assert.match(await page.locator('[data-testid=origin]').textContent(), /via rerun by ci/);
  assert.deepEqual(page.errors.filter((e) => !/40[13]/.test(e)), []);
  await page.close();
});

it('closes the token prompt when the person leaves the page that asked', async () => {
  const auth = {Authorization: `Bearer ${SUBMIT}`, 'Content-Type': 'application/json'};
  const made = await (await fetch(`${stack.url}/api/v1/sweeps`, {method: 'POST', headers: auth,
    body: JSON.stringify({suite: 'ui-fixture', parameters: {backend: ['trtllm'], dtype: ['bf16']}})})).json();
  assert.equal((await fetch(`${stack.url}/api/v1/sweeps/${made.id}/cancel`, {method: 'POST', headers: auth})).status, 200);
  const page = await newPage(browser.context);
  await page.goto(`${stack.url}/#/nodes`);
  await page.evaluate((t) => localStorage.setItem('gauntlet.token', t), TOKEN);
  await page.reload();
  await page.waitForSelector('html[data-ready="nodes"]');
  // A second page in this tab's history, whose rerun the read token may not do.
  await page.goto(`${stack.url}/#/sweeps/${made.id}`);
  await page.waitForSelector('html[data-ready="sweep"]');
  await page.locator('[data-testid=rerun-sweep]').click();
  const dialog = page.locator('#token-dialog');
  await dialog.waitFor({state: 'visible'});
  // Back to the nodes page: the prompt belonged to the rerun of the page left behind.
  await page.goBack();
  await page.waitForSelector('html[data-ready="nodes"]');
  assert.equal(await dialog.isVisible(), false, 'the token dialog does not stay over the next page');
  assert.equal(await page.locator('dialog[open]').count(), 0);
  assert.equal((await (await fetch(`${stack.url}/api/v1/sweeps`, {headers: auth})).json()).items.filter((s) => s.rerun_of === made.id).length, 0,
    'nothing was rerun');
  assert.deepEqual(page.errors.filter((e) => !/40[13]/.test(e)), []);
  await page.close();
});

it('stops asking when the prompt is cancelled, and goes live once a token is saved', async () => {
  const page = await newPage(browser.context);
  await page.goto(`${stack.url}/#/sweeps`);
  await page.evaluate(() => localStorage.removeItem('gauntlet.token'));
  await page.reload();
  const dialog = page.locator('#token-dialog');
  await dialog.waitFor({state: 'visible'});
  await dialog.locator('button[value=cancel]').click();
  // The event stream, refused too, waits for a token instead of opening the prompt again.
  await page.waitForSelector('#live[data-state=locked]');
  assert.equal(await dialog.isVisible(), false, 'a cancelled prompt stays closed');
  assert.equal(await page.locator('#live').textContent(), '○ needs a token');
  await page.locator('#token-button').click();
  await dialog.waitFor({state: 'visible'});
  await dialog.locator('input').fill(TOKEN);
  await dialog.locator('button[value=save]').click();
  await page.waitForSelector('#live[data-state=live]');
  assert.equal(await dialog.isVisible(), false);
  // The page refused while the prompt was cancelled says so (and logs it); nothing else may fail.
  assert.deepEqual(page.errors.filter((e) => !/401|bearer token is required/.test(e)), []);
  await page.close();
});
