// Verdicts: their order, colour class, icon and the short reason a matrix cell shows.

export const VERDICTS = ['passed', 'unsupported', 'crashed', 'wrong_output', 'oom', 'timeout', 'infra_error',
  'skipped', 'cancelled'];

// Colour families (see app.css): red = the config is broken, amber = the hardware is refused,
// purple = the run itself failed (not the config's fault), grey = never judged.
const FAMILY = {
  passed: 'ok', unsupported: 'warn', crashed: 'bad', wrong_output: 'bad', oom: 'bad',
  timeout: 'infra', infra_error: 'infra', skipped: 'none', cancelled: 'none',
};
// Text glyphs rather than emoji: they render on a bare server's fonts (DejaVu) as well as on desktops.
const ICON = {ok: '✓', warn: '⚠', bad: '✗', infra: '◷', none: '⊘'};
const LABEL = {
  passed: 'passed', unsupported: 'unsupported', crashed: 'crashed', wrong_output: 'wrong output', oom: 'out of memory',
  timeout: 'timeout', infra_error: 'infra error', skipped: 'skipped', cancelled: 'cancelled',
};

export const verdictClass = (v) => (v ? `v-${v}` : 'v-pending');
export const verdictFamily = (v) => FAMILY[v] || 'pending';
export const verdictIcon = (v) => ICON[FAMILY[v]] || '…';
export const verdictLabel = (v) => LABEL[v] || v || 'pending';

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
