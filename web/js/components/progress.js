// A sweep's progress: one bar segment per verdict (width = share of all trials), running striped,
// and the verdict counts as chips that can link to the filtered trial list.

import {fmtNum, h, plural} from '../dom.js';
import {VERDICTS, failedCount, segmentClass, verdictClass, verdictLabel} from '../verdict.js';

/** A sweep's state in a word, with how many trials failed once it is finished ("finished · 4 failed"), or how
 * many are stored while a big one expands. */
export function sweepState(s) {
  if (s.cancelled_at) return 'cancelled';
  // A big sweep is answered before its trials are stored: it says so until they all are.
  if (s.expanding) return `expanding · ${fmtNum(s.materialized || 0)} of ${fmtNum(s.trials || 0)} trials stored`;
  if (s.finished) {
    const failed = failedCount(s.by_verdict);
    return failed ? `finished · ${fmtNum(failed)} failed` : 'finished';
  }
  return s.running ? 'running' : 'queued';
}

// Each segment's share of the bar is data, so it reaches app.css as --share.
const share = (n, total) => ({'--share': `${(100 * n) / total}%`});

export function progressBar(sweep) {
  const total = sweep.trials || 0;
  const by = sweep.by_verdict || {};
  const running = sweep.running || 0;
  const bar = h('div', {class: 'progress', role: 'progressbar', 'aria-valuemin': 0, 'aria-valuemax': total,
    'aria-valuenow': sweep.done || 0, 'aria-label': `${sweep.done || 0} of ${plural(total, 'trial')} done`});
  for (const v of VERDICTS) {
    if (!by[v]) continue;
    bar.append(h('span', {class: segmentClass(v), vars: share(by[v], total), title: `${by[v]} ${verdictLabel(v)}`}));
  }
  if (running) bar.append(h('span', {class: 'seg-running', vars: share(running, total), title: `${running} running`}));
  return bar;
}

export function progressLabel(sweep) {
  const total = sweep.trials || 0;
  const pct = total ? Math.floor((100 * (sweep.done || 0)) / total) : 100;
  return h('span', {class: 'progress-label', 'data-testid': 'done-total'}, `${sweep.done || 0}/${total} done · ${pct}%`);
}

/** Count chips; with linkFor(verdict) each is a link (e.g. to the trial list filtered by it). */
export function countChips(byVerdict, {linkFor, current} = {}) {
  const box = h('div', {class: 'counts'});
  for (const v of VERDICTS) {
    const n = byVerdict?.[v];
    if (!n) continue;
    const attrs = {class: `badge count ${verdictClass(v)}`, 'data-verdict': v, 'aria-current': current === v ? 'true' : null};
    const body = [verdictLabel(v), ' ', h('b', {}, String(n))];
    box.append(linkFor ? h('a', {...attrs, href: linkFor(v)}, body) : h('span', attrs, body));
  }
  if (!box.childElementCount) box.append(h('span', {class: 'muted'}, 'no verdicts yet'));
  return box;
}
