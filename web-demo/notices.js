// The page's notices: the error panel (what failed, its kind, where, and the header bytes around
// the place) and the toasts (short messages that go away).

import { h, kvTable } from './dom.js';
import { fmtInt } from './format.js';
import { OpenError, readSourceRange } from './model.js';

const $ = (id) => document.getElementById(id);

/** Hides the error panel. */
export function hideError() {
  $('error').hidden = true;
  $('error').replaceChildren();
}

/** The header bytes around an error offset, with the byte itself marked. */
async function errorSnippet(src, offset) {
  if (!src || offset === null || offset === undefined) return null;
  const at = 8 + offset;
  const size = src.size ?? Infinity;
  if (at >= size) return null;
  const start = Math.max(8, at - 72);
  const end = Math.min(size, at + 72);
  const bytes = await readSourceRange(src, start, end);
  const show = (b) =>
    Array.from(b, (c) => (c >= 0x20 && c < 0x7f ? String.fromCharCode(c) : c === 0x0a ? '↵' : '·')).join('');
  const k = at - start;
  return h(
    'pre',
    { class: 'snippet', 'aria-label': 'Header bytes around the error' },
    start > 8 ? '…' : '',
    show(bytes.subarray(0, k)),
    h('mark', {}, show(bytes.subarray(k, k + 1)) || '∎'),
    show(bytes.subarray(k + 1)),
    end < size ? '…' : '',
  );
}

/** Shows `err` (an OpenError, a SafeTensorsError, any error) under `title`. */
export async function showError(err, title) {
  const cause = err instanceof OpenError ? err.cause : err;
  const file = err instanceof OpenError ? err.file : null;
  const kind = cause?.kind ?? null;
  const rows = [];
  if (file) rows.push(['file', file]);
  if (kind) rows.push(['error kind', h('code', { class: 'kind' }, kind)]);
  if (cause?.offset !== null && cause?.offset !== undefined)
    rows.push(['where', `header byte ${fmtInt(cause.offset)} (file byte ${fmtInt(cause.offset + 8)})`]);
  if (cause?.tensor) rows.push(['tensor', h('code', {}, cause.tensor)]);
  // The package's message ends with the place, shown in its own rows above.
  const message = String(cause?.message ?? cause).replace(
    / at header byte \d+(?: \(tensor .*\))?$|(?: \(tensor .*\))$/s,
    '',
  );
  rows.push(['message', message]);
  const panel = $('error');
  const dismiss = h(
    'button',
    { type: 'button', class: 'icon-btn', 'aria-label': 'Dismiss error', onclick: hideError },
    '×',
  );
  panel.replaceChildren(
    h('div', { class: 'error-head' }, h('h2', {}, `${title}${file ? ` ${file}` : ''}`), dismiss),
    kvTable(rows, 'kv error-kv'),
  );
  panel.dataset.kind = kind ?? '';
  panel.hidden = false;
  try {
    const snip = await errorSnippet(err.src, cause?.offset);
    if (snip) panel.append(snip);
  } catch {
    /* the snippet is a nicety; the error itself is shown */
  }
}

const toasts = new Map();
/** Shows `text` for 5 s (or until called again with its `id` and null, when `sticky`). */
export function toast(text, { id = Math.random(), sticky = false, kind = 'info' } = {}) {
  const old = toasts.get(id);
  if (old) {
    old.remove();
    toasts.delete(id);
  }
  if (text === null) return;
  const el = h('div', { class: `toast ${kind}` }, text);
  $('toasts').append(el);
  toasts.set(id, el);
  if (!sticky) setTimeout(() => toast(null, { id }), 5000);
}

window.addEventListener('error', (e) => toast(`Unexpected error: ${e.message}`, { kind: 'error' }));
window.addEventListener('unhandledrejection', (e) =>
  toast(`Unexpected error: ${e.reason?.message ?? e.reason}`, { kind: 'error' }),
);
