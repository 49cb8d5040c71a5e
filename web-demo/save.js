// "Save as…": writes the open model (one file or a sharded model) again, with the tensors chosen
// (all, or the current filter), renamed by a prefix rule, floats converted (BF16, F16, F32 or
// kept), metadata keys dropped or set, as one file or Hub-style shards. The worker does the work
// (save-job.js); the page shows
// the result's size and tensor count first, then progress, bytes written and an estimate, and
// Cancel stops it. Files go through the File System Access API where the browser has it (a
// save picker for one file, a folder picker for shards); elsewhere each file is assembled in
// memory and downloaded, up to BLOB_LIMIT.

import { Cancelled } from './jobs.js';
import { download, h } from './dom.js';
import { fmtBytes, fmtInt } from './format.js';

/** The largest download assembled in memory where the browser cannot write files itself. */
export const BLOB_LIMIT = 2 ** 30;

let dialog = null;

const canPickFile = () => typeof window.showSaveFilePicker === 'function';
const canPickFolder = () => typeof window.showDirectoryPicker === 'function';

function baseName(model) {
  const n = (model.name ?? 'model').replace(/\.(safetensors|index\.json|json)$/i, '').replace(/\.safetensors$/i, '');
  return `${n || 'model'}-edited.safetensors`;
}

function fmtSeconds(s) {
  if (!Number.isFinite(s)) return '';
  if (s < 60) return `${Math.ceil(s)} s`;
  return `${Math.floor(s / 60)} min ${Math.ceil(s % 60)} s`;
}

/** The metadata written unless edited: the first shard's (as the worker takes it). */
function sourceMetadata(model) {
  return model.shards.find((s) => s.header)?.header.metadata() ?? null;
}

/** One "set a key" row: a key and its value. */
function setRow() {
  return h(
    'div',
    { class: 'save-meta-set' },
    'set ',
    h('input', {
      name: 'setKey',
      type: 'text',
      placeholder: 'key',
      size: 12,
      class: 'mono',
      'aria-label': 'Metadata key to set',
    }),
    ' = ',
    h('input', {
      name: 'setValue',
      type: 'text',
      placeholder: 'value',
      size: 20,
      class: 'mono',
      'aria-label': 'Its value',
    }),
  );
}

/**
 * The Metadata fieldset: a "drop" box per key the output would keep, and rows to set keys (one
 * more with "Add a key"). The worker applies them with the package's editMetadata.
 */
function metadataFieldset(model) {
  const existing = Object.entries(sourceMetadata(model) ?? {});
  const rows = h('div', { class: 'save-meta-rows' }, setRow());
  const more = h('button', { type: 'button', class: 'btn small' }, 'Add a key');
  more.addEventListener('click', () => rows.append(setRow()));
  return h(
    'fieldset',
    { class: 'save-meta' },
    h('legend', {}, 'Metadata'),
    existing.length === 0 ? h('p', { class: 'save-meta-note' }, 'No __metadata__ now: keys set here create it.') : null,
    existing.map(([k, v]) =>
      h(
        'label',
        { class: 'mono' },
        h('input', { name: 'dropKey', type: 'checkbox', value: k }),
        ` drop ${k} = ${v.length > 40 ? `${v.slice(0, 40)}…` : v}`,
      ),
    ),
    rows,
    h('div', {}, more),
  );
}

/** The panel's form: the tensors, rename, floats, metadata and output choices, and its status lines. */
function buildForm(model, all, filtered) {
  const field = (name, attrs = {}) => h('input', { name, ...attrs });
  return h(
    'form',
    { method: 'dialog', class: 'save-form' },
    h('h2', {}, 'Save as…'),
    h(
      'fieldset',
      {},
      h('legend', {}, 'Tensors'),
      h('label', {}, field('which', { type: 'radio', value: 'all', checked: true }), ` all (${fmtInt(all)})`),
      h(
        'label',
        {},
        field('which', { type: 'radio', value: 'filter', disabled: filtered === all }),
        ` the current filter (${fmtInt(filtered)})`,
      ),
    ),
    h(
      'fieldset',
      {},
      h('legend', {}, 'Rename'),
      h(
        'label',
        {},
        'replace the prefix ',
        field('from', { type: 'text', placeholder: 'model.', size: 14, class: 'mono' }),
      ),
      h('label', {}, ' with ', field('to', { type: 'text', placeholder: '(nothing)', size: 14, class: 'mono' })),
    ),
    h(
      'fieldset',
      {},
      h('legend', {}, 'Floats'),
      h(
        'select',
        { name: 'convert', 'aria-label': 'Convert float tensors' },
        h('option', { value: 'keep' }, 'keep their dtype'),
        ...['BF16', 'F16', 'F32'].map((d) => h('option', { value: d }, `convert to ${d}`)),
      ),
    ),
    metadataFieldset(model),
    h(
      'fieldset',
      {},
      h('legend', {}, 'Output'),
      h(
        'label',
        {},
        field('output', { type: 'radio', value: 'file', checked: true }),
        ' one file ',
        field('name', { type: 'text', value: baseName(model), size: 28, class: 'mono', 'aria-label': 'File name' }),
      ),
      h(
        'label',
        {},
        field('output', { type: 'radio', value: 'shards' }),
        ' shards of at most ',
        field('shardSize', { type: 'text', value: '5GB', size: 7, class: 'mono', 'aria-label': 'Largest shard' }),
      ),
    ),
    h('p', { class: 'save-summary', role: 'status', 'aria-live': 'polite' }),
    h('p', { class: 'save-note' }),
    h('progress', { class: 'save-progress', max: 1, value: 0, hidden: true }),
    h('p', { class: 'save-status', role: 'status', 'aria-live': 'polite' }),
    h(
      'div',
      { class: 'save-actions' },
      h('button', { type: 'button', class: 'btn', value: 'cancel' }, 'Close'),
      h('button', { type: 'button', class: 'btn primary', value: 'save' }, 'Save'),
    ),
  );
}

