// One trial: what ran (config, node, hardware), how each stage went, metrics with a throughput
// chart, the failure signature and evidence, and the log, followed live while it runs.

import {api} from '../api.js';
import {fill, fmtConfig, fmtFingerprint, fmtSeconds, fmtTime, h} from '../dom.js';
import {throttle} from '../events.js';
import {logTail} from '../components/log_tail.js';
import {concurrencyCharts, metricsTable} from '../components/metrics.js';
import {kernelsSection} from '../components/kernels.js';
import {testsSection} from '../components/tests_table.js';
import {href} from '../router.js';
import {verdictClass, verdictLabel} from '../verdict.js';
import {BASES} from '../vocabulary.js';

const badge = (v) => h('span', {class: `badge ${verdictClass(v)}`, 'data-testid': 'verdict'}, verdictLabel(v));

function stagesTable(stages) {
  if (!stages?.length) return h('p', {class: 'muted'}, 'No stage has reported yet.');
  return h('table', {class: 'list medium', 'aria-label': 'Stages'},
    h('thead', {}, h('tr', {}, ['Stage', 'Verdict', 'Seconds', 'Exit', 'Signature'].map((t, i) => h('th', {scope: 'col', class: i === 2 ? 'num' : null}, t)))),
    h('tbody', {}, stages.map((s) => h('tr', {'data-stage': s.name},
      h('td', {}, s.name), h('td', {}, h('span', {class: `badge ${verdictClass(s.verdict)}`}, verdictLabel(s.verdict))),
      h('td', {class: 'num'}, s.seconds != null ? fmtSeconds(s.seconds) : ''),
      h('td', {}, s.signal ? `signal ${s.signal}` : s.exit_code ?? ''),
      h('td', {class: 'mono'}, s.signature || '')))));
}

/**
 * How the trial ran (docs/DECISIONS.md "A stage is not the worker"): its stages' `isolation` (a user
 * of its own, or why not) and each declared limit a stage ran without. Pure.
 */
export function howItRan(stages = []) {
  const isolation = stages.find((s) => s.isolation)?.isolation || '';
  const limits = stages.filter((s) => s.limits).map((s) => `${s.name}: ${s.limits}`).join('; ');
  // A probe stage's answer (the framework's own word; it decides no verdict) and each stage's
  // dispatch check, with why when it could not decide.
  const probe = stages.filter((s) => s.probe).map((s) =>
    `${s.name}: ${s.probe.framework ? s.probe.framework + ' says ' : ''}${s.probe.supported ? 'supported' : 'unsupported'}${s.probe.reason ? ': ' + s.probe.reason : ''}`).join('; ');
  const dispatch = stages.filter((s) => s.dispatch?.status).map((s) => {
    const d = s.dispatch;
    const why = d.status === 'verified' ? d.matched : d.status === 'fallback' ? `carried by ${d.family}` : d.reason;
    return `${s.name}: ${d.status}${d.param ? ` (${d.param}=${d.value})` : ''}${why ? ': ' + why : ''}`;
  }).join('; ');
  return {isolation, limits, probe, dispatch};
}

function facts(t) {
  const r = t.result || {};
  const ran = howItRan(r.stages || []);
  const dur = t.started_at && t.finished_at ? fmtSeconds((t.finished_at - t.started_at) / 1000) : null;
  const pairs = [
    ['Sweep', h('a', {href: `#/sweeps/${t.sweep}`}, `#${t.sweep}`)],
    ['Suite', h('span', {}, h('a', {href: href(['matrix'], {suite: t.suite})}, t.suite), ` v${t.suite_version}`)],
    ['State', h('span', {'data-testid': 'state'}, t.state, t.cancel_requested ? ' (cancel requested)' : '')],
    ['Verdict', t.verdict ? badge(t.verdict) : h('span', {class: 'muted'}, 'not yet')],
    ['Signature', t.signature ? h('code', {'data-testid': 'signature'}, t.signature) : null],
    ['Failing stage', r.failing_stage || null],
    ['Evidence', r.evidence ? h('code', {}, r.evidence) : null],
    // What the verdict was judged from; a failure from the exit status alone is a guess, and says so
    // with the line the classifier would have used (the evidence above).
    ['Judged from', t.basis ? h('span', {'data-testid': 'basis'}, BASES[t.basis] || t.basis,
      t.unclassified ? h('span', {class: 'badge unclassified', 'data-testid': 'unclassified', title: 'no tool said why: only the exit status'}, ' unclassified') : null) : null],
    // What triage labels changed (oldest first): the verdict before each, so a label never hides it.
    ['Audit', t.audit && t.audit.length ? h('ul', {'data-testid': 'audit'}, t.audit.map((x) => h('li', {},
      `label #${x.label}: ${x.from.verdict} (${x.from.signature}) → ${x.to.verdict} (${x.to.signature}) by ${x.by}, ${fmtTime(x.at)}`))) : null],
    ['Settled by', t.evidence_trial ? h('a', {href: `#/trials/${t.evidence_trial}`, 'data-testid': 'evidence-trial'}, `trial #${t.evidence_trial}`) : null],
    ['Hardware', t.hardware],
    ['Node', t.node ? h('a', {href: '#/nodes'}, t.node) : null],
    ['GPUs', t.gpus],
    ['Attempt', `${t.attempt} of ${t.max_attempts}`],
    ['Created', fmtTime(t.created_at)],
    ['Started', t.started_at ? fmtTime(t.started_at) : null],
    ['Finished', t.finished_at ? `${fmtTime(t.finished_at)}${dur ? ` (took ${dur})` : ''}` : null],
    ['Fingerprint', r.fingerprint && Object.keys(r.fingerprint).length ? h('code', {}, fmtFingerprint(r.fingerprint)) : null],
    ['Isolation', ran.isolation ? h('span', {'data-testid': 'isolation'}, ran.isolation) : null],
    ['Limits', ran.limits ? h('span', {class: 'warn', 'data-testid': 'limits'}, ran.limits) : null],
    ['Framework says', ran.probe ? h('span', {'data-testid': 'probe-answer'}, ran.probe) : null],
    ['Dispatch', ran.dispatch ? h('span', {'data-testid': 'dispatch'}, ran.dispatch) : null],
  ];
  return h('dl', {class: 'facts'}, pairs.filter(([, v]) => v != null && v !== '').map(([k, v]) => [h('dt', {}, k), h('dd', {}, v)]));
}

