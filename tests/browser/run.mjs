// ctest entry: skips visibly (exit 77) when Chromium or playwright-core is missing, otherwise runs
// the dashboard tests with Node's test runner and passes its exit status through.
import {spawnSync} from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import {fileURLToPath} from 'node:url';
import {CHROMIUM} from './lib/browser.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const missing = [];
if (!fs.existsSync(CHROMIUM)) missing.push(`${CHROMIUM} (apt-get install chromium)`);
if (!fs.existsSync(path.join(here, 'node_modules', 'playwright-core'))) missing.push('playwright-core (run scripts/install-test-deps.sh)');
if (missing.length) {
  console.log(`SKIP browser tests: missing ${missing.join(', ')}`);
  process.exit(77);
}
const files = process.argv.slice(2);
const r = spawnSync(process.execPath, ['--test', '--test-concurrency=1', ...(files.length ? files : [path.join(here, 'dashboard.test.mjs'), path.join(here, 'token.test.mjs')])],
  {stdio: 'inherit', cwd: here});
process.exit(r.status ?? 1);
