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
    h('td', {}, h('a', {href: `#/sweeps/${s.id}`}, s.name || `sweep ${s.id}`),
      // Where it came from, as the filters name it: a rerun links its original.
      h('div', {class: 'muted', 'data-testid': 'sweep-origin'}, s.rerun_of != null
        ? ['rerun of ', h('a', {href: `#/sweeps/${s.rerun_of}`}, `#${s.rerun_of}`)] : `via ${s.source || 'api'}`,
      s.submitted_by ? ` by ${s.submitted_by}` : '')),
    h('td', {}, h('a', {href: href(['matrix'], {suite: s.suite})}, s.suite), h('span', {class: 'muted'}, ` v${s.suite_version}`)),
    h('td', {}, h('span', {'data-testid': 'sweep-state'}, sweepState(s)), s.running ? h('span', {class: 'muted'}, ` (${s.running} running)`) : null),
    h('td', {class: 'progress-cell'}, progressBar(s), progressLabel(s)),
    h('td', {}, countChips(s.by_verdict, {linkFor: (v) => href(['sweeps', String(s.id)], {verdict: v})})),
    h('td', {title: new Date(s.created_at).toISOString()}, fmtAgo(s.created_at)),
  );
}

// What GET /api/v1/sweeps filters on, all kept in the URL.
const FILTERS = ['suite', 'state', 'submitted_by', 'source'];

function filterForm(filter, suites) {
  const select = (name, label, values) => h('label', {}, label, ' ',
    h('select', {name, 'data-testid': `filter-${name}`}, h('option', {value: ''}, 'any'),
      values.map((v) => h('option', {value: v, selected: filter[name] === v}, v))));
  const form = h('form', {class: 'row filters', 'aria-label': 'Filter sweeps', onsubmit: (e) => {
    e.preventDefault();
    const next = {};
    for (const el of form.elements) if (el.name) next[el.name] = el.value.trim();
    location.hash = href(['sweeps'], next);
  }},
  select('suite', 'Suite', suites),
  select('state', 'State', ['running', 'finished', 'cancelled']),
  h('label', {}, 'Submitter ', h('input', {name: 'submitted_by', value: filter.submitted_by || '', size: 18, 'data-testid': 'filter-submitted_by',
    placeholder: 'sha256:…'})),
  select('source', 'From', ['cli', 'api', 'rerun', 'dashboard']),
  h('button', {type: 'submit'}, 'Filter'),
  FILTERS.some((k) => filter[k]) ? h('a', {href: '#/sweeps', 'data-testid': 'clear-filters'}, 'clear') : null);
  return form;
}

export default async function render(ctx) {
  const after = ctx.route.query.get('after') || '';
  const filter = Object.fromEntries(FILTERS.map((k) => [k, ctx.route.query.get(k) || '']));
  const table = h('tbody');
  const pager = h('div', {class: 'pager'});
  const suites = await api('/api/v1/suites', {signal: ctx.signal}).then((r) => r.items.map((s) => s.name)).catch(() => []);
  fill(ctx.main,
    h('h1', {}, 'Sweeps'),
    h('p', {class: 'muted'}, 'Each sweep is a grid of configurations over hardware targets. Bars fill as trials finish.'),
    filterForm(filter, suites),
    h('table', {class: 'list', 'aria-label': 'Sweeps'},
      h('thead', {}, h('tr', {}, ['Sweep', 'Name', 'Suite', 'State', 'Progress', 'Verdicts', 'Submitted']
        .map((t, i) => h('th', {scope: 'col', class: i === 0 ? 'num' : null}, t)))),
      table),
    pager);

  async function load() {
    const data = await api('/api/v1/sweeps' + qs({...filter, limit: 50, after}), {signal: ctx.signal});
    if (!ctx.alive) return;
    fill(table, data.items.length ? data.items.map(sweepRow)
      : h('tr', {}, h('td', {colspan: 7, class: 'muted'}, FILTERS.some((k) => filter[k]) ? 'No sweep matches these filters.'
        : 'No sweeps yet. Submit one with `gauntlet submit FILE` or POST /api/v1/sweeps.')));
    fill(pager,
      after ? h('a', {href: href(['sweeps'], filter)}, '⇤ Newest') : null,
      data.next != null ? h('a', {href: href(['sweeps'], {...filter, after: data.next}), 'data-testid': 'next-page'}, 'Older →') : null);
  }

  const refresh = throttle(() => load().catch((e) => console.warn(e)), 800);
  ctx.onLeave(refresh.stop);
  ctx.onEvents((batch) => {
    if (batch.some((e) => RELEVANT.has(e.type))) refresh();
  });
  await load();
}
