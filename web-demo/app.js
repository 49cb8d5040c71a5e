// The page: opening (drop, pickers, ?url=; the Hub's ?hub= and form are hub-form.js), the
// summary, the side panels, the tensor list with its filters, the comparison view, and keyboard
// shortcuts (errors and toasts: notices.js). Heavy work goes to the worker through the detail
// panel.

import { compareModels, STATUS_LABEL } from './compare.js';
import { DetailPanel } from './detail.js';
import { download, h } from './dom.js';
import { DTYPES, fmtBytes, fmtCount, fmtInt, fmtMs, fmtShape, naturalCompare } from './format.js';
import { Jobs } from './jobs.js';
import { hubFromQuery, openFromHub, wireHubForm } from './hub-form.js';
import { filesFromDataTransfer, openFiles, openUrl } from './model.js';
import { hideError, showError, toast } from './notices.js';
import { openSaveDialog } from './save.js';
import { VirtualTable } from './table.js';
import { TreeView, buildTreeSliced } from './tree.js';

const $ = (id) => document.getElementById(id);

const state = {
  a: null, // the open model
  b: null, // the model compared with it
  cmp: null,
  workerBytes: 0,
  prefix: null,
  filtered: null, // the rows the list shows
  tab: 'tensors',
  opening: { a: 0, b: 0 }, // counts of main opens and of all opens: the latest of each wins
};

let jobs = null;
let detail = null;
let table = null;
let cmpTable = null;

function getJobs() {
  jobs ??= new Jobs();
  return jobs;
}

function setState(s) {
  document.body.dataset.state = s;
}

// ---------------------------------------------------------------- bytes-read counter

function totalBytesRead() {
  return (state.a?.bytesRead ?? 0) + (state.b?.bytesRead ?? 0) + state.workerBytes;
}

function updateIo() {
  const read = totalBytesRead();
  const size = (state.a?.fileBytes ?? 0) + (state.b?.fileBytes ?? 0);
  $('bytes-read').textContent = fmtBytes(read);
  // The share of the files read; past 100% (a tensor read twice) it would only confuse.
  $('io-of').textContent = size
    ? ` of ${fmtBytes(size)}${read <= size ? ` (${formatPct(read / size)})` : ' in files'}`
    : '';
  document.body.dataset.bytesRead = String(read);
}

function formatPct(x) {
  if (x >= 0.1) return `${(x * 100).toFixed(0)}%`;
  if (x >= 0.001) return `${(x * 100).toFixed(2)}%`;
  return `${(x * 100).toPrecision(2)}%`;
}

// ---------------------------------------------------------------- opening

/**
 * Runs an open (`fn` → Model) as the main model or the compared one; errors never blank the page.
 * A main open supersedes every earlier open; a compare supersedes only earlier compares, so a
 * main open it overlaps still finishes. The latest main open sets the page's state.
 */
