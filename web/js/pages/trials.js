// Trials matching a filter from the URL (suite, sweep, verdict, hardware, param.NAME): what a
// matrix cell's breakdown links to, so "which trials got this verdict for these values" is one click.

import {fill, h} from '../dom.js';
import {trialsTable} from '../components/trials_table.js';
import {href} from '../router.js';
import {verdictClass, verdictLabel} from '../verdict.js';

// What GET /api/v1/trials filters on; anything else in the hash is the page's own (`after`).
const FILTERS = ['suite', 'sweep', 'verdict', 'state', 'hardware'];

export default async function render(ctx) {
  const q = ctx.route.query;
  const filter = {};
  for (const [k, v] of q) if (FILTERS.includes(k) || (k.startsWith('param.') && k.length > 6)) filter[k] = v;
  const cursor = q.get('after') || '';
  const terms = Object.entries(filter).map(([k, v]) => h('span', {class: 'term', 'data-filter': k},
    k === 'verdict' ? h('span', {class: `badge ${verdictClass(v)}`}, verdictLabel(v))
      : k === 'sweep' ? h('a', {href: `#/sweeps/${v}`}, `sweep #${v}`)
      : [k.startsWith('param.') ? k.slice(6) : k, ' = ', h('code', {}, v)]));
  const table = await trialsTable(filter, {cursor, signal: ctx.signal,
    onPage: (after) => (location.hash = href(['trials'], {...filter, after}))});
  if (!ctx.alive) return;
  fill(ctx.main,
    h('h1', {}, 'Trials'),
    h('p', {class: 'row', 'data-testid': 'trial-filter'}, terms.length ? terms : h('span', {class: 'muted'}, 'every trial')),
    filter.suite ? h('p', {}, h('a', {href: href(['matrix'], {suite: filter.suite, sweep: filter.sweep})}, 'back to the matrix')) : null,
    table);
}
