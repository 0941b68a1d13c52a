// Page helpers: open a dashboard route and wait for its "complete" marker, collect errors, screenshot.
import fs from 'node:fs';
import path from 'node:path';
import {ROOT} from './stack.mjs';

export const SHOTS = process.env.GAUNTLET_SCREENSHOTS || path.join(ROOT, 'build', 'browser-screenshots');

const opened = new Set();

/** A page that records uncaught errors and console errors, so each test can assert there were none. */
export async function newPage(context) {
  const page = await context.newPage();
  opened.add(page);
  page.on('close', () => opened.delete(page));
  page.errors = [];
  page.on('pageerror', (e) => page.errors.push(`pageerror: ${e.message}`));
  page.on('console', (m) => {
    if (m.type() === 'error') page.errors.push(`console: ${m.text()}`);
  });
  return page;
}

/**
 * Closes the pages a failed test left open. Each holds a connection for its event stream and
 * Chromium opens at most six per host, so a few leftovers would stall every test after them.
 */
export async function closePages() {
  await Promise.all([...opened].map((p) => p.close().catch(() => {})));
}

// The waits below guard against a page that never gets there; they time nothing. A cold make test
// on two loaded cores (the fuzz build beside three tests) took a full-page screenshot past
// Playwright's default 30 s once, so they are generous.
const READY_MS = 60000;
const SHOT_MS = 120000;

/** Navigates to a hash route and waits until the app marks that page's first render complete. */
export async function open(page, base, hash, ready) {
  await page.goto(`${base}/${hash}`);
  await page.waitForSelector(`html[data-ready="${ready}"]`, {timeout: READY_MS});
}

export async function shot(page, name) {
  fs.mkdirSync(SHOTS, {recursive: true});
  const file = path.join(SHOTS, `${name}.png`);
  // A page behind another one of its context (a test that opened a second page to follow a shared
  // link) gets no frames from headless Chromium, and its screenshot waits for one that never comes:
  // the page shot is brought to the front first.
  await page.bringToFront();
  await page.screenshot({path: file, fullPage: true, timeout: SHOT_MS});
  return file;
}
