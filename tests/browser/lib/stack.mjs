// A real Gauntlet: the daemon on port 0 with a temp database and the fixture suites, plus workers
// whose --inventory declares GPUs (they run the CPU-only fixture commands but report those GPUs).
import {spawn} from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {fileURLToPath} from 'node:url';

export const HERE = path.dirname(fileURLToPath(import.meta.url));
export const ROOT = path.resolve(HERE, '../../..');
export const FIXTURES = path.join(HERE, '..', 'fixtures');

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** Polls fn until it returns a truthy value or the deadline passes (then throws with `what`). */
export async function until(what, fn, {timeoutMs = 60000, everyMs = 100} = {}) {
  const deadline = Date.now() + timeoutMs;
  let last;
  for (;;) {
    try {
      last = await fn();
      if (last) return last;
    } catch (e) {
      last = e;
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what} (last: ${last instanceof Error ? last.message : JSON.stringify(last)})`);
    await sleep(everyMs);
  }
}

export class Stack {
  constructor({bin, suites = path.join(FIXTURES, 'suites'), keep = false, args = []} = {}) {
    this.args = args;  // extra `serve` flags, e.g. --tokens FILE
    this.bin = bin || process.env.GAUNTLET_BIN || path.join(ROOT, 'build', 'bin', 'gauntlet');
    this.suites = suites;
    this.dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gauntlet-browser-'));
    this.procs = [];
    this.keep = keep;
  }

  spawn(name, args, env = {}) {
    const log = fs.openSync(path.join(this.dir, `${name}.log`), 'a');
    const p = spawn(this.bin, args, {stdio: ['ignore', log, log], env: {...process.env, ...env}});
    p.name = name;
    p.on('error', (e) => fs.appendFileSync(path.join(this.dir, `${name}.log`), `spawn failed: ${e.message}\n`));
    this.procs.push(p);
    return p;
  }

  async start() {
    const st = fs.statSync(this.bin, {throwIfNoEntry: false});
    if (!st || !st.size) throw new Error(`${this.bin} is missing or empty: build it (ninja -C build gauntlet) or set GAUNTLET_BIN`);
    const portFile = path.join(this.dir, 'port');
    const serve = this.spawn('serve', ['serve', '--db', path.join(this.dir, 'gauntlet.db'), '--listen', '127.0.0.1:0',
      '--port-file', portFile, '--suites', this.suites, ...this.args]);
    let exited = null;
    serve.on('exit', (code) => (exited = code));
    const port = await until('the daemon to write its port file', () => {
      if (exited != null) throw new Error(`daemon exited (${exited}): ${this.log('serve')}`);
      return fs.existsSync(portFile) && Number(fs.readFileSync(portFile, 'utf8').trim());
    }, {timeoutMs: 30000});
    this.url = `http://127.0.0.1:${port}`;
    return this;
  }

  /**
   * Starts a worker declaring the GPUs in fixtures/inventory-NAME.json; waits until it is registered.
   * `env` is set in the worker's environment and passed on to its stages (a worker passes only what
   * --pass-env names).
   */
  async worker(name, inventory = name, {env = {}} = {}) {
    this.spawn(`worker-${name}`, ['worker', '--server', this.url, '--inventory', path.join(FIXTURES, `inventory-${inventory}.json`),
      '--name', name, '--workdir', path.join(this.dir, `work-${name}`), ...Object.keys(env).flatMap((k) => ['--pass-env', k])], env);
    await until(`worker ${name} to register`, async () => (await this.get('/api/v1/nodes')).items.some((n) => n.name === name && n.state === 'online'));
  }

  log(name) {
    try {
      return fs.readFileSync(path.join(this.dir, `${name}.log`), 'utf8').slice(-4000);
    } catch {
      return '';
    }
  }

  async get(p) {
    const r = await fetch(this.url + p);
    if (!r.ok) throw new Error(`GET ${p}: ${r.status} ${await r.text()}`);
    return r.json();
  }

  async post(p, body, method = 'POST') {
    const r = await fetch(this.url + p, {method, headers: {'Content-Type': 'application/json'}, body: JSON.stringify(body)});
    if (!r.ok) throw new Error(`${method} ${p}: ${r.status} ${await r.text()}`);
    return r.json();
  }

  async put(p, body) {
    return this.post(p, body, 'PUT');
  }

  async sweep(body) {
    return this.post('/api/v1/sweeps', body);
  }

  async waitSweep(id, timeoutMs = 90000) {
    return until(`sweep ${id} to finish`, async () => {
      const s = await this.get(`/api/v1/sweeps/${id}`);
      return s.finished && s;
    }, {timeoutMs, everyMs: 200});
  }

  async stop() {
    // Workers first (they hand back leases), then the daemon; SIGKILL whatever outlives a grace period.
    const alive = (p) => p.exitCode == null && p.signalCode == null;
    const stopAll = async (ps) => {
      for (const p of ps) if (alive(p)) p.kill('SIGTERM');
      await until('processes to exit', () => ps.every((p) => !alive(p)), {timeoutMs: 10000}).catch(() => {
        for (const p of ps) if (alive(p)) p.kill('SIGKILL');
      });
    };
    await stopAll(this.procs.filter((p) => p.name !== 'serve'));
    await stopAll(this.procs.filter((p) => p.name === 'serve'));
    if (!this.keep) fs.rmSync(this.dir, {recursive: true, force: true});
  }
}

/** A fresh stack for one test file, kept on disk when GAUNTLET_KEEP is set (to read its logs). */
export const startStack = () => new Stack({keep: !!process.env.GAUNTLET_KEEP}).start();

/**
 * The end of a test file: the browser closed, then the stack stopped; when a test failed, the tail
 * of each log in `logs` (label: process name) is printed first. Either may be unset (a start failed).
 */
export async function finish(browser, stack, logs = {daemon: 'serve'}) {
  await browser?.close();
  if (!stack) return;
  if (process.exitCode) {
    console.log(Object.entries(logs).map(([label, name]) => `${label} log tail:\n${stack.log(name)}`).join('\n'));
  }
  await stack.stop();
}