/**
 * The worker's request from the form (see save-job.js). Metadata: the keys ticked to drop, and
 * each row with a key to set (a row whose key is blank is not used).
 */
function readRequest(panel) {
  const { form, model, sources, rowsAll, rowsFiltered } = panel;
  const f = new FormData(form);
  const rows = f.get('which') === 'filter' ? rowsFiltered : rowsAll;
  const shards = f.get('output') === 'shards';
  const size = String(f.get('shardSize')).trim();
  const values = f.getAll('setValue').map(String);
  const set = f
    .getAll('setKey')
    .map((k, i) => [String(k), values[i] ?? ''])
    .filter(([k]) => k !== '');
  return {
    sources,
    names: rows.map((r) => r.name),
    rename: f.get('from') ? [String(f.get('from')), String(f.get('to') ?? '')] : null,
    convert: String(f.get('convert')),
    metadata: { set, drop: f.getAll('dropKey').map(String) },
    maxShardSize: shards ? (/^\d+$/.test(size) ? Number(size) : size) : null,
    name: String(f.get('name')).trim() || baseName(model),
  };
}

/** Says where the files go: straight to disk, or assembled in memory for a download. */
function showNote(panel) {
  const shards = new FormData(panel.form).get('output') === 'shards';
  const direct = shards ? canPickFolder() : canPickFile();
  panel.$('.save-note').textContent = direct
    ? `Written straight to the ${shards ? 'folder' : 'file'} you choose, a few MB at a time.`
    : 'This browser cannot write files itself (no File System Access API): ' +
      `each file is assembled in memory and downloaded, up to ${fmtBytes(BLOB_LIMIT)}. ` +
      'For larger results use Chrome or Edge.';
}

/** Asks the worker for the result's sizes and shows them; Save is enabled once they are known. */
async function summarize(panel) {
  const mine = ++panel.ticket;
  panel.plan = null;
  panel.saveBtn.disabled = true;
  const summary = panel.$('.save-summary');
  summary.classList.remove('error');
  summary.textContent = 'Computing the result’s size…';
  showNote(panel);
  try {
    const p = await panel.jobs.run('savePlan', { request: readRequest(panel) }).promise;
    if (mine !== panel.ticket) return;
    panel.plan = p;
    const files = p.files.length === 1 ? '' : ` in ${fmtInt(p.files.length)} files`;
    summary.textContent = `${fmtInt(p.tensors)} tensors · ${fmtBytes(p.total)}${files}`;
    panel.dialog.dataset.total = String(p.total);
    panel.dialog.dataset.files = p.files.map((f) => f.name).join('\n');
    panel.saveBtn.disabled = p.tensors === 0;
  } catch (e) {
    if (mine !== panel.ticket) return;
    summary.classList.add('error');
    summary.textContent = e.message;
  }
}

/**
 * Where the result goes: a picked file or folder (the pickers need the click's user activation,
 * so they come first), or a Blob to download. Null when the picker was dismissed or the result
 * is too large to assemble in memory (then the status says so).
 */
async function pickTarget(panel, req) {
  const shards = req.maxShardSize !== null;
  try {
    if (shards && canPickFolder())
      return { kind: 'directory', handle: await window.showDirectoryPicker({ mode: 'readwrite' }) };
    if (!shards && canPickFile())
      return {
        kind: 'file',
        handle: await window.showSaveFilePicker({
          suggestedName: req.name,
          types: [{ description: 'safetensors', accept: { 'application/octet-stream': ['.safetensors'] } }],
        }),
      };
  } catch (e) {
    if (e?.name === 'AbortError') return null; // the picker was dismissed
    throw e;
  }
  if (Math.max(...panel.plan.files.map((f) => f.size)) > BLOB_LIMIT) {
    panel.$('.save-status').textContent =
      `Too large to assemble in memory (over ${fmtBytes(BLOB_LIMIT)} a file) in this browser: ` +
      'use Chrome or Edge, which write files directly.';
    panel.dialog.dataset.state = 'error';
    return null;
  }
  return { kind: 'blob' };
}

