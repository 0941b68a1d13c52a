// Matrix explorer: any suite, rows = one or two parameters, columns = hardware or a parameter,
// optionally one sweep or one fingerprint. Everything chosen is in the URL.

import {api, qs} from '../api.js';
import {fill, h} from '../dom.js';
import {throttle} from '../events.js';
import {defaultLayout, matrixControls, sweepValues} from '../components/matrix_controls.js';
import {matrixView, scrollOf} from '../components/matrix.js';
import {href} from '../router.js';

export default async function render(ctx) {
  const q = ctx.route.query;
  const suites = (await api('/api/v1/suites', {signal: ctx.signal})).items;
  if (!suites.length) {
    fill(ctx.main, h('h1', {}, 'Matrix'), h('p', {class: 'muted'}, 'No suites are registered.'));
    return;
  }
  const suite = suites.find((s) => s.name === q.get('suite')) || suites[0];
  const values = sweepValues(suite, null);
  const def = defaultLayout(values, 2);
  const state = {
    suite: suite.name,
    rows: q.get('rows') ? q.get('rows').split(',') : def.rows,
    cols: q.get('cols') || def.cols,
    sweep: q.get('sweep') || '',
    fingerprint: q.get('fingerprint') || '',
  };
  const go = (over) => {
    const next = {...state, ...over};
    location.hash = href(['matrix'], {...next, rows: next.rows.join(',')});
  };

  const suiteSel = h('select', {name: 'suite', onchange: (e) => (location.hash = href(['matrix'], {suite: e.target.value}))},
    suites.map((s) => h('option', {value: s.name, selected: s.name === suite.name}, s.name)));
  const sweepIn = h('input', {name: 'sweep', type: 'number', min: 1, value: state.sweep, placeholder: 'all', class: 'sweep-id',
    onchange: (e) => go({sweep: e.target.value})});
  const fpIn = h('input', {name: 'fingerprint', value: state.fingerprint, placeholder: 'any', class: 'fingerprint',
    onchange: (e) => go({fingerprint: e.target.value.trim()})});
  const controls = matrixControls(Object.keys(values), state, (l) => go(l));
  controls.prepend(h('label', {}, 'Suite', suiteSel));
  controls.append(h('label', {}, 'Sweep', sweepIn), h('label', {}, 'Fingerprint', fpIn));
  const query = (format) => qs({suite: state.suite, rows: state.rows.join(','), cols: state.cols, sweep: state.sweep,
    fingerprint: state.fingerprint, format});
  const box = h('div', {'aria-live': 'polite'}, h('p', {class: 'muted'}, 'Loading…'));
  const metricNote = h('p', {class: 'muted'});
  fill(ctx.main,
    h('h1', {}, 'Matrix'),
    h('p', {class: 'muted'}, suite.description || ''),
    controls,
    h('div', {class: 'row'}, metricNote, h('span', {class: 'spacer'}),
      h('a', {href: '/api/v1/matrix' + query('csv'), download: `${state.suite}-matrix.csv`}, 'Download CSV')),
    box);

  async function load() {
    try {
      const m = await api('/api/v1/matrix' + query(), {signal: ctx.signal});
      if (!ctx.alive) return;
      fill(metricNote, `Latest verdict per cell${state.sweep ? ` in sweep #${state.sweep}` : ' across all sweeps'}.`,
        ' Click a cell for its trial; ', h('a', {href: href(['history'], {suite: state.suite})}, 'history'), ' shows one config over time.');
      fill(box, matrixView(m, scrollOf(box)));
    } catch (e) {
      if (ctx.alive) fill(box, h('p', {class: 'error', role: 'alert'}, `The matrix could not be loaded: ${e.message}`));
    }
  }
  const refresh = throttle(load, 1500);
  ctx.onLeave(refresh.stop);
  ctx.onEvents((b) => {
    if (b.some((e) => e.type === 'trial.changed' || e.type === 'trials.skipped')) refresh();
  });
  await load();
}
