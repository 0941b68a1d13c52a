// The dashboard's sources, read as text: fixed looks live in app.css (web/README.md), so no
// module sets an inline style. Computed values (a bar's share, a series' colour, the matrix's
// column template) reach CSS as custom properties, through dom.js's setVars alone.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import {it} from 'node:test';
import {ROOT} from './lib/stack.mjs';

const WEB = path.join(ROOT, 'web');
const files = (dir) => fs.readdirSync(dir, {withFileTypes: true}).flatMap((e) =>
  e.isDirectory() ? files(path.join(dir, e.name)) : /\.(js|html)$/.test(e.name) ? [path.join(dir, e.name)] : []);

// Every way an inline style can be written: an h() attribute (`style:` or 'style':), markup
// (style="..." in index.html or a string-built fast path), a <style> block, and the DOM's
// el.style / cssText / setAttribute('style').
const INLINE = [/\bstyle\s*[:=]/, /['"`]style['"`]\s*[:,]/, /<style\b/i, /\.style\b/, /\bcssText\b/];
// The one exception: setVars, which refuses anything but a custom property.
const ALLOWED = {'js/dom.js': ['    el.style.setProperty(name, String(value));']};

function offences(rel, text) {
  const out = [];
  text.split('\n').forEach((line, i) => {
    if ((ALLOWED[rel] || []).includes(line)) return;
    if (INLINE.some((re) => re.test(line))) out.push(`web/${rel}:${i + 1}: ${line.trim()}`);
  });
  return out;
}

it('finds inline styles in every form it looks for', () => {
  // Each pattern must catch what it stands for, or the scan below proves nothing.
  for (const bad of [`h('td', {style: 'max-width:420px'})`, `h('td', {'style': 'x'})`, '<div style="left:0">',
    '<style>p{}</style>', 'sw.style.background = c;', 'el.style.cssText = s;', "el.setAttribute('style', s);"])
    assert.equal(offences('js/x.js', bad).length, 1, bad);
  assert.deepEqual(offences('js/x.js', `h('link', {rel: 'stylesheet'}); // styles live in app.css`), []);
});

it('sets no inline style in web/', () => {
  const all = files(WEB);
  assert.ok(all.length > 20, `scanned ${all.length} files under ${WEB}`);
  const found = all.flatMap((f) => offences(path.relative(WEB, f).split(path.sep).join('/'), fs.readFileSync(f, 'utf8')));
  assert.deepEqual(found, [], 'move these looks to a class in web/app.css');
  // The exception must still exist as written, or ALLOWED has gone stale.
  for (const [rel, lines] of Object.entries(ALLOWED))
    for (const l of lines) assert.ok(fs.readFileSync(path.join(WEB, rel), 'utf8').split('\n').includes(l), `${rel}: ${l.trim()}`);
});
