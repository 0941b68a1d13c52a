// Compare two runs (GET /api/v1/compare): per config × hardware class what broke, was fixed,
// changed, is new, gone or the same. The changes come first, as a list, then the whole comparison as
// a matrix coloured by change (configs with changes on top). Every choice is in the URL.

import {api, qs} from '../api.js';
import {fill, h, plural} from '../dom.js';
import {href} from '../router.js';
import {verdictClass, verdictLabel} from '../verdict.js';

const CHANGES = ['broke', 'flaky', 'fixed', 'changed', 'new', 'gone', 'same'];
const SIDE_KEYS = ['a', 'b', 'suite', 'a_fingerprint', 'b_fingerprint', 'a_version', 'b_version', 'threshold'];

function side(s) {
  if (!s) return h('span', {class: 'muted'}, '—');
  return h('span', {}, h('span', {class: `badge ${verdictClass(s.verdict)}`}, verdictLabel(s.verdict)),
    s.signature && s.verdict !== 'passed' ? [' ', h('code', {}, s.signature)] : null,
    ' ', h('a', {href: `#/trials/${s.trial}`, class: 'muted'}, `#${s.trial}`));
}

const pct = (x) => (x == null ? '' : `${x > 0 ? '+' : ''}${(x * 100).toFixed(1)}%`);

function sideName(j, k) {
  const s = j[k] || {};
  if (s.sweep != null) return h('a', {href: `#/sweeps/${s.sweep}`}, `sweep #${s.sweep}`);
  return [s.suite, s.suite_version != null ? ` v${s.suite_version}` : '', s.fingerprint ? ` @ ${s.fingerprint}` : ''].join('');
}

// The changes, most severe first. What B did not run (a rerun of A's failures leaves most of A gone)
// would bury them: gone rows are counted under the table and shown in the matrix below.
function changesTable(items) {
  const changed = items.filter((i) => i.change !== 'same' && i.change !== 'gone')
    .sort((x, y) => CHANGES.indexOf(x.change) - CHANGES.indexOf(y.change));
  const gone = items.filter((i) => i.change === 'gone').length;
  const goneNote = gone ? h('p', {class: 'muted', 'data-testid': 'gone-count'},
    `${gone} config × hardware ${gone === 1 ? 'pair' : 'pairs'} of A ${gone === 1 ? 'was' : 'were'} not run in B (gone): shown in the matrix below.`) : null;
  if (!changed.length) return [h('p', {'data-testid': 'no-changes'}, gone ? 'Nothing that B ran changed.' : 'Nothing changed: every config × hardware has the same verdict.'), goneNote];
  return [h('table', {class: 'list', 'aria-label': 'Changes'},
    h('thead', {}, h('tr', {}, ['Change', 'Config', 'Hardware', 'A', 'B', 'Key metric'].map((t) => h('th', {scope: 'col'}, t)))),
    h('tbody', {}, changed.map((i) => h('tr', {'data-change': i.change, 'data-config': i.config_key},
      h('td', {}, h('span', {class: `badge chg-${i.change}`}, i.change), i.why === 'metric' ? h('span', {class: 'muted'}, ' (metric)') : null),
      h('td', {class: 'mono'}, i.config_key), h('td', {}, i.hardware), h('td', {}, side(i.a)), h('td', {}, side(i.b)),
      h('td', {class: 'num'}, pct(i.metric_change)))))), goneNote];
}

/** Configs down, hardware across; each cell coloured by its change. Configs with changes first. */
function changeMatrix(items) {
  const hw = [...new Set(items.map((i) => i.hardware))].sort();
  const rank = new Map();
  for (const i of items) rank.set(i.config_key, Math.min(rank.get(i.config_key) ?? 9, CHANGES.indexOf(i.change)));
  const configs = [...rank.keys()].sort((x, y) => rank.get(x) - rank.get(y) || x.localeCompare(y));
  const at = new Map(items.map((i) => [i.config_key + '\u0000' + i.hardware, i]));
  return h('table', {class: 'list compare-matrix', 'aria-label': 'Comparison matrix', 'data-testid': 'compare-matrix'},
    h('thead', {}, h('tr', {}, h('th', {scope: 'col'}, 'Config'), hw.map((x) => h('th', {scope: 'col'}, x)))),
    h('tbody', {}, configs.map((c) => h('tr', {'data-config': c}, h('th', {scope: 'row', class: 'mono'}, c), hw.map((x) => {
      const i = at.get(c + '\u0000' + x);
      if (!i) return h('td', {class: 'muted'}, '·');
      const text = `${i.a?.verdict ?? '—'} → ${i.b?.verdict ?? '—'}`;
      return h('td', {class: `chg-${i.change}`, 'data-change': i.change, title: `${i.change}: ${text}`},
        i.change === 'same' ? i.b.verdict : `${i.change}: ${text}`, i.metric_change != null ? ` (${pct(i.metric_change)})` : '');
    })))));
}

export default async function render(ctx) {
  const q = ctx.route.query;
  const params = Object.fromEntries(SIDE_KEYS.map((k) => [k, q.get(k) || '']));
  const input = (k, label) => h('label', {}, label, ' ', h('input', {name: k, value: params[k], size: 8, 'data-testid': `input-${k}`}));
  const form = h('form', {class: 'row', 'aria-label': 'What to compare', onsubmit: (e) => {
    e.preventDefault();
    const next = {};
    for (const el of form.querySelectorAll('input')) next[el.name] = el.value.trim();
    location.hash = href(['compare'], next);
  }}, input('a', 'Sweep A'), input('b', 'Sweep B'), h('button', {type: 'submit'}, 'Compare'));
  const box = h('div', {'aria-live': 'polite'});
  fill(ctx.main, h('h1', {}, 'Compare'),
    h('p', {class: 'muted'}, 'What changed from run A to run B, per configuration and hardware class.'), form, box);
  const hasSide = (k) => params[k] || params[`${k}_fingerprint`] || params[`${k}_version`];
  if (!hasSide('a') || !hasSide('b')) return void fill(box, h('p', {class: 'muted'}, 'Name two sweeps to compare.'));
  let j;
  try {
    j = await api('/api/v1/compare' + qs(params), {signal: ctx.signal});
  } catch (e) {
    return void fill(box, h('p', {class: 'error', role: 'alert'}, `The comparison could not be made: ${e.message}`));
  }
  const chips = h('p', {class: 'row', 'data-testid': 'compare-summary'}, CHANGES.filter((c) => j.summary[c])
    .map((c) => h('span', {class: `badge chg-${c}`, 'data-change': c}, `${j.summary[c]} ${c}`)),
  j.summary.pending ? h('span', {class: 'muted'}, `${plural(j.summary.pending, 'trial')} not done yet`) : null);
  fill(box,
    h('p', {}, 'A: ', sideName(j, 'a'), ' → B: ', sideName(j, 'b'),
      j.key_metric ? h('span', {class: 'muted'}, ` · key metric ${j.key_metric}, a fall of more than ${pct(j.threshold).slice(1)} breaks`) : null,
      ' · ', h('a', {href: '/api/v1/compare' + qs({...params, format: 'csv'}), download: 'compare.csv'}, 'CSV')),
    j.note ? h('p', {class: 'note', role: 'note', 'data-testid': 'compare-note'}, j.note) : null,
    chips,
    h('h2', {}, 'Changes'), changesTable(j.items),
    h('h2', {}, 'Every config × hardware'), j.items.length ? changeMatrix(j.items) : h('p', {class: 'muted'}, 'Neither side has results.'));
}