export default async function render(ctx) {
  const id = ctx.route.parts[1];
  const t = await api(`/api/v1/trials/${id}`, {signal: ctx.signal});
  const head = h('div');
  const body = h('div');
  const cancel = h('button', {type: 'button', class: 'danger', onclick: async () => {
    if (!confirm(`Cancel trial #${id}?`)) return;
    await api(`/api/v1/trials/${id}/cancel`, {method: 'POST'}).catch((e) => alert(e.message));
    refresh();
  }}, 'Cancel trial');

  // A new sweep of this one trial (same config and target), reuse off; the page moves to it.
  const rerun = h('button', {type: 'button', 'data-testid': 'rerun-trial', onclick: async () => {
    try {
      const r = await api(`/api/v1/sweeps/${t.sweep}/rerun`, {method: 'POST',
        body: {verdicts: [current.verdict], configs: [current.config_key], targets: [current.target]}});
      location.hash = `#/sweeps/${r.id}`;
    } catch (e) {
      alert(`Rerun failed: ${e.message}`);
    }
  }}, 'Rerun trial');
  let current = t;

  function show(t) {
    current = t;
    fill(head,
      h('p', {class: 'muted'}, h('a', {href: '#/sweeps'}, 'Sweeps'), ' / ', h('a', {href: `#/sweeps/${t.sweep}`}, `#${t.sweep}`), ' / ', `trial #${t.id}`),
      h('div', {class: 'row'}, h('h1', {}, `Trial #${t.id}`), t.verdict ? badge(t.verdict) : h('span', {class: `badge state-${t.state}`}, t.state),
        h('span', {class: 'spacer'}), t.state !== 'done' ? cancel : null, t.state === 'done' && t.verdict ? rerun : null));
    const r = t.result || {};
    fill(body,
      facts(t),
      h('h2', {}, 'Config'),
      h('table', {class: 'list narrow', 'aria-label': 'Config'},
        h('tbody', {}, Object.entries(t.config || {}).map(([k, v]) => h('tr', {}, h('th', {scope: 'row'}, k), h('td', {class: 'mono'}, String(v)))))),
      h('p', {}, h('a', {href: href(['history'], {suite: t.suite, config: t.config_key})}, 'This config over time →')),
      h('h2', {}, 'Stages'), stagesTable(r.stages),
      testsSection(t.tests),
      h('h2', {}, 'Metrics'), metricsTable(r.metrics),
      h('div', {class: 'row charts'},
        concurrencyCharts(r.metrics, {seriesName: `${fmtConfig(t.config)} on ${t.hardware || 'unknown'}`})),
      kernelsSection(t));
  }

  const logBox = h('div');
  fill(ctx.main, head, body, h('h2', {}, 'Log ', h('a', {href: `/api/v1/trials/${id}/log`, class: 'heading-link'}, 'raw')), logBox);
  show(t);
  fill(logBox, logTail(t, ctx));

  const refresh = throttle(async () => {
    try {
      const n = await api(`/api/v1/trials/${id}`, {signal: ctx.signal});
      if (ctx.alive) show(n);
    } catch (e) {
      console.warn(e);
    }
  }, 700);
  ctx.onLeave(refresh.stop);
  ctx.onEvents((b) => {
    if (b.some((e) => (e.type === 'trial.changed' && e.trial == id) || e.type === 'reconnect' ||
      (e.type === 'trials.skipped' && (e.trials || []).includes(Number(id))))) refresh();
  });
}
