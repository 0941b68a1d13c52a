// One sweep: counts, reuse, unmatched targets, prune savings, its matrix, failure clusters and a paged
// trial list. Live: events of this sweep trigger a throttled refetch of the summary and matrix.

import {api, qs} from '../api.js';
import {fill, fmtAgo, fmtNum, h, plural} from '../dom.js';
import {throttle} from '../events.js';
import {defaultLayout, matrixControls, sweepValues} from '../components/matrix_controls.js';
import {matrixView, scrollOf} from '../components/matrix.js';
import {oneHardware} from '../components/matrix_layout.js';
import {countChips, progressBar, progressLabel, sweepState} from '../components/progress.js';
import {trialsTable} from '../components/trials_table.js';
import {clustersTable} from '../components/clusters_table.js';
import {confirmDialog} from '../components/confirm.js';
import {href} from '../router.js';

export default async function render(ctx) {
  const id = ctx.route.parts[1];
  const q = ctx.route.query;
  const verdict = q.get('verdict') || '';
  const cursor = q.get('after') || '';
  const link = (over) => href(['sweeps', id], {rows: q.get('rows'), cols: q.get('cols'), verdict, ...over});
  const go = (over) => (location.hash = link(over));

  // With rows and cols in the URL the matrix needs only the suite's name, which the sweep gives;
  // fetch it alongside the suites instead of after them.
  const sweepP = api(`/api/v1/sweeps/${id}`, {signal: ctx.signal});
  const early = q.get('rows') && q.get('cols')
    ? sweepP.then((sw) => api('/api/v1/matrix' + matrixQuery(sw, {rows: q.get('rows').split(','), cols: q.get('cols')}), {signal: ctx.signal}))
    : null;
  early?.catch(() => {});
  const firstTrials = trialsTable({sweep: id, verdict}, {cursor, signal: ctx.signal, onPage: (after) => go({after})});
  firstTrials.catch(() => {});
  const [sweep, suites] = await Promise.all([sweepP, api('/api/v1/suites', {signal: ctx.signal})]);
  performance.mark('gauntlet:sweep-fetched');
  const suite = suites.items.find((s) => s.name === sweep.suite) || {parameters: {}};
  const values = sweepValues(suite, sweep);
  const targets = sweep.request?.targets?.length || 1;
  const def = defaultLayout(values, targets);
  const layout = {rows: q.get('rows') ? q.get('rows').split(',') : def.rows, cols: q.get('cols') || def.cols};

  const summary = h('section', {'aria-label': 'Summary'});
  const matrixBox = h('div', {'aria-live': 'polite', 'aria-busy': 'true'}, h('p', {class: 'muted'}, 'Loading the matrix…'));
  const clustersBox = h('div', {}, h('p', {class: 'muted'}, 'Loading…'));
  const trialsBox = h('div', {}, h('p', {class: 'muted'}, 'Loading…'));
  const explore = h('a', {href: href(['matrix'], {suite: sweep.suite, sweep: id, rows: layout.rows.join(','), cols: layout.cols})},
    'open in the matrix explorer');
  fill(ctx.main,
    h('p', {class: 'muted'}, h('a', {href: '#/sweeps'}, 'Sweeps'), ' / ', `#${id}`),
    h('h1', {}, sweep.name || `Sweep ${id}`),
    summary,
    h('h2', {id: 'matrix'}, 'Matrix'),
    h('div', {class: 'row'},
      matrixControls(Object.keys(values), layout, (l) => go({rows: l.rows.join(','), cols: l.cols, after: ''})),
      h('span', {class: 'spacer'}), explore,
      h('a', {href: '/api/v1/matrix' + matrixQuery(sweep, layout, 'csv'), download: `sweep-${id}-matrix.csv`}, 'CSV')),
    matrixBox,
    h('h2', {id: 'clusters'}, 'Failure clusters'),
    clustersBox,
    h('h2', {id: 'trials'}, verdict ? `Trials: ${verdict}` : 'Trials',
      verdict ? [' ', h('a', {href: link({verdict: '', after: ''}), class: 'muted heading-link'}, 'show all')] : null),
    trialsBox);

  function renderSummary(s) {
    const word = sweepState(s);
    const state = word === 'running' ? `running (${s.running} now)` : word;
    const pruned = s.pruned || {};
    fill(summary,
      h('dl', {class: 'facts'},
        h('dt', {}, 'Suite'), h('dd', {}, h('a', {href: href(['matrix'], {suite: s.suite})}, s.suite), ` v${s.suite_version}`),
        h('dt', {}, 'State'), h('dd', {'data-testid': 'sweep-state'}, state),
        h('dt', {}, 'Submitted'), h('dd', {}, fmtAgo(s.created_at), h('span', {class: 'muted', 'data-testid': 'origin'},
          ` via ${s.source || 'api'}`, s.submitted_by ? ` by ${s.submitted_by}` : '')),
        s.rerun_of != null ? [h('dt', {}, 'Rerun of'), h('dd', {},
          h('a', {href: `#/sweeps/${s.rerun_of}`, 'data-testid': 'rerun-of'}, `#${s.rerun_of}`), ' · ',
          h('a', {href: href(['compare'], {a: s.rerun_of, b: s.id}), 'data-testid': 'compare-link'}, 'what changed'))] : null,
        h('dt', {}, 'Targets'), h('dd', {}, (s.request?.targets || []).map((t) => JSON.stringify(t)).join(' · ') || 'any')),
      h('div', {class: 'row'}, progressBar(s), progressLabel(s)),
      countChips(s.by_verdict, {linkFor: (v) => link({verdict: v, after: ''}) + '', current: verdict}),
      pruned.trials ? h('p', {'data-testid': 'pruned'},
        `Pruning skipped ${plural(pruned.trials, 'trial')} that an earlier failure already settled, `,
        // GPU time is what pruning saves; trials that would have run on CPU save none to count.
        pruned.gpu_hours_saved > 0 ? `saving about ${plural(pruned.gpu_hours_saved, 'GPU-hour')}` : 'none of which would have used a GPU',
        pruned.cost_saved != null ? h('span', {'data-testid': 'cost-saved'}, ` (${fmtNum(pruned.cost_saved)} at the targets' cost_per_gpu_hour)`) : '', '.') : null,
      s.reused ? h('p', {'data-testid': 'reused'},
        `Reused: ${plural(s.reused, 'trial')} took the verdict of an earlier trial instead of running`,
        s.reuse?.keyed_on ? ` (reuse matches ${s.reuse.keyed_on})` : '', '; they count under their verdicts above.') : null,
      s.search ? searchView(s.search) : null,
      unmatched(s.unmatched_targets || []),
      heldOut(s.held_out_nodes || []),
      actions(s));
  }

  // A bisection: the interval still in question, the value being tried, and each probe so far. The
  // summary is re-rendered on each of the sweep's events (sweep.search when a probe settles), so the
  // interval narrows on screen as the probes finish.
  function searchView(b) {
    const iv = b.interval || {};
    const interval = h('p', {'data-testid': 'search-interval', 'data-good': iv.good ?? '', 'data-bad': iv.bad ?? '',
      'data-trying': b.trying ?? '', 'data-left': iv.values_left ?? 0}, b.first_bad
      ? ['First bad: ', h('code', {'data-testid': 'first-bad'}, b.first_bad), ` (last good ${iv.good})`]
      : [`Between ${iv.good}${iv.good_known ? ' (passed)' : ' (as given)'} and ${iv.bad}${iv.bad_known ? ' (failed)' : ' (as given)'}: `,
        plural(iv.values_left || 0, 'value'), ' left', b.trying ? [', trying ', h('code', {'data-testid': 'search-trying'}, b.trying)] : '']);
    return h('section', {class: 'note', 'aria-label': 'Bisection', 'data-testid': 'search', 'data-state': b.state},
      h('p', {}, h('strong', {}, `Bisecting ${b.parameter}`), ` from ${b.good} (good) to ${b.bad} (bad): `,
        h('span', {'data-testid': 'search-state'}, b.state)),
      interval,
      searchStrip(b),
      b.detail ? h('p', {class: 'muted'}, b.detail) : null,
      (b.steps || []).length ? h('ol', {'data-testid': 'search-steps'}, b.steps.map((st) =>
        h('li', {}, h('code', {}, `${b.parameter}=${st.value}`), ` ${st.verdict} `, h('a', {href: `#/trials/${st.trial}`}, `trial #${st.trial}`)))) : null);
  }

  // The searched range as one strip: values at or below the last good, values still in question
  // (the one being tried marked), values at or above the first bad. Long ranges are not drawn.
  function searchStrip(b) {
    const vals = b.values || [];
    const from = vals.indexOf(b.good), to = vals.indexOf(b.bad);
    if (from < 0 || to <= from || to - from > 200) return null;
    const probed = new Map((b.steps || []).map((st) => [st.value, st.bad ? 'bad' : 'good']));
    return h('ol', {class: 'search-strip', 'aria-label': `${b.parameter} from ${b.good} to ${b.bad}`, 'data-testid': 'search-strip'},
      vals.slice(from, to + 1).map((v, k) => {
        const i = from + k;
        const side = i <= b.lo ? 'good' : i >= b.hi ? 'bad' : 'open';
        const cls = [`ss-${side}`, v === b.trying ? 'ss-trying' : '', probed.has(v) ? 'ss-probed' : ''].filter(Boolean).join(' ');
        return h('li', {class: cls, title: `${b.parameter}=${v}: ${v === b.trying ? 'running now' : side === 'open' ? 'not known yet' : side}`}, v);
      }));
  }

  // Each target no node can run: the requirement none meets and the nodes there are, so a person
  // sees what to change (the target, or which node to add).
  function unmatched(list) {
    if (!list.length) return null;
    return h('div', {class: 'note', role: 'note', 'data-testid': 'unmatched'},
      h('p', {}, `No registered node can run ${list.length === 1 ? 'one target' : plural(list.length, 'target')} of this sweep; `,
        'its trials wait until a node that can registers.'),
      h('ul', {}, list.map((u) => h('li', {'data-target': u.index},
        targetName(u.target), ' needs ', h('code', {'data-testid': 'requires'}, u.requires || 'what no node has'), '. ',
        'Nodes: ', h('span', {'data-testid': 'nodes'}, u.nodes || 'none registered'), '.'))));
  }

  // Nodes out of service that alone could run what is left: the sweep waits for them, and an admin
  // ends the wait with the command shown (or the nodes page).
  function heldOut(list) {
    if (!list.length) return null;
    return h('div', {class: 'note', role: 'note', 'data-testid': 'held-out'},
      h('p', {}, 'This sweep waits for ', list.length === 1 ? 'a node' : plural(list.length, 'node'),
        ' out of service: no node in service can run what is left.'),
      h('ul', {}, list.map((n) => h('li', {'data-node': n.node},
        h('a', {href: href(['nodes'])}, n.name), ` is ${n.state}`, n.reason ? [': ', h('span', {'data-testid': 'held-out-reason'}, n.reason)] : '',
        '. An admin resumes it: ', h('code', {}, n.resume)))));
  }

  function actions(s) {
    const box = h('div', {class: 'row actions'});
    if (!s.finished && !s.cancelled_at)
      box.append(h('button', {type: 'button', class: 'danger', onclick: () => act('cancel', 'Cancel every trial of this sweep that has not finished?')}, 'Cancel sweep'));
    if ((s.by_verdict?.infra_error || 0) + (s.by_verdict?.timeout || 0))
      box.append(h('button', {type: 'button', onclick: () => act('retry')}, 'Retry infra errors and timeouts'));
    const failed = Object.entries(s.by_verdict || {}).filter(([v]) => v !== 'passed' && v !== 'skipped').reduce((n, [, k]) => n + k, 0);
    if (failed) box.append(h('button', {type: 'button', 'data-testid': 'rerun-sweep', onclick: () => rerun({}, 'the failed trials of this sweep')},
      `Rerun ${plural(failed, 'failed trial')}`));
    return box;
  }

  // A new sweep of the picked trials; the page moves to it. A rerun starts trials on GPUs, so the
  // daemon first counts them (dry_run: the same pick, nothing stored) and the person confirms that
  // number. The daemon asks for a token (401) when it needs one, and api() prompts for it.
  async function rerun(selection, what) {
    try {
      const count = await api(`/api/v1/sweeps/${id}/rerun`, {method: 'POST', body: {...selection, dry_run: true}});
      if (!ctx.alive) return;
      const ok = await confirmDialog({title: `Rerun ${what}?`,
        text: `This starts ${plural(count.trials, 'new trial')} in a new sweep, linked to this one; this sweep's results stay as they are.`,
        ok: `Start ${plural(count.trials, 'trial')}`});
      if (!ok || !ctx.alive) return;
      const r = await api(`/api/v1/sweeps/${id}/rerun`, {method: 'POST', body: selection});
      location.hash = `#/sweeps/${r.id}`;
    } catch (e) {
      if (ctx.alive) alert(`Rerun of ${what} failed: ${e.message}`);
    }
  }

  // The failed trials of one matrix cell, named by its row values and column.
  const rerunCell = (c, selection) => rerun(selection, `the failed trials of ${[...c.row, c.col].join(' · ')}`);

  async function act(what, confirmText) {
    if (confirmText && !confirm(confirmText)) return;
    try {
      await api(`/api/v1/sweeps/${id}/${what}`, {method: 'POST'});
      refresh();
    } catch (e) {
      alert(`${what} failed: ${e.message}`);
    }
  }

  async function loadMatrix(pending) {
    try {
      const m = await (pending || api('/api/v1/matrix' + matrixQuery(sweep, layout), {signal: ctx.signal}));
      performance.mark('gauntlet:matrix-fetched');
      const one = oneHardware(m, {explicit: !!q.get('cols'), order: values[layout.rows[1]] || []});
      if (ctx.alive) fill(matrixBox, matrixView(one.m, scrollOf(matrixBox), {onRerun: (c, sel) => rerunCell(c, sel),
        heat: q.get('view') === 'heat', markdownUrl: () => '/api/v1/matrix' + matrixQuery(sweep, one.layout, 'markdown')}));
      cells = m.cells?.length || 0;
      performance.mark('gauntlet:matrix-rendered');
    } catch (e) {
      if (ctx.alive) fill(matrixBox, h('p', {class: 'error', role: 'alert'}, `The matrix could not be loaded: ${e.message}`));
    }
    matrixBox.setAttribute('aria-busy', 'false');
  }

  async function loadClusters() {
    try {
      const c = await api('/api/v1/signatures' + qs({suite: sweep.suite, sweep: id}), {signal: ctx.signal});
      if (ctx.alive) fill(clustersBox, clustersTable(c.items, {limit: 10, more: href(['clusters'], {suite: sweep.suite, sweep: id}), scope: {suite: sweep.suite, sweep: id}}));
    } catch (e) {
      if (ctx.alive) fill(clustersBox, h('p', {class: 'error'}, `Failure clusters could not be loaded: ${e.message}`));
    }
  }

  async function loadTrials(pending) {
    try {
      const t = await (pending || trialsTable({sweep: id, verdict}, {cursor, signal: ctx.signal, onPage: (after) => go({after})}));
      if (ctx.alive) fill(trialsBox, t);
    } catch (e) {
      if (ctx.alive) fill(trialsBox, h('p', {class: 'error'}, `Trials could not be loaded: ${e.message}`));
    }
  }

  renderSummary(sweep);
  // Live refreshes rebuild the matrix; a big one (10,000 cells) is rebuilt at most every few seconds.
  let cells = 0;
  let lastRefresh = 0;
  const refresh = throttle(async () => {
    if (Date.now() - lastRefresh < cells / 4) return void setTimeout(refresh, cells / 4);
    lastRefresh = Date.now();
    try {
      const s = await api(`/api/v1/sweeps/${id}`, {signal: ctx.signal});
      if (!ctx.alive) return;
      renderSummary(s);
      await Promise.all([loadMatrix(), loadClusters(), cursor ? null : loadTrials()]);
    } catch (e) {
      console.warn(e);
    }
  }, 1000);
  ctx.onLeave(refresh.stop);
  ctx.onEvents((batch) => {
    if (batch.some((e) => e.sweep == id || e.type === 'reconnect' || (e.type === 'trial.changed' && !e.sweep))) refresh();
  });
  // The first view is complete when summary, matrix, clusters and the first trial page are on
  // screen. Clusters (below the fold) are asked for once the matrix has arrived, so on a small
  // server the two aggregations do not compete.
  const matrixP = early || api('/api/v1/matrix' + matrixQuery(sweep, layout), {signal: ctx.signal});
  matrixP.catch(() => {});
  await Promise.all([loadMatrix(matrixP), loadTrials(firstTrials), matrixP.catch(() => null).then(loadClusters)]);
}

/** A sweep target as a person reads it: "Target arch=sm_100", or the suite's own requirements when it names none. */
function targetName(t) {
  const entries = t && typeof t === 'object' ? Object.entries(t) : [];
  if (!entries.length) return typeof t === 'number' ? `Target ${t + 1}` : 'The suite (the sweep names no target)';
  return ['Target ', h('code', {}, entries.map(([k, v]) => `${k}=${typeof v === 'object' ? JSON.stringify(v) : v}`).join(', '))];
}

function matrixQuery(sweep, layout, format) {
  return qs({suite: sweep.suite, rows: layout.rows.join(','), cols: layout.cols, sweep: sweep.id, format});
}
