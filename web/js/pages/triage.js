// Triage: the failures no tool explained (judged from the exit status alone), grouped by signature
// and the line the classifier would have used, the most trials first; labelling one (an admin's
// token) re-judges every trial it matches, and the labels below can be withdrawn. docs/API.md "Triage".

import {api, qs} from '../api.js';
import {fill, fmtTime, h} from '../dom.js';
import {href} from '../router.js';
import {verdictClass, verdictLabel} from '../verdict.js';
import {VOCABULARY} from '../vocabulary.js';

// The verdicts a label may give: those a suite's signature rule may (core/verdict.h `rule`, served by the daemon).
const LABEL_VERDICTS = VOCABULARY.verdicts.filter((v) => v.rule).map((v) => v.name);

function labelForm(item, reload) {
  const status = h('span', {class: 'muted', role: 'status'});
  const form = h('form', {class: 'controls', 'aria-label': `Label ${item.signature}`, 'data-testid': 'label-form'},
    h('label', {}, 'Verdict', h('select', {name: 'verdict'},
      LABEL_VERDICTS.map((v) => h('option', {value: v, selected: v === 'crashed'}, verdictLabel(v))))),
    h('label', {}, 'When the last line holds', h('input', {name: 'match', value: item.evidence, size: 40})),
    h('label', {}, 'Suite', h('select', {name: 'suite'},
      h('option', {value: ''}, 'every suite'), item.suites.map((s) => h('option', {value: s}, s)))),
    h('label', {}, 'Note', h('input', {name: 'note', placeholder: 'why', size: 30})),
    h('button', {type: 'submit'}, 'Label'), status);
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    const f = new FormData(form);
    const body = {signature: item.signature, verdict: f.get('verdict'), match: f.get('match'), note: f.get('note')};
    if (f.get('suite')) body.suite = f.get('suite');
    try {
      const l = await api('/api/v1/labels', {method: 'POST', body});
      fill(status, `label #${l.id}: re-judged ${l.rejudged} trial(s)`);
      reload();
    } catch (err) {
      fill(status, h('span', {class: 'error', role: 'alert'}, err.message));
    }
  });
  return form;
}

function itemsTable(items, reload) {
  if (!items.length) return h('p', {class: 'muted', 'data-testid': 'triage-empty'}, 'Nothing to triage: every failure has a reason a tool gave.');
  return h('table', {class: 'list', 'aria-label': 'Unclassified failures'},
    h('thead', {}, h('tr', {}, ['Trials', 'Signature', 'Last line', 'Suites', 'Example', 'Label'].map((t) => h('th', {scope: 'col'}, t)))),
    h('tbody', {}, items.map((i) => h('tr', {'data-signature': i.signature},
      h('td', {class: 'num'}, String(i.trials)),
      h('td', {}, h('span', {class: 'badge unclassified v-crashed'}, 'unclassified'), ' ', h('code', {}, i.signature)),
      h('td', {}, h('code', {'data-testid': 'evidence'}, i.evidence)),
      h('td', {}, i.suites.map((s, k) => [k ? ', ' : '', h('a', {href: href(['matrix'], {suite: s})}, s)])),
      h('td', {}, h('a', {href: `#/trials/${i.example_trial}`}, `#${i.example_trial}`)),
      h('td', {}, labelForm(i, reload))))));
}

function labelsTable(labels, reload) {
  if (!labels.length) return h('p', {class: 'muted'}, 'No labels yet.');
  return h('table', {class: 'list', 'aria-label': 'Labels'},
    h('thead', {}, h('tr', {}, ['#', 'Signature', 'Last line holds', 'Suite', 'Verdict', 'Trials', 'By', 'When', 'Note', ''].map((t) => h('th', {scope: 'col'}, t)))),
    h('tbody', {}, labels.map((l) => {
      const withdraw = h('button', {type: 'button', 'data-testid': 'withdraw'}, 'Withdraw');
      withdraw.addEventListener('click', async () => {
        try {
          await api(`/api/v1/labels/${l.id}/withdraw`, {method: 'POST', body: {}});
          reload();
        } catch (err) {
          withdraw.replaceWith(h('span', {class: 'error', role: 'alert'}, err.message));
        }
      });
      return h('tr', {'data-label': String(l.id)},
        h('td', {}, String(l.id)), h('td', {}, h('code', {}, l.signature)), h('td', {}, h('code', {}, l.match)),
        h('td', {}, l.suite || 'every suite'),
        h('td', {}, h('span', {class: `badge ${verdictClass(l.verdict)}`}, verdictLabel(l.verdict))),
        h('td', {class: 'num'}, String(l.rejudged)), h('td', {}, l.created_by), h('td', {}, fmtTime(l.created_at)),
        h('td', {}, l.note),
        h('td', {}, l.withdrawn_at ? h('span', {class: 'muted'}, `withdrawn by ${l.withdrawn_by}`) : withdraw));
    })));
}

export default async function render(ctx) {
  const suite = ctx.route.query.get('suite') || '';
  const itemsBox = h('div', {}, h('p', {class: 'muted'}, 'Loading…'));
  const labelsBox = h('div', {}, h('p', {class: 'muted'}, 'Loading…'));
  fill(ctx.main,
    h('h1', {}, 'Triage'),
    h('p', {class: 'muted'}, 'Failures no tool explained: judged from the exit status alone, shown as unclassified everywhere. ' +
      'Label one to give every trial that printed it a verdict; its earlier verdict stays in each trial\'s audit trail.'),
    itemsBox, h('h2', {}, 'Labels'), labelsBox);
  const reload = async () => {
    try {
      const [t, l] = await Promise.all([api('/api/v1/triage' + qs({suite}), {signal: ctx.signal}), api('/api/v1/labels', {signal: ctx.signal})]);
      if (!ctx.alive) return;
      fill(itemsBox, itemsTable(t.items, reload));
      fill(labelsBox, labelsTable(l.items, reload));
    } catch (e) {
      if (ctx.alive) fill(itemsBox, h('p', {class: 'error', role: 'alert'}, `Could not load: ${e.message}`));
    }
  };
  await reload();
}
