// Matrix explorer: any suite and version (latest by default, one, or all), rows = one or two
// parameters, columns = hardware or a parameter, optionally one sweep or one fingerprint.
// Everything chosen is in the URL.

import {api, qs} from '../api.js';
import {fill, h} from '../dom.js';
import {throttle} from '../events.js';
import {defaultLayout, matrixControls, sweepValues} from '../components/matrix_controls.js';
import {failingRows, matrixView, scrollOf} from '../components/matrix.js';
import {oneHardware} from '../components/matrix_layout.js';
import {href} from '../router.js';

/**
 * The suite_version choices: latest (the API's default, so the URL leaves it out), each version
 * from the latest down, and all. The daemon numbers versions upwards but honours a version a suite
 * states, so a number here may name no version; the matrix then says so.
 */
export function versionChoices(latest) {
  const out = [{value: '', label: `latest (v${latest})`}];
  for (let v = latest; v >= 1; v--) out.push({value: String(v), label: `v${v}`});
  out.push({value: 'all', label: 'all versions'});
  return out;
}

/**
 * What a cell can show beside its verdict (`?layer=`, in the URL): the kernel family that carried
 * its latest run (issue 30), where the runs disagree with the declared support (a support table or
 * the framework's own answer), or how far its evidence goes (issue 32).
 */
export const LAYERS = [
  {value: '', label: 'verdicts'},
  {value: 'dispatch', label: 'kernels (dispatch)'},
  {value: 'drift', label: 'drift (declared vs observed)'},
  {value: 'evidence', label: 'evidence level'},
];

