// The summary above the tensor list (cards, bytes by dtype) and the side panels beside it
// (integrity, module tree, dtypes, files, metadata, alignment), drawn from a model and its
// summary. What a click does comes from the page (app.js) as callbacks.

import { h } from './dom.js';
import { fmtBytes, fmtCount, fmtInt, formatPct } from './format.js';
import { buildTreeSliced, TreeView } from './tree.js';

const $ = (id) => document.getElementById(id);

function card(label, value, sub, attrs = {}) {
  return h(
    'div',
    { class: 'card', ...attrs },
    h('div', { class: 'card-label' }, label),
    h('div', { class: 'card-value', title: value }, value),
    sub ? h('div', { class: 'card-sub', title: sub }, sub) : null,
  );
}

function plural(n, word) {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}

/** The integrity card: "checking" until `m.integrity` is there, then a link to the report. */
function integrityCard(m) {
  if (m.integrity === null) {
    return card('Integrity', 'checking…', m.index ? 'index vs headers' : 'header and size', {
      'data-testid': 'integrity',
      title: 'Checking the integrity…',
    });
  }
  const errors = m.integrity.filter((x) => x.level === 'error').length;
  const warns = m.integrity.filter((x) => x.level === 'warn').length;
  const value = errors ? plural(errors, 'error') : warns ? plural(warns, 'warning') : 'OK';
  return card('Integrity', value, m.index ? 'index vs headers' : 'header and size', {
    class: `card link ${errors ? 'bad' : warns ? 'warn' : 'good'}`,
    'data-testid': 'integrity',
    'data-value': errors,
    role: 'link',
    tabindex: 0,
    title: 'Show the integrity report',
    onclick: showIntegrity,
    onkeydown: (e) => {
      if (e.key !== 'Enter') return;
      e.preventDefault(); // else the key, landing on the report's focused summary, folds it again
      showIntegrity();
    },
  });
}

function summaryCards(m, s) {
  return h(
    'div',
    { class: 'cards' },
    card('Parameters', fmtCount(s.params), fmtInt(s.params), { 'data-testid': 'total-params', 'data-value': s.params }),
    card('Tensor bytes', fmtBytes(s.bytes), `${fmtInt(s.bytes)} B`, {
      'data-testid': 'total-bytes',
      'data-value': s.bytes,
    }),
    card('Tensors', fmtInt(s.tensors), plural(s.byDtype.length, 'dtype'), {
      'data-testid': 'tensor-count',
      'data-value': s.tensors,
    }),
    card(
      m.sharded ? 'Files' : 'File',
      m.sharded ? `${m.shards.length}` : fmtBytes(m.fileBytes),
      m.sharded ? fmtBytes(m.fileBytes) : `${fmtInt(m.fileBytes)} B`,
      { 'data-testid': 'files', 'data-value': m.shards.length },
    ),
    card(
      'Zero-copy',
      s.tensors ? formatPct(s.aligned / s.tensors) : '—',
      s.aligned === s.tensors ? 'all tensors' : `${fmtInt(s.aligned)} of ${fmtInt(s.tensors)}`,
      { 'data-testid': 'aligned', 'data-value': s.aligned },
    ),
    integrityCard(m),
  );
}

/** The bar of bytes by dtype and a chip per dtype; a chip's click is `onDtype(dtype)`. */
function dtypeBar(s, onDtype) {
  const total = s.bytes || 1;
  const bar = h(
    'div',
    { class: 'dtype-bar', role: 'img', 'aria-label': 'Bytes by dtype' },
    s.byDtype.map((d) =>
      h('span', {
        class: `seg d-${d.dtype}`,
        style: { flexGrow: String(Math.max(d.bytes / total, 0.004)) },
        title: `${d.dtype}: ${fmtBytes(d.bytes)}`,
      }),
    ),
  );
  const chip = (d) =>
    h(
      'button',
      {
        type: 'button',
        class: 'dtype-chip',
        title:
          `${d.dtype}: ${fmtInt(d.tensors)} tensors, ${fmtInt(d.params)} parameters, ` +
          `${fmtInt(d.bytes)} bytes — show only these`,
        onclick: () => onDtype(d.dtype),
      },
      h('span', { class: `swatch d-${d.dtype}` }),
      h('strong', {}, d.dtype),
      ` ${fmtCount(d.params)} · ${fmtBytes(d.bytes)} · ${formatPct(d.bytes / total)}`,
    );
  const chips = h('div', { class: 'dtype-chips' }, s.byDtype.map(chip));
  return h('div', { class: 'dtypes' }, h('div', { class: 'dtypes-title' }, 'Bytes by dtype'), bar, chips);
}

