// Boot: the router picks a page for the hash, gives it a context whose timers, event
// subscriptions and fetches end when the person navigates away, and marks the first render done.

import {askToken, closeTokenPrompt} from './api.js';
import {h, fill} from './dom.js';
import {onEvents, startEvents} from './events.js';
import {parse} from './router.js';

const PAGES = {
  sweeps: () => import('./pages/sweeps.js'),
  sweep: () => import('./pages/sweep.js'),
  matrix: () => import('./pages/matrix.js'),
  trial: () => import('./pages/trial.js'),
  trials: () => import('./pages/trials.js'),
  nodes: () => import('./pages/nodes.js'),
  clusters: () => import('./pages/clusters.js'),
  history: () => import('./pages/history.js'),
  compare: () => import('./pages/compare.js'),
  best: () => import('./pages/best.js'),
  check: () => import('./pages/check.js'),
  drift: () => import('./pages/drift.js'),
  triage: () => import('./pages/triage.js'),
};

function pick(parts) {
  const [head, id] = parts;
  if (!head || head === 'sweeps') return id ? 'sweep' : 'sweeps';
  if (head === 'trials') return id ? 'trial' : 'trials';
  return PAGES[head] ? head : null;
}

let current = null;

/** What a page gets: its element, its route, and registration of things to stop on leave. */
function makeContext(main, route) {
  const stops = [];
  const ctrl = new AbortController();
  return {
    main,
    route,
    signal: ctrl.signal,
    get alive() {
      return !ctrl.signal.aborted;
    },
    onEvents(fn) {
      stops.push(onEvents(fn));
    },
    every(ms, fn) {
      const id = setInterval(fn, ms);
      stops.push(() => clearInterval(id));
    },
    onLeave(fn) {
      stops.push(fn);
    },
    leave() {
      ctrl.abort();
      for (const s of stops) s();
    },
  };
}

async function show() {
  const route = parse();
  const name = pick(route.parts);
  const main = document.getElementById('main');
  current?.leave();
  closeTokenPrompt();
  delete document.documentElement.dataset.ready;
  for (const a of document.querySelectorAll('[data-nav]')) {
    const on = a.dataset.nav === (name === 'sweep' ? 'sweeps' : name);
    if (on) a.setAttribute('aria-current', 'page');
    else a.removeAttribute('aria-current');
  }
  if (!name) {
    fill(main, h('h1', {}, 'Not found'), h('p', {}, 'No page at ', h('code', {}, location.hash), '. ',
      h('a', {href: '#/sweeps'}, 'See the sweeps.')));
    return;
  }
  const ctx = makeContext(main, route);
  current = ctx;
  try {
    const mod = await PAGES[name]();
    await mod.default(ctx);
  } catch (e) {
    if (!ctx.alive) return;
    console.error(e);
    fill(main, h('h1', {}, 'Something went wrong'), h('p', {class: 'error', role: 'alert'}, String(e.message || e)));
  }
  if (!ctx.alive) return;
  // The "page complete" marker, set once the browser has laid out and painted what the page
  // built (a frame, then a task): tests and the dashboard bench wait for it.
  performance.mark('gauntlet:built');
  await new Promise((r) => requestAnimationFrame(() => setTimeout(r, 0)));
  if (!ctx.alive) return;
  document.documentElement.dataset.ready = name;
  if (window.__gauntletFirstRender == null) window.__gauntletFirstRender = performance.now();
  window.dispatchEvent(new Event('gauntlet:ready'));
}

window.addEventListener('hashchange', show);
document.getElementById('token-button').addEventListener('click', () => askToken('Set the token this browser sends.'));
if (!location.hash) history.replaceState(null, '', '#/sweeps');
show();
startEvents();
