// The fleet: each node's GPUs (busy, or held back by its worker with the reason), state and reason,
// what it runs now, and how long since it was heard from.

import {api} from '../api.js';
import {fill, fmtFingerprint, fmtSeconds, h, noun, plural} from '../dom.js';
import {throttle} from '../events.js';

const STATE_CLASS = {online: 'vf-ok', draining: 'vf-warn', offline: 'vf-none', quarantined: 'vf-bad'};

function gpus(n) {
  const busy = new Set(n.busy_gpus || []);
  const held = new Map((n.held_back || []).map((g) => [g.gpu, g]));
  const list = n.inventory?.gpus || [];
  if (!list.length) return h('span', {class: 'muted'}, 'CPU only');
  return h('ul', {class: 'gpus'}, list.map((g) => {
    const cc = g.compute_capability ? `sm_${String(g.compute_capability).replace('.', '')}` : '';
    return h('li', {'data-gpu': g.index}, `${g.index}: ${g.name} `, h('span', {class: 'muted'}, `${cc} · ${Math.round((g.memory_mb || 0) / 1024)} GiB`),
      busy.has(g.index) ? h('span', {class: 'badge v-pending busy'}, 'busy') : null,
      held.has(g.index) ? heldBack(held.get(g.index)) : null);
  }));
}

// A GPU its worker keeps from trials: processes outlived their trial on it (NVML still lists them).
function heldBack(g) {
  const pids = (g.pids || []).join(', ');
  return h('span', {'data-testid': 'held-back'}, ' ',
    h('span', {class: 'badge v-crashed held', title: g.reason || ''}, 'held back'),
    h('div', {class: 'muted held-reason'}, g.reason || `processes left on it${pids ? ` (pids ${pids})` : ''}`));
}

// A node that reports no versions (a worker that found no driver or CUDA sends them empty) says so,
// rather than printing the bare names with nothing after them.
// The kernel recorder is a capability the worker reports beside its versions, not software: it is
// said on hover, not in the versions.
function software(fp) {
  // The versions are the node's software; the kernel recorder, its trials' isolation and whether its
  // stage limits hold are capabilities beside them, said on hover.
  const {kernel_recorder: recorder, isolation, limits, ...versions} = fp || {};
  const text = fmtFingerprint(versions, '');
  const title = [recorder && `kernel recorder: ${recorder}`, isolation && `isolation: ${isolation}`,
    limits && `stage limits: ${limits}`].filter(Boolean).join('\n') || null;
  return text ? h('td', {class: 'mono', 'data-testid': 'software', title}, text)
    : h('td', {class: 'muted', 'data-testid': 'software', title}, 'unknown');
}

export default async function render(ctx) {
  const tbody = h('tbody');
  const summary = h('p', {class: 'muted', 'data-testid': 'nodes-summary'});
  let fetchedAt = 0;
  let nodes = [];
  fill(ctx.main, h('h1', {}, 'Nodes'), summary,
    h('table', {class: 'list', 'aria-label': 'Nodes'},
      h('thead', {}, h('tr', {}, ['Node', 'Hardware', 'State', 'GPUs', 'Running', 'Labels', 'Software', 'Heartbeat']
        .map((t) => h('th', {scope: 'col'}, t)))),
      tbody));

  function draw() {
    const now = Date.now();
    fill(tbody, nodes.length ? nodes.map((n) => h('tr', {'data-node': n.name},
      h('td', {}, h('b', {}, n.name), h('div', {class: 'muted'}, `id ${n.id}`)),
      h('td', {}, n.hardware || '–'),
      h('td', {}, h('span', {class: `badge ${STATE_CLASS[n.state] || 'v-pending'}`, 'data-testid': 'node-state'}, n.state),
        n.reason ? h('div', {class: 'muted node-reason'}, n.reason) : null),
      h('td', {}, gpus(n)),
      h('td', {}, (n.running || []).length ? n.running.map((r) => h('div', {},
        h('a', {href: `#/trials/${r.trial}`}, `#${r.trial}`), h('span', {class: 'muted'}, ` sweep ${r.sweep} · ${noun((r.gpus || []).length, 'GPU')} ${(r.gpus || []).join(',')}`)))
        : h('span', {class: 'muted'}, 'idle')),
      h('td', {class: 'mono'}, Object.entries(n.labels || {}).map(([k, v]) => `${k}=${v}`).join(' ')),
      software(n.fingerprint),
      h('td', {'data-testid': 'heartbeat'}, fmtSeconds((n.heartbeat_age_s || 0) + (now - fetchedAt) / 1000), ' ago'),
    )) : h('tr', {}, h('td', {colspan: 8, class: 'muted'}, 'No worker has registered. Start one with `gauntlet worker --server URL`.')));
    const by = {};
    for (const n of nodes) by[n.state] = (by[n.state] || 0) + 1;
    const gpuCount = nodes.reduce((a, n) => a + (n.inventory?.gpus?.length || 0), 0);
    const held = nodes.reduce((a, n) => a + (n.held_back?.length || 0), 0);
    summary.textContent = `${plural(nodes.length, 'node')}, ${plural(gpuCount, 'GPU')}: ` +
      (Object.entries(by).map(([k, v]) => `${v} ${k}`).join(', ') || 'none') +
      (held ? `; ${plural(held, 'GPU')} held back` : '');
  }

  async function load() {
    const data = await api('/api/v1/nodes', {signal: ctx.signal});
    if (!ctx.alive) return;
    nodes = data.items;
    fetchedAt = Date.now();
    draw();
  }
  const refresh = throttle(() => load().catch((e) => console.warn(e)), 1000);
  ctx.onLeave(refresh.stop);
  ctx.onEvents((b) => {
    if (b.some((e) => e.type.startsWith('node.') || e.type === 'trial.changed' || e.type === 'reconnect')) refresh();
  });
  ctx.every(1000, draw);  // heartbeat ages tick between fetches
  ctx.every(10000, refresh);  // and a slow poll catches heartbeats, which publish no event
  await load();
}
