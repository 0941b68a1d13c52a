// A page of trials for a filter, with cursor paging (the API's `next`): never the whole sweep.

import {api, qs} from '../api.js';
import {fmtConfig, fmtSeconds, h, plural} from '../dom.js';
import {shortReason, verdictClass, verdictLabel} from '../verdict.js';

export const PAGE = 50;

// A trial that took an earlier trial's verdict: done without starting, with a real verdict (a
// skip links its evidence too, but pruning settled it, not reuse), as the daemon counts `reused`.
const reused = (t) => t.state === 'done' && !t.started_at && t.evidence_trial != null && t.verdict && t.verdict !== 'skipped' && t.verdict !== 'cancelled';

function row(t) {
  const secs = t.started_at && t.finished_at ? (t.finished_at - t.started_at) / 1000 : null;
  const v = t.verdict;
  return h('tr', {'data-trial': t.id},
    h('td', {class: 'num'}, h('a', {href: `#/trials/${t.id}`}, `#${t.id}`)),
    h('td', {class: 'mono', 'data-testid': 'config'}, fmtConfig(t.config)),
    h('td', {}, t.hardware || h('span', {class: 'muted'}, '–')),
    h('td', {}, t.state),
    h('td', {}, v ? h('span', {class: `badge ${verdictClass(v)}`}, verdictLabel(v)) : h('span', {class: 'muted'}, '…')),
    h('td', {title: t.signature || ''}, t.signature ? shortReason(v, t.signature) : ''),
    h('td', {}, t.node || (reused(t) ? h('a', {href: `#/trials/${t.evidence_trial}`, 'data-testid': 'reused-from'}, `reused #${t.evidence_trial}`) : '')),
    h('td', {class: 'num took', 'data-testid': 'took'}, secs != null ? fmtSeconds(secs) : ''),
  );
}

// The columns and the API's sort key for each (GET /api/v1/trials?sort=): the daemon sorts the whole
// listing and pages through it, so page 2 continues page 1's order.
const COLUMNS = [
  ['Trial', 'id'], ['Config', 'config'], ['Hardware', 'hardware'], ['State', 'state'],
  ['Verdict', 'verdict'], ['Reason', 'signature'], ['Node', 'node'], ['Took', 'took'],
];

/**
 * Shows one page of GET /api/v1/trials?{filter}. `cursor` is the `after` value of this page (from
 * the URL, so a shared link opens the same page); onPage(after) moves to another page. The listing
 * is sorted by `sort` (a COLUMNS key; `desc` reversed); with `onSort(key, desc)` the column headers
 * change it.
 */
export async function trialsTable(filter, {cursor, onPage, signal, sort = '', desc = false, onSort} = {}) {
  const known = COLUMNS.some((c) => c[1] === sort);
  const data = await api('/api/v1/trials' + qs({...filter, limit: PAGE, after: cursor, sort: known ? sort : '', desc: known && desc ? 1 : ''}), {signal});
  const box = h('div', {class: 'trials'});
  if (!data.items.length) {
    box.append(h('p', {class: 'muted'}, cursor ? 'No more trials.' : 'No trials match.'));
  } else {
    const tbody = h('tbody', {}, data.items.map(row));
    const head = (name, key, i) => {
      const cls = i === 0 || i === 7 ? 'num' : null;
      if (!onSort) return h('th', {scope: 'col', class: cls}, name);
      const on = key === sort;
      return h('th', {scope: 'col', class: cls, 'aria-sort': on ? (desc ? 'descending' : 'ascending') : null},
        h('button', {type: 'button', class: 'sort', 'data-sort': key, onclick: () => onSort(key, on && !desc)},
          name, on ? (desc ? ' ▼' : ' ▲') : ''));
    };
    box.append(h('table', {class: 'list', 'aria-label': 'Trials'},
      h('thead', {}, h('tr', {}, COLUMNS.map(([name, key], i) => head(name, key, i)))),
      tbody));
  }
  const pager = h('div', {class: 'pager'});
  if (cursor) pager.append(h('button', {type: 'button', onclick: () => onPage?.('')}, '⇤ First page'));
  if (data.next != null) pager.append(h('button', {type: 'button', 'data-testid': 'next-page', onclick: () => onPage?.(data.next)}, 'Next page →'));
  pager.append(h('span', {class: 'muted', 'data-testid': 'trials-shown'}, `${plural(data.items.length, 'trial')} shown${cursor ? ` after #${cursor}` : ''}`));
  box.append(pager);
  return box;
}