async function openWith(fn, { as = 'a', t0 = performance.now(), label = '', url = null, query = null } = {}) {
  if (as === 'a') state.opening.a++;
  const ticket = { a: state.opening.a, b: ++state.opening.b };
  const latest = () => (as === 'a' ? ticket.a === state.opening.a : ticket.b === state.opening.b);
  const toastId = `opening-${ticket.b}`;
  // Marks of this open's steps (viewer:*), for tests/viewer/bench-viewer.mjs and the curious.
  performance.clearMarks();
  performance.mark('viewer:open', { startTime: t0 });
  hideError();
  const prev = document.body.dataset.state;
  if (as === 'a') setState('loading');
  toast(`Opening ${label}…`, { id: toastId, sticky: true });
  try {
    const model = await fn();
    const tRead = performance.now();
    if (!latest()) return;
    await new Promise((resolve) => setTimeout(resolve, 0)); // paint between building and showing
    if (!latest()) return;
    if (as === 'a') {
      state.a = model;
      state.filtered = null;
      state.b = null;
      state.cmp = null;
      state.workerBytes = 0;
      renderModel();
      performance.mark('viewer:rendered');
    } else {
      state.b = model;
      renderCompare();
    }
    updateIo();
    const paint = () => new Promise((r) => requestAnimationFrame(() => setTimeout(r, 0)));
    await paint();
    // The list is on screen; the integrity report (which compares every tensor with the index)
    // and the side panels follow whenever this model is still the one shown, even if a newer
    // open has started meanwhile: should that one fail, this model stays on screen.
    if (as !== 'a' || state.a !== model) return;
    const listed = performance.now() - t0;
    performance.mark('viewer:listed');
    const later = renderChecks();
    await paint();
    if (state.a !== model) return;
    // The address bar says what is open: ?url= or ?hub= for a remote model (shareable), nothing
    // for files.
    history.replaceState(null, '', query ?? (url ? `?url=${encodeURIComponent(url)}` : location.pathname));
    setTimeout(later, 0);
    if (!latest()) return; // the newer open sets the page's state when it ends
    const ms = performance.now() - t0;
    performance.mark('viewer:painted');
    // Split for the curious (and the tests): reading and parsing headers, the list on screen,
    // then everything else.
    document.body.dataset.readMs = (tRead - t0).toFixed(1);
    document.body.dataset.listMs = listed.toFixed(1);
    document.body.dataset.renderMs = (performance.now() - tRead).toFixed(1);
    document.body.dataset.openMs = ms.toFixed(1);
    $('open-time').textContent = `opened in ${fmtMs(ms)}`;
    setState('ready');
  } catch (err) {
    toast(null, { id: toastId });
    if (!latest()) return;
    if (as === 'a') setState(state.a ? 'ready' : prev === 'loading' ? 'empty' : prev);
    await showError(err, as === 'b' ? 'Could not open the model to compare' : 'Could not open');
    if (!state.a) setState('error');
  } finally {
    toast(null, { id: toastId });
  }
}

function openDropped(files, folder, as, t0) {
  const label = files.length === 1 ? files[0].name : `${files.length} files`;
  return openWith(() => openFiles(files, { folder }), { as, t0, label });
}

// ---------------------------------------------------------------- summary and side panels

function card(label, value, sub, attrs = {}) {
  return h(
    'div',
    { class: 'card', ...attrs },
    h('div', { class: 'card-label' }, label),
    h('div', { class: 'card-value', title: value }, value),
    sub ? h('div', { class: 'card-sub', title: sub }, sub) : null,
  );
}