/** The panel's controls while writing: all disabled, and Close becomes Cancel. */
function setRunning(panel, on) {
  for (const el of panel.form.querySelectorAll('input, select, .save-meta button')) el.disabled = on;
  panel.saveBtn.disabled = on;
  panel.closeBtn.textContent = on ? 'Cancel' : 'Close';
}

/** Runs the save job, showing progress, then the result (or why nothing was written). */
async function write(panel) {
  if (!panel.plan) return;
  const req = readRequest(panel);
  const target = await pickTarget(panel, req);
  if (target === null) return;
  const { dialog } = panel;
  const status = panel.$('.save-status');
  const bar = panel.$('.save-progress');
  bar.hidden = false;
  bar.value = 0;
  setRunning(panel, true);
  dialog.dataset.state = 'writing';
  const t0 = performance.now();
  panel.running = panel.jobs.run(
    'save',
    { request: req, target },
    {
      onProgress: (done, total) => {
        bar.value = total ? done / total : 0;
        const rate = done / ((performance.now() - t0) / 1000);
        const left = rate > 0 ? (total - done) / rate : Infinity;
        const eta = done < total && done > 0 ? ` · about ${fmtSeconds(left)} left` : '';
        status.textContent = `Written ${fmtBytes(done)} of ${fmtBytes(total)}${eta}`;
        dialog.dataset.written = String(done);
      },
    },
  );
  try {
    const result = await panel.running.promise;
    bar.value = 1;
    for (const f of result.files) if (f.blob) download(f.blob, f.name);
    const what = result.files.length === 1 ? result.files[0].name : `${fmtInt(result.files.length)} files`;
    const bytes = fmtBytes(result.files.reduce((n, f) => n + f.size, 0));
    status.textContent = `Saved ${what} (${bytes}) in ${fmtSeconds((performance.now() - t0) / 1000)}.`;
    dialog.dataset.state = 'done';
  } catch (e) {
    const cancelled = e instanceof Cancelled;
    status.textContent = cancelled ? 'Cancelled: nothing was written.' : `Could not save: ${e.message}`;
    dialog.dataset.state = cancelled ? 'cancelled' : 'error';
  } finally {
    panel.running = null;
    setRunning(panel, false);
  }
}

/** The panel's events: edits refresh the summary, Save writes, Close or Esc cancels a write. */
function wire(panel) {
  const { form, dialog } = panel;
  // Any change makes the summary stale: Save waits for the new one.
  let debounce = 0;
  const changed = (ms) => {
    clearTimeout(debounce);
    panel.ticket++; // (a summary on its way is stale now)
    panel.plan = null;
    panel.saveBtn.disabled = true;
    debounce = setTimeout(() => void summarize(panel), ms);
  };
  // ('input' only: a text field's 'change' comes on blur, which a click on Save causes, and
  // would disable the button under the click.)
  form.addEventListener('input', (e) => changed(e.target.type === 'text' ? 150 : 0));
  panel.saveBtn.addEventListener('click', () => void write(panel));
  panel.closeBtn.addEventListener('click', () => {
    if (panel.running) panel.running.cancel();
    else dialog.close();
  });
  dialog.addEventListener('cancel', (e) => {
    // Esc while writing cancels the write instead of hiding it.
    if (panel.running) {
      e.preventDefault();
      panel.running.cancel();
    }
  });
}

/**
 * Opens the panel over `model`: `filtered()` gives the rows the list shows now; `jobs` runs the
 * worker's jobs.
 */
export function openSaveDialog({ model, filtered, jobs }) {
  dialog?.remove();
  const rowsAll = model.rows;
  const rowsFiltered = filtered();
  const sources = model.shards
    .filter((s) => s.header)
    .map((s) => (s.src.kind === 'blob' ? { kind: 'blob', blob: s.src.blob } : { kind: 'url', url: s.src.url }));
  const form = buildForm(model, rowsAll.length, rowsFiltered.length);
  dialog = h(
    'dialog',
    { id: 'save-dialog', class: 'save-dialog', 'aria-label': 'Save as', dataset: { state: 'idle' } },
    form,
  );
  document.body.append(dialog);
  const [closeBtn, saveBtn] = form.querySelectorAll('.save-actions button');
  const panel = {
    model,
    jobs,
    form,
    dialog,
    sources,
    rowsAll,
    rowsFiltered,
    closeBtn,
    saveBtn,
    plan: null,
    running: null,
    ticket: 0,
    $: (sel) => form.querySelector(sel),
  };
  wire(panel);
  dialog.showModal();
  void summarize(panel);
  return dialog;
}
