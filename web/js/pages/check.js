// Will this work? (GET /api/v1/check): one configuration on one hardware class, known to pass, known
// to fail or unknown, with its evidence and the nearest configurations known to pass. The form's
// choice is the URL (suite, hardware, config key), so a check can be shared.

import {api, qs} from '../api.js';
import {fill, h} from '../dom.js';
import {href} from '../router.js';
import {verdictClass, verdictLabel} from '../verdict.js';
import {flagsText, markdownBox, metricText, passedText, suitePicker} from '../components/advice.js';
import {makeKey, parseKey} from './history.js';

const KNOWN = {passes: 'Known to pass', fails: 'Known to fail', unknown: 'Unknown: never ran here'};

function form(suite, hardwares, hardware, config, go) {
  const fields = [];
  for (const [name, decl] of Object.entries(suite.parameters || {})) {
    const cur = config[name] ?? (Array.isArray(decl) ? decl[0] : decl?.default ?? '');
    config[name] = cur;
    fields.push(h('label', {}, name, Array.isArray(decl)
      ? h('select', {name}, decl.map((v) => h('option', {value: v, selected: String(v) === String(cur)}, String(v))))
      : h('input', {name, value: cur, size: 12})));
  }
  const hw = h('input', {name: 'hardware', value: hardware, list: 'hardware-classes', size: 28});
  const f = h('form', {class: 'controls', 'aria-label': 'Configuration to check'},
    h('label', {}, 'Hardware', hw), h('datalist', {id: 'hardware-classes'}, hardwares.map((x) => h('option', {value: x}))),
    fields, h('button', {type: 'submit'}, 'Check'));
  f.addEventListener('submit', (e) => {
    e.preventDefault();
    const c = {};
    for (const name of Object.keys(suite.parameters || {})) c[name] = f.elements[name].value;
    go({suite: suite.name, hardware: hw.value, config: makeKey(c)});
  });
  return f;
}

function answer(suite, j) {
  const latest = j.latest;
  return h('section', {'data-testid': 'check-answer', 'data-known': j.known},
    h('h2', {}, h('span', {class: `badge known-${j.known}`}, KNOWN[j.known] || j.known), ' ', h('code', {}, flagsText(j))),
    h('p', {}, `on ${j.hardware} · suite ${j.suite} v${j.version} · exit status ${j.exit_code} from gauntlet check`),
    latest ? h('ul', {},
      h('li', {}, 'Latest: ', h('span', {class: `badge ${verdictClass(latest.verdict)}`}, verdictLabel(latest.verdict)), ' ',
        latest.signature ? h('code', {}, latest.signature) : null, ' ', h('a', {href: `#/trials/${latest.trial}`}, `trial #${latest.trial}`)),
      h('li', {}, `Passed ${passedText(j)} real runs`, j.metric ? ` · ${metricText(j)}` : ''),
      h('li', {}, `Evidence: ${j.evidence}`)) : h('p', {class: 'muted'}, `No real run on this hardware. Evidence: ${j.evidence}.`),
    j.declared ? h('p', {'data-testid': 'declared'}, `Declared ${j.declared.supported ? 'supported' : 'unsupported'} by `,
      h('a', {href: j.declared.source.url, rel: 'noreferrer'}, j.declared.source.url), j.declared.note ? ` (${j.declared.note})` : '') : null,
    // What the framework itself answered when a probe stage asked it about this configuration.
    j.framework ? h('p', {'data-testid': 'framework'}, `Declared ${j.framework.supported ? 'supported' : 'unsupported'} by the framework`,
      j.framework.framework ? ` (${[j.framework.framework, j.framework.version].filter(Boolean).join(' ')})` : '',
      j.framework.reason ? `: ${j.framework.reason}` : '') : null,
    j.nearest.length ? h('h3', {}, 'Nearest configurations known to pass') : null,
    j.nearest.length ? h('ol', {'data-testid': 'nearest'}, j.nearest.map((n) => h('li', {},
      h('a', {href: href(['check'], {suite: suite.name, hardware: j.hardware, config: n.config_key})}, h('code', {}, flagsText(n))),
      ` changes ${n.changed.join(', ')}`, n.metric ? ` · ${metricText(n)}` : '', ` · ${n.evidence}`))) : null);
}

export default async function render(ctx) {
  const q = ctx.route.query;
  const go = (params) => (location.hash = href(['check'], params));
  const {suite, control} = await suitePicker(ctx, q.get('suite'), (name) => go({suite: name}));
  if (!suite) {
    fill(ctx.main, h('h1', {}, 'Will this work?'), h('p', {class: 'muted'}, 'No suites are registered.'));
    return;
  }
  const rec = await api('/api/v1/recommend' + qs({suite: suite.name}), {signal: ctx.signal});
  const hardwares = [...new Set(rec.items.map((i) => i.hardware))];
  const hardware = q.get('hardware') || hardwares[0] || '';
  const config = parseKey(q.get('config'));
  const asked = q.get('config') != null;
  const parts = [h('h1', {}, 'Will this work?'),
    h('p', {class: 'muted'}, 'The known verdict of one configuration on one hardware class, from the runs already stored: before any GPU time is spent.'),
    h('div', {class: 'controls'}, control), form(suite, hardwares, hardware, config, go)];
  if (asked) {
    const params = {suite: suite.name, hardware};
    for (const [k, v] of Object.entries(config)) params[`config.${k}`] = v;
    const j = await api('/api/v1/check' + qs(params), {signal: ctx.signal});
    if (!ctx.alive) return;
    parts.push(answer(suite, j), await markdownBox(ctx, '/api/v1/check', params));
  }
  fill(ctx.main, ...parts);
}
