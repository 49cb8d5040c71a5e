// The page: opening (drop, pickers, ?url=; the Hub's ?hub= and form are hub-form.js), the
// summary, the side panels, the tensor list with its filters, the comparison view, and keyboard
// shortcuts (errors and toasts: notices.js). Heavy work goes to the worker through the detail
// panel.

import { compareModels, STATUS_LABEL } from './compare.js';
import { DetailPanel } from './detail.js';
import { download, h } from './dom.js';
import { fmtBytes, fmtInt, fmtMs, formatPct } from './format.js';
import { Jobs } from './jobs.js';
import { hubFromQuery, openFromHub, wireHubForm } from './hub-form.js';
import { filesFromDataTransfer, openFiles, openUrl } from './model.js';
import { hideError, showError, toast } from './notices.js';
import { compareColumns, tensorColumns } from './columns.js';
import { renderSide, renderSummary } from './panels.js';
import { openSaveDialog } from './save.js';
import { VirtualTable } from './table.js';

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
    const later = await renderChecks();
    if (state.a !== model) return;
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
  renderSummary(m, s, summaryActions);
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

/**
 * The integrity report, then the summary with it and the side panels; resolves to the tree's
 * builder (null when another model is shown by then).
 */
async function renderChecks() {
  const m = state.a;
  await m.checkIntegrity();
  if (state.a !== m) return null;
  const s = m.summary();
  renderSummary(m, s, summaryActions);
  return renderSide(m, s, {
    isCurrent: () => state.a === m,
    onPrefix: (path) => {
      state.prefix = path;
      selectTab('tensors');
      applyFilter();
    },
    onTensor: (row) => openTensor(row),
    onExportHeader: exportHeader,
  });
}

/** A dtype chip of the summary shows only that dtype's tensors (or all again). */
const summaryActions = {
  onDtype: (dtype) => {
    $('dtype-filter').value = $('dtype-filter').value === dtype ? '' : dtype;
    selectTab('tensors');
  },
};

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
  cmpTable = new VirtualTable($('compare'), {
    columns: compareColumns(state.a, state.b),
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

/** The buttons, file inputs and URL form that open models. */
function wireOpeners() {
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
}

/** Files dropped anywhere on the page: the overlay says where they go (the main model or B). */
function wireDrop() {
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
}

/** The filter box, the filter selects, the tabs, and the page's keys (`/` to filter, Escape). */
function wireFilterAndKeys() {
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
  wireOpeners();
  wireDrop();
  wireFilterAndKeys();
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
