// Launches Debian's Chromium through playwright-core: headless, no sandbox (containers), nothing
// that phones home, and a fresh profile per run so no state leaks between tests.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

export const CHROMIUM = process.env.GAUNTLET_CHROMIUM || '/usr/bin/chromium';

export async function launch() {
  const {chromium} = await import('playwright-core');
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'gauntlet-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    viewport: {width: 1400, height: 900},
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  const close = async () => {
    await context.close();
    fs.rmSync(profile, {recursive: true, force: true});
  };
  return {context, close};
}