/** The summary cards; the integrity card says "checking" until `m.integrity` is there. */
function renderSummary(m, s) {
  const checked = m.integrity !== null;
  const errors = checked ? m.integrity.filter((x) => x.level === 'error').length : 0;
  const warns = checked ? m.integrity.filter((x) => x.level === 'warn').length : 0;
  const cards = h(
    'div',
    { class: 'cards' },
    card('Parameters', fmtCount(s.params), fmtInt(s.params), { 'data-testid': 'total-params', 'data-value': s.params }),
    card('Tensor bytes', fmtBytes(s.bytes), `${fmtInt(s.bytes)} B`, {
      'data-testid': 'total-bytes',
      'data-value': s.bytes,
    }),
    card('Tensors', fmtInt(s.tensors), `${s.byDtype.length} dtype${s.byDtype.length === 1 ? '' : 's'}`, {
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
    card(
      'Integrity',
      !checked
        ? 'checking…'
        : errors
          ? `${errors} error${errors === 1 ? '' : 's'}`
          : warns
            ? `${warns} warning${warns === 1 ? '' : 's'}`
            : 'OK',
      // A link to the report once there is one (renderChecks builds it with the side panels).
      m.index ? 'index vs headers' : 'header and size',
      !checked
        ? { 'data-testid': 'integrity', title: 'Checking the integrity…' }
        : {
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
          },
    ),
  );
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
  const chips = h(
    'div',
    { class: 'dtype-chips' },
    s.byDtype.map((d) =>
      h(
        'button',
        {
          type: 'button',
          class: 'dtype-chip',
          title: `${d.dtype}: ${fmtInt(d.tensors)} tensors, ${fmtInt(d.params)} parameters, ${fmtInt(d.bytes)} bytes — show only these`,
          onclick: () => {
            $('dtype-filter').value = $('dtype-filter').value === d.dtype ? '' : d.dtype;
            selectTab('tensors');
          },
        },
        h('span', { class: `swatch d-${d.dtype}` }),
        h('strong', {}, d.dtype),
        ` ${fmtCount(d.params)} · ${fmtBytes(d.bytes)} · ${formatPct(d.bytes / total)}`,
      ),
    ),
  );
  $('summary').replaceChildren(
    cards,
    h('div', { class: 'dtypes' }, h('div', { class: 'dtypes-title' }, 'Bytes by dtype'), bar, chips),
  );
}

/** The per-dtype table of the side panel. */
function dtypeTable(s) {
  const total = s.bytes || 1;
  return h(
    'div',
    { class: 'table-wrap' },
    h(
      'table',
      { class: 'dtype-table', 'data-testid': 'by-dtype' },
      h(
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
      ),
      h(
        'tbody',
        {},
        s.byDtype.map((d) =>
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
          ),
        ),
      ),
    ),
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

function renderSide(m, s) {
  const side = $('side');
  const perShard = new Array(m.shards.length).fill(0);
  for (const r of m.rows) perShard[r.shard]++;
  const files = h(
    'div',
    { class: 'table-wrap' },
    h(
      'table',
      { class: 'files', 'data-testid': 'shards' },
      h('thead', {}, h('tr', {}, h('th', {}, 'file'), h('th', { class: 'num' }, 'tensors'))),
      h(
        'tbody',
        {},
        m.shards.map((sh, i) => {
          const n = perShard[i];
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
            h('td', { class: 'num' }, sh.error ? '✕' : fmtInt(n)),
          );
        }),
      ),
    ),
    m.index
      ? h(
          'p',
          { class: 'note' },
          `Index ${m.index.name}: ${fmtInt(Object.keys(m.index.weightMap).length)} entries${m.index.size === null ? '' : `, ${fmtBytes(m.index.size)}`}.`,
        )
      : null,
    h(
      'div',
      { class: 'actions' },
      h('button', { type: 'button', class: 'btn small', onclick: exportHeader }, 'Export header JSON'),
    ),
  );
  const md = m.metadataRows();
  const meta = md.length
    ? h(
        'div',
        { class: 'table-wrap' },
        h(
          'table',
          { class: 'meta', 'data-testid': 'metadata' },
          h('thead', {}, h('tr', {}, h('th', {}, 'key'), h('th', {}, 'value'), m.sharded ? h('th', {}, 'from') : null)),
          h(
            'tbody',
            {},
            md.map(([k, v, w]) =>
              h(
                'tr',
                {},
                h('td', { class: 'mono' }, k),
                h('td', { class: 'mono value' }, v),
                m.sharded ? h('td', { class: 'from' }, w) : null,
              ),
            ),
          ),
        ),
      )
    : h('p', { class: 'note' }, 'No __metadata__.');
  const icon = { ok: '✓', warn: '!', error: '✕', info: 'i' };
  const integ = h(
    'ul',
    { class: 'integrity', 'data-testid': 'integrity-list' },
    m.integrity.map((x) =>
      h(
        'li',
        { class: x.level },
        h('span', { class: 'icon', 'aria-label': x.level }, icon[x.level]),
        h('span', {}, x.text),
      ),
    ),
  );
  const align = h(
    'div',
    {},
    h(
      'p',
      {},
      `${fmtInt(s.aligned)} of ${fmtInt(s.tensors)} tensors (${formatPct(s.bytes ? s.alignedBytes / s.bytes : 1)} of bytes) can be viewed in place without a copy.`,
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
  const treeBox = h('div', { id: 'tree', class: 'tree-box' });
  const errors = m.integrity.filter((x) => x.level === 'error').length;
  const integrity = section('Integrity', integ, { id: 'sec-integrity', count: errors || undefined });
  side.replaceChildren(
    ...[
      errors ? integrity : null, // problems first
      section('Module tree', treeBox, { id: 'sec-tree' }),
      section('By dtype', dtypeTable(s), { id: 'sec-dtypes', count: s.byDtype.length, open: s.byDtype.length <= 8 }),
      section(m.sharded ? 'Files' : 'File', files, { id: 'sec-files', count: m.shards.length }),
      section('Metadata', meta, { id: 'sec-meta', count: md.length, open: md.length > 0 && md.length <= 12 }),
      errors ? null : integrity,
      section('Alignment', align, { id: 'sec-align', open: false }),
    ].filter(Boolean),
  );
  treeBox.append(h('p', { class: 'note' }, 'Building the tree…'));
  // The tree is built after the list is on screen: the list is what a person looks for first.
  return async () => {
    const root = await buildTreeSliced(m.rows);
    if (state.a !== m) return;
    const tree = new TreeView(treeBox, {
      onPrefix: (node) => {
        state.prefix = node.path;
        selectTab('tensors');
        applyFilter();
      },
      onTensor: (row) => openTensor(row),
    });
    tree.render(root);
  };
}

async function exportHeader() {
  const m = state.a;
  try {
    const json = await m.headerJson();
    updateIo();
    download(new Blob([json], { type: 'application/json' }), `${m.name.replace(/\.safetensors$/i, '')}.header.json`);
  } catch (err) {
    showError(err, 'Could not export the header of');
  }
}

// ---------------------------------------------------------------- the tensor list

const offsetsText = (r) => `${fmtInt(r.begin)} – ${fmtInt(r.end)}`;

function tensorColumns(m) {
  const cols = [
    {
      key: 'name',
      label: 'Name',
      width: 'minmax(220px, 3fr)',
      text: (r) => r.name,
      compare: (a, b) => naturalCompare(a.name, b.name),
    },
    {
      key: 'dtype',
      label: 'dtype',
      width: '120px',
      text: (r) => r.dtype,
      cls: (r) => `dtype-cell d-${r.dtype}`,
      compare: (a, b) => DTYPES.indexOf(a.dtype) - DTYPES.indexOf(b.dtype) || a.i - b.i,
    },
    {
      key: 'shape',
      label: 'Shape',
      width: 'minmax(110px, 1.2fr)',
      text: (r) => fmtShape(r.shape),
      compare: (a, b) => a.rank - b.rank || cmpShape(a.shape, b.shape),
    },
    {
      key: 'params',
      label: 'Params',
      width: '92px',
      align: 'right',
      text: (r) => fmtCount(r.params),
      title: (r) => `${fmtInt(r.params)} parameters`,
      compare: (a, b) => a.params - b.params || a.i - b.i,
    },
    {
      key: 'bytes',
      label: 'Bytes',
      width: '92px',
      drop: 3,
      align: 'right',
      text: (r) => fmtBytes(r.bytes),
      title: (r) => `${fmtInt(r.bytes)} bytes`,
      compare: (a, b) => a.bytes - b.bytes || a.i - b.i,
    },
    {
      key: 'offsets',
      label: 'Offsets',
      width: 'minmax(150px, 1.2fr)',
      drop: 1,
      align: 'right',
      text: offsetsText,
      title: (r) => `data_offsets [${r.begin}, ${r.end}), file bytes ${r.offset}…`,
      compare: (a, b) => a.shard - b.shard || a.begin - b.begin,
    },
  ];
  if (m.sharded)
    cols.push({
      key: 'shard',
      label: 'File',
      width: 'minmax(120px, 1fr)',
      drop: 2,
      text: (r) => m.shards[r.shard].name,
      compare: (a, b) => a.shard - b.shard || a.begin - b.begin,
    });
  return cols;
}

function cmpShape(a, b) {
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return a[i] - b[i];
  return 0;
}

/** The summary and the list: what a person looks at first. */
function renderModel() {
  const m = state.a;
  const s = m.summary();
  $('landing').hidden = true;
  $('view').hidden = false;
  $('compare-btn').hidden = false;
  $('save-btn').hidden = false;
  $('model-name').textContent = m.name;
  document.title = `${m.name} — safetensors viewer`;
  renderSummary(m, s);
  $('side').replaceChildren();
  detail?.close();
  state.prefix = null;
  $('filter').value = '';
  const dsel = $('dtype-filter');
  dsel.replaceChildren(
    h('option', { value: '' }, `all dtypes`),
    ...s.byDtype.map((d) => h('option', { value: d.dtype }, `${d.dtype} (${fmtInt(d.tensors)})`)),
  );
  table = new VirtualTable($('list'), {
    columns: tensorColumns(m),
    label: 'Tensors',
    onOpen: (row) => openTensor(row),
    empty: m.rows.length ? 'No tensor matches the filter.' : 'This file has no tensors.',
  });
  table.setAllRows(m.rows);
  $('tab-compare').hidden = true;
  selectTab('tensors');
}

/** The integrity report, then the summary with it and the side panels; returns the tree's builder. */
function renderChecks() {
  const m = state.a;
  m.checkIntegrity();
  const s = m.summary();
  renderSummary(m, s);
  return renderSide(m, s);
}

function currentFilter() {
  const text = $('filter').value.trim();
  const err = $('filter-error');
  err.hidden = true;
  $('filter').removeAttribute('aria-invalid');
  if (!text) return () => true;
  if ($('regex').checked) {
    try {
      const re = new RegExp(text, 'i');
      return (name) => re.test(name);
    } catch (e) {
      err.textContent = `Invalid regular expression: ${e.message}`;
      err.hidden = false;
      $('filter').setAttribute('aria-invalid', 'true');
      return () => false;
    }
  }
  const needle = text.toLowerCase();
  return (name) => name.toLowerCase().includes(needle);
}

function applyFilter() {
  const match = currentFilter();
  const chip = $('prefix-chip');
  if (state.prefix) {
    chip.hidden = false;
    chip.replaceChildren(
      h('span', {}, `in ${state.prefix}`),
      h(
        'button',
        {
          type: 'button',
          'aria-label': `Remove the filter ${state.prefix}`,
          onclick: () => {
            state.prefix = null;
            applyFilter();
          },
        },
        '×',
      ),
    );
  } else chip.hidden = true;
  if (state.tab === 'compare' && state.cmp) {
    const status = $('status-filter').value;
    const rows = state.cmp.rows.filter((r) => (!status || r.status === status) && match(r.name) && inPrefix(r.name));
    cmpTable.setRows(rows);
    $('count').textContent = `${fmtInt(rows.length)} of ${fmtInt(state.cmp.rows.length)}`;
    return;
  }
  const m = state.a;
  if (!m || !table) return;
  const dtype = $('dtype-filter').value;
  const all = !dtype && !state.prefix && !$('filter').value.trim();
  const rows = all ? m.rows : m.rows.filter((r) => (!dtype || r.dtype === dtype) && inPrefix(r.name) && match(r.name));
  state.filtered = rows; // ("Save as…" offers the current filter)
  table.setRows(rows);
  $('count').textContent =
    rows.length === m.rows.length
      ? `${fmtInt(rows.length)} tensors`
      : `${fmtInt(rows.length)} of ${fmtInt(m.rows.length)}`;
}

function inPrefix(name) {
  const p = state.prefix;
  return !p || name === p || name.startsWith(`${p}.`);
}

function openTensor(row, model = state.a) {
  detail ??= new DetailPanel($('detail'), {
    jobs: getJobs(),
    onBytes: (n) => {
      state.workerBytes += n;
      updateIo();
    },
    onClose: () => document.body.classList.remove('has-detail'),
  });
  let pair = null;
  if (state.b && model === state.a) {
    const rb = state.b.byName.get(row.name);
    if (rb) pair = { model: state.b, row: rb };
  }
  document.body.classList.add('has-detail');
  const title = detail.show(model, row, pair);
  if (matchMedia('(max-width: 1199px)').matches) title?.focus();
}

// ---------------------------------------------------------------- comparison

function renderCompare() {
  state.cmp = compareModels(state.a, state.b);
  const c = state.cmp.counts;
  const sel = $('status-filter');
  sel.replaceChildren(
    h('option', { value: '' }, `all (${fmtInt(state.cmp.rows.length)})`),
    ...Object.entries(STATUS_LABEL)
      .filter(([k]) => c[k])
      .map(([k, label]) => h('option', { value: k }, `${label} (${fmtInt(c[k])})`)),
  );
  const col = (_m, r) => (r ? `${r.dtype} ${fmtShape(r.shape)}` : '—');
  cmpTable = new VirtualTable($('compare'), {
    columns: [
      {
        key: 'status',
        label: 'Status',
        width: '150px',
        text: (r) => STATUS_LABEL[r.status],
        cls: (r) => `status s-${r.status}`,
        compare: (a, b) => a.status.localeCompare(b.status) || a.i - b.i,
      },
      { key: 'name', label: 'Name', width: 'minmax(220px, 3fr)', text: (r) => r.name, compare: (a, b) => a.i - b.i },
      {
        key: 'a',
        label: `A: ${state.a.name}`,
        width: 'minmax(140px, 1.2fr)',
        drop: 2,
        text: (r) => col(state.a, r.a),
        compare: (a, b) => (a.a?.params ?? -1) - (b.a?.params ?? -1),
      },
      {
        key: 'b',
        label: `B: ${state.b.name}`,
        width: 'minmax(140px, 1.2fr)',
        drop: 1,
        text: (r) => col(state.b, r.b),
        compare: (a, b) => (a.b?.params ?? -1) - (b.b?.params ?? -1),
      },
    ],
    label: 'Comparison of A and B',
    onOpen: (r) => (r.a ? openTensor(r.a, state.a) : openTensor(r.b, state.b)),
    empty: 'No tensor matches the filter.',
  });
  cmpTable.setAllRows(state.cmp.rows);
  const summary = h(
    'div',
    { class: 'compare-summary', 'data-testid': 'compare-summary' },
    h('strong', {}, `A: ${state.a.name} · B: ${state.b.name}`),
    Object.entries(STATUS_LABEL)
      .filter(([k]) => c[k])
      .map(([k, label]) =>
        h(
          'button',
          {
            type: 'button',
            class: `chip s-${k}`,
            dataset: { status: k, count: c[k] },
            onclick: () => {
              sel.value = sel.value === k ? '' : k;
              applyFilter();
            },
          },
          `${label}: ${fmtInt(c[k])}`,
        ),
      ),
    h(
      'button',
      {
        type: 'button',
        class: 'icon-btn',
        'aria-label': 'Close the comparison',
        title: 'Close the comparison',
        onclick: closeCompare,
      },
      '×',
    ),
  );
  $('compare').prepend(summary);
  $('tab-compare').hidden = false;
  $('tab-compare').textContent = `Compare (${fmtInt(state.cmp.rows.length - c.same)} changed)`;
  selectTab('compare');
}

function closeCompare() {
  state.b = null;
  state.cmp = null;
  $('tab-compare').hidden = true;
  selectTab('tensors');
  updateIo();
}

function selectTab(tab) {
  state.tab = tab;
  const cmp = tab === 'compare' && state.cmp;
  $('tab-tensors').setAttribute('aria-selected', String(!cmp));
  $('tab-compare').setAttribute('aria-selected', String(Boolean(cmp)));
  $('list').hidden = Boolean(cmp);
  $('compare').hidden = !cmp;
  $('dtype-filter').hidden = Boolean(cmp);
  $('status-filter').hidden = !cmp;
  applyFilter();
}

// ---------------------------------------------------------------- drop, pickers, keyboard

function pick(input) {
  input.value = '';
  input.click();
}

function wire() {
  $('open-files').addEventListener('click', () => pick($('file-input')));
  $('open-folder').addEventListener('click', () => pick($('folder-input')));
  $('compare-btn').addEventListener('click', () => pick($('compare-input')));
  $('save-btn').addEventListener(
    'click',
    () =>
      state.a && openSaveDialog({ model: state.a, filtered: () => state.filtered ?? state.a.rows, jobs: getJobs() }),
  );
  document.querySelectorAll('[data-action=open-files]').forEach((b) => {
    b.addEventListener('click', () => pick($('file-input')));
  });
  document.querySelectorAll('[data-action=open-folder]').forEach((b) => {
    b.addEventListener('click', () => pick($('folder-input')));
  });
  $('file-input').addEventListener(
    'change',
    (e) => e.target.files.length && openDropped([...e.target.files], false, 'a', performance.now()),
  );
  $('folder-input').addEventListener(
    'change',
    (e) => e.target.files.length && openDropped([...e.target.files], true, 'a', performance.now()),
  );
  $('compare-input').addEventListener(
    'change',
    (e) => e.target.files.length && openDropped([...e.target.files], false, 'b', performance.now()),
  );
  $('url-form').addEventListener('submit', (e) => {
    e.preventDefault();
    const url = $('url-input').value.trim();
    if (url) openWith(() => openUrl(url), { label: url, url });
  });

  const overlay = $('drop-overlay');
  let depth = 0;
  const hasFiles = (e) => [...(e.dataTransfer?.types ?? [])].includes('Files');
  window.addEventListener('dragenter', (e) => {
    if (!hasFiles(e)) return;
    depth++;
    overlay.hidden = false;
    overlay.classList.toggle('two', Boolean(state.a));
  });
  window.addEventListener('dragleave', () => {
    depth = Math.max(0, depth - 1);
    if (!depth) overlay.hidden = true;
  });
  window.addEventListener('dragover', (e) => {
    e.preventDefault();
    if (e.dataTransfer) e.dataTransfer.dropEffect = 'copy';
    for (const t of overlay.querySelectorAll('.drop-target')) t.classList.toggle('hover', t.contains(e.target));
  });
  window.addEventListener('drop', (e) => {
    e.preventDefault();
    const t0 = performance.now();
    depth = 0;
    overlay.hidden = true;
    const target = e.target.closest?.('[data-target]')?.dataset.target;
    const as = target === 'compare' && state.a ? 'b' : 'a';
    const dt = e.dataTransfer;
    if (!dt) return;
    filesFromDataTransfer(dt).then(
      ({ files, folder }) => {
        if (files.length) openDropped(files, folder, as, t0);
      },
      (err) => showError(err, 'Could not read the dropped items'),
    );
  });

  let debounce = 0;
  $('filter').addEventListener('input', () => {
    clearTimeout(debounce);
    debounce = setTimeout(applyFilter, state.a && state.a.rows.length > 20000 ? 120 : 30);
  });
  $('filter').addEventListener('keydown', (e) => {
    if (e.key === 'Enter' || e.key === 'ArrowDown') {
      e.preventDefault();
      (state.tab === 'compare' ? cmpTable : table)?.viewport.focus();
    } else if (e.key === 'Escape') {
      if ($('filter').value) {
        $('filter').value = '';
        applyFilter();
      } else $('filter').blur();
    }
  });
  $('regex').addEventListener('change', applyFilter);
  $('dtype-filter').addEventListener('change', applyFilter);
  $('status-filter').addEventListener('change', applyFilter);
  $('tab-tensors').addEventListener('click', () => selectTab('tensors'));
  $('tab-compare').addEventListener('click', () => selectTab('compare'));

  document.addEventListener('keydown', (e) => {
    const typing = e.target.matches?.('input, textarea, select');
    if (e.key === '/' && !typing && state.a) {
      e.preventDefault();
      $('filter').focus();
      $('filter').select();
    } else if (e.key === 'Escape' && !typing && detail && !$('detail').hidden) {
      detail.close();
      (state.tab === 'compare' ? cmpTable : table)?.viewport.focus();
    }
  });
}

function init() {
  wire();
  updateIo();
  const params = new URLSearchParams(location.search);
  const hub = hubFromQuery(params);
  const openHub = (fn, label, query) => openWith(fn, { label, query });
  wireHubForm({ open: openHub, endpoint: hub?.endpoint });
  if (hub) openFromHub(hub, openHub);
  const url = params.get('url');
  const cmp = params.get('compare');
  if (url) {
    $('url-input').value = url;
    openWith(() => openUrl(url), { label: url, url }).then(() => {
      if (cmp && state.a) {
        openWith(() => openUrl(cmp), { as: 'b', label: cmp }).then(() => {
          history.replaceState(null, '', `?url=${encodeURIComponent(url)}&compare=${encodeURIComponent(cmp)}`);
        });
      }
    });
  }
}

// Exposed for tests and the console: the open models, read-only.
window.viewer = {
  get a() {
    return state.a;
  },
  get b() {
    return state.b;
  },
  get bytesRead() {
    return totalBytesRead();
  },
  /** Smaller read chunks, to watch progress or exercise chunk merging (default 64 MiB). */
  set chunkBytes(n) {
    DetailPanel.chunkBytes = n;
  },
};

init();
