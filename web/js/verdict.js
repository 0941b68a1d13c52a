// Verdicts: their order, colour class, icon and the short reason a matrix cell shows.

import {VOCABULARY} from './vocabulary.js';

// The daemon serves the one verdict list (core/verdict.cc) as ./vocabulary.js: display order, labels
// and colour families (see app.css): ok = passed, warn = the hardware is refused, bad = the config is
// broken, infra = the run itself failed (not the config's fault), none = never judged.
export const VERDICTS = VOCABULARY.verdicts.map((v) => v.name);
const FAMILY = Object.fromEntries(VOCABULARY.verdicts.map((v) => [v.name, v.family]));
const LABEL = Object.fromEntries(VOCABULARY.verdicts.map((v) => [v.name, v.label]));
const SEVERITY = Object.fromEntries(VOCABULARY.verdicts.map((v) => [v.name, v.severity]));
// Severity above passed's 0: a finding against the config (unsupported, crashed, ...) or a run that
// failed (timeout, infra error). Skipped and cancelled (-1) say nothing, as in the sweeps CSV's
// `failed` column.
const FAILED = new Set(VOCABULARY.verdicts.filter((v) => v.severity > 0).map((v) => v.name));
// Text glyphs rather than emoji: they render on a bare server's fonts (DejaVu) as well as on desktops.
const ICON = {ok: '✓', warn: '⚠', bad: '✗', infra: '◷', none: '⊘'};

// Colours come from a verdict's family alone (app.css: .vf-ok ... .vf-none, .segf-ok ...), so a
// verdict the vocabulary adds is coloured without a rule of its own; v-NAME stays for tests and looks.
export const verdictFamily = (v) => FAMILY[v] || 'pending';
export const verdictClass = (v) => (v ? `v-${v} vf-${verdictFamily(v)}` : 'v-pending');
/** A progress bar segment's classes for verdict `v`: its colour by family. */
export const segmentClass = (v) => `seg-${v} segf-${verdictFamily(v)}`;
export const verdictIcon = (v) => ICON[FAMILY[v]] || '…';
export const verdictLabel = (v) => LABEL[v] || v || 'pending';
export const isVerdict = (v) => v in SEVERITY;
const RUN = new Set(VOCABULARY.verdicts.filter((v) => v.run).map((v) => v.name));
/** Whether a trial with verdict `v` was a run of its config, as the daemon counts runs (its `run`). */
export const countsAsRun = (v) => RUN.has(v);
/** Verdicts most severe first (ties in display order), as a mixed cell lists them. */
export const bySeverity = (vs) => [...vs].sort((a, b) => SEVERITY[b] - SEVERITY[a] || VERDICTS.indexOf(a) - VERDICTS.indexOf(b));

/** How many of a by-verdict count ({passed: 3, crashed: 2, ...}) failed. */
export function failedCount(byVerdict) {
  let n = 0;
  for (const [v, c] of Object.entries(byVerdict || {})) if (FAILED.has(v)) n += c;
  return n;
}

/**
 * A short human reason from a signature: "crashed:illegal_memory_access" → "illegal memory access",
 * "wrong_output:bench" → "garbage output" when the verdict says so. Full text goes in a title.
 */
export function shortReason(verdict, signature) {
  if (!signature) return verdictLabel(verdict);
  let s = signature;
  if (s.startsWith('skipped:')) s = s.slice(8);
  const parts = s.split(':');
  // Drop the leading verdict word; keep the most specific remaining part.
  if (parts.length > 1 && (FAMILY[parts[0]] || parts[0] === 'skipped')) parts.shift();
  let r = parts.join(':');
  if (verdict === 'wrong_output' && /^(bench|smoke|validate)?$/.test(r)) r = 'garbage output';
  r = r.replace(/@.*$/, '').replace(/_/g, ' ').trim();
  if (r.length > 32) r = r.slice(0, 31) + '…';
  return r || verdictLabel(verdict);
}

/** A badge element's HTML (string form, for the fast paths). */
export function badgeHtml(v) {
  return `<span class="badge ${verdictClass(v)}">${verdictLabel(v)}</span>`;
}