export default async function render(ctx) {
  const q = ctx.route.query;
  const suites = (await api('/api/v1/suites', {signal: ctx.signal})).items;
  if (!suites.length) {
    fill(ctx.main, h('h1', {}, 'Matrix'), h('p', {class: 'muted'}, 'No suites are registered.'));
    return;
  }
  const latest = suites.find((s) => s.name === q.get('suite')) || suites[0];
  const asked = q.get('suite_version') || '';
  const version = asked === 'all' || /^[1-9]\d*$/.test(asked) ? asked : '';
  // An older version may declare other parameters; the pickers offer that version's.
  let suite = latest;
  if (/^\d+$/.test(version) && Number(version) !== latest.version)
    suite = await api(`/api/v1/suites/${encodeURIComponent(latest.name)}?version=${version}`, {signal: ctx.signal}).catch(() => latest);
  const values = sweepValues(suite, null);
  const def = defaultLayout(values, 2);
  const state = {
    suite: latest.name,
    suite_version: version,
    rows: q.get('rows') ? q.get('rows').split(',') : def.rows,
    cols: q.get('cols') || def.cols,
    sweep: q.get('sweep') || '',
    fingerprint: q.get('fingerprint') || '',
    layer: LAYERS.some((l) => l.value && l.value === q.get('layer')) ? q.get('layer') : '',
    only: q.get('only') === 'failing' ? 'failing' : '',
  };
  const go = (over) => {
    const next = {...state, ...over};
    location.hash = href(['matrix'], {...next, rows: next.rows.join(',')});
  };

  const suiteSel = h('select', {name: 'suite', onchange: (e) => (location.hash = href(['matrix'], {suite: e.target.value}))},
    suites.map((s) => h('option', {value: s.name, selected: s.name === latest.name}, s.name)));
  // A sweep has one version, its own; the picker says so rather than offering choices it ignores.
  const versionSel = h('select', {name: 'suite_version', class: 'suite-version', disabled: !!state.sweep,
    title: state.sweep ? 'a sweep shows the version it ran' : null, onchange: (e) => go({suite_version: e.target.value})},
    versionChoices(latest.version).map((o) => h('option', {value: o.value, selected: o.value === state.suite_version}, o.label)));
  const sweepIn = h('input', {name: 'sweep', type: 'number', min: 1, value: state.sweep, placeholder: 'all', class: 'sweep-id',
    onchange: (e) => go({sweep: e.target.value})});
  const fpIn = h('input', {name: 'fingerprint', value: state.fingerprint, placeholder: 'any', class: 'fingerprint',
    onchange: (e) => go({fingerprint: e.target.value.trim()})});
  const controls = matrixControls(Object.keys(values), state, (l) => go(l));
  controls.prepend(h('label', {}, 'Suite', suiteSel), h('label', {}, 'Version', versionSel));
  const layerSel = h('select', {name: 'layer', 'data-testid': 'matrix-layer', onchange: (e) => go({layer: e.target.value})},
    LAYERS.map((l) => h('option', {value: l.value, selected: l.value === state.layer}, l.label)));
  // Only the rows with a failure: a view of what loaded, kept in the URL (only=failing).
  const onlyIn = h('input', {type: 'checkbox', name: 'only', 'data-testid': 'only-failing', checked: state.only === 'failing',
    onchange: (e) => go({only: e.target.checked ? 'failing' : ''})});
  controls.append(h('label', {}, 'Sweep', sweepIn), h('label', {}, 'Fingerprint', fpIn), h('label', {}, 'Layer', layerSel),
    h('label', {}, onlyIn, ' Only rows that fail'));
  // What the view shows: the asked layout, or its reshape when every result is on one hardware
  // class (oneHardware); the CSV and Markdown ask for what is on screen.
  let shown = {rows: state.rows, cols: state.cols};
  const query = (format, layout = {rows: state.rows, cols: state.cols}) => qs({suite: state.suite,
    suite_version: state.sweep ? '' : state.suite_version, rows: layout.rows.join(','), cols: layout.cols, sweep: state.sweep,
    fingerprint: state.fingerprint, layer: state.layer, format});
  const csv = h('a', {href: '/api/v1/matrix' + query('csv'), download: `${state.suite}-matrix.csv`}, 'Download CSV');
  const box = h('div', {'aria-live': 'polite'}, h('p', {class: 'muted'}, 'Loading…'));
  const metricNote = h('p', {class: 'muted', 'data-testid': 'matrix-note'});
  fill(ctx.main,
    h('h1', {}, 'Matrix'),
    h('p', {class: 'muted'}, suite.description || ''),
    controls,
    h('div', {class: 'row'}, metricNote, h('span', {class: 'spacer'}),
      csv),
    box);

  async function load() {
    try {
      const m = await api('/api/v1/matrix' + query(), {signal: ctx.signal});
      if (!ctx.alive) return;
      const of = m.suite_version === 'all' ? 'all versions' : `version ${m.suite_version}`;
      fill(metricNote, `Latest verdict per cell of ${of}${state.sweep ? `, in sweep #${state.sweep}` : ', across all sweeps'}.`,
        ' Click a cell for its trial or its breakdown; ', h('a', {href: href(['history'], {suite: state.suite})}, 'history'), ' shows one config over time.');
      const one = oneHardware(m, {explicit: !!q.get('cols'), order: values[state.rows[1]] || []});
      shown = one.layout;
      // The pickers say what is on screen (a change from there asks for that layout explicitly).
      controls.querySelector('select[name=row2]').value = shown.rows[1] || '';
      controls.querySelector('select[name=cols]').value = shown.cols;
      csv.href = '/api/v1/matrix' + query('csv', shown);
      const view = state.only === 'failing' ? failingRows(one.m) : one.m;
      if (state.only === 'failing' && !view.row_keys.length && one.m.row_keys?.length)
        return void fill(box, h('p', {class: 'muted', 'data-testid': 'no-failing-rows'},
          `No row fails: all ${one.m.row_keys.length} rows passed, are skipped or have not run yet.`));
      fill(box, matrixView(view, scrollOf(box), {heat: q.get('view') === 'heat', markdownUrl: () => '/api/v1/matrix' + query('markdown', shown)}));
    } catch (e) {
      if (!ctx.alive) return;
      const why = e.status === 404 && /^\d+$/.test(state.suite_version) && !state.sweep
        ? `${state.suite} has no version ${state.suite_version}` : e.message;
      fill(metricNote);
      fill(box, h('p', {class: 'error', role: 'alert'}, `The matrix could not be loaded: ${why}`));
    }
  }
  const refresh = throttle(load, 1500);
  ctx.onLeave(refresh.stop);
  ctx.onEvents((b) => {
    if (b.some((e) => e.type === 'trial.changed' || e.type === 'trials.skipped')) refresh();
  });
  await load();
}
