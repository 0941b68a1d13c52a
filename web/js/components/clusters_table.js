// Failure clusters: one row per signature, with the parameter value that explains it when the
// server found one ("backend = triton on NVIDIA H200"), its hardware, and example trials.

import {h, plural} from '../dom.js';
import {href} from '../router.js';
import {segmentClass, verdictClass, verdictLabel} from '../verdict.js';

// One value ("backend = triton") or, where two only together explain it, both ("backend = x and dtype = fp32").
function explained(e) {
  if (!e) return h('span', {class: 'muted'}, 'no single parameter');
  const pairs = e.params && Object.keys(e.params).length ? Object.entries(e.params) : [[e.param, e.value]];
  const text = pairs.map(([p, v]) => `${p} = ${v}`).join(' and ');
  return h('span', {}, h('code', {}, text), e.hardware ? h('span', {class: 'muted'}, ` on ${e.hardware}`) : null);
}

/**
 * `scope` ({suite, sweep}) makes each signature a link to the trials of that one signature there.
 */
export function clustersTable(items, {limit = Infinity, more, scope} = {}) {
  const failures = (items || []).filter((c) => c.verdict !== 'passed');
  if (!failures.length) return h('p', {class: 'muted', 'data-testid': 'no-clusters'}, 'No failures: nothing to cluster.');
  const max = Math.max(...failures.map((c) => c.count));
  const shown = failures.slice(0, limit);
  const rows = shown.map((c) => h('tr', {'data-signature': c.signature},
    h('td', {}, h('span', {class: `badge ${verdictClass(c.verdict)}`}, verdictLabel(c.verdict))),
    h('td', {class: 'mono signature'}, scope && c.signature
      ? h('a', {href: href(['trials'], {...scope, signature: c.signature}), 'data-testid': 'signature-trials'}, c.signature)
      : c.signature || '(none)'),
    h('td', {class: 'num'}, String(c.count),
      // The bar's length is this cluster's share of the largest: data, so a custom property.
      h('div', {class: 'progress thin', 'aria-hidden': 'true'},
        h('span', {class: segmentClass(c.verdict), vars: {'--share': `${(100 * c.count) / max}%`}}))),
    h('td', {}, explained(c.explained_by)),
    h('td', {}, (c.hardware || []).join(', ')),
    h('td', {}, (c.trials || []).slice(0, 6).map((t, i) => [i ? ' ' : '', h('a', {href: `#/trials/${t}`}, `#${t}`)])),
  ));
  return h('div', {},
    h('table', {class: 'list', 'aria-label': 'Failure clusters'},
      h('thead', {}, h('tr', {}, ['Verdict', 'Signature', 'Trials', 'Explained by', 'Hardware', 'Examples']
        .map((t, i) => h('th', {scope: 'col', class: i === 2 ? 'num' : null}, t)))),
      h('tbody', {}, rows)),
    failures.length > shown.length && more ? h('p', {}, h('a', {href: more}, `All ${plural(failures.length, 'cluster')} →`)) : null);
}
