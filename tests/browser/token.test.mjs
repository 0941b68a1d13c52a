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
import {Stack} from './lib/stack.mjs';

const TOKEN = 'read-token-for-the-browser-test';
let stack;
let browser;
let dir;

before(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gauntlet-tokens-'));
  const file = path.join(dir, 'tokens');
  fs.writeFileSync(file, `read sha256:${crypto.createHash('sha256').update(TOKEN).digest('hex')} browser\n`);
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
