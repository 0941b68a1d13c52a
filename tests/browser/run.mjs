// ctest entry. The Node-only tests (units.test.mjs, the helpers; sources.test.mjs, a scan of web/)
// always run; the page tests then skip visibly (exit 77) when Chromium or playwright-core is
// missing, otherwise run with Node's test runner, and their exit status is passed through.
// Arguments: test files to run instead.
import {spawnSync} from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import {fileURLToPath} from 'node:url';
import {CHROMIUM} from './lib/browser.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const nodeTest = (files) =>
  spawnSync(process.execPath, ['--test', '--test-concurrency=1', ...files.map((f) => path.resolve(process.cwd(), f))],
    {stdio: 'inherit', cwd: here}).status ?? 1;

// The tests that need no browser; every other *.test.mjs here drives Chromium.
const NODE_ONLY = ['units.test.mjs', 'sources.test.mjs'];
const PAGES = ['dashboard.test.mjs', 'answers.test.mjs', 'bisect_live.test.mjs', 'token.test.mjs', 'workflow.test.mjs',
  'advice.test.mjs', 'matrix_scale.test.mjs'];

// Exits 77 (ctest: skipped), saying what is missing, when a page test cannot run here.
function needBrowser() {
  const missing = [];
  if (!fs.existsSync(CHROMIUM)) missing.push(`${CHROMIUM} (apt-get install chromium)`);
  if (!fs.existsSync(path.join(here, 'node_modules', 'playwright-core'))) missing.push('playwright-core (run scripts/install-test-deps.sh)');
  if (missing.length) {
    console.log(`SKIP browser tests: missing ${missing.join(', ')}`);
    process.exit(77);
  }
}

// Named files: those (ctest runs one page test per entry, tests/browser/CMakeLists.txt). None: all.
const files = process.argv.slice(2);
if (files.length) {
  if (files.some((f) => !NODE_ONLY.includes(path.basename(f)))) needBrowser();
  process.exit(nodeTest(files));
}
const units = nodeTest(NODE_ONLY.map((f) => path.join(here, f)));
if (units !== 0) process.exit(units);
needBrowser();
process.exit(nodeTest(PAGES.map((f) => path.join(here, f))));
