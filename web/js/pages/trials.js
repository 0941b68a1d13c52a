// Trials matching a filter from the URL (suite, sweep, verdict, hardware, param.NAME): what a
// matrix cell's breakdown links to, so "which trials got this verdict for these values" is one click.

import {fill, h} from '../dom.js';
import {trialsTable} from '../components/trials_table.js';
import {href} from '../router.js';
import {VERDICTS, verdictClass, verdictLabel} from '../verdict.js';

// What GET /api/v1/trials filters on; anything else in the hash is the page's own (`after`, `sort`, `desc`).
const FILTERS = ['suite', 'sweep', 'verdict', 'state', 'hardware', 'signature'];

/** The form that narrows the list: a verdict, a signature, a parameter value; it keeps the other filters. */
function filterForm(filter) {
  const params = Object.entries(filter).filter(([k]) => k.startsWith('param.')).map(([k, v]) => `${k.slice(6)}=${v}`).join(' ');
  const form = h('form', {class: 'row filters', 'aria-label': 'Filter trials', onsubmit: (e) => {
    e.preventDefault();
    const next = Object.fromEntries(Object.entries(filter).filter(([k]) => !k.startsWith('param.') && k !== 'verdict' && k !== 'signature'));
    next.verdict = form.elements.verdict.value;
    next.signature = form.elements.signature.value.trim();
    for (const kv of form.elements.params.value.split(/\s+/).filter(Boolean)) {
      const i = kv.indexOf('=');
      if (i > 0) next[`param.${kv.slice(0, i)}`] = kv.slice(i + 1);
    }
    location.hash = href(['trials'], next);
  }},
  h('label', {}, 'Verdict ', h('select', {name: 'verdict', 'data-testid': 'filter-verdict'}, h('option', {value: ''}, 'any'),
    VERDICTS.map((v) => h('option', {value: v, selected: filter.verdict === v}, verdictLabel(v))))),
  h('label', {}, 'Signature ', h('input', {name: 'signature', value: filter.signature || '', size: 28, 'data-testid': 'filter-signature'})),
  h('label', {}, 'Parameters ', h('input', {name: 'params', value: params, size: 24, placeholder: 'name=value …', 'data-testid': 'filter-params'})),
  h('button', {type: 'submit'}, 'Filter'));
  return form;
}

export default async function render(ctx) {
  const q = ctx.route.query;
  const filter = {};
  for (const [k, v] of q) if (FILTERS.includes(k) || (k.startsWith('param.') && k.length > 6)) filter[k] = v;
  const cursor = q.get('after') || '';
  const sort = q.get('sort') || '';
  const desc = q.get('desc') === '1';
  const terms = Object.entries(filter).map(([k, v]) => h('span', {class: 'term', 'data-filter': k},
    k === 'verdict' ? h('span', {class: `badge ${verdictClass(v)}`}, verdictLabel(v))
      : k === 'sweep' ? h('a', {href: `#/sweeps/${v}`}, `sweep #${v}`)
      : [k.startsWith('param.') ? k.slice(6) : k, ' = ', h('code', {}, v)]));
  const table = await trialsTable(filter, {cursor, signal: ctx.signal, sort, desc,
    onPage: (after) => (location.hash = href(['trials'], {...filter, after, sort, desc: desc ? 1 : ''})),
    onSort: (key, d) => (location.hash = href(['trials'], {...filter, sort: key, desc: d ? 1 : ''}))});
  if (!ctx.alive) return;
  fill(ctx.main,
    h('h1', {}, 'Trials'),
    h('p', {class: 'row', 'data-testid': 'trial-filter'}, terms.length ? terms : h('span', {class: 'muted'}, 'every trial')),
    filterForm(filter),
    filter.suite ? h('p', {}, h('a', {href: href(['matrix'], {suite: filter.suite, sweep: filter.sweep})}, 'back to the matrix')) : null,
    table);
}
