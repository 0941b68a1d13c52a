// Sweeps: every sweep with a live progress bar. Events only trigger a throttled refetch of this
// one list (the server aggregates counts), so a 10,000-trial burst costs a few requests.

import {api, qs} from '../api.js';
import {fill, fmtAgo, h} from '../dom.js';
import {throttle} from '../events.js';
import {countChips, progressBar, progressLabel, sweepState} from '../components/progress.js';
import {href} from '../router.js';

const RELEVANT = new Set(['sweep.created', 'sweep.cancelled', 'sweep.retried', 'trial.changed', 'trials.skipped', 'reconnect']);

function sweepRow(s) {
  return h('tr', {'data-sweep': s.id},
    h('td', {class: 'num'}, h('a', {href: `#/sweeps/${s.id}`}, `#${s.id}`)),
    h('td', {}, h('a', {href: `#/sweeps/${s.id}`}, s.name || `sweep ${s.id}`)),
    h('td', {}, h('a', {href: href(['matrix'], {suite: s.suite})}, s.suite), h('span', {class: 'muted'}, ` v${s.suite_version}`)),
    h('td', {}, h('span', {'data-testid': 'sweep-state'}, sweepState(s)), s.running ? h('span', {class: 'muted'}, ` (${s.running} running)`) : null),
    h('td', {class: 'progress-cell'}, progressBar(s), progressLabel(s)),
    h('td', {}, countChips(s.by_verdict, {linkFor: (v) => href(['sweeps', String(s.id)], {verdict: v})})),
    h('td', {title: new Date(s.created_at).toISOString()}, fmtAgo(s.created_at)),
  );
}

export default async function render(ctx) {
  const after = ctx.route.query.get('after') || '';
  const table = h('tbody');
  const pager = h('div', {class: 'pager'});
  fill(ctx.main,
    h('h1', {}, 'Sweeps'),
    h('p', {class: 'muted'}, 'Each sweep is a grid of configurations over hardware targets. Bars fill as trials finish.'),
    h('table', {class: 'list', 'aria-label': 'Sweeps'},
      h('thead', {}, h('tr', {}, ['Sweep', 'Name', 'Suite', 'State', 'Progress', 'Verdicts', 'Submitted']
        .map((t, i) => h('th', {scope: 'col', class: i === 0 ? 'num' : null}, t)))),
      table),
    pager);

  async function load() {
    const data = await api('/api/v1/sweeps' + qs({limit: 50, after}), {signal: ctx.signal});
    if (!ctx.alive) return;
    fill(table, data.items.length ? data.items.map(sweepRow)
      : h('tr', {}, h('td', {colspan: 7, class: 'muted'}, 'No sweeps yet. Submit one with `gauntlet submit FILE` or POST /api/v1/sweeps.')));
    fill(pager,
      after ? h('a', {href: '#/sweeps'}, '⇤ Newest') : null,
      data.next != null ? h('a', {href: href(['sweeps'], {after: data.next}), 'data-testid': 'next-page'}, 'Older →') : null);
  }

  const refresh = throttle(() => load().catch((e) => console.warn(e)), 800);
  ctx.onLeave(refresh.stop);
  ctx.onEvents((batch) => {
    if (batch.some((e) => RELEVANT.has(e.type))) refresh();
  });
  await load();
}