/** The summary cards and the bytes by dtype, into #summary. */
export function renderSummary(m, s, { onDtype }) {
  $('summary').replaceChildren(summaryCards(m, s), dtypeBar(s, onDtype));
}

/** The per-dtype table of the side panel. */
function dtypeTable(s) {
  const total = s.bytes || 1;
  const head = h(
    'thead',
    {},
    h(
      'tr',
      {},
      h('th', {}, 'dtype'),
      h('th', { class: 'num' }, 'tensors'),
      h('th', { class: 'num' }, 'parameters'),
      h('th', { class: 'num' }, 'bytes'),
    ),
  );
  const row = (d) =>
    h(
      'tr',
      {
        dataset: { dtype: d.dtype, params: d.params, bytes: d.bytes },
        title: `${formatPct(d.bytes / total)} of the bytes`,
      },
      h('td', {}, h('span', { class: `swatch d-${d.dtype}` }), d.dtype),
      h('td', { class: 'num' }, fmtInt(d.tensors)),
      h('td', { class: 'num' }, fmtInt(d.params)),
      h('td', { class: 'num' }, fmtBytes(d.bytes)),
    );
  return h(
    'div',
    { class: 'table-wrap' },
    h('table', { class: 'dtype-table', 'data-testid': 'by-dtype' }, head, h('tbody', {}, s.byDtype.map(row))),
  );
}

function showIntegrity() {
  const sec = $('sec-integrity');
  sec.open = true;
  sec.scrollIntoView({ block: 'nearest', behavior: 'smooth' });
  sec.querySelector('summary').focus();
}

function section(title, body, { open = true, id, count } = {}) {
  return h(
    'details',
    { class: 'side-section', open, id },
    h('summary', {}, h('span', {}, title), count !== undefined ? h('span', { class: 'badge' }, count) : null),
    body,
  );
}

/** The files of the model, their sizes and tensor counts, the index's entries, and the header export. */
function filesPanel(m, onExportHeader) {
  const perShard = new Array(m.shards.length).fill(0);
  for (const r of m.rows) perShard[r.shard]++;
  const row = (sh, i) => {
    const facts = [
      sh.size === null ? null : fmtBytes(sh.size),
      sh.header ? `header ${fmtBytes(sh.header.headerSize)}` : null,
      `read ${fmtBytes(sh.bytesRead)}`,
    ];
    return h(
      'tr',
      { class: sh.error ? 'bad' : '', title: `${sh.src.path}${sh.header ? `\n${fmtInt(sh.size)} bytes` : ''}` },
      h(
        'td',
        {},
        h('div', { class: 'file-name mono' }, sh.name),
        h('div', { class: 'file-facts' }, facts.filter(Boolean).join(' · ')),
      ),
      h('td', { class: 'num' }, sh.error ? '✕' : fmtInt(perShard[i])),
    );
  };
  const entries = m.index ? fmtInt(m.index.entries) : '';
  const indexNote = m.index
    ? h(
        'p',
        { class: 'note' },
        `Index ${m.index.name}: ${entries} entries${m.index.size === null ? '' : `, ${fmtBytes(m.index.size)}`}.`,
      )
    : null;
  return h(
    'div',
    { class: 'table-wrap' },
    h(
      'table',
      { class: 'files', 'data-testid': 'shards' },
      h('thead', {}, h('tr', {}, h('th', {}, 'file'), h('th', { class: 'num' }, 'tensors'))),
      h('tbody', {}, m.shards.map(row)),
    ),
    indexNote,
    h(
      'div',
      { class: 'actions' },
      h('button', { type: 'button', class: 'btn small', onclick: onExportHeader }, 'Export header JSON'),
    ),
  );
}

