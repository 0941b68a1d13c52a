// Failure clusters of a suite (or one sweep), and the suite's regressions.

import {api, qs} from '../api.js';
import {fill, fmtConfig, h} from '../dom.js';
import {clustersTable} from '../components/clusters_table.js';
import {href} from '../router.js';
import {verdictClass, verdictLabel} from '../verdict.js';
import {fmtMetric} from '../dom.js';

function side(x) {
  if (!x) return '–';
  const parts = [];
  if (x.value != null) parts.push(h('code', {}, x.value), ' ');
  if (x.verdict) parts.push(h('span', {class: `badge ${verdictClass(x.verdict)}`}, verdictLabel(x.verdict)));
  if (x.metric) parts.push(' ', fmtMetric(x.metric));
  if (x.trial) parts.push(' ', h('a', {href: `#/trials/${x.trial}`}, `#${x.trial}`));
  return h('span', {}, parts.length ? parts : JSON.stringify(x));
}

// What became of an ordered-parameter regression: its bisection, the first bad value when no value
// lies between, or the command that starts a bisection.
function answer(r) {
  if (r.kind !== 'ordered') return h('a', {href: href(['history'], {suite: r.suite, config: r.config_key})}, 'history');
  const b = r.bisection;
  if (b) return h('span', {'data-testid': 'regression-bisection'},
    h('a', {href: `#/sweeps/${b.id}`}, `bisection #${b.id}`), ` ${b.state}`, b.first_bad ? [': first bad ', h('code', {}, b.first_bad)] : '');
  if (r.first_bad != null) return h('span', {}, 'first bad ', h('code', {}, r.first_bad));
  return h('span', {'data-testid': 'regression-start'}, 'no bisection started',
    r.start ? [': ', h('code', {class: 'mono'}, r.start.command)] : '');
}

function regressionsTable(items) {
  if (!items.length) return h('p', {class: 'muted', 'data-testid': 'no-regressions'}, 'No regressions: no config got worse on its hardware.');
  return h('table', {class: 'list', 'aria-label': 'Regressions'},
    h('thead', {}, h('tr', {}, ['Config', 'Hardware', 'Kind', 'Before', 'After', ''].map((t) => h('th', {scope: 'col'}, t)))),
    h('tbody', {}, items.map((r) => h('tr', {'data-kind': r.kind},
      h('td', {class: 'mono'}, r.config ? fmtConfig(r.config) : r.config_key),
      h('td', {}, r.hardware), h('td', {}, r.kind === 'ordered' ? `ordered: ${r.parameter}` : r.kind),
      h('td', {}, side(r.before)), h('td', {}, side(r.after)),
      h('td', {}, answer(r))))));
}

export default async function render(ctx) {
  const q = ctx.route.query;
  const suites = (await api('/api/v1/suites', {signal: ctx.signal})).items;
  const suite = q.get('suite') || suites[0]?.name || '';
  const sweep = q.get('sweep') || '';
  const go = (over) => (location.hash = href(['clusters'], {suite, sweep, ...over}));
  const clustersBox = h('div', {}, h('p', {class: 'muted'}, 'Loading…'));
  const regressionsBox = h('div', {}, h('p', {class: 'muted'}, 'Loading…'));
  fill(ctx.main,
    h('h1', {}, 'Failure clusters'),
    h('p', {class: 'muted'}, 'Failures grouped by signature, with the parameter value that explains each cluster where one does.'),
    h('div', {class: 'controls'},
      h('label', {}, 'Suite', h('select', {name: 'suite', onchange: (e) => go({suite: e.target.value, sweep: ''})},
        suites.map((s) => h('option', {value: s.name, selected: s.name === suite}, s.name)))),
      h('label', {}, 'Sweep', h('input', {name: 'sweep', type: 'number', min: 1, value: sweep, placeholder: 'all', class: 'sweep-id',
        onchange: (e) => go({sweep: e.target.value})}))),
    clustersBox,
    h('h2', {}, 'Regressions'),
    h('p', {class: 'muted'}, 'Configs whose latest verdict is worse than the one before on the same hardware, whose key metric fell, or that failed at a later value of an ordered parameter than one they passed (with the bisection that searches the gap).'),
    regressionsBox);
  if (!suite) {
    fill(clustersBox, h('p', {class: 'muted'}, 'No suites are registered.'));
    fill(regressionsBox);
    return;
  }
  const load = async (box, path, view) => {
    try {
      const d = await api(path, {signal: ctx.signal});
      if (ctx.alive) fill(box, view(d.items || []));
    } catch (e) {
      if (ctx.alive) fill(box, h('p', {class: 'error', role: 'alert'}, `Could not load: ${e.message}`));
    }
  };
  await Promise.all([
    load(clustersBox, '/api/v1/signatures' + qs({suite, sweep}), (items) => clustersTable(items, {scope: {suite, sweep}})),
    load(regressionsBox, '/api/v1/regressions' + qs({suite}), regressionsTable),
  ]);
}