/** The `__metadata__` entries (and, for sharded models, which file each is from). */
function metadataPanel(m, md) {
  if (!md.length) return h('p', { class: 'note' }, 'No __metadata__.');
  const row = ([k, v, w]) =>
    h(
      'tr',
      {},
      h('td', { class: 'mono' }, k),
      h('td', { class: 'mono value' }, v),
      m.sharded ? h('td', { class: 'from' }, w) : null,
    );
  return h(
    'div',
    { class: 'table-wrap' },
    h(
      'table',
      { class: 'meta', 'data-testid': 'metadata' },
      h('thead', {}, h('tr', {}, h('th', {}, 'key'), h('th', {}, 'value'), m.sharded ? h('th', {}, 'from') : null)),
      h('tbody', {}, md.map(row)),
    ),
  );
}

const ICON = { ok: '✓', warn: '!', error: '✕', info: 'i' };

function integrityList(m) {
  return h(
    'ul',
    { class: 'integrity', 'data-testid': 'integrity-list' },
    m.integrity.map((x) =>
      h(
        'li',
        { class: x.level },
        h('span', { class: 'icon', 'aria-label': x.level }, ICON[x.level]),
        h('span', {}, x.text),
      ),
    ),
  );
}

/** How many tensors can be viewed in place, and why the others cannot. */
function alignmentPanel(s) {
  const share = formatPct(s.bytes ? s.alignedBytes / s.bytes : 1);
  return h(
    'div',
    {},
    h(
      'p',
      {},
      `${fmtInt(s.aligned)} of ${fmtInt(s.tensors)} tensors (${share} of bytes) can be viewed in place without a copy.`,
      s.misaligned ? ` ${fmtInt(s.misaligned)} start at an offset that is not a multiple of their element size.` : '',
      s.subByte ? ` ${fmtInt(s.subByte)} have a sub-byte dtype and are always decoded.` : '',
    ),
    h(
      'table',
      { class: 'align-table' },
      h(
        'tbody',
        {},
        s.byDtype.map((d) =>
          h('tr', {}, h('td', {}, d.dtype), h('td', { class: 'num' }, `${fmtInt(d.aligned)} / ${fmtInt(d.tensors)}`)),
        ),
      ),
    ),
  );
}

/**
 * The side panels into #side; returns the module tree's builder, which the page runs once the
 * list is on screen (the list is what a person looks for first). `isCurrent()` says whether the
 * model is still the page's when the tree is ready; `onPrefix(path)` and `onTensor(row)` are the
 * tree's clicks, `onExportHeader` the files panel's button.
 */
export function renderSide(m, s, { isCurrent, onPrefix, onTensor, onExportHeader }) {
  const treeBox = h('div', { id: 'tree', class: 'tree-box' });
  const md = m.metadataRows();
  const errors = m.integrity.filter((x) => x.level === 'error').length;
  const integrity = section('Integrity', integrityList(m), { id: 'sec-integrity', count: errors || undefined });
  $('side').replaceChildren(
    ...[
      errors ? integrity : null, // problems first
      section('Module tree', treeBox, { id: 'sec-tree' }),
      section('By dtype', dtypeTable(s), { id: 'sec-dtypes', count: s.byDtype.length, open: s.byDtype.length <= 8 }),
      section(m.sharded ? 'Files' : 'File', filesPanel(m, onExportHeader), { id: 'sec-files', count: m.shards.length }),
      section('Metadata', metadataPanel(m, md), {
        id: 'sec-meta',
        count: md.length,
        open: md.length > 0 && md.length <= 12,
      }),
      errors ? null : integrity,
      section('Alignment', alignmentPanel(s), { id: 'sec-align', open: false }),
    ].filter(Boolean),
  );
  treeBox.append(h('p', { class: 'note' }, 'Building the tree…'));
  return async () => {
    const root = await buildTreeSliced(m.rows);
    if (!isCurrent()) return;
    new TreeView(treeBox, { onPrefix: (node) => onPrefix(node.path), onTensor }).render(root);
  };
}
